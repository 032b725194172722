// RUN: irgrad-opt -p generate-runtime-verification --split-input-file %s | filecheck %s

// Before each memref.load/store and tensor.extract/insert, every index not provably in
// range gets `arith.cmpi ult` against its dimension's size (one compare: a negative index is
// a huge unsigned one) and a `cf.assert` whose message is the op's source position, the op,
// the dimension and its size.

// CHECK-LABEL: func.func @dynamic_index
// CHECK:         %[[N:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi ult, %i, %[[N]] : index
// CHECK-NEXT:    cf.assert %[[OK]], "{{.*}}generate-runtime-verification.mlir:[[# @LINE + 8]]:3: 'memref.load' op out-of-bounds index for dimension 0 of size 4"
// CHECK-NEXT:    %[[M:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[OK2:.*]] = arith.cmpi ult, %j, %[[M]] : index
// CHECK-NEXT:    cf.assert %[[OK2]], "{{.*}}generate-runtime-verification.mlir:[[# @LINE + 5]]:3: 'memref.load' op out-of-bounds index for dimension 1 of size 8"
// CHECK-NEXT:    %v = memref.load %m[%i, %j] : memref<4x8xf32>
// CHECK:         cf.assert %{{.*}}, "{{.*}}:[[# @LINE + 4]]:3: 'memref.store' op out-of-bounds index for dimension 1 of size 8"
// CHECK-NEXT:    memref.store %v, %m[%i, %j] : memref<4x8xf32>
func.func @dynamic_index(%m: memref<4x8xf32>, %i: index, %j: index) -> f32 {
  %v = memref.load %m[%i, %j] : memref<4x8xf32>
  memref.store %v, %m[%i, %j] : memref<4x8xf32>
  func.return %v : f32
}

// -----

// Constant indices inside the static bounds need no check; one outside them keeps its check
// (it fails whenever the op runs, which may be never).

// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c7 = arith.constant 7 : index
// CHECK-NEXT:    %c8 = arith.constant 8 : index
// CHECK-NEXT:    %a = memref.load %m[%c0, %c7] : memref<4x8xf32>
// CHECK-NEXT:    %[[N:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi ult, %c8, %[[N]] : index
// CHECK-NEXT:    cf.assert %[[OK]], "{{.*}}out-of-bounds index for dimension 1 of size 8"
// CHECK-NEXT:    %b = memref.load %m[%c0, %c8] : memref<4x8xf32>
func.func @constants(%m: memref<4x8xf32>) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %a = memref.load %m[%c0, %c7] : memref<4x8xf32>
  %b = memref.load %m[%c0, %c8] : memref<4x8xf32>
  func.return %a, %b : f32, f32
}

// -----

// The induction variable of an scf.for or scf.parallel with constant bounds inside the
// dimension (lower >= 0, step > 0, upper <= size) needs no check, so such loops stay as
// fast as before; the loop-invariant %j is still checked. A loop that runs past the
// dimension, starts below 0 or has a dynamic bound keeps its checks.

// CHECK-LABEL: func.func @loops
// CHECK:         scf.for %k = %c0 to %c4 step %c1 {
// CHECK-NEXT:      arith.constant 8 : index
// CHECK-NEXT:      arith.cmpi ult, %j, %{{.*}} : index
// CHECK-NEXT:      cf.assert %{{.*}}, "{{.*}}dimension 1 of size 8"
// CHECK-NEXT:      %v = memref.load %m[%k, %j] : memref<4x8xf32>
// CHECK-NEXT:      memref.store %v, %m[%k, %c0] : memref<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.parallel (%p, %q) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1)
// CHECK-NEXT:      %w = memref.load %m[%p, %q] : memref<4x8xf32>
// CHECK:         scf.for %long = %c0 to %c8 step %c1 {
// CHECK-NEXT:      arith.constant 4 : index
// CHECK-NEXT:      arith.cmpi ult, %long, %{{.*}} : index
// CHECK-NEXT:      cf.assert %{{.*}}, "{{.*}}dimension 0 of size 4"
// CHECK:         scf.for %neg = %cm1 to %c4 step %c1 {
// CHECK-NEXT:      arith.constant 4 : index
// CHECK-NEXT:      arith.cmpi ult, %neg, %{{.*}} : index
// CHECK:         scf.for %dyn = %c0 to %n step %c1 {
// CHECK-NEXT:      arith.constant 4 : index
// CHECK-NEXT:      arith.cmpi ult, %dyn, %{{.*}} : index
func.func @loops(%m: memref<4x8xf32>, %j: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cm1 = arith.constant -1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %k = %c0 to %c4 step %c1 {
    %v = memref.load %m[%k, %j] : memref<4x8xf32>
    memref.store %v, %m[%k, %c0] : memref<4x8xf32>
  }
  "scf.parallel"(%c0, %c0, %c4, %c8, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%p: index, %q: index):
    %w = memref.load %m[%p, %q] : memref<4x8xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  scf.for %long = %c0 to %c8 step %c1 {
    %x = memref.load %m[%long, %c0] : memref<4x8xf32>
  }
  scf.for %neg = %cm1 to %c4 step %c1 {
    %y = memref.load %m[%neg, %c0] : memref<4x8xf32>
  }
  scf.for %dyn = %c0 to %n step %c1 {
    %z = memref.load %m[%dyn, %c0] : memref<4x8xf32>
  }
  func.return
}

