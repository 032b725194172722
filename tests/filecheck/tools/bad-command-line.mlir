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

// A module the llvm target cannot translate (func, not llvm.func) is a diagnostic too, located
// at the first op outside stage "llvm".
// TRANSLATE-NOT: Traceback
// TRANSLATE: bad-command-line.mlir:7:1: error: 'func.func' op breaks the "llvm" stage contract: only llvm dialect ops may remain
// TRANSLATE-NOT: Traceback
