// RUN: irgrad-opt %s --split-input-file --verify-diagnostics
// RUN: sed -e 's/inner sizes differ (A/inner sizes agree (A/' %s | not irgrad-opt - --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=MISSING

// Each case breaks one rule of blas.gemm's verifier; the expected-error annotation is the diagnostic.
// The second RUN line changes the first annotation: the run now fails, saying that the error
// produced was not expected and that the expected one was not produced.
// MISSING: <stdin>:13:3: error: unexpected error: 'blas.gemm' op contracts op(A) 4x3 with op(B) 4x5: inner sizes differ
// MISSING: <stdin>:12:6: error: expected error "'blas.gemm' op contracts op(A) 4x3 with op(B) 4x5: inner sizes agree (A is 4x3, B is 4x5)" was not produced
// MISSING-NOT: error:

func.func @inner_sizes(%a: memref<4x3xf32>, %b: memref<4x5xf32>, %c: memref<4x5xf32>) {
  // expected-error @+1 {{'blas.gemm' op contracts op(A) 4x3 with op(B) 4x5: inner sizes differ (A is 4x3, B is 4x5)}}
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32>, memref<4x5xf32>, memref<4x5xf32>
  func.return
}

// -----

func.func @transposed_sizes(%a: memref<4x3xf32>, %b: memref<4x5xf32>, %c: memref<4x5xf32>) {
  // expected-error @+1 {{'blas.gemm' op result C is 4x5, expected 3x5 = op(A) @ op(B)}}
  blas.gemm %a, %b, %c {transpose_a, alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32>, memref<4x5xf32>, memref<4x5xf32>
  func.return
}

// -----

func.func @integers(%a: memref<4x3xi32>, %b: memref<3x5xi32>, %c: memref<4x5xi32>) {
  // expected-error @+1 {{'blas.gemm' op needs f32 or f64 elements, got i32}}
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xi32>, memref<3x5xi32>, memref<4x5xi32>
  func.return
}

// -----

func.func @mixed(%a: memref<4x3xf32>, %b: memref<3x5xf64>, %c: memref<4x5xf32>) {
  // expected-error @+1 {{'blas.gemm' op operand b has element type f64, expected f32 like operand a}}
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32>, memref<3x5xf64>, memref<4x5xf32>
  func.return
}

// -----

func.func @rank(%a: memref<2x4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  // expected-error @+1 {{'blas.gemm' op operand a must be a 2-D memref with a static shape, got memref<2x4x3xf32>}}
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<2x4x3xf32>, memref<3x5xf32>, memref<4x5xf32>
  func.return
}

// -----

func.func @column_stride(%a: memref<4x3xf32, strided<[1, 4]>>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  // expected-error @+1 {{'blas.gemm' op operand a needs static strides with unit stride in the last dimension, got memref<4x3xf32, strided<[1, 4]>>}}
  blas.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.0 : f64} : memref<4x3xf32, strided<[1, 4]>>, memref<3x5xf32>, memref<4x5xf32>
  func.return
}

// -----

func.func @alpha_type(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  // expected-error @+1 {{'blas.gemm' op alpha must be an f64 attribute}}
  blas.gemm %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f64} : memref<4x3xf32>, memref<3x5xf32>, memref<4x5xf32>
  func.return
}

// -----

func.func @potrf_not_square(%a: memref<4x3xf64>) {
  // expected-error @+1 {{'blas.potrf' op operand a must be square, got memref<4x3xf64>}}
  blas.potrf %a : memref<4x3xf64>
  func.return
}

// -----

func.func @trsm_rows(%a: memref<4x4xf64>, %b: memref<3x2xf64>) {
  // expected-error @+1 {{'blas.trsm' op b must have 4 rows like a, got memref<3x2xf64>}}
  blas.trsm %a, %b lower : memref<4x4xf64>, memref<3x2xf64>
  func.return
}

// -----

func.func @trsm_types(%a: memref<4x4xf64>, %b: memref<4x2xf32>) {
  // expected-error @+1 {{'blas.trsm' op element types differ: a memref<4x4xf64>, b memref<4x2xf32>}}
  blas.trsm %a, %b : memref<4x4xf64>, memref<4x2xf32>
  func.return
}

// -----

func.func @getrf_pivots(%a: memref<4x4xf32>, %p: memref<4xi64>, %q: memref<4xi32>) {
  // expected-error @+1 {{'blas.getrf' op pivots must be memref<4xi32>, got memref<4xi64>}}
  blas.getrf %a, %p, %q : memref<4x4xf32>, memref<4xi64>, memref<4xi32>
  func.return
}

// -----

