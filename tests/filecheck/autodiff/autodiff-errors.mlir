// RUN: not irgrad-opt %s -p autodiff --split-input-file 2>&1 | filecheck %s
// RUN: sh -c 'irgrad-opt %s -p autodiff --split-input-file >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// What the autodiff pass cannot differentiate, and what it says: the op, its location, the mode, the value
// that made it active and where a rule would go. Every case is a diagnostic (exit code 1), not a crash.

// CHECK-NOT: Traceback
// EXIT: exit=1

// An active op without a reverse-mode rule.
func.func @f(%x: f32) -> f32 {
  // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:3: error: 'math.atan' op has no vjp rule (reverse mode) but must be differentiated in @f: its operand #0 (%x) depends on differentiated argument #0 (%x) of @f; add one with @vjp_rule(AtanOp) in irgrad/autodiff/rules/elementwise.py, or mark it non_differentiable
  %y = math.atan %x : f32
  func.return %y : f32
}
func.func @main(%x: f32) -> f32 {
  %g = autodiff.grad @f(%x) : (f32) -> f32
  func.return %g : f32
}

// -----

// The same op in forward mode; the active value is an intermediate, named after its source.
func.func @f(%x: f32, %y: f32) -> f32 {
  %s = arith.mulf %x, %y : f32
  // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:3: error: 'math.atan' op has no jvp rule (forward mode) but must be differentiated in @f: its operand #0 (%s) depends on differentiated argument #1 (%y) of @f; add one with @jvp_rule(AtanOp)
  %a = math.atan %s : f32
  func.return %a : f32
}
func.func @main(%x: f32, %y: f32, %dy: f32) -> f32 {
  %a, %da = autodiff.jvp @f(%x, %y) tangents(%dy : f32) wrt [1] : (f32, f32) -> (f32, f32)
  func.return %da : f32
}

// -----

// A loop carrying an active value: control flow is a later milestone.
func.func @f(%x: tensor<3xf32>, %n: index) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:3: error: 'scf.for' op not supported yet: scf.for inside a differentiated function (@f, forward mode); control flow is a later milestone
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<3xf32>) {
    %m = nn.mul %acc, %x : tensor<3xf32>
    scf.yield %m : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %n: index, %v: tensor<3xf32>) -> tensor<3xf32> {
  %y, %t = autodiff.jvp @f(%x, %n) tangents(%v : tensor<3xf32>) : (tensor<3xf32>, index) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %t : tensor<3xf32>
}

// -----

// A branch that only reads an active value from outside its regions is active too.
func.func @f(%x: tensor<3xf32>, %p: i1) -> tensor<3xf32> {
  // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:3: error: 'scf.if' op not supported yet: scf.if inside a differentiated function (@f, reverse mode)
  %r = scf.if %p -> (tensor<3xf32>) {
    %e = nn.exp %x : tensor<3xf32>
    scf.yield %e : tensor<3xf32>
  } else {
    scf.yield %x : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %p: i1, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %y, %dx = autodiff.vjp @f(%x, %p) cotangents(%ct : tensor<3xf32>) : (tensor<3xf32>, i1) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %dx : tensor<3xf32>
}

// -----

// Element access on an active tensor.
func.func @f(%x: tensor<3xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.extract' op not supported yet: tensor.extract inside a differentiated function (@f, reverse mode); element access on differentiated tensors is a later milestone
  %e = tensor.extract %x[%c0] : tensor<3xf32>
  func.return %e : f32
}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %g = autodiff.grad @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}

// -----

// A user-defined VJP inside a differentiated function.
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
func.func @g_fwd(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  func.return %x, %x : tensor<2xf32>, tensor<2xf32>
}
func.func @g_bwd(%r: tensor<2xf32>, %ct: tensor<2xf32>) -> tensor<2xf32> {
  func.return %ct : tensor<2xf32>
}
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:3: error: 'autodiff.custom_vjp' op not supported yet: autodiff.custom_vjp inside a differentiated function (@f, reverse mode)
  %y = autodiff.custom_vjp @g(%x) fwd @g_fwd bwd @g_bwd : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>, %ct: tensor<2xf32>) -> tensor<2xf32> {
  %y, %dx = autodiff.vjp @f(%x) cotangents(%ct : tensor<2xf32>) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %dx : tensor<2xf32>
}

// -----

// A callee without a body cannot be differentiated.
func.func private @external(tensor<3xf32>) -> tensor<f32>
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:3: error: 'autodiff.grad' op cannot differentiate @external: it is a declaration without a body
  %g = autodiff.grad @external(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}

// -----

// A function that asks for its own derivative.
// CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:1: error: 'func.func' op derivative requests form a cycle (@f -> @f)
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %g = autodiff.grad @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %s = nn.reduce_sum %g axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

// CHECK-NOT: Traceback
