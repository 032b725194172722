// RUN: python -c "import numpy as np; np.save('%t.t.npy', np.array(True)); np.save('%t.f.npy', np.array(False))"
// RUN: irgrad-run %s --input %t.t.npy | filecheck %s --check-prefix=OK
// RUN: irgrad-run %s --backend cpu --input %t.t.npy | filecheck %s --check-prefix=OK
// RUN: not irgrad-run %s --input %t.f.npy 2>&1 | filecheck %s
// RUN: not irgrad-run %s --backend cpu --input %t.f.npy 2>&1 | filecheck %s --check-prefix=CPU
// RUN: irgrad-opt %s -p generate-runtime-verification,canonicalize --verify-each=numeric | filecheck %s --check-prefix=CHECKED

// cf.assert runs on both backends: a false condition is an error carrying the assert's message
// (on the interpreter located at the assert), never an abort of the process.

func.func @main(%ok: i1) -> i32 {
  cf.assert %ok, "the flag must be set"
  %c = arith.constant 7 : i32
  func.return %c : i32
}

// IR holding runtime checks runs on the interpreter, so the passes after
// generate-runtime-verification can be checked numerically.
func.func @checked(%m: memref<4xf32>, %i: index) -> f32 {
  %v = memref.load %m[%i] : memref<4xf32>
  func.return %v : f32
}

// OK: 7
// CHECK: cf-assert.mlir:12:3: error: 'cf.assert' op assertion failed: the flag must be set
// CHECK-NOT: Traceback
// CPU: the flag must be set
// CPU-NOT: Traceback
// CHECKED: func.func @checked
// CHECKED: cf.assert