func.func @getrf_strided(%a: memref<4x4xf32>, %p: memref<4xi32, strided<[2]>>, %q: memref<4xi32>) {
  // expected-error @+1 {{'blas.getrf' op pivots must be contiguous, got memref<4xi32, strided<[2]>>}}
  blas.getrf %a, %p, %q : memref<4x4xf32>, memref<4xi32, strided<[2]>>, memref<4xi32>
  func.return
}

// -----

func.func @syevd_not_square(%a: memref<4x3xf64>, %w: memref<4xf64>) {
  // expected-error @+1 {{'blas.syevd' op operand a must be square, got memref<4x3xf64>}}
  blas.syevd %a, %w : memref<4x3xf64>, memref<4xf64>
  func.return
}

// -----

func.func @syevd_w_size(%a: memref<4x4xf64>, %w: memref<3xf64>) {
  // expected-error @+1 {{'blas.syevd' op w must be memref<4xf64>, got memref<3xf64>}}
  blas.syevd %a, %w : memref<4x4xf64>, memref<3xf64>
  func.return
}

// -----

func.func @syevd_w_type(%a: memref<4x4xf64>, %w: memref<4xf32>) {
  // expected-error @+1 {{'blas.syevd' op w must be memref<4xf64>, got memref<4xf32>}}
  blas.syevd %a, %w : memref<4x4xf64>, memref<4xf32>
  func.return
}

// -----

func.func @syevd_w_strided(%a: memref<4x4xf32>, %w: memref<4xf32, strided<[4]>>) {
  // expected-error @+1 {{'blas.syevd' op w must be contiguous, got memref<4xf32, strided<[4]>>}}
  blas.syevd %a, %w : memref<4x4xf32>, memref<4xf32, strided<[4]>>
  func.return
}

// -----

func.func @gesdd_s_size(%a: memref<5x3xf64>, %s: memref<5xf64>, %u: memref<5x3xf64>, %vt: memref<3x3xf64>) {
  // expected-error @+1 {{'blas.gesdd' op s must be memref<3xf64>, got memref<5xf64>}}
  blas.gesdd %a, %s, %u, %vt : memref<5x3xf64>, memref<5xf64>, memref<5x3xf64>, memref<3x3xf64>
  func.return
}

// -----

func.func @gesdd_u_shape(%a: memref<3x5xf64>, %s: memref<3xf64>, %u: memref<3x5xf64>, %vt: memref<3x5xf64>) {
  // expected-error @+1 {{'blas.gesdd' op u must be 3x3, got memref<3x5xf64>}}
  blas.gesdd %a, %s, %u, %vt : memref<3x5xf64>, memref<3xf64>, memref<3x5xf64>, memref<3x5xf64>
  func.return
}

// -----

func.func @gesdd_vt_type(%a: memref<5x3xf64>, %s: memref<3xf64>, %u: memref<5x3xf64>, %vt: memref<3x3xf32>) {
  // expected-error @+1 {{'blas.gesdd' op element types differ: a memref<5x3xf64>, vt memref<3x3xf32>}}
  blas.gesdd %a, %s, %u, %vt : memref<5x3xf64>, memref<3xf64>, memref<5x3xf64>, memref<3x3xf32>
  func.return
}

// -----

func.func @gesdd_column_major(%a: memref<5x3xf64, strided<[1, 5]>>, %s: memref<3xf64>, %u: memref<5x3xf64>, %vt: memref<3x3xf64>) {
  // expected-error @+1 {{'blas.gesdd' op operand a needs static strides with unit stride in the last dimension, got memref<5x3xf64, strided<[1, 5]>>}}
  blas.gesdd %a, %s, %u, %vt : memref<5x3xf64, strided<[1, 5]>>, memref<3xf64>, memref<5x3xf64>, memref<3x3xf64>
  func.return
}

// -----

func.func @geqrf_wide(%q: memref<3x5xf64>, %r: memref<5x5xf64>) {
  // expected-error @+1 {{'blas.geqrf' op q must be tall or square (m >= n), got memref<3x5xf64>}}
  blas.geqrf %q, %r : memref<3x5xf64>, memref<5x5xf64>
  func.return
}

// -----

func.func @geqrf_r_shape(%q: memref<5x3xf64>, %r: memref<5x5xf64>) {
  // expected-error @+1 {{'blas.geqrf' op r must be 3x3, got memref<5x5xf64>}}
  blas.geqrf %q, %r : memref<5x3xf64>, memref<5x5xf64>
  func.return
}

// -----

func.func @geqrf_r_type(%q: memref<5x3xf64>, %r: memref<3x3xf32>) {
  // expected-error @+1 {{'blas.geqrf' op element types differ: q memref<5x3xf64>, r memref<3x3xf32>}}
  blas.geqrf %q, %r : memref<5x3xf64>, memref<3x3xf32>
  func.return
}
