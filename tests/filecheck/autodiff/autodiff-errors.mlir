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

// An op without a rule inside a loop body: the error points at the op inside the loop and names the function
// the body was outlined to, and the loop it came from.
func.func @f(%x: tensor<3xf32>, %n: index) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<3xf32>) {
    %m = nn.mul %acc, %x : tensor<3xf32>
    // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:5: error: 'math.atan' op has no jvp rule (forward mode) but must be differentiated in @f_for_body (outlined from the scf.for in @f): its operand #0 (%m) depends on differentiated argument #1 (%acc) of @f_for_body
    %a = math.atan %m : tensor<3xf32>
    scf.yield %a : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %n: index, %v: tensor<3xf32>) -> tensor<3xf32> {
  %y, %t = autodiff.jvp @f(%x, %n) tangents(%v : tensor<3xf32>) : (tensor<3xf32>, index) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %t : tensor<3xf32>
}

// -----

// An scf.while whose condition region hands the body something other than its own arguments (ig.while_loop
// never makes one).
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:3: error: 'scf.while' op not supported yet: an scf.while whose condition region passes the body values other than its own arguments (reverse mode)
  %r = scf.while (%a = %x) : (tensor<3xf32>) -> tensor<3xf32> {
    %e = nn.exp %a : tensor<3xf32>
    %s = nn.reduce_sum %e axes = [0] : tensor<3xf32> -> tensor<f32>
    %lim = nn.full 10.0 : tensor<f32>
    %p = nn.compare lt, %s, %lim : tensor<f32>
    %c = tensor.extract %p[] : tensor<i1>
    scf.condition(%c) %e : tensor<3xf32>
  } do {
  ^bb0(%b: tensor<3xf32>):
    scf.yield %b : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %y, %dx = autodiff.vjp @f(%x) cotangents(%ct : tensor<3xf32>) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %dx : tensor<3xf32>
}

// -----

// scf ops other than if, for and while.
func.func @f(%x: tensor<3xf32>, %k: index) -> tensor<3xf32> {
  // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:3: error: 'scf.index_switch' op not supported yet: scf.index_switch inside a differentiated function (@f, reverse mode); only scf.if, scf.for and scf.while have rules
  %r = scf.index_switch %k -> tensor<3xf32>
  case 0 {
    %e = nn.exp %x : tensor<3xf32>
    scf.yield %e : tensor<3xf32>
  }
  default {
    scf.yield %x : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %k: index, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %y, %dx = autodiff.vjp @f(%x, %k) cotangents(%ct : tensor<3xf32>) wrt [0] : (tensor<3xf32>, index) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %dx : tensor<3xf32>
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

// -----

// vmap of a tensor.splat with dynamic sizes (nn tensors have static shapes); per-example loop bounds, while_loop
// conditions and comparisons are supported (tests/filecheck/autodiff/autodiff-batch-loops.mlir).
func.func @f(%x: tensor<f32>, %n: index) -> tensor<?xf32> {
  %s = tensor.extract %x[] : tensor<f32>
  // CHECK: autodiff-errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.splat' op vmap: not supported yet: a tensor.splat with dynamic sizes
  %t = tensor.splat %s[%n] : tensor<?xf32>
  func.return %t : tensor<?xf32>
}
func.func @main(%x: tensor<4xf32>, %n: index) -> tensor<4x?xf32> {
  %e = autodiff.batch @f(%x, %n) in_axes = [0, -1] out_axes = [0] : (tensor<4xf32>, index) -> tensor<4x?xf32>
  func.return %e : tensor<4x?xf32>
}

// CHECK-NOT: Traceback
