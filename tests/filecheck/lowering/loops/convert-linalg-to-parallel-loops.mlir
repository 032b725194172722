// RUN: not irgrad-opt -p convert-linalg-to-parallel-loops --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p 'convert-linalg-to-parallel-loops{reorder_reductions=false}' --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=ORDER
// RUN: not irgrad-opt -p convert-linalg-to-parallel-loops --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt -p convert-linalg-to-parallel-loops --split-input-file %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// ERR-NOT: Traceback

// Linalg ops on memrefs become scf.parallel (printed in upstream MLIR's custom form) over their
// parallel dimensions and scf.for over their reductions. Numerical checks are in
// tests/unit/lowering/loops/test_lowering_linalg_to_loops.py.

// Elementwise: one scf.parallel over both dimensions; the body loads, computes, stores.
// CHECK-LABEL: func.func @elementwise(%a: memref<3x4xf32>, %b: memref<3x4xf32>, %out: memref<3x4xf32>) {
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         scf.parallel (%[[I:[0-9a-z_]+]], %[[J:[0-9a-z_]+]]) = (%[[C0]], %[[C0]]) to (%[[C3]], %[[C4]]) step (%[[C1]], %[[C1]]) {{[{]$}}
// CHECK-NEXT:      %x = memref.load %a[%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:      %y = memref.load %b[%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:      %s = arith.addf %x, %y : f32
// CHECK-NEXT:      memref.store %s, %out[%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:    {{^    }$}}
// CHECK-NOT:     linalg.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%a: memref<3x4xf32>, %b: memref<3x4xf32>, %out: memref<3x4xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : memref<3x4xf32>, memref<3x4xf32>) outs(%out : memref<3x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A reduction: scf.parallel over the kept dimension, an scf.for over the reduced one carrying
// the accumulator in a register, loaded once and stored once.
// CHECK-LABEL: func.func @reduce(%a: memref<3x4xf32>, %out: memref<3xf32>) {
// CHECK:         scf.parallel (%[[I:[0-9a-z_]+]]) = (%{{[0-9a-z_]+}}) to (%{{[0-9a-z_]+}}) step (%{{[0-9a-z_]+}}) {{[{]$}}
// CHECK-NEXT:      %[[INIT:.*]] = memref.load %out[%[[I]]] : memref<3xf32>
// CHECK-NEXT:      %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%acc = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %in = memref.load %a[%[[I]], %[[K]]] : memref<3x4xf32>
// CHECK-NEXT:        %m = arith.maximumf %in, %acc : f32
// CHECK-NEXT:        scf.yield %m : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %[[R]], %out[%[[I]]] : memref<3xf32>
// CHECK-NEXT:    {{^    }$}}
func.func @reduce(%a: memref<3x4xf32>, %out: memref<3xf32>) {
  linalg.reduce ins(%a : memref<3x4xf32>) outs(%out : memref<3xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  func.return
}

// -----

// matmul runs i (parallel), k, j (parallel, nested in k): the innermost loop walks %b and
// %out contiguously and A[i, k] is loaded once per k. With reorder_reductions=false, i and j
// are one parallel loop and k accumulates in a register.
// CHECK-LABEL: func.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %out: memref<2x4xf32>) {
// CHECK:         scf.parallel (%[[I:[0-9a-z_]+]]) = (%{{[0-9a-z_]+}}) to (%{{[0-9a-z_]+}}) step (%{{[0-9a-z_]+}}) {{[{]$}}
// CHECK-NEXT:      scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[A:.*]] = memref.load %a[%[[I]], %[[K]]] : memref<2x3xf32>
// CHECK-NEXT:        scf.parallel (%[[J:[0-9a-z_]+]]) = (%{{[0-9a-z_]+}}) to (%{{[0-9a-z_]+}}) step (%{{[0-9a-z_]+}}) {{[{]$}}
// CHECK-NEXT:          %[[B:.*]] = memref.load %b[%[[K]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:          %[[C:.*]] = memref.load %out[%[[I]], %[[J]]] : memref<2x4xf32>
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:          %[[S:.*]] = arith.addf %[[P]], %[[C]] : f32
// CHECK-NEXT:          memref.store %[[S]], %out[%[[I]], %[[J]]] : memref<2x4xf32>
// ORDER-LABEL: func.func @matmul(
// ORDER:         scf.parallel (%[[I:[0-9a-z_]+]], %[[J:[0-9a-z_]+]]) = (%{{[0-9a-z_]+}}, %{{[0-9a-z_]+}}) to (%{{[0-9a-z_]+}}, %{{[0-9a-z_]+}}) step (%{{[0-9a-z_]+}}, %{{[0-9a-z_]+}}) {{[{]$}}
// ORDER-NEXT:      %[[INIT:.*]] = memref.load %out[%[[I]], %[[J]]] : memref<2x4xf32>
// ORDER-NEXT:      %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// ORDER-NEXT:        %[[A:.*]] = memref.load %a[%[[I]], %[[K]]] : memref<2x3xf32>
// ORDER-NEXT:        %[[B:.*]] = memref.load %b[%[[K]], %[[J]]] : memref<3x4xf32>
// ORDER-NEXT:        %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// ORDER-NEXT:        %[[S:.*]] = arith.addf %[[P]], %[[ACC]] : f32
// ORDER-NEXT:        scf.yield %[[S]] : f32
// ORDER-NEXT:      }
// ORDER-NEXT:      memref.store %[[R]], %out[%[[I]], %[[J]]] : memref<2x4xf32>
func.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %out: memref<2x4xf32>) {
  linalg.matmul ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%out : memref<2x4xf32>)
  func.return
}

