// RUN: irgrad-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: sh -c 'irgrad-opt %s --split-input-file >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// What xDSL's verifiers accept and every consumer then trips over (the interpreter with a
// KeyError, LLVM with a broken PHI, a loop that never ends): irgrad-opt and irgrad-run
// reject it at the op, as MLIR does. Each case breaks one rule; the expected-error annotation is the error.
// EXIT: exit=1

func.func @use_before_def(%a: i32, %b: i32) -> i32 {
  // expected-error @+1 {{'arith.divsi' op operand #0 is used before its definition (it does not dominate this use)}}
  %1 = arith.divsi %0, %b : i32
  %0 = arith.addi %a, %b : i32
  func.return %1 : i32
}

// -----

func.func @own_result(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'nn.exp' op operand #0 is the op's own result (it does not dominate this use)}}
  %y = nn.exp %y : tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @inside_its_definer(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %r = scf.if %c -> (tensor<2xf32>) {
    // expected-error @+1 {{'nn.neg' op operand #0 is a result of the op this use is nested in (it does not dominate this use)}}
    %t = nn.neg %r : tensor<2xf32>
    scf.yield %t : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

func.func @sibling_region(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %r = scf.if %c -> (tensor<2xf32>) {
    // expected-error @+1 {{'scf.yield' op operand #0 is defined in a region that does not enclose this use (it does not dominate this use)}}
    scf.yield %s : tensor<2xf32>
  } else {
    %s = nn.neg %x : tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

func.func @if_yields_nothing(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  // expected-error @+1 {{'scf.if' op region #0 yields 0 value(s) (none), but the op has 1 result(s) (tensor<2xf32>)}}
  %r = scf.if %c -> (tensor<2xf32>) {
    %s = nn.sin %x : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

func.func @if_yields_the_wrong_type(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  // expected-error @+1 {{'scf.if' op region #1 yields 1 value(s) (i32), but the op has 1 result(s) (tensor<2xf32>)}}
  %r = scf.if %c -> (tensor<2xf32>) {
    scf.yield %x : tensor<2xf32>
  } else {
    %i = arith.constant 1 : i32
    scf.yield %i : i32
  }
  func.return %r : tensor<2xf32>
}

// -----

func.func @step_not_positive(%x: tensor<2xf32>) -> tensor<2xf32> {
  %lo = arith.constant 0 : index
  %hi = arith.constant 10 : index
  %step = arith.constant -5 : index
  // expected-error @+1 {{'scf.for' op constant step operand must be positive, got -5}}
  %r = scf.for %i = %lo to %hi step %step iter_args(%acc = %x) -> (tensor<2xf32>) {
    %n = nn.neg %acc : tensor<2xf32>
    scf.yield %n : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

// expected-error @+1 {{'func.func' op symbol declaration cannot have public visibility (a body needs at least a func.return)}}
func.func @empty_body() {
}

// -----

// Across the blocks of a CFG region: ^a defines %y, but ^b is also reached from the entry
// without passing ^a, so ^a does not dominate ^b (MLIR's dominator-tree rule).
func.func @cfg_branch(%c: i1, %x: i32) -> i32 {
  cf.cond_br %c, ^a, ^b
^a:
  %y = arith.addi %x, %x : i32
  cf.br ^b
^b:
  // expected-error @+1 {{'arith.muli' op operand #0 is defined in a block that does not dominate this use's block (it does not dominate this use)}}
  %z = arith.muli %y, %x : i32
  func.return %z : i32
}

// -----

// A loop: the header dominates the body, not the other way round.
func.func @cfg_loop(%n: i32) -> i32 {
  %z = arith.constant 0 : i32
  cf.br ^head(%z : i32)
^head(%i: i32):
  // expected-error @+1 {{'arith.addi' op operand #1 is defined in a block that does not dominate this use's block (it does not dominate this use)}}
  %s = arith.addi %i, %t : i32
  %done = arith.cmpi sge, %s, %n : i32
  cf.cond_br %done, ^exit, ^body
^body:
  %t = arith.addi %i, %n : i32
  cf.br ^head(%t : i32)
^exit:
  func.return %s : i32
}

// -----

// Still accepted: a use in a later op's region, a block argument anywhere in its block, uses
// in blocks the definition's block dominates (also through a branch and a join), uses in a
// block the entry never reaches (not checked, as in MLIR), and a private declaration.
func.func @fine(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %y = nn.neg %x : tensor<2xf32>
  %r = scf.if %c -> (tensor<2xf32>) {
    scf.yield %y : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  cf.cond_br %c, ^left, ^right
^left:
  %l = nn.exp %y : tensor<2xf32>
  cf.br ^join
^right:
  cf.br ^join
^join:
  %j = nn.add %r, %y : tensor<2xf32>
  func.return %j : tensor<2xf32>
^unreachable:
  %u = nn.add %l, %l : tensor<2xf32>
  cf.br ^unreachable
}
func.func private @declared(tensor<2xf32>) -> tensor<2xf32>
// CHECK-LABEL: func.func @fine
// CHECK:       func.func private @declared
