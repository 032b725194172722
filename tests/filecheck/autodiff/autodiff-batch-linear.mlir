// RUN: irgrad-opt %s -p autodiff | filecheck %s

// Batching rules of the contractions (rules/linear.py) and of scf.if on a per-example condition
// (rules/scf.py). None broadcasts an operand to the batch: a broadcast weight would be B copies of it
// and B small GEMMs instead of one large one. Numbers: tests/unit/autodiff/test_vmap_programs.py.

func.func @layer(%x: tensor<3x5xf32>, %w: tensor<5x2xf32>) -> tensor<3x2xf32> {
  %y = nn.matmul %x, %w : (tensor<3x5xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}
func.func @per_example_inputs(%xs: tensor<8x3x5xf32>, %w: tensor<5x2xf32>) -> tensor<8x3x2xf32> {
  %y = autodiff.batch @layer(%xs, %w) in_axes = [0, -1] out_axes = [0] : (tensor<8x3x5xf32>, tensor<5x2xf32>) -> tensor<8x3x2xf32>
  func.return %y : tensor<8x3x2xf32>
}
func.func @per_example_weights(%x: tensor<3x5xf32>, %ws: tensor<8x5x2xf32>) -> tensor<8x3x2xf32> {
  %y = autodiff.batch @layer(%x, %ws) in_axes = [-1, 0] out_axes = [0] : (tensor<3x5xf32>, tensor<8x5x2xf32>) -> tensor<8x3x2xf32>
  func.return %y : tensor<8x3x2xf32>
}
func.func @both_per_example(%xs: tensor<8x3x5xf32>, %ws: tensor<8x5x2xf32>) -> tensor<8x3x2xf32> {
  %y = autodiff.batch @layer(%xs, %ws) in_axes = [0, 0] out_axes = [0] : (tensor<8x3x5xf32>, tensor<8x5x2xf32>) -> tensor<8x3x2xf32>
  func.return %y : tensor<8x3x2xf32>
}

// Only the lhs batched (a batch of inputs times shared weights, the forward pass of per-example
// gradients): the examples are more rows of one GEMM, [8*3, 5] @ [5, 2]; reshapes are free.
// CHECK-LABEL: func.func private @layer_batch(
// CHECK-SAME:      %[[X:.*]]: tensor<8x3x5xf32>, %[[W:.*]]: tensor<5x2xf32>) -> tensor<8x3x2xf32>
// CHECK-NEXT:    %[[ROWS:.*]] = nn.reshape %[[X]] : tensor<8x3x5xf32> -> tensor<24x5xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.matmul %[[ROWS]], %[[W]] : (tensor<24x5xf32>, tensor<5x2xf32>) -> tensor<24x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.reshape %[[Y]] : tensor<24x2xf32> -> tensor<8x3x2xf32>
// CHECK-NEXT:    func.return

// Only the rhs batched: the examples are more columns, [3, 5] @ [5, 8*2] (the batch moves next to N
// and back, one transpose each way).
// CHECK-LABEL: func.func private @layer_batch_1(
// CHECK-SAME:      %[[X:.*]]: tensor<3x5xf32>, %[[W:.*]]: tensor<8x5x2xf32>) -> tensor<8x3x2xf32>
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %[[W]] perm = [1, 0, 2] : tensor<8x5x2xf32> -> tensor<5x8x2xf32>
// CHECK-NEXT:    %[[COLUMNS:.*]] = nn.reshape %[[T]] : tensor<5x8x2xf32> -> tensor<5x16xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.matmul %[[X]], %[[COLUMNS]] : (tensor<3x5xf32>, tensor<5x16xf32>) -> tensor<3x16xf32>
// CHECK-NEXT:    %[[Y3:.*]] = nn.reshape %[[Y]] : tensor<3x16xf32> -> tensor<3x8x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.transpose %[[Y3]] perm = [1, 0, 2] : tensor<3x8x2xf32> -> tensor<8x3x2xf32>
// CHECK-NEXT:    func.return

// Both batched: nn.matmul's own leading batch dimension.
// CHECK-LABEL: func.func private @layer_batch_2(
// CHECK-NEXT:    %{{.*}} = nn.matmul %{{.*}}, %{{.*}} : (tensor<8x3x5xf32>, tensor<8x5x2xf32>) -> tensor<8x3x2xf32>
// CHECK-NEXT:    func.return

// CHECK-LABEL: func.func @per_example_inputs(
// CHECK:         func.call @layer_batch(

func.func @conv(%x: tensor<1x2x6x6xf32>, %k: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = nn.conv2d %x, %k stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
func.func @conv_per_example(%xs: tensor<5x1x2x6x6xf32>, %k: tensor<4x2x3x3xf32>) -> tensor<5x1x4x6x6xf32> {
  %y = autodiff.batch @conv(%xs, %k) in_axes = [0, -1] out_axes = [0] : (tensor<5x1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<5x1x4x6x6xf32>
  func.return %y : tensor<5x1x4x6x6xf32>
}

// conv2d of per-example images with a shared kernel: the examples are more images, N = 5 * 1.
// CHECK-LABEL: func.func private @conv_batch(
// CHECK-NEXT:    %[[IMAGES:.*]] = nn.reshape %{{.*}} : tensor<5x1x2x6x6xf32> -> tensor<5x2x6x6xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.conv2d %[[IMAGES]], %{{.*}} stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<5x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<5x4x6x6xf32>
// CHECK-NEXT:    %{{.*}} = nn.reshape %[[Y]] : tensor<5x4x6x6xf32> -> tensor<5x1x4x6x6xf32>
// CHECK-NEXT:    func.return

// ig.cond on a per-example predicate. The condition is tensor.extract of a batched i1 tensor: a batched
// scalar, tensor<4xi1>. The examples may go different ways, so no single scf.if can run: as JAX does,
// both branches run on every example (inline, no scf.if left) and each result is a select on the
// condition broadcast to the result's shape. The branch an example did not take is computed and
// discarded by the select (never multiplied by a mask), so a NaN there cannot leak into the result.
func.func @choose(%x: tensor<3xf32>) -> tensor<3xf32> {
  %zero = nn.full 0.0 : tensor<f32>
  %total = nn.reduce_sum %x axes = [0] : tensor<3xf32> -> tensor<f32>
  %positive = nn.compare gt, %total, %zero : tensor<f32>
  %p = tensor.extract %positive[] : tensor<i1>
  %r = scf.if %p -> (tensor<3xf32>) {
    %s = nn.sin %x : tensor<3xf32>
    scf.yield %s : tensor<3xf32>
  } else {
    %n = nn.neg %x : tensor<3xf32>
    scf.yield %n : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @choose_per_example(%xs: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = autodiff.batch @choose(%xs) in_axes = [0] out_axes = [0] : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func.func private @choose_batch(
// CHECK-SAME:      %[[X:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:         %[[P:.*]] = nn.compare gt, %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK-NOT:     tensor.extract
// CHECK-NOT:     scf.if
// CHECK:         %[[THEN:.*]] = nn.sin %[[X]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[ELSE:.*]] = nn.neg %[[X]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[MASK:.*]] = nn.broadcast_in_dim %[[P]] dims = [0] : tensor<4xi1> -> tensor<4x3xi1>
// CHECK-NEXT:    %[[R:.*]] = nn.select %[[MASK]], %[[THEN]], %[[ELSE]] : tensor<4x3xi1>, tensor<4x3xf32>
// CHECK-NEXT:    func.return %[[R]]

// On a condition that is the same for every example, the scf.if stays, its branches batched; a result
// batched in one branch only is broadcast in the other.
func.func @choose_shared(%x: tensor<3xf32>, %c: tensor<i1>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %p = tensor.extract %c[] : tensor<i1>
  %r = scf.if %p -> (tensor<3xf32>) {
    %s = nn.sin %x : tensor<3xf32>
    scf.yield %s : tensor<3xf32>
  } else {
    scf.yield %w : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @choose_shared_per_example(%xs: tensor<4x3xf32>, %c: tensor<i1>, %w: tensor<3xf32>) -> tensor<4x3xf32> {
  %r = autodiff.batch @choose_shared(%xs, %c, %w) in_axes = [0, -1, -1] out_axes = [0] : (tensor<4x3xf32>, tensor<i1>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func.func private @choose_shared_batch(
// CHECK-SAME:      %[[X:.*]]: tensor<4x3xf32>, %[[C:.*]]: tensor<i1>, %[[W:.*]]: tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[P:.*]] = tensor.extract %[[C]][] : tensor<i1>
// CHECK-NEXT:    %{{.*}} = scf.if %[[P]] -> (tensor<4x3xf32>) {
// CHECK-NEXT:      %[[S:.*]] = nn.sin %[[X]] : tensor<4x3xf32>
// CHECK-NEXT:      scf.yield %[[S]] : tensor<4x3xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[WB:.*]] = nn.broadcast_in_dim %[[W]] dims = [1] : tensor<3xf32> -> tensor<4x3xf32>
// CHECK-NEXT:      scf.yield %[[WB]] : tensor<4x3xf32>
// CHECK-NEXT:    }
