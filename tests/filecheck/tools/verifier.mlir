// RUN: not irgrad-opt %s 2>&1 | filecheck --strict-whitespace %s
// RUN: irgrad-opt --verify-diagnostics %s
// RUN: sh -c 'irgrad-opt %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// A verifier failure names the op and points at it: MLIR's `file:line:col: error: 'op' op`.
// The annotation is what --verify-diagnostics expects there (then exit code 0).
func.func @wrong_return(%x: i32) -> i64 {
  // expected-error @+1 {{'func.return' op Expected arguments to have the same types}}
  func.return %x : i32
}

// CHECK-NOT: Traceback
// CHECK-NOT: Operation does not verify
// CHECK: {{.*}}verifier.mlir:9:3: error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// CHECK-NEXT:   func.return %x : i32
// CHECK-NEXT:   ^
// CHECK-NOT: Traceback

// EXIT: exit=1
