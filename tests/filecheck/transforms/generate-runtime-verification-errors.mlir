// RUN: not irgrad-opt --disable-verify -p generate-runtime-verification %s 2>&1 | filecheck %s

// An access with fewer indices than its memref's rank has no dimension to check an index
// against: unverified IR (here through --disable-verify) is a located error at the op, not a
// Python exception.

// CHECK-NOT: Traceback
// CHECK: generate-runtime-verification-errors.mlir:[[# @LINE + 3]]:3: error: 'memref.load' op has 1 indices for a value of rank 2: generate-runtime-verification cannot check it
// CHECK-NOT: Traceback
func.func @wrong_rank(%m: memref<4x8xf32>, %i: index) -> f32 {
  %v = memref.load %m[%i] : memref<4x8xf32>
  func.return %v : f32
}
