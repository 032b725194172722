// RUN: not irgrad-opt -p convert-debug-to-llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-debug-to-llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: irgrad-opt -p convert-nn-to-linalg,linalg-fuse-elementwise,bufferize %S/../../run/debug-print.mlir | filecheck %s --check-prefix=BUF
// ERR-NOT: Traceback

// debug.print becomes a call of irgrad_debug_print_<number of operands>: the first argument
// points at a constant string of the module, the print's format, names, shapes and dtypes as
// JSON (one global per distinct print, so object code that prints is self-contained and
// disk-cacheable), then one pointer per operand (memrefs reach the call through unrealized
// casts, as for blas.gemm).

// CHECK-LABEL: func.func @print_memrefs
// CHECK:       %[[SPEC:.*]] = llvm.mlir.addressof @_irgrad_print_spec_0 : !llvm.ptr
// CHECK:       llvm.call @irgrad_debug_print_2(%[[SPEC]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK:       %[[NOTHING:.*]] = llvm.mlir.addressof @_irgrad_print_spec_1 : !llvm.ptr
// CHECK:       llvm.call @irgrad_debug_print_0(%[[NOTHING]]) : (!llvm.ptr) -> ()
// CHECK:       %[[AGAIN:.*]] = llvm.mlir.addressof @_irgrad_print_spec_0 : !llvm.ptr
// CHECK:       llvm.call @irgrad_debug_print_2(%[[AGAIN]], %{{.*}}, %{{.*}})
// CHECK-NOT:   debug.print
// The first print's spec: {"format":"a = {} b = {b}","names":["","b"],"arrays":[[[2,3],"float32"],[[],"int64"]]}
// CHECK:       llvm.mlir.global internal constant @_irgrad_print_spec_0(dense<[123, 34, 102, 111, 114, 109, 97, 116, 34, {{.*}}, 93, 93, 125, 0]> : tensor<87xi8>)
// CHECK:       llvm.func @irgrad_debug_print_2(!llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK:       llvm.mlir.global internal constant @_irgrad_print_spec_1({{.*}} : tensor<44xi8>)
// CHECK:       llvm.func @irgrad_debug_print_0(!llvm.ptr)
// CHECK-NOT:   @_irgrad_print_spec_2
func.func @print_memrefs(%a: memref<2x3xf32>, %b: memref<i64>) {
  debug.print "a = {} b = {b}"(%a, %b) {names = ["", "b"]} : memref<2x3xf32>, memref<i64>
  debug.print "nothing"()
  debug.print "a = {} b = {b}"(%a, %b) {names = ["", "b"]} : memref<2x3xf32>, memref<i64>
  func.return
}

// -----

// A strided view must have been copied (bufferize does that): the call passes bare pointers.
// ERR: error: 'debug.print' op operands must be memrefs with identity layouts, found memref<2x3xf32, strided<[6, 2]>>
func.func @strided(%a: memref<2x3xf32, strided<[6, 2]>>) {
  debug.print "{}"(%a) : memref<2x3xf32, strided<[6, 2]>>
  func.return
}

// bufferize: a print reads its operand's buffer (a strided slice is copied to a contiguous
// one first), and a later in-place write waits until after the print.
// BUF-LABEL: func.func @main
// BUF:       %[[VIEW:.*]] = memref.subview %x
// BUF:       %[[COPY:.*]] = memref.alloc() : memref<2x3xf32>
// BUF:       memref.copy %[[VIEW]], %[[COPY]]
// BUF:       debug.print "slice {}"(%[[COPY]]) : memref<2x3xf32>
// BUF:       memref.dealloc %[[COPY]]
// BUF:       debug.print "doubled {}"(%[[Y:.*]]) : memref<4x6xf32>
// BUF:       linalg.generic {{.*}} ins(%[[Y]] : memref<4x6xf32>)
