// RUN: irgrad-opt %s | filecheck %s
// RUN: irgrad-opt %s | irgrad-opt | filecheck %s
// RUN: irgrad-opt %s --print-op-generic | irgrad-opt | filecheck %s

// blas.gemm round-trips in its custom form (properties in the attribute dictionary) and in
// the generic form, with and without transposes, f32 and f64, and row slices (strided).

// CHECK-LABEL: func.func @plain
// CHECK: blas.gemm %a, %b, %c {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64} : memref<4x3xf32>, memref<3x5xf32>, memref<4x5xf32>
func.func @plain(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32>, memref<3x5xf32>, memref<4x5xf32>
  func.return
}

// CHECK-LABEL: func.func @transposed
// CHECK: blas.gemm %a, %b, %c {transpose_a, transpose_b, alpha = 2.000000e+00 : f64, beta = 1.000000e+00 : f64} : memref<3x4xf64>, memref<5x3xf64>, memref<4x5xf64>
func.func @transposed(%a: memref<3x4xf64>, %b: memref<5x3xf64>, %c: memref<4x5xf64>) {
  blas.gemm %a, %b, %c {transpose_a, transpose_b, alpha = 2.0 : f64, beta = 1.0 : f64} : memref<3x4xf64>, memref<5x3xf64>, memref<4x5xf64>
  func.return
}

// CHECK-LABEL: func.func @row_slice
// CHECK: blas.gemm %a, %b, %c {{.*}} : memref<4x3xf32, strided<[8, 1], offset: 2>>, memref<3x5xf32>, memref<4x5xf32>
func.func @row_slice(%a: memref<4x3xf32, strided<[8, 1], offset: 2>>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32, strided<[8, 1], offset: 2>>, memref<3x5xf32>, memref<4x5xf32>
  func.return
}

// The LAPACK routines: in place on one matrix each, row slices allowed.
// CHECK-LABEL: func.func @lapack
// CHECK-NEXT:    blas.potrf %a : memref<4x4xf64>
// CHECK-NEXT:    blas.trsm %a, %b lower unit_diagonal : memref<4x4xf64>, memref<4x2xf64, strided<[8, 1], offset: ?>>
// CHECK-NEXT:    blas.trsm %a, %b : memref<4x4xf64>, memref<4x2xf64, strided<[8, 1], offset: ?>>
// CHECK-NEXT:    blas.getrf %c, %p, %q : memref<3x3xf32>, memref<3xi32>, memref<3xi32>
func.func @lapack(%a: memref<4x4xf64>, %b: memref<4x2xf64, strided<[8, 1], offset: ?>>, %c: memref<3x3xf32>, %p: memref<3xi32>, %q: memref<3xi32>) {
  blas.potrf %a : memref<4x4xf64>
  blas.trsm %a, %b lower unit_diagonal : memref<4x4xf64>, memref<4x2xf64, strided<[8, 1], offset: ?>>
  blas.trsm %a, %b : memref<4x4xf64>, memref<4x2xf64, strided<[8, 1], offset: ?>>
  blas.getrf %c, %p, %q : memref<3x3xf32>, memref<3xi32>, memref<3xi32>
  func.return
}

// The decompositions under nn.eigh / nn.svd / nn.qr: syevd in place with its eigenvalue
// vector, gesdd with its scratch A and three outputs (tall and wide), geqrf in place with R.
// CHECK-LABEL: func.func @decompositions
// CHECK-NEXT:    blas.syevd %a, %w : memref<4x4xf64>, memref<4xf64, strided<[1], offset: ?>>
// CHECK-NEXT:    blas.gesdd %b, %s, %u, %vt : memref<5x3xf32, strided<[8, 1], offset: ?>>, memref<3xf32>, memref<5x3xf32>, memref<3x3xf32>
// CHECK-NEXT:    blas.gesdd %c, %s2, %u2, %vt2 : memref<3x5xf64>, memref<3xf64>, memref<3x3xf64>, memref<3x5xf64>
// CHECK-NEXT:    blas.geqrf %u, %r : memref<5x3xf32>, memref<3x3xf32>
func.func @decompositions(%a: memref<4x4xf64>, %w: memref<4xf64, strided<[1], offset: ?>>, %b: memref<5x3xf32, strided<[8, 1], offset: ?>>, %s: memref<3xf32>, %u: memref<5x3xf32>, %vt: memref<3x3xf32>, %c: memref<3x5xf64>, %s2: memref<3xf64>, %u2: memref<3x3xf64>, %vt2: memref<3x5xf64>, %r: memref<3x3xf32>) {
  blas.syevd %a, %w : memref<4x4xf64>, memref<4xf64, strided<[1], offset: ?>>
  blas.gesdd %b, %s, %u, %vt : memref<5x3xf32, strided<[8, 1], offset: ?>>, memref<3xf32>, memref<5x3xf32>, memref<3x3xf32>
  blas.gesdd %c, %s2, %u2, %vt2 : memref<3x5xf64>, memref<3xf64>, memref<3x3xf64>, memref<3x5xf64>
  blas.geqrf %u, %r : memref<5x3xf32>, memref<3x3xf32>
  func.return
}
