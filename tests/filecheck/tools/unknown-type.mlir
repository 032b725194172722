// RUN: not irgrad-opt %s 2>&1 | filecheck %s

// An unknown type or attribute is a parse error with a file:line:col, not a traceback.

func.func @f(%a: !foo.type) {
  func.return
}

// CHECK-NOT: Traceback
// CHECK: {{.*}}unknown-type.mlir:5:{{[0-9]+}}: error: 'foo.type' is not registered
// CHECK-NOT: Traceback
