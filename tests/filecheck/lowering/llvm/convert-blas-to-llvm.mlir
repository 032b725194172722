// RUN: not irgrad-opt -p convert-blas-to-llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-linalg-to-blas,convert-to-llvm --split-input-file %s -t llvm 2>/dev/null | filecheck %s --check-prefix=LLVM
// RUN: not irgrad-opt -p convert-blas-to-llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt -p convert-blas-to-llvm --split-input-file %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// ERR-NOT: Traceback

// blas.gemm becomes a call of the runtime's entry point with the row-major BLAS arguments
// (transpose flags, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); the leading dimensions
// are the memrefs' first strides, so a row slice passes its parent's row length.

// CHECK-LABEL: func.func @sgemm
// CHECK-DAG:   %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-DAG:   %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-DAG:   %[[M:.*]] = llvm.mlir.constant(4) : i64
// CHECK-DAG:   %[[N:.*]] = llvm.mlir.constant(5) : i64
// CHECK-DAG:   %[[K:.*]] = llvm.mlir.constant(3) : i64
// CHECK-DAG:   %[[LDA:.*]] = llvm.mlir.constant(8) : i64
// CHECK-DAG:   %[[ALPHA:.*]] = llvm.mlir.constant(2.000000e+00 : f32) : f32
// CHECK-DAG:   %[[BETA:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK:       llvm.call @irgrad_blas_sgemm(%[[ZERO]], %[[ONE]], %[[M]], %[[N]], %[[K]], %[[ALPHA]], %{{.*}}, %[[LDA]], %{{.*}}, %[[K]], %[[BETA]], %{{.*}}, %[[N]]) : (i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
func.func @sgemm(%a: memref<4x3xf32, strided<[8, 1], offset: 2>>, %b: memref<5x3xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {transpose_b, alpha = 2.0 : f64, beta = 0.0 : f64} : memref<4x3xf32, strided<[8, 1], offset: 2>>, memref<5x3xf32>, memref<4x5xf32>
  func.return
}

// f64 calls the dgemm entry point, alpha and beta as doubles.
// CHECK-LABEL: func.func @dgemm
// CHECK:       llvm.call @irgrad_blas_dgemm({{.*}}) : (i64, i64, i64, i64, i64, f64, !llvm.ptr, i64, !llvm.ptr, i64, f64, !llvm.ptr, i64) -> ()
func.func @dgemm(%a: memref<3x4xf64>, %b: memref<3x5xf64>, %c: memref<4x5xf64>) {
  blas.gemm %a, %b, %c {transpose_a, alpha = 1.0 : f64, beta = 1.0 : f64} : memref<3x4xf64>, memref<3x5xf64>, memref<4x5xf64>
  func.return
}

// One external declaration per entry point.
// CHECK: llvm.func @irgrad_blas_sgemm(i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK: llvm.func @irgrad_blas_dgemm(i64, i64, i64, i64, i64, f64, !llvm.ptr, i64, !llvm.ptr, i64, f64, !llvm.ptr, i64)

// -----

// Nothing to lower: no call and no declaration of the entry points.
// CHECK-LABEL: func.func @no_gemm
// CHECK-NOT:   irgrad_blas
func.func @no_gemm(%c: memref<4x5xf32>) {
  func.return
}

// -----

