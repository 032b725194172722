// scf-split-reductions: a float reduction loop keeps `lanes` interleaved partial results,
// combined pairwise, then the leftover iterations. Checked numerically against the original
// on the reference interpreter (--verify-each=numeric).
// RUN: irgrad-opt %s --split-input-file -p 'scf-split-reductions{lanes=4 block=0}' --verify-each=numeric | filecheck %s
// RUN: irgrad-opt %s --split-input-file -p 'scf-split-reductions{lanes=4 block=256}' --verify-each=numeric | filecheck %s --check-prefix=BLOCK
// RUN: not irgrad-opt %s --split-input-file -p 'scf-split-reductions{lanes=3}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not irgrad-opt %s --split-input-file -p 'scf-split-reductions{lanes=4 block=6}' 2>&1 | filecheck %s --check-prefix=BAD-BLOCK

// A sum of 1027 squares: 4 lanes from -0.0 (the first from the loop's initial value) over
// iterations 0..1023, pairwise (l0 + l1) + (l2 + l3), then iterations 1024..1026.
// CHECK-LABEL: func.func @sum
// CHECK:       %[[ID:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:       %[[END:.*]] = arith.constant 1024 : index
// CHECK:       %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:       %[[L0:.*]], %[[L1:.*]], %[[L2:.*]], %[[L3:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[END]] step %[[FOUR]] iter_args(%[[A0:.*]] = %z, %[[A1:.*]] = %[[ID]], %{{.*}} = %[[ID]], %{{.*}} = %[[ID]]) -> (f32, f32, f32, f32) {
// CHECK:         arith.addi %[[I]], %{{.*}} : index
// CHECK:         arith.addf %[[A0]], %{{.*}} : f32
// CHECK:         arith.addf %[[A1]], %{{.*}} : f32
// CHECK:         scf.yield
// CHECK:       %[[P01:.*]] = arith.addf %[[L0]], %[[L1]] : f32
// CHECK-NEXT:  %[[P23:.*]] = arith.addf %[[L2]], %[[L3]] : f32
// CHECK-NEXT:  %[[ALL:.*]] = arith.addf %[[P01]], %[[P23]] : f32
// CHECK-NEXT:  %r = scf.for %{{.*}} = %[[END]] to %n step %c1 iter_args(%{{.*}} = %[[ALL]]) -> (f32) {
// CHECK:       memref.store %r, %out[]

// With blocks of 256: @sum is outside any parallel loop, so its 4 blocks are an scf.parallel
// (threads may take them), each block's 4 lanes from -0.0 stored in a buffer of 4 x 4, then
// added to the running lanes in block order by an scf.for; then iterations 1024..1026.
// BLOCK-LABEL: func.func @sum
// BLOCK:       %[[ID:[0-9a-z_]+]] = arith.constant -0.000000e+00 : f32
// BLOCK:       %[[BUF:[0-9a-z_]+]] = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// BLOCK:       scf.parallel (%[[B:[0-9a-z_]+]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// BLOCK:         %[[L0:[0-9a-z_]+]], %[[L1:[0-9a-z_]+]], %[[L2:[0-9a-z_]+]], %[[L3:[0-9a-z_]+]] = scf.for %{{.*}} iter_args({{.*}} = %[[ID]], {{.*}} = %[[ID]], {{.*}} = %[[ID]], {{.*}} = %[[ID]]) -> (f32, f32, f32, f32) {
// BLOCK-COUNT-4:   arith.mulf
// BLOCK:         memref.store %[[L0]], %[[BUF]]
// BLOCK:         memref.store %[[L3]], %[[BUF]]
// BLOCK-NEXT:  {{^    }$}}
// BLOCK:       %[[R0:[0-9a-z_]+]], %[[R1:[0-9a-z_]+]], %{{.*}}, %{{.*}} = scf.for %{{.*}} iter_args(%[[A0:[0-9a-z_]+]] = %z, %[[A1:[0-9a-z_]+]] = %[[ID]], {{.*}}) -> (f32, f32, f32, f32) {
// BLOCK:         %[[V0:[0-9a-z_]+]] = memref.load %[[BUF]]
// BLOCK-NEXT:    arith.addf %[[A0]], %[[V0]] : f32
// BLOCK:       memref.dealloc %[[BUF]]
// BLOCK:       arith.addf %[[R0]], %[[R1]] : f32
// BLOCK:       %r = scf.for
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

// -----

// A body calling a math function, in blocks of 256 (with lanes=4 here): per block (an
// scf.parallel iteration) the values go to a stack buffer by an elementwise loop LLVM
// vectorizes, then the block's lanes take them; the split loop takes the last 1100 - 1024
// iterations (no tail: 1100 = 275 * 4).
// BLOCK-LABEL: func.func @lse
// BLOCK:       %[[LANES:[0-9a-z_]+]] = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// BLOCK:       scf.parallel (%[[B:[0-9a-z_]+]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// BLOCK-NEXT:    %[[OFF:[0-9a-z_]+]] = arith.muli %[[B]], %{{.*}} : index
// BLOCK-NEXT:    %[[BASE:[0-9a-z_]+]] = arith.addi %c0, %[[OFF]] : index
// BLOCK-NEXT:    %[[BUF:[0-9a-z_]+]] = memref.alloca() {alignment = 64 : i64} : memref<256xf32>
// BLOCK-NEXT:    scf.for %[[J:[0-9a-z_]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// BLOCK-NEXT:      %[[I:[0-9a-z_]+]] = arith.addi %[[BASE]], %[[J]] : index
// BLOCK-NEXT:      %{{.*}} = memref.load %m[%[[I]]] : memref<1100xf32>
// BLOCK-NEXT:      %[[E:[0-9a-z_]+]] = math.exp
// BLOCK-NEXT:      memref.store %[[E]], %[[BUF]][%[[J]]] : memref<256xf32>
// BLOCK:         scf.for {{.*}} -> (f32, f32, f32, f32) {
// BLOCK-COUNT-4:   memref.load %[[BUF]]
// BLOCK:         memref.store %{{.*}}, %[[LANES]]
// BLOCK:       scf.for {{.*}} -> (f32, f32, f32, f32) {
// BLOCK:       memref.dealloc %[[LANES]]
// BLOCK:       scf.for {{.*}} -> (f32, f32, f32, f32) {
// BLOCK:         math.exp
// BLOCK-NOT:   scf.for
// BLOCK:       memref.store %{{.*}}, %out[]
// Without blocks: no buffer.
// CHECK-LABEL: func.func @lse
// CHECK-NOT:   memref.alloca
func.func @lse(%m: memref<1100xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1100 : index
  %z = memref.load %out[] : memref<f32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %v = memref.load %m[%i] : memref<1100xf32>
    %e = math.exp %v : f32
    %a = arith.addf %e, %acc : f32
    scf.yield %a : f32
  }
  memref.store %r, %out[] : memref<f32>
  func.return
}

// BAD: error: scf-split-reductions: lanes must be a power of two >= 2, got 3
// BAD-NOT: Traceback
// BAD-BLOCK: error: scf-split-reductions: block must be 0 or a multiple of lanes (4), got 6
