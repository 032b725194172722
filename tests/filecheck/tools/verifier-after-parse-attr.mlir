// RUN: not irgrad-opt %s 2>&1 | filecheck %s

// An attribute that fails its verifier while being parsed is reported at its op.

func.func @f() -> i8 {
  %0 = arith.constant 300 : i8
  func.return %0 : i8
}

// CHECK-NOT: Traceback
// CHECK: {{.*}}verifier-after-parse-attr.mlir:6:3: error: Integer value 300 is out of range for type i8
// CHECK-NOT: Traceback