// The LAPACK routines: sizes, pointers and leading dimensions (the first strides), the
// triangular solve's flags as 0/1; f32 calls the `s` entry points, f64 the `d` ones.
// CHECK-LABEL: func.func @lapack
// CHECK-DAG:   %[[N:.*]] = llvm.mlir.constant(4) : i64
// CHECK-DAG:   %[[LDB:.*]] = llvm.mlir.constant(8) : i64
// CHECK-DAG:   %[[K:.*]] = llvm.mlir.constant(2) : i64
// CHECK-DAG:   %[[T:.*]] = llvm.mlir.constant(1) : i64
// CHECK-DAG:   %[[F:.*]] = llvm.mlir.constant(0) : i64
// CHECK:       llvm.call @irgrad_lapack_dpotrf(%[[N]], %{{.*}}, %[[N]]) : (i64, !llvm.ptr, i64) -> ()
// CHECK:       llvm.call @irgrad_lapack_dtrsm(%[[T]], %[[F]], %[[N]], %[[K]], %{{.*}}, %[[N]], %{{.*}}, %[[LDB]]) : (i64, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64) -> ()
// CHECK:       llvm.call @irgrad_lapack_sgetrf(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> ()
func.func @lapack(%a: memref<4x4xf64>, %b: memref<4x2xf64, strided<[8, 1]>>, %c: memref<3x3xf32>, %p: memref<3xi32>, %q: memref<3xi32>) {
  blas.potrf %a : memref<4x4xf64>
  blas.trsm %a, %b lower : memref<4x4xf64>, memref<4x2xf64, strided<[8, 1]>>
  blas.getrf %c, %p, %q : memref<3x3xf32>, memref<3xi32>, memref<3xi32>
  func.return
}

// -----

// The decompositions: sizes, then each matrix with its leading dimension (a row slice's parent
// row length; the vectors w and s are contiguous, no stride): syevd (n, a, lda, w), gesdd
// (m, n, a, lda, s, u, ldu, vt, ldvt), geqrf (m, n, q, ldq, r, ldr).
// CHECK-LABEL: func.func @decompositions
// CHECK-DAG:   %[[C4:.*]] = llvm.mlir.constant(4) : i64
// CHECK-DAG:   %[[C6:.*]] = llvm.mlir.constant(6) : i64
// CHECK-DAG:   %[[C5:.*]] = llvm.mlir.constant(5) : i64
// CHECK-DAG:   %[[C3:.*]] = llvm.mlir.constant(3) : i64
// CHECK-DAG:   %[[C7:.*]] = llvm.mlir.constant(7) : i64
// CHECK-DAG:   %[[C2:.*]] = llvm.mlir.constant(2) : i64
// CHECK:       llvm.call @irgrad_lapack_dsyevd(%[[C4]], %{{.*}}, %[[C6]], %{{.*}}) : (i64, !llvm.ptr, i64, !llvm.ptr) -> ()
// CHECK:       llvm.call @irgrad_lapack_sgesdd(%[[C5]], %[[C3]], %{{.*}}, %[[C3]], %{{.*}}, %{{.*}}, %[[C4]], %{{.*}}, %[[C3]]) : (i64, i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64) -> ()
// CHECK:       llvm.call @irgrad_lapack_dgeqrf(%[[C7]], %[[C2]], %{{.*}}, %[[C2]], %{{.*}}, %[[C5]]) : (i64, i64, !llvm.ptr, i64, !llvm.ptr, i64) -> ()
// CHECK:       llvm.func @irgrad_lapack_dsyevd(i64, !llvm.ptr, i64, !llvm.ptr)
// CHECK:       llvm.func @irgrad_lapack_sgesdd(i64, i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64)
// CHECK:       llvm.func @irgrad_lapack_dgeqrf(i64, i64, !llvm.ptr, i64, !llvm.ptr, i64)
func.func @decompositions(%a: memref<4x4xf64, strided<[6, 1], offset: ?>>, %w: memref<4xf64, strided<[1], offset: ?>>, %b: memref<5x3xf32>, %s: memref<3xf32>, %u: memref<5x3xf32, strided<[4, 1]>>, %vt: memref<3x3xf32>, %q: memref<7x2xf64>, %r: memref<2x2xf64, strided<[5, 1]>>) {
  blas.syevd %a, %w : memref<4x4xf64, strided<[6, 1], offset: ?>>, memref<4xf64, strided<[1], offset: ?>>
  blas.gesdd %b, %s, %u, %vt : memref<5x3xf32>, memref<3xf32>, memref<5x3xf32, strided<[4, 1]>>, memref<3x3xf32>
  blas.geqrf %q, %r : memref<7x2xf64>, memref<2x2xf64, strided<[5, 1]>>
  func.return
}

