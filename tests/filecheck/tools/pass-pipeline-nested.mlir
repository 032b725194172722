// RUN: irgrad-opt %s --pass-pipeline='builtin.module(func.func(cse,canonicalize),symbol-dce)' | filecheck %s
// RUN: irgrad-opt %s --pass-pipeline='builtin.module(func.func(cse,canonicalize),symbol-dce)' --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=NESTED
// RUN: irgrad-opt %s --pass-pipeline=' builtin.module( func.func(cse) , symbol-dce )' --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s --check-prefix=DUMP
// RUN: irgrad-opt %s -p cse,symbol-dce --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s --check-prefix=DUMP
// RUN: irgrad-opt %s --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=3}))' 2>&1 | filecheck %s --check-prefix=MLIROPT
// RUN: not irgrad-opt %s --pass-pipeline='builtin.module(func.fun(cse))' 2>&1 | filecheck %s --check-prefix=ANCHOR
// RUN: not irgrad-opt %s --pass-pipeline='builtin.module(scf.for(cse))' 2>&1 | filecheck %s --check-prefix=ISOLATED
// RUN: not irgrad-opt %s --pass-pipeline='builtin.module(func.func(cse)' 2>&1 | filecheck %s --check-prefix=OPEN
// RUN: not irgrad-opt %s --pass-pipeline='builtin.module(cse))' 2>&1 | filecheck %s --check-prefix=CLOSE
// RUN: not irgrad-opt %s --pass-pipeline='cse,symbol-dce' 2>&1 | filecheck %s --check-prefix=BARE
// RUN: not irgrad-opt %s --pass-pipeline='builtin.module(func.func(csee))' 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not irgrad-opt %s --pass-pipeline='builtin.module(canonicalize{no-such-option=1})' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not irgrad-opt %s -p cse --pass-pipeline='builtin.module(cse)' 2>&1 | filecheck %s --check-prefix=BOTH

// MLIR's textual pipeline: passes nested under `func.func(...)` run on each function, one
// function after the other (cse then canonicalize on @f, then on @g); symbol-dce runs on the
// module and removes the private function nothing calls.

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}

func.func @g(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  func.return %0 : i32
}

func.func private @unused() -> () {
  func.return
}

// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %0 = arith.addi %a, %a : i32
// CHECK-NEXT:    %1 = arith.muli %0, %0 : i32
// CHECK-LABEL: func.func @g
// CHECK-NEXT:    func.return %a : i32
// CHECK-NOT:   @unused

// A nested pass dumps the function it ran on; a module pass the module.
// NESTED:      // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// NESTED-NEXT: func.func @f
// NESTED:      // -----// IR Dump After Canonicalize (canonicalize) //----- //
// NESTED-NEXT: func.func @f
// NESTED:      // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// NESTED-NEXT: func.func @g
// NESTED:      // -----// IR Dump After Canonicalize (canonicalize) //----- //
// NESTED-NEXT: func.func @g
// NESTED:      // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// NESTED-NEXT: func.func private @unused
// NESTED:      // -----// IR Dump After Canonicalize (canonicalize) //----- //
// NESTED-NEXT: func.func private @unused
// NESTED:      // -----// IR Dump After SymbolDCE (symbol-dce) //----- //
// NESTED-NEXT: builtin.module {

// --dump-pass-pipeline prints the parsed pipeline, anchors included (spaces dropped); `-p`
// passes run on the module.
// DUMP:      Pass Manager with 2 passes:
// DUMP-NEXT: builtin.module({{(func.func\()?}}cse{{\)?}},symbol-dce)

// MLIR's canonicalize options are accepted; xDSL's canonicalize runs to a fixed point, so
// the tool says that they change nothing.
// MLIROPT: irgrad-opt: warning: pass 'canonicalize': option 'max-iterations' is accepted for mlir-opt compatibility and has no effect here
// MLIROPT: func.func @g

// Errors name the column of the pipeline text, with a caret under it.
// ANCHOR:      irgrad-opt: error: invalid pass pipeline at column 16: 'func.fun' does not refer to a registered operation; did you mean 'func.func'?
// ANCHOR-NEXT:   builtin.module(func.fun(cse))
// ANCHOR-NEXT: {{^}}                 ^
// ISOLATED:    irgrad-opt: error: invalid pass pipeline at column 16: 'scf.for' is not isolated from above
// OPEN:        irgrad-opt: error: invalid pass pipeline at column 15: unbalanced parentheses: this '(' is never closed
// CLOSE:       irgrad-opt: error: invalid pass pipeline at column 20: unexpected ')': unbalanced parentheses
// BARE:        irgrad-opt: error: invalid pass pipeline at column 1: the pipeline must be wrapped with the anchor operation type, e.g. 'builtin.module(cse)'
// PASS:        irgrad-opt: error: invalid pass pipeline at column 26: unknown pass 'csee'; did you mean 'cse'?
// OPTION:      irgrad-opt: error: invalid pass pipeline at column 16: invalid options for pass 'canonicalize': no such option 'no-such-option'
// BOTH:        irgrad-opt: error: give the passes with -p or with --pass-pipeline, not both
// CHECK-NOT:   Traceback
