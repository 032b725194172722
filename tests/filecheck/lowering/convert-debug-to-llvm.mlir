// RUN: not irgrad-opt -p convert-debug-to-llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-debug-to-llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: irgrad-opt -p convert-nn-to-linalg,linalg-fuse-elementwise,bufferize %S/../run/debug-print.mlir | filecheck %s --check-prefix=BUF
// ERR-NOT: Traceback

// debug.print becomes a call of irgrad_debug_print_<number of operands>: the first argument
// numbers the print's format, names, shapes and dtypes in the process's table, then one
// pointer per operand (memrefs reach the call through unrealized casts, as for blas.gemm).

// CHECK-LABEL: func.func @print_memrefs
// CHECK:       %[[SPEC:.*]] = llvm.mlir.constant({{[0-9]+}}) : i64
// CHECK:       llvm.call @irgrad_debug_print_2(%[[SPEC]], %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr) -> ()
// CHECK:       llvm.call @irgrad_debug_print_0(%{{.*}}) : (i64) -> ()
// CHECK-NOT:   debug.print
// CHECK:       llvm.func @irgrad_debug_print_2(i64, !llvm.ptr, !llvm.ptr)
// CHECK:       llvm.func @irgrad_debug_print_0(i64)
func.func @print_memrefs(%a: memref<2x3xf32>, %b: memref<i64>) {
  debug.print "a = {} b = {b}"(%a, %b) {names = ["", "b"]} : memref<2x3xf32>, memref<i64>
  debug.print "nothing"()
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
// BUF:       "memref.copy"(%[[VIEW]], %[[COPY]])
// BUF:       debug.print "slice {}"(%[[COPY]]) : memref<2x3xf32>
// BUF:       memref.dealloc %[[COPY]]
// BUF:       debug.print "doubled {}"(%[[Y:.*]]) : memref<4x6xf32>
// BUF:       linalg.generic {{.*}} ins(%[[Y]] : memref<4x6xf32>)
