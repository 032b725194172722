// RUN: not irgrad-opt -p 'cse{foo=1}' %s 2>&1 | filecheck %s
// RUN: not irgrad-opt -p 'cse{' %s 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not irgrad-opt -p 'checkpoint-chain{no-such-option=1}' %s 2>&1 | filecheck %s --check-prefix=SPELLING
// RUN: not irgrad-opt -p 'checkpoint-chain{segmnts=2}' %s 2>&1 | filecheck %s --check-prefix=CLOSE
// RUN: not irgrad-opt -p 'checkpoint-chain{segments=many}' %s 2>&1 | filecheck %s --check-prefix=TYPE
// RUN: irgrad-opt -p 'checkpoint-chain{segments=2}' %s | filecheck %s --check-prefix=GOOD

// A pass option the pass does not have, or a malformed pipeline, is a command-line error.

func.func @f() {
  func.return
}

// CHECK-NOT: Traceback
// CHECK: irgrad-opt: error: invalid options for pass 'cse': no such option 'foo' (it takes no options)
// CHECK-NOT: Traceback

// SYNTAX-NOT: Traceback
// SYNTAX: irgrad-opt: error: could not parse pass pipeline 'cse{': Expected argument name here
// SYNTAX-NOT: Traceback

// Option names are spelled as the user wrote them (MLIR's dashes, not the field's underscores),
// with the options the pass has and the closest one.
// SPELLING-NOT: no_such_option
// SPELLING: irgrad-opt: error: invalid options for pass 'checkpoint-chain': no such option 'no-such-option' (it takes segments)
// CLOSE: no such option 'segmnts' (it takes segments); did you mean 'segments'?
// TYPE: irgrad-opt: error: invalid options for pass 'checkpoint-chain': option 'segments' takes int, got 'many'
// GOOD: func.func @f()
