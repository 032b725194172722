// RUN: python -c "import numpy as np; np.save('%t.t.npy', np.arange(4, dtype=np.float32)); np.save('%t.bad.npy', np.array(7)); np.save('%t.neg.npy', np.array(-1)); np.save('%t.ok.npy', np.array(2))"
// RUN: not irgrad-run %s --backend cpu --input %t.t.npy --input %t.bad.npy 2>&1 | filecheck %s
// RUN: not irgrad-run %s --backend cpu --input %t.t.npy --input %t.neg.npy 2>&1 | filecheck %s
// RUN: not irgrad-run %s --input %t.t.npy --input %t.bad.npy 2>&1 | filecheck %s --check-prefix=INTERP
// RUN: irgrad-run %s --backend cpu --input %t.t.npy --input %t.ok.npy | filecheck %s --check-prefix=OK
// RUN: irgrad-run %s --backend cpu --no-runtime-checks --input %t.t.npy --input %t.ok.npy | filecheck %s --check-prefix=OK

// An index out of range at run time: the compiled code checks it (generate-runtime-verification,
// on by default in irgrad-run --backend cpu) and reports it at the op, like the interpreter,
// instead of reading outside the buffer or crashing.

func.func @main(%t: tensor<4xf32>, %i: index) -> f32 {
  %v = tensor.extract %t[%i] : tensor<4xf32>
  func.return %v : f32
}

// CHECK-NOT:  Traceback
// CHECK:      {{.*}}out-of-bounds.mlir:13:3: error: 'memref.load' op out-of-bounds index for dimension 0 of size 4
// CHECK-NEXT:   %v = tensor.extract %t[%i] : tensor<4xf32>
// CHECK-NEXT: {{^}}  ^
// CHECK-NOT:  Traceback
// INTERP:     {{.*}}out-of-bounds.mlir:13:3: error: 'tensor.extract' op index [7] is out of bounds for shape [4]
// OK: 2.0