// -----

// geev (n, a, lda, w, v, ldv): w and v hold (re, im) pairs, so v's leading dimension is 2n.
// CHECK-LABEL: func.func @geev
// CHECK-DAG:   %[[C4:.*]] = llvm.mlir.constant(4) : i64
// CHECK-DAG:   %[[C8:.*]] = llvm.mlir.constant(8) : i64
// CHECK:       llvm.call @irgrad_lapack_dgeev(%[[C4]], %{{.*}}, %[[C4]], %{{.*}}, %{{.*}}, %[[C8]]) : (i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK:       llvm.func @irgrad_lapack_dgeev(i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64)
func.func @geev(%a: memref<4x4xf64>, %w: memref<4x2xf64>, %v: memref<4x4x2xf64>) {
  blas.geev %a, %w, %v : memref<4x4xf64>, memref<4x2xf64>, memref<4x4x2xf64>
  func.return
}

// -----

// The input contract is blas.gemm ops the verifier accepts; these get its located errors.
// ERR: convert-blas-to-llvm.mlir:[[# @LINE + 3]]:3: error: 'blas.gemm' op contracts op(A) 4x3 with op(B) 4x5: inner sizes differ (A is 4x3, B is 4x5)
// EXIT: exit=1
func.func @inner_sizes(%a: memref<4x3xf32>, %b: memref<4x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32>, memref<4x5xf32>, memref<4x5xf32>
  func.return
}

// -----

// ERR: convert-blas-to-llvm.mlir:[[# @LINE + 2]]:3: error: 'blas.gemm' op needs f32 or f64 elements, got f16
func.func @half(%a: memref<4x3xf16>, %b: memref<3x5xf16>, %c: memref<4x5xf16>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf16>, memref<3x5xf16>, memref<4x5xf16>
  func.return
}

// -----

// A column-major operand (unit stride in the first dimension) is no row-major BLAS operand.
// ERR: convert-blas-to-llvm.mlir:[[# @LINE + 2]]:3: error: 'blas.gemm' op operand a needs static strides with unit stride in the last dimension, got memref<4x3xf32, strided<[1, 4]>>
func.func @column_major(%a: memref<4x3xf32, strided<[1, 4]>>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32, strided<[1, 4]>>, memref<3x5xf32>, memref<4x5xf32>
  func.return
}

// Through the whole CPU lowering to LLVM IR: a declaration and a call, nothing else of BLAS.
// LLVM: call ccc void @"irgrad_blas_sgemm"(i64 0, i64 1, i64 4, i64 5, i64 3, float 0x4000000000000000, ptr %{{.*}}, i64 8, ptr %{{.*}}, i64 3, float {{ *}}0x0, ptr %{{.*}}, i64 5)
// LLVM: call ccc void @"irgrad_blas_dgemm"(i64 1, i64 0, i64 4, i64 5, i64 3, double 0x3ff0000000000000,
// LLVM: declare void @"irgrad_blas_sgemm"(i64
// LLVM: declare void @"irgrad_blas_dgemm"(i64
// LLVM: call ccc void @"irgrad_lapack_dsyevd"(i64 4, ptr %{{.*}}, i64 6, ptr %{{.*}})
// LLVM: call ccc void @"irgrad_lapack_sgesdd"(i64 5, i64 3, ptr %{{.*}}, i64 3, ptr %{{.*}}, ptr %{{.*}}, i64 4, ptr %{{.*}}, i64 3)
// LLVM: call ccc void @"irgrad_lapack_dgeqrf"(i64 7, i64 2, ptr %{{.*}}, i64 2, ptr %{{.*}}, i64 5)
// LLVM: declare void @"irgrad_lapack_dsyevd"(i64
