// RUN: not irgrad-opt %s 2>&1 | filecheck --strict-whitespace %s
// RUN: irgrad-opt --verify-diagnostics %s
// RUN: sh -c 'irgrad-opt %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// A syntax error is reported at the token the parser stopped at: file:line:col, the source
// line, carets under the token. No Python traceback; exit code 1. With --verify-diagnostics the
// error is the one the annotation expects: exit code 0.

func.func @missing_colon(%a: i32) -> i32 {
  // expected-error @+1 {{Expected ':'}}
  %0 = arith.addi %a, %a i32
  func.return %0 : i32
}

// CHECK-NOT: Traceback
// CHECK: {{.*}}syntax-error.mlir:11:26: error: Expected ':'
// CHECK-NEXT:   %0 = arith.addi %a, %a i32
// CHECK-NEXT:                          ^~~
// CHECK-NOT: Traceback

// EXIT: exit=1
