// scf-split-reductions: a float reduction loop keeps `lanes` interleaved partial results,
// combined pairwise, then the leftover iterations. Checked numerically against the original
// on the reference interpreter (--verify-each=numeric).
// RUN: irgrad-opt %s --split-input-file -p 'scf-split-reductions{lanes=4}' --verify-each=numeric | filecheck %s
// RUN: not irgrad-opt %s --split-input-file -p 'scf-split-reductions{lanes=3}' 2>&1 | filecheck %s --check-prefix=BAD

// A sum of 1027 squares: 4 lanes from -0.0 (the first from the loop's initial value) over
// iterations 0..1023, pairwise (l0 + l1) + (l2 + l3), then iterations 1024..1026.
// CHECK-LABEL: func.func @sum
// CHECK:       %[[ID:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:       %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:       %[[END:.*]] = arith.constant 1024 : index
// CHECK:       %[[L0:.*]], %[[L1:.*]], %[[L2:.*]], %[[L3:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[END]] step %[[FOUR]] iter_args(%[[A0:.*]] = %z, %[[A1:.*]] = %[[ID]], %{{.*}} = %[[ID]], %{{.*}} = %[[ID]]) -> (f32, f32, f32, f32) {
// CHECK:         arith.addi %[[I]], %{{.*}} : index
// CHECK:         arith.addf %[[A0]], %{{.*}} : f32
// CHECK:         arith.addf %[[A1]], %{{.*}} : f32
// CHECK:         scf.yield
// CHECK:       %[[P01:.*]] = arith.addf %[[L0]], %[[L1]] : f32
// CHECK-NEXT:  %[[P23:.*]] = arith.addf %[[L2]], %[[L3]] : f32
// CHECK-NEXT:  %[[ALL:.*]] = arith.addf %[[P01]], %[[P23]] : f32
// CHECK-NEXT:  %[[REST:.*]] = arith.constant 1024 : index
// CHECK-NEXT:  %r = scf.for %{{.*}} = %[[REST]] to %n step %c1 iter_args(%{{.*}} = %[[ALL]]) -> (f32) {
// CHECK:       memref.store %r, %out[]
func.func @sum(%m: memref<1027xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1027 : index
  %z = memref.load %out[] : memref<f32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %v = memref.load %m[%i] : memref<1027xf32>
    %e = arith.mulf %v, %v : f32
    %a = arith.addf %acc, %e : f32
    scf.yield %a : f32
  }
  memref.store %r, %out[] : memref<f32>
  func.return
}

// -----

// A max over a multiple of the lanes: identity -inf, no remainder loop (the original goes).
// CHECK-LABEL: func.func @max
// CHECK:       arith.constant 0xfff0000000000000 : f64
// CHECK:       scf.for {{.*}} -> (f64, f64, f64, f64)
// CHECK-COUNT-4: arith.maximumf
// CHECK:       scf.yield
// CHECK-COUNT-3: arith.maximumf
// CHECK-NOT:   scf.for
// CHECK:       func.return
func.func @max(%m: memref<64xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 64 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %m[%i] : memref<64xf64>
    %a = arith.maximumf %v, %acc : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}

// -----

// Left alone: an integer sum (LLVM vectorizes those exactly itself), a loop shorter than two
// rounds of lanes, a partial result used by something else than the combiner (stored every
// iteration), a non-unit step and a loop with two carried values.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT:   -> (i32, i32
// CHECK-NOT:   -> (f32, f32, f32, f32)
// CHECK-COUNT-5: scf.for
// CHECK-NOT:   scf.for
func.func @untouched(%mi: memref<64xi32>, %m: memref<64xf32>, %log: memref<64xf32>) -> (i32, f32, f32, f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %n = arith.constant 64 : index
  %zi = arith.constant 0 : i32
  %z = arith.constant 0.0 : f32
  %ri = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zi) -> (i32) {
    %v = memref.load %mi[%i] : memref<64xi32>
    %a = arith.addi %acc, %v : i32
    scf.yield %a : i32
  }
  %short = scf.for %i = %c0 to %c7 step %c1 iter_args(%acc = %z) -> (f32) {
    %v = memref.load %m[%i] : memref<64xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  %logged = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %v = memref.load %m[%i] : memref<64xf32>
    %a = arith.addf %acc, %v : f32
    memref.store %a, %log[%i] : memref<64xf32>
    scf.yield %a : f32
  }
  %strided = scf.for %i = %c0 to %n step %c2 iter_args(%acc = %z) -> (f32) {
    %v = memref.load %m[%i] : memref<64xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  %s, %p = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z, %acc2 = %z) -> (f32, f32) {
    %v = memref.load %m[%i] : memref<64xf32>
    %a = arith.addf %acc, %v : f32
    %b = arith.mulf %acc2, %v : f32
    scf.yield %a, %b : f32, f32
  }
  func.return %ri, %short, %logged, %strided, %s, %p : i32, f32, f32, f32, f32, f32
}

// BAD: error: scf-split-reductions: lanes must be a power of two >= 2, got 3
// BAD-NOT: Traceback
