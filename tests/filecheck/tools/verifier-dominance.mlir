// RUN: irgrad-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: sh -c 'irgrad-opt %s --split-input-file >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// What xDSL's verifiers accept and every consumer then trips over (the interpreter with a
// KeyError, LLVM with a broken PHI, a loop that never ends): irgrad-opt and irgrad-run
// reject it at the op, as MLIR does. Each case breaks one rule; the CHECK line is the error.
// EXIT: exit=1

func.func @use_before_def(%a: i32, %b: i32) -> i32 {
  %1 = arith.divsi %0, %b : i32
  %0 = arith.addi %a, %b : i32
  func.return %1 : i32
}
// CHECK: 'arith.divsi' op operand #0 is used before its definition (it does not dominate this use)

// -----

func.func @own_result(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.exp %y : tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// CHECK: 'nn.exp' op operand #0 is the op's own result (it does not dominate this use)

// -----

func.func @inside_its_definer(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %r = scf.if %c -> (tensor<2xf32>) {
    %t = nn.neg %r : tensor<2xf32>
    scf.yield %t : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}
// CHECK: 'nn.neg' op operand #0 is a result of the op this use is nested in (it does not dominate this use)

// -----

func.func @sibling_region(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %r = scf.if %c -> (tensor<2xf32>) {
    scf.yield %s : tensor<2xf32>
  } else {
    %s = nn.neg %x : tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}
// CHECK: 'scf.yield' op operand #0 is defined in a region that does not enclose this use (it does not dominate this use)

// -----

func.func @if_yields_nothing(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %r = scf.if %c -> (tensor<2xf32>) {
    %s = nn.sin %x : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}
// CHECK: 'scf.if' op region #0 yields 0 value(s) (none), but the op has 1 result(s) (tensor<2xf32>)

// -----

func.func @if_yields_the_wrong_type(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %r = scf.if %c -> (tensor<2xf32>) {
    scf.yield %x : tensor<2xf32>
  } else {
    %i = arith.constant 1 : i32
    scf.yield %i : i32
  }
  func.return %r : tensor<2xf32>
}
// CHECK: 'scf.if' op region #1 yields 1 value(s) (i32), but the op has 1 result(s) (tensor<2xf32>)

// -----

func.func @step_not_positive(%x: tensor<2xf32>) -> tensor<2xf32> {
  %lo = arith.constant 0 : index
  %hi = arith.constant 10 : index
  %step = arith.constant -5 : index
  %r = scf.for %i = %lo to %hi step %step iter_args(%acc = %x) -> (tensor<2xf32>) {
    %n = nn.neg %acc : tensor<2xf32>
    scf.yield %n : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}
// CHECK: 'scf.for' op constant step operand must be positive, got -5

// -----

func.func @empty_body() {
}
// CHECK: 'func.func' op symbol declaration cannot have public visibility (a body needs at least a func.return)

// -----

// Still accepted: a use in a later op's region, a block argument anywhere in its block, uses
// across the blocks of a CFG region (not checked: that needs a dominator tree), and a private
// declaration.
func.func @fine(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %y = nn.neg %x : tensor<2xf32>
  %r = scf.if %c -> (tensor<2xf32>) {
    scf.yield %y : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  cf.br ^next
^next:
  func.return %r : tensor<2xf32>
}
func.func private @declared(tensor<2xf32>) -> tensor<2xf32>
// CHECK-NOT: error
