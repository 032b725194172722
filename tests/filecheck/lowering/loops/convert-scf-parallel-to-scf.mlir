// RUN: not irgrad-opt -p convert-scf-parallel-to-scf --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-scf-parallel-to-scf --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt -p convert-scf-parallel-to-scf --split-input-file %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// ERR-NOT: Traceback

// A 2-D scf.parallel becomes two nested scf.for loops, the first dimension outermost
// (the order the interpreter runs the iterations in).

// CHECK-LABEL: func.func @copy_in_place
// CHECK:      scf.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:   scf.for %[[J:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:     %[[V:.*]] = memref.load %m[%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:     memref.store %[[V]], %m[%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NOT:  scf.parallel
func.func @copy_in_place(%m: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  "scf.parallel"(%c0, %c0, %c4, %c8, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %m[%i, %j] : memref<4x8xf32>
    memref.store %v, %m[%i, %j] : memref<4x8xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// A reduction becomes a loop-carried accumulator, combined by the scf.reduce region's body.

// CHECK-LABEL: func.func @column_sum
// CHECK:      %[[TOTAL:.*]] = scf.for %[[I:.*]] = %c0 to %c4 step %c1 iter_args(%[[ACC:.*]] = %zero) -> (f32) {
// CHECK-NEXT:   %[[V:.*]] = memref.load %m[%[[I]], %c0] : memref<4x8xf32>
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:   scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[TOTAL]], %out[%c0] : memref<1xf32>
func.func @column_sum(%m: memref<4x8xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %total = "scf.parallel"(%c0, %c4, %c1, %zero) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %v = memref.load %m[%i, %c0] : memref<4x8xf32>
    scf.reduce(%v : f32) {
    ^bb1(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }) : (index, index, index, f32) -> f32
  memref.store %total, %out[%c0] : memref<1xf32>
  func.return
}

// -----

// Negative cases.

// Nothing to do: serial loops and code outside any scf.parallel stay as they are.
// CHECK-LABEL: func.func @serial
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    scf.for %i = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %v = memref.load %m[%i] : memref<4xf32>
// CHECK-NEXT:      memref.store %v, %m[%i] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @serial(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %m[%i] : memref<4xf32>
    memref.store %v, %m[%i] : memref<4xf32>
  }
  func.return
}

// -----

// An scf.parallel without loop dimensions (xDSL's verifier accepts it, MLIR's does not):
// a located error, not a crash (it used to be an IndexError).
// ERR: convert-scf-parallel-to-scf.mlir:[[# @LINE + 4]]:3: error: 'scf.parallel' op has no loop dimensions; an scf.parallel needs at least one (lower bound, upper bound, step) triple
// EXIT: exit=1
func.func @no_dimensions(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  "scf.parallel"() <{operandSegmentSizes = array<i32: 0, 0, 0, 0>}> ({
  ^bb0:
    %v = memref.load %m[%c0] : memref<4xf32>
    memref.store %v, %m[%c0] : memref<4xf32>
    scf.reduce
  }) : () -> ()
  func.return
}

// -----

// An init value without its scf.reduce operand: the verifier rejects the loop.
// ERR: convert-scf-parallel-to-scf.mlir:[[# @LINE + 6]]:3: error: 'scf.parallel' op Expected 1 reductions but 0 provided
func.func @missing_reduce(%m: memref<4xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %t = "scf.parallel"(%c0, %c4, %c1, %zero) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %v = memref.load %m[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index, f32) -> f32
  memref.store %t, %out[] : memref<f32>
  func.return
}
