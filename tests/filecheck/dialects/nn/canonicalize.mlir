// canonicalize folds the nn shape-op chains that derived programs make (vmap moves a batch to the
// front and back; autodiff transposes transposed operands): each fold is one copy fewer once lowered.
// RUN: irgrad-opt %s -p canonicalize --split-input-file | filecheck %s

// Transposes that cancel vanish; two compose into one; reshape chains become one reshape;
// identity reshapes, transposes and broadcasts are their operand.
// CHECK-LABEL: func.func @chains(%x: tensor<2x3x4xf32>)
// CHECK-NEXT:    %c = nn.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %e = nn.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NEXT:    func.return %x, %c, %e, %x, %x, %x
func.func @chains(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %a = nn.transpose %x perm = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %b = nn.transpose %a perm = [1, 0, 2] : tensor<3x2x4xf32> -> tensor<2x3x4xf32>
  %c = nn.transpose %a perm = [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  %d = nn.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %e = nn.reshape %d : tensor<6x4xf32> -> tensor<24xf32>
  %g = nn.reshape %x : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %h = nn.transpose %x perm = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %i = nn.broadcast_in_dim %x dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %b, %c, %e, %g, %h, %i : tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// Not folded: a transpose of a reshape, a broadcast that adds a dimension, a broadcast to the same
// type whose dims permute (that is a transpose, not an identity; the verifier allows only sizes 1
// to differ, so it is kept), and an inner op something else uses stays beside the fold.
// CHECK-LABEL: func.func @kept(%x: tensor<2x3xf32>, %s: tensor<3x3xf32>)
// CHECK-NEXT:    %r = nn.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %t = nn.transpose %r perm = [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %b = nn.broadcast_in_dim %x dims = [1, 2] : tensor<2x3xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %p = nn.broadcast_in_dim %s dims = [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
// CHECK-NEXT:    %u = nn.transpose %x perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %t, %b, %p, %u, %x
func.func @kept(%x: tensor<2x3xf32>, %s: tensor<3x3xf32>) -> (tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>) {
  %r = nn.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  %t = nn.transpose %r perm = [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  %b = nn.broadcast_in_dim %x dims = [1, 2] : tensor<2x3xf32> -> tensor<4x2x3xf32>
  %p = nn.broadcast_in_dim %s dims = [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
  %u = nn.transpose %x perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %v = nn.transpose %u perm = [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  func.return %t, %b, %p, %u, %v : tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>
}