// -----

// broadcast, transpose and fill: their indexing maps become the load and store indices.
// CHECK-LABEL: func.func @data_movement(
// CHECK:         scf.parallel (%[[I:[0-9a-z_]+]], %[[J:[0-9a-z_]+]]) = (
// CHECK-NEXT:      %[[V:.*]] = memref.load %v[%[[J]]] : memref<4xf32>
// CHECK-NEXT:      memref.store %[[V]], %m[%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK:         scf.parallel (%[[I2:[0-9a-z_]+]], %[[J2:[0-9a-z_]+]]) = (
// CHECK-NEXT:      %[[M:.*]] = memref.load %m[%[[J2]], %[[I2]]] : memref<3x4xf32>
// CHECK-NEXT:      memref.store %[[M]], %t[%[[I2]], %[[J2]]] : memref<4x3xf32>
// CHECK:         scf.parallel (%[[K:[0-9a-z_]+]]) = (
// CHECK-NEXT:      memref.store %c, %z[%[[K]]] : memref<2xf32>
func.func @data_movement(%v: memref<4xf32>, %m: memref<3x4xf32>, %t: memref<4x3xf32>, %z: memref<2xf32>) {
  linalg.broadcast ins(%v : memref<4xf32>) outs(%m : memref<3x4xf32>) dimensions = [0]
  linalg.transpose ins(%m : memref<3x4xf32>) outs(%t : memref<4x3xf32>) permutation = [1, 0]
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%z : memref<2xf32>)
  func.return
}

// -----

// linalg.index is the induction variable; a reversed, strided read (a negative-coefficient
// map) and affine mod become index arithmetic (mod corrected to be non-negative).
// CHECK-LABEL: func.func @index_maps(
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[M1:.*]] = arith.constant -1 : index
// CHECK-DAG:     %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         scf.parallel (%i) = (
// CHECK-NEXT:      %[[NEG:.*]] = arith.muli %i, %[[M1]] : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.addi %[[NEG]], %[[C6]] : index
// CHECK-NEXT:      %[[REM:.*]] = arith.remsi %i, %[[C3]] : index
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[REM]], %[[C0]] : index
// CHECK-NEXT:      %[[UP:.*]] = arith.addi %[[REM]], %[[C3]] : index
// CHECK-NEXT:      %[[COL:.*]] = arith.select %[[LT]], %[[UP]], %[[REM]] : index
// CHECK-NEXT:      %x = memref.load %a[%[[ROW]], %[[COL]]] : memref<7x3xf32>
// CHECK-NEXT:      %f = arith.index_cast %i : index to i32
#rev = affine_map<(d0) -> (-d0 + 6, d0 mod 3)>
#id = affine_map<(d0) -> (d0)>
func.func @index_maps(%a: memref<7x3xf32>, %out: memref<7xf32>) {
  linalg.generic {indexing_maps = [#rev, #id], iterator_types = ["parallel"]} ins(%a : memref<7x3xf32>) outs(%out : memref<7xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %f = arith.index_cast %i : index to i32
    %g = arith.sitofp %f : i32 to f32
    %s = arith.addf %x, %g : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A linalg op on tensors: a located error, exit code 1.
// ERR: convert-linalg-to-parallel-loops.mlir:[[# @LINE + 4]]:3: error: 'linalg.copy' op requires buffer semantics; run bufferize first
// EXIT: exit=1
func.func @on_tensors(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
