// RUN: irgrad-opt %s -p autodiff --split-input-file | filecheck %s

// autodiff.custom_jvp: forward mode calls the user's rule @g_rule (its primal results replace the op's);
// reverse mode transposes it: the cotangent of %x is the VJP, w.r.t. the tangent, of @g_rule_tangents (the
// rule's tangent outputs), taken at a zero tangent. @g's body is differentiated in neither mode.
// Numbers: tests/unit/autodiff/test_autodiff_custom_jvp.py.

func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = nn.exp %x : tensor<3xf32>
  func.return %y : tensor<3xf32>
}
func.func @g_rule(%x: tensor<3xf32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %y = nn.exp %x : tensor<3xf32>
  %three = nn.full 3.0 : tensor<3xf32>
  %dy = nn.mul %t, %three : tensor<3xf32>
  func.return %y, %dy : tensor<3xf32>, tensor<3xf32>
}
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %s = nn.sin %x : tensor<3xf32>
  %y = autodiff.custom_jvp @g(%s) jvp @g_rule : (tensor<3xf32>) -> tensor<3xf32>
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

// The VJP of the tangent map (the rule's tangent outputs), derived from the rule's body: the cotangent
// times 3. (The wrapper @g_rule_tangents itself is removed once its VJP exists.)
// CHECK-LABEL: func.func private @g_rule_vjp(
// CHECK:         %[[T_BAR:.*]] = nn.select
// CHECK-LABEL: func.func private @g_rule_tangents_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[T:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK:         func.call @g_rule_vjp(%[[X]], %[[T]], %{{.*}}, %[[CT]])
// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[S:.*]] = nn.sin %[[X]]
// CHECK-NEXT:    %[[Y:.*]] = func.call @g(%[[S]])
// CHECK:         %[[Y_BAR:.*]] = nn.broadcast_in_dim %[[CT]]
// CHECK-NEXT:    %[[ZERO:.*]] = nn.full 0.0 : tensor<3xf32>
// CHECK-NEXT:    %{{.*}}, %[[S_BAR:.*]] = func.call @g_rule_tangents_vjp(%[[S]], %[[ZERO]], %[[Y_BAR]])
// CHECK:         nn.cos %[[X]]
// CHECK-LABEL: func.func private @f_jvp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[X_DOT:.*]]: tensor<3xf32>)
// CHECK:         %{{.*}}, %{{.*}} = func.call @g_rule(
// CHECK-NOT:   @g_jvp
// CHECK-NOT:   @g_vjp
// CHECK-NOT:   autodiff.custom_jvp

// -----

// Under no derivative, custom_jvp is a call of its callee.
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
func.func @g_rule(%x: tensor<2xf32>, %t: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  func.return %x, %t : tensor<2xf32>, tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = autodiff.custom_jvp @g(%x) jvp @g_rule : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[Y:.*]] = func.call @g(%{{.*}}) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    func.return %[[Y]]
