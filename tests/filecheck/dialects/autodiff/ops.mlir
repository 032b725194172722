// RUN: irgrad-opt %s | irgrad-opt | filecheck %s
// RUN: irgrad-opt %s --print-op-generic | irgrad-opt | filecheck %s

// Round trip of every autodiff op through the custom and the generic syntax.

func.func private @loss(tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
func.func private @scalar_loss(f32, i32) -> f32
func.func private @f(tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
func.func private @f_fwd(tensor<3xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3xf32>)
func.func private @f_bwd(tensor<3xf32>, tensor<2xf32>) -> (tensor<3xf32>, tensor<3x2xf32>)
func.func private @f_rule(tensor<3xf32>, tensor<3x2xf32>, tensor<3xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2xf32>)

// grad: `wrt` defaults to [0] and is always printed.
// CHECK-LABEL: func.func @grad(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[S:.*]]: f32, %[[N:.*]]: i32)
func.func @grad(%x: tensor<3xf32>, %y: tensor<3xf32>, %s: f32, %n: i32) -> (tensor<3xf32>, tensor<3xf32>, f32) {
  // CHECK: %{{.*}} = autodiff.grad @loss(%[[X]], %[[Y]]) wrt [0] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %g = autodiff.grad @loss(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // CHECK: %{{.*}}, %{{.*}} = autodiff.grad @loss(%[[X]], %[[Y]]) wrt [0, 1] : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %g0, %g1 = autodiff.grad @loss(%x, %y) wrt [0, 1] : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  // A float-scalar callee may take non-differentiated integer arguments; extra attributes survive.
  // CHECK: %{{.*}} = autodiff.grad @scalar_loss(%[[S]], %[[N]]) wrt [0] {tag = "x"} : (f32, i32) -> f32
  %gs = autodiff.grad @scalar_loss(%s, %n) wrt [0] {tag = "x"} : (f32, i32) -> f32
  func.return %g, %g1, %gs : tensor<3xf32>, tensor<3xf32>, f32
}

// value_and_grad: the callee's result first, then the gradients.
// CHECK-LABEL: func.func @value_and_grad(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>)
func.func @value_and_grad(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  // CHECK: %{{.*}}, %{{.*}} = autodiff.value_and_grad @loss(%[[X]], %[[Y]]) wrt [1] : (tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
  %v, %dy = autodiff.value_and_grad @loss(%x, %y) wrt [1] : (tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
  func.return %v, %dy : tensor<f32>, tensor<3xf32>
}

// vjp: cotangents of the (non-scalar) results, then the primal results and one cotangent per wrt argument.
// CHECK-LABEL: func.func @vjp(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3x2xf32>, %[[DY:.*]]: tensor<2xf32>)
func.func @vjp(%x: tensor<3xf32>, %w: tensor<3x2xf32>, %dy: tensor<2xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<3x2xf32>) {
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = autodiff.vjp @f(%[[X]], %[[W]]) cotangents(%[[DY]] : tensor<2xf32>) wrt [0, 1] : (tensor<3xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<3x2xf32>)
  %y, %dx, %dw = autodiff.vjp @f(%x, %w) cotangents(%dy : tensor<2xf32>) wrt [0, 1] : (tensor<3xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<3x2xf32>)
  func.return %y, %dx, %dw : tensor<2xf32>, tensor<3xf32>, tensor<3x2xf32>
}

// jvp: one tangent per wrt argument; the primal results, then one tangent per result.
// CHECK-LABEL: func.func @jvp(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3x2xf32>, %[[DW:.*]]: tensor<3x2xf32>)
func.func @jvp(%x: tensor<3xf32>, %w: tensor<3x2xf32>, %dw: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // CHECK: %{{.*}}, %{{.*}} = autodiff.jvp @f(%[[X]], %[[W]]) tangents(%[[DW]] : tensor<3x2xf32>) wrt [1] : (tensor<3xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %y, %dy = autodiff.jvp @f(%x, %w) tangents(%dw : tensor<3x2xf32>) wrt [1] : (tensor<3xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %y, %dy : tensor<2xf32>, tensor<2xf32>
}

// stop_gradient: any tensor or scalar type, result of the same type.
// CHECK-LABEL: func.func @stop_gradient(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[N:.*]]: i32, %[[D:.*]]: tensor<?xf64>)
func.func @stop_gradient(%x: tensor<3xf32>, %n: i32, %d: tensor<?xf64>) -> (tensor<3xf32>, i32, tensor<?xf64>) {
  // CHECK: %{{.*}} = autodiff.stop_gradient %[[X]] : tensor<3xf32>
  %a = autodiff.stop_gradient %x : tensor<3xf32>
  // CHECK: %{{.*}} = autodiff.stop_gradient %[[N]] : i32
  %b = autodiff.stop_gradient %n : i32
  // CHECK: %{{.*}} = autodiff.stop_gradient %[[D]] : tensor<?xf64>
  %c = autodiff.stop_gradient %d : tensor<?xf64>
  func.return %a, %b, %c : tensor<3xf32>, i32, tensor<?xf64>
}

// custom_vjp: calls @f; @f_fwd returns @f's result and a residual, @f_bwd maps (residual, cotangent) to cotangents.
// CHECK-LABEL: func.func @custom_vjp(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3x2xf32>)
func.func @custom_vjp(%x: tensor<3xf32>, %w: tensor<3x2xf32>) -> tensor<2xf32> {
  // CHECK: %{{.*}} = autodiff.custom_vjp @f(%[[X]], %[[W]]) fwd @f_fwd bwd @f_bwd : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  %y = autodiff.custom_vjp @f(%x, %w) fwd @f_fwd bwd @f_bwd : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// custom_jvp: calls @f; @f_rule maps (arguments, tangents) to (results, result tangents).
// CHECK-LABEL: func.func @custom_jvp(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3x2xf32>)
func.func @custom_jvp(%x: tensor<3xf32>, %w: tensor<3x2xf32>) -> tensor<2xf32> {
  // CHECK: %{{.*}} = autodiff.custom_jvp @f(%[[X]], %[[W]]) jvp @f_rule : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  %y = autodiff.custom_jvp @f(%x, %w) jvp @f_rule : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// checkpoint: calls @f, marking its intermediates for recomputation.
// CHECK-LABEL: func.func @checkpoint(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3x2xf32>)
func.func @checkpoint(%x: tensor<3xf32>, %w: tensor<3x2xf32>) -> tensor<2xf32> {
  // CHECK: %{{.*}} = autodiff.checkpoint @f(%[[X]], %[[W]]) : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  %y = autodiff.checkpoint @f(%x, %w) : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// batch: the batch axis of each argument (-1: not mapped) and of each result.
// CHECK-LABEL: func.func @batch(
// CHECK:         autodiff.batch @f(%{{.*}}, %{{.*}}) in_axes = [1, -1] out_axes = [0] : (tensor<3x8xf32>, tensor<3x2xf32>) -> tensor<8x2xf32>
func.func @batch(%xs: tensor<3x8xf32>, %w: tensor<3x2xf32>) -> tensor<8x2xf32> {
  %y = autodiff.batch @f(%xs, %w) in_axes = [1, -1] out_axes = [0] : (tensor<3x8xf32>, tensor<3x2xf32>) -> tensor<8x2xf32>
  func.return %y : tensor<8x2xf32>
}
