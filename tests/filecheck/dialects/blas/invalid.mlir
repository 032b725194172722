// RUN: irgrad-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks one rule of blas.gemm's verifier; the CHECK line is the diagnostic.

func.func @inner_sizes(%a: memref<4x3xf32>, %b: memref<4x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32>, memref<4x5xf32>, memref<4x5xf32>
  func.return
}
// CHECK: 'blas.gemm' op contracts op(A) 4x3 with op(B) 4x5: inner sizes differ (A is 4x3, B is 4x5)

// -----

func.func @transposed_sizes(%a: memref<4x3xf32>, %b: memref<4x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {transpose_a, alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32>, memref<4x5xf32>, memref<4x5xf32>
  func.return
}
// CHECK: 'blas.gemm' op result C is 4x5, expected 3x5 = op(A) @ op(B)

// -----

func.func @integers(%a: memref<4x3xi32>, %b: memref<3x5xi32>, %c: memref<4x5xi32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xi32>, memref<3x5xi32>, memref<4x5xi32>
  func.return
}
// CHECK: 'blas.gemm' op needs f32 or f64 elements, got i32

// -----

func.func @mixed(%a: memref<4x3xf32>, %b: memref<3x5xf64>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32>, memref<3x5xf64>, memref<4x5xf32>
  func.return
}
// CHECK: 'blas.gemm' op operand b has element type f64, expected f32 like operand a

// -----

func.func @rank(%a: memref<2x4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<2x4x3xf32>, memref<3x5xf32>, memref<4x5xf32>
  func.return
}
// CHECK: 'blas.gemm' op operand a must be a 2-D memref with a static shape, got memref<2x4x3xf32>

// -----

func.func @column_stride(%a: memref<4x3xf32, strided<[1, 4]>>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32, strided<[1, 4]>>, memref<3x5xf32>, memref<4x5xf32>
  func.return
}
// CHECK: 'blas.gemm' op operand a needs static strides with unit stride in the last dimension, got memref<4x3xf32, strided<[1, 4]>>

// -----

func.func @alpha_type(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  blas.gemm %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f64} : memref<4x3xf32>, memref<3x5xf32>, memref<4x5xf32>
  func.return
}
// CHECK: 'blas.gemm' op alpha must be an f64 attribute

// -----

func.func @potrf_not_square(%a: memref<4x3xf64>) {
  blas.potrf %a : memref<4x3xf64>
  func.return
}
// CHECK: 'blas.potrf' op operand a must be square, got memref<4x3xf64>

// -----

func.func @trsm_rows(%a: memref<4x4xf64>, %b: memref<3x2xf64>) {
  blas.trsm %a, %b lower : memref<4x4xf64>, memref<3x2xf64>
  func.return
}
// CHECK: 'blas.trsm' op b must have 4 rows like a, got memref<3x2xf64>

// -----

func.func @trsm_types(%a: memref<4x4xf64>, %b: memref<4x2xf32>) {
  blas.trsm %a, %b : memref<4x4xf64>, memref<4x2xf32>
  func.return
}
// CHECK: 'blas.trsm' op element types differ: a memref<4x4xf64>, b memref<4x2xf32>

// -----

func.func @getrf_pivots(%a: memref<4x4xf32>, %p: memref<4xi64>, %q: memref<4xi32>) {
  blas.getrf %a, %p, %q : memref<4x4xf32>, memref<4xi64>, memref<4xi32>
  func.return
}
// CHECK: 'blas.getrf' op pivots must be memref<4xi32>, got memref<4xi64>

// -----

func.func @getrf_strided(%a: memref<4x4xf32>, %p: memref<4xi32, strided<[2]>>, %q: memref<4xi32>) {
  blas.getrf %a, %p, %q : memref<4x4xf32>, memref<4xi32, strided<[2]>>, memref<4xi32>
  func.return
}
// CHECK: 'blas.getrf' op pivots must be contiguous, got memref<4xi32, strided<[2]>>
