// RUN: irgrad-opt %s -p autodiff --split-input-file | filecheck %s

// autodiff.custom_vjp: reverse mode calls the user's fwd in the forward sweep (keeping its residuals) and
// the user's bwd in the reverse sweep; @g's body is never differentiated. Forward mode, which JAX rejects,
// differentiates @g itself. Numbers: tests/unit/autodiff/test_autodiff_custom_vjp.py.

func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = nn.exp %x : tensor<3xf32>
  func.return %y : tensor<3xf32>
}
func.func @g_fwd(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %y = nn.exp %x : tensor<3xf32>
  func.return %y, %x : tensor<3xf32>, tensor<3xf32>
}
func.func @g_bwd(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %three = nn.full 3.0 : tensor<3xf32>
  %a = nn.mul %ct, %three : tensor<3xf32>
  func.return %a : tensor<3xf32>
}
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %s = nn.sin %x : tensor<3xf32>
  %y = autodiff.custom_vjp @g(%s) fwd @g_fwd bwd @g_bwd : (tensor<3xf32>) -> tensor<3xf32>
  %r = nn.reduce_sum %y axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %r : tensor<f32>
}
func.func @grad(%x: tensor<3xf32>) -> tensor<3xf32> {
  %g = autodiff.grad @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}
func.func @tangent(%x: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<f32> {
  %y, %t = autodiff.jvp @f(%x) tangents(%v : tensor<3xf32>) : (tensor<3xf32>) -> (tensor<f32>, tensor<f32>)
  func.return %t : tensor<f32>
}

// Forward mode differentiates @g itself (its jvp is placed after @g).
// CHECK-LABEL: func.func private @g_jvp(
// CHECK:         nn.exp
// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[S:.*]] = nn.sin %[[X]]
// CHECK-NEXT:    %[[Y:.*]], %[[RESIDUAL:.*]] = func.call @g_fwd(%[[S]]) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT:    %[[R:.*]] = nn.reduce_sum %[[Y]]
// CHECK-NEXT:    %[[Y_BAR:.*]] = nn.broadcast_in_dim %[[CT]]
// CHECK-NEXT:    %[[S_BAR:.*]] = func.call @g_bwd(%[[RESIDUAL]], %[[Y_BAR]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    nn.cos %[[X]]
// CHECK-NOT:     @g_vjp
// CHECK:         func.return %[[R]], %{{.*}}
// CHECK-LABEL: func.func private @f_jvp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[X_DOT:.*]]: tensor<3xf32>)
// CHECK:         %{{.*}}, %{{.*}} = func.call @g_jvp(
// CHECK-NOT:   autodiff.custom_vjp
// CHECK-NOT:   @g_vjp

// -----

// Several arguments and results, a cotangent for only the first result: bwd gets zeros for the second,
// and its cotangent for the integer argument is dropped.
func.func @h(%x: tensor<2xf32>, %n: i32) -> (tensor<2xf32>, tensor<2xf32>) {
  %y = nn.exp %x : tensor<2xf32>
  func.return %y, %x : tensor<2xf32>, tensor<2xf32>
}
func.func @h_fwd(%x: tensor<2xf32>, %n: i32) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %y = nn.exp %x : tensor<2xf32>
  func.return %y, %x, %y : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
func.func @h_bwd(%y: tensor<2xf32>, %ct0: tensor<2xf32>, %ct1: tensor<2xf32>) -> (tensor<2xf32>, i32) {
  %a = nn.mul %ct0, %y : tensor<2xf32>
  %b = nn.add %a, %ct1 : tensor<2xf32>
  %zero = arith.constant 0 : i32
  func.return %b, %zero : tensor<2xf32>, i32
}
func.func @f(%x: tensor<2xf32>, %n: i32) -> tensor<2xf32> {
  %a, %b = autodiff.custom_vjp @h(%x, %n) fwd @h_fwd bwd @h_bwd : (tensor<2xf32>, i32) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %a : tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>, %n: i32, %ct: tensor<2xf32>) -> tensor<2xf32> {
  %y, %dx = autodiff.vjp @f(%x, %n) cotangents(%ct : tensor<2xf32>) wrt [0] : (tensor<2xf32>, i32) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %dx : tensor<2xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<2xf32>, %[[N:.*]]: i32, %[[CT:.*]]: tensor<2xf32>)
// CHECK-NEXT:    %[[A:.*]], %[[B:.*]], %[[RES:.*]] = func.call @h_fwd(%[[X]], %[[N]])
// CHECK-NEXT:    %[[ZERO:.*]] = nn.full 0.0 : tensor<2xf32>
// CHECK-NEXT:    %[[X_BAR:.*]], %{{.*}} = func.call @h_bwd(%[[RES]], %[[CT]], %[[ZERO]]) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, i32)
// CHECK-NEXT:    func.return %[[A]], %[[X_BAR]]
