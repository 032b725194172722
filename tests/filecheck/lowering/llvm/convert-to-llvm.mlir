// RUN: not irgrad-opt -p convert-to-llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-to-llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// A whole stage-"loops" function: parallel loop, temporary buffer, global table, call of a
// helper with an out-param. The result is stage "llvm": llvm ops only, no casts left.

// CHECK-LABEL: builtin.module
// CHECK-DAG:  llvm.mlir.global internal constant @scale(dense<[2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]> : tensor<4xf32>)
// CHECK-DAG:  llvm.func internal @double_into
// CHECK-DAG:  llvm.func @scaled_exp(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) {
// CHECK-DAG:  llvm.func @_irgrad_packed_scaled_exp(%{{.*}}: !llvm.ptr) {
// CHECK-DAG:  llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK-DAG:  llvm.func @free(!llvm.ptr)
// CHECK-NOT:  builtin.unrealized_conversion_cast
// CHECK-NOT:  {{(arith|math|memref|scf|cf|func)\.}}
"memref.global"() <{sym_name = "scale", sym_visibility = "private", type = memref<4xf32>, initial_value = dense<[2.0, 3.0, 4.0, 5.0]> : tensor<4xf32>, constant}> : () -> ()
func.func private @double_into(%x: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %out[%i] : memref<4xf32>
  }
  func.return
}
func.func @scaled_exp(%x: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %scale = memref.get_global @scale : memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<4xf32>
    %s = memref.load %scale[%i] : memref<4xf32>
    %p = arith.mulf %v, %s : f32
    %e = math.exp %p : f32
    memref.store %e, %tmp[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.call @double_into(%tmp, %out) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.dealloc %tmp : memref<4xf32>
  func.return
}

// -----

// An op no conversion handles (here linalg on memrefs: stage "bufferized", not "loops")
// is reported where it is, by the stage "llvm" check.

func.func @not_loops(%m: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%m : memref<4xf32>)
  func.return
}

// ERR: convert-to-llvm.mlir:[[# @LINE - 4]]:3: error: 'linalg.fill' op breaks the "llvm" stage contract: only llvm dialect ops may remain (convert-to-llvm lowers the scf, cf, memref, arith, math and func ops of stage "loops")
