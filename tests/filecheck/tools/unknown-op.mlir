// RUN: not irgrad-opt %s 2>&1 | filecheck %s
// RUN: irgrad-opt --verify-diagnostics %s

// An op of an unknown dialect is a located parse error, not a traceback.

func.func @f(%a: i32) -> i32 {
  // expected-error @+1 {{Operation foo.bar is not registered}}
  %0 = foo.bar %a : i32
  func.return %0 : i32
}

// CHECK-NOT: Traceback
// CHECK: {{.*}}unknown-op.mlir:8:{{[0-9]+}}: error: Operation foo.bar is not registered
// CHECK-NEXT: %0 = foo.bar %a : i32
// CHECK-NOT: Traceback
