// RUN: not irgrad-opt -p 'cse{foo=1}' %s 2>&1 | filecheck %s
// RUN: not irgrad-opt -p 'cse{' %s 2>&1 | filecheck %s --check-prefix=SYNTAX

// A pass option the pass does not have, or a malformed pipeline, is a command-line error.

func.func @f() {
  func.return
}

// CHECK-NOT: Traceback
// CHECK: irgrad-opt: error: invalid options for pass 'cse': Provided arguments ["foo"] not found
// CHECK-NOT: Traceback

// SYNTAX-NOT: Traceback
// SYNTAX: irgrad-opt: error: could not parse pass pipeline 'cse{': Expected argument name here
// SYNTAX-NOT: Traceback
