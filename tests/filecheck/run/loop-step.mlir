// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.arange(3, dtype=np.float32)); np.save('%t.zero.npy', np.int64(0)); np.save('%t.three.npy', np.int64(3))"
// RUN: not irgrad-run %s --backend cpu --input %t.x.npy --input %t.zero.npy 2>&1 | filecheck %s
// RUN: not irgrad-run %s --input %t.x.npy --input %t.zero.npy 2>&1 | filecheck %s
// RUN: irgrad-run %s --backend cpu --input %t.x.npy --input %t.three.npy | filecheck %s --check-prefix=OK

// A loop whose step comes from an input: 0 is an error at the loop on both backends (compiled
// code looped forever before), 3 runs four iterations.
// CHECK: loop-step.mlir:16:3: error: 'scf.for' op step
// CHECK-NOT: Traceback
// OK: [0. 1. 2.]
func.func @main(%x: tensor<3xf32>, %s: tensor<i64>) -> tensor<3xf32> {
  %lo = arith.constant 0 : index
  %hi = arith.constant 10 : index
  %si = tensor.extract %s[] : tensor<i64>
  %step = arith.index_cast %si : i64 to index
  %r = scf.for %i = %lo to %hi step %step iter_args(%acc = %x) -> (tensor<3xf32>) {
    %n = nn.neg %acc : tensor<3xf32>
    scf.yield %n : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
