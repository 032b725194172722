// RUN: irgrad-opt %s --split-input-file --verify-diagnostics
// RUN: sed -e 's/a must be square, got/a must be squared, got/' %s | not irgrad-opt - --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=MISSING

// Each case breaks one rule of blas.geev's verifier; the expected-error annotation is the diagnostic.
// The second RUN line changes the first annotation, so the run fails: the checks are live.
// MISSING: error: unexpected error: 'blas.geev' op operand a must be square, got memref<4x3xf64>

func.func @not_square(%a: memref<4x3xf64>, %w: memref<4x2xf64>, %v: memref<4x4x2xf64>) {
  // expected-error @+1 {{'blas.geev' op operand a must be square, got memref<4x3xf64>}}
  blas.geev %a, %w, %v : memref<4x3xf64>, memref<4x2xf64>, memref<4x4x2xf64>
  func.return
}

// -----

func.func @w_not_pairs(%a: memref<4x4xf64>, %w: memref<4xf64>, %v: memref<4x4x2xf64>) {
  // expected-error @+1 {{'blas.geev' op w must be memref<4x2xf64>, got memref<4xf64>}}
  blas.geev %a, %w, %v : memref<4x4xf64>, memref<4xf64>, memref<4x4x2xf64>
  func.return
}

// -----

func.func @v_element_type(%a: memref<3x3xf32>, %w: memref<3x2xf32>, %v: memref<3x3x2xf64>) {
  // expected-error @+1 {{'blas.geev' op v must be memref<3x3x2xf32>, got memref<3x3x2xf64>}}
  blas.geev %a, %w, %v : memref<3x3xf32>, memref<3x2xf32>, memref<3x3x2xf64>
  func.return
}

// -----

func.func @v_pairs_apart(%a: memref<3x3xf32>, %w: memref<3x2xf32>, %v: memref<3x3x2xf32, strided<[12, 4, 1]>>) {
  // expected-error @+1 {{'blas.geev' op v needs static strides ending in [2, 1] (rows of pairs), got memref<3x3x2xf32, strided<[12, 4, 1]>>}}
  blas.geev %a, %w, %v : memref<3x3xf32>, memref<3x2xf32>, memref<3x3x2xf32, strided<[12, 4, 1]>>
  func.return
}

// -----

func.func @w_strided(%a: memref<3x3xf32>, %w: memref<3x2xf32, strided<[4, 1]>>, %v: memref<3x3x2xf32>) {
  // expected-error @+1 {{'blas.geev' op w needs static strides ending in [2, 1] (rows of pairs), got memref<3x2xf32, strided<[4, 1]>>}}
  blas.geev %a, %w, %v : memref<3x3xf32>, memref<3x2xf32, strided<[4, 1]>>, memref<3x3x2xf32>
  func.return
}

// -----

func.func @integer_a(%a: memref<3x3xi32>, %w: memref<3x2xi32>, %v: memref<3x3x2xi32>) {
  // expected-error @+1 {{'blas.geev' op operand a needs f32 or f64 elements, got i32}}
  blas.geev %a, %w, %v : memref<3x3xi32>, memref<3x2xi32>, memref<3x3x2xi32>
  func.return
}
