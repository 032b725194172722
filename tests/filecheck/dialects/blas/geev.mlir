// RUN: irgrad-opt %s --split-input-file | filecheck %s
// RUN: irgrad-opt %s --split-input-file --print-op-generic | irgrad-opt --split-input-file | filecheck %s

// blas.geev round-trips: A scratch, w (n x 2) and v (n x n x 2) in the (re, im) pairs layout,
// a batch element's subviews (strided rows of pairs) included.
// CHECK-LABEL: func.func @geev
// CHECK-NEXT:    blas.geev %a, %w, %v : memref<4x4xf64>, memref<4x2xf64>, memref<4x4x2xf64>
func.func @geev(%a: memref<4x4xf64>, %w: memref<4x2xf64>, %v: memref<4x4x2xf64>) {
  blas.geev %a, %w, %v : memref<4x4xf64>, memref<4x2xf64>, memref<4x4x2xf64>
  func.return
}

// -----

// CHECK-LABEL: func.func @geev_subviews
// CHECK-NEXT:    blas.geev %a, %w, %v : memref<3x3xf32, strided<[5, 1]>>, memref<3x2xf32, strided<[2, 1], offset: 6>>, memref<3x3x2xf32, strided<[8, 2, 1]>>
func.func @geev_subviews(%a: memref<3x3xf32, strided<[5, 1]>>, %w: memref<3x2xf32, strided<[2, 1], offset: 6>>, %v: memref<3x3x2xf32, strided<[8, 2, 1]>>) {
  blas.geev %a, %w, %v : memref<3x3xf32, strided<[5, 1]>>, memref<3x2xf32, strided<[2, 1], offset: 6>>, memref<3x3x2xf32, strided<[8, 2, 1]>>
  func.return
}