// -----

// A dynamic dimension is read with memref.dim (tensor.dim for a tensor, whose
// tensor.extract/insert are checked the same way when the pass runs before bufferize).

// CHECK-LABEL: func.func @dynamic_sizes
// CHECK:         %[[D0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[SIZE:.*]] = memref.dim %m, %[[D0]] : memref<?xf32>
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi ult, %i, %[[SIZE]] : index
// CHECK-NEXT:    cf.assert %[[OK]], "{{.*}}'memref.load' op out-of-bounds index for dimension 0 of dynamic size"
// CHECK:         %[[TSIZE:.*]] = tensor.dim %t, %{{.*}} : tensor<?xf32>
// CHECK-NEXT:    %[[TOK:.*]] = arith.cmpi ult, %i, %[[TSIZE]] : index
// CHECK-NEXT:    cf.assert %[[TOK]], "{{.*}}'tensor.extract' op out-of-bounds index for dimension 0 of dynamic size"
// CHECK:         cf.assert %{{.*}}, "{{.*}}'tensor.insert' op out-of-bounds index for dimension 0 of size 3"
func.func @dynamic_sizes(%m: memref<?xf32>, %t: tensor<?xf32>, %s: tensor<3xf32>, %i: index) -> tensor<3xf32> {
  %a = memref.load %m[%i] : memref<?xf32>
  %b = tensor.extract %t[%i] : tensor<?xf32>
  %r = tensor.insert %b into %s[%i] : tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// -----

// memref.subview with static sizes and strides: each dynamic offset must leave room for the
// whole view, offset < size - (view - 1) * stride (here 8 - 2 * 2 = 4). A view with a dynamic
// size is left unchecked.

// CHECK-LABEL: func.func @subviews
// CHECK:         %[[B:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi ult, %i, %[[B]] : index
// CHECK-NEXT:    cf.assert %[[OK]], "{{.*}}'memref.subview' op out-of-bounds offset for dimension 1 of size 8 (a view of 3 elements with stride 2)"
// CHECK-NEXT:    %v = memref.subview %m[0, %i] [4, 3] [1, 2]
// CHECK-NEXT:    %w = memref.subview %m[0, %i] [4, %n] [1, 1]
// CHECK-NOT:     cf.assert
func.func @subviews(%m: memref<4x8xf32>, %i: index, %n: index) {
  %v = memref.subview %m[0, %i] [4, 3] [1, 2] : memref<4x8xf32> to memref<4x3xf32, strided<[8, 2], offset: ?>>
  %w = memref.subview %m[0, %i] [4, %n] [1, 1] : memref<4x8xf32> to memref<4x?xf32, strided<[8, 1], offset: ?>>
  func.return
}

// -----

// GPU code is left alone: convert-gpu-to-nvvm does not lower cf.assert.

// CHECK-LABEL: gpu.module @kernels {
// CHECK-NOT:     cf.assert
"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() <{function_type = (memref<64xf32>, index) -> (), kernel}> ({
  ^bb0(%a: memref<64xf32>, %i: index):
    %v = memref.load %a[%i] : memref<64xf32>
    "gpu.return"() : () -> ()
  }) {sym_name = "kernel"} : () -> ()
}) : () -> ()

// -----

// A loop step that is not a constant must be positive: compiled code would loop forever on 0.
// A constant step is left alone (the verifier rejects a constant <= 0).
// CHECK-LABEL: func.func @dynamic_step
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi sgt, %step, %[[ZERO]] : index
// CHECK-NEXT:    cf.assert %[[OK]], "{{.*}}generate-runtime-verification.mlir:{{[0-9]+}}:3: 'scf.for' op step is not positive"
// CHECK-NEXT:    scf.for
// CHECK-NOT:     cf.assert
// CHECK:         scf.for
func.func @dynamic_step(%n: index, %step: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %n step %step {
  }
  scf.for %j = %c0 to %n step %c2 {
  }
  func.return
}
