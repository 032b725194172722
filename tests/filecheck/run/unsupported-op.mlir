// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.array(0.5, np.float32))"
// RUN: not irgrad-run %s --input %t.x.npy 2>&1 | filecheck %s

// An op the interpreter cannot run is reported, located, before anything runs.

func.func @main(%x: f32) -> f32 {
  %y = math.erf %x : f32
  func.return %y : f32
}

// CHECK:      {{.*}}unsupported-op.mlir:7:3: error: 'math.erf' op is not supported by the reference interpreter
// CHECK-NEXT:   %y = math.erf %x : f32
