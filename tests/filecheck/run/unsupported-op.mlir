// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.array(5, np.int32))"
// RUN: not irgrad-run %s --input %t.x.npy 2>&1 | filecheck %s

// An op the interpreter cannot run is reported, located, before anything runs.

func.func @main(%x: i32) -> i32 {
  %y, %z = arith.mulsi_extended %x, %x : i32
  func.return %y : i32
}

// CHECK:      {{.*}}unsupported-op.mlir:7:3: error: 'arith.mulsi_extended' op is not supported by the reference interpreter
// CHECK-NEXT:   %y, %z = arith.mulsi_extended %x, %x : i32
