// RUN: not irgrad-opt -t no-such-target %s 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not irgrad-opt --no-such-flag %s 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not irgrad-opt -t llvm %s 2>&1 | filecheck %s --check-prefix=TRANSLATE

// Command-line mistakes print one `irgrad-opt: error:` line, not argparse's usage.

func.func @f() {
  func.return
}

// TARGET-NOT: Traceback
// TARGET: irgrad-opt: error: argument -t/--target: invalid choice: 'no-such-target'
// TARGET-NOT: Traceback

// FLAG: irgrad-opt: error: unrecognized arguments: --no-such-flag

// A module the llvm target cannot translate (func, not llvm.func) is a diagnostic too.
// TRANSLATE-NOT: Traceback
// TRANSLATE: irgrad-opt: error: target 'llvm' cannot translate this module: Conversion not implemented for op: func.func
// TRANSLATE-NOT: Traceback
