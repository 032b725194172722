// RUN: not irgrad-opt %s 2>&1 | filecheck %s
// RUN: sh -c 'irgrad-opt %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// Some xDSL verifiers raise a bare Exception instead of a VerifyException (memref.load with
// the wrong number of indices): still a located verifier error, exit 1, not an internal error.
func.func @f(%m: memref<4x4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4x4xf32>
  func.return %v : f32
}

// CHECK-NOT: internal error
// CHECK: {{.*}}verifier-bare-exception.mlir:8:3: error: 'memref.load' op expected an index for each dimension
// CHECK-NEXT:   %v = memref.load %m[%c0] : memref<4x4xf32>
// CHECK-NOT: Traceback

// EXIT: exit=1
