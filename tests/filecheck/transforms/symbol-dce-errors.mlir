// RUN: not irgrad-opt -p symbol-dce --allow-unregistered-dialect %s 2>&1 | filecheck %s

// An unregistered op with a region may be a symbol table, whose own symbols its uses would
// name: symbol-dce cannot tell what is used and says so, at the op, instead of guessing.

// CHECK-NOT: Traceback
// CHECK: symbol-dce-errors.mlir:[[# @LINE + 1]]:1: error: 'test.region' op may be a symbol table; symbol-dce cannot reliably compute symbol uses
"test.region"() ({
  func.func private @callee() {
    func.return
  }
}) : () -> ()
