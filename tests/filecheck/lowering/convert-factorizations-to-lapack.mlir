// convert-factorizations-to-lapack: after bufferize, an outlined factorization's body (the
// reference loop) becomes a copy into its out-parameter and one LAPACK call per batch element.
// RUN: not irgrad-opt %s -p convert-factorizations-to-lapack --split-input-file 2>/dev/null | filecheck %s
// RUN: not irgrad-opt %s -p convert-factorizations-to-lapack --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt %s -p convert-factorizations-to-lapack --split-input-file >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// RUN: not irgrad-opt %s -p nn-expand-factorizations,convert-nn-to-linalg,bufferize,convert-factorizations-to-lapack --split-input-file 2>/dev/null | filecheck %s --check-prefix=PIPE
// ERR-NOT: Traceback

// A batch of 2x3 matrices: two loops, a subview of each batch element, the routine on it.
// CHECK-LABEL: func.func private @potrf(%a: memref<2x3x4x4xf64>, %out: memref<2x3x4x4xf64>)
// CHECK-NEXT:    "memref.copy"(%a, %out) : (memref<2x3x4x4xf64>, memref<2x3x4x4xf64>) -> ()
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[V:.*]] = memref.subview %out[%[[I]], %[[J]], 0, 0] [1, 1, 4, 4] [1, 1, 1, 1] : memref<2x3x4x4xf64> to memref<4x4xf64, strided<[4, 1], offset: ?>>
// CHECK-NEXT:        blas.potrf %[[V]] : memref<4x4xf64, strided<[4, 1], offset: ?>>
// CHECK-NOT:     linalg
// CHECK:         func.return
func.func private @potrf(%a: memref<2x3x4x4xf64>, %out: memref<2x3x4x4xf64>) attributes {irgrad.factorization = {kind = "potrf", lower = true, unit_diagonal = false}} {
  %c = arith.constant 0.0 : f64
  linalg.fill ins(%c : f64) outs(%out : memref<2x3x4x4xf64>)
  func.return
}

// -----

// A single matrix needs no loop; the right-hand side is copied and solved in place, the flags kept.
// CHECK-LABEL: func.func private @trsm(%a: memref<5x5xf32>, %b: memref<5x2xf32>, %out: memref<5x2xf32>)
// CHECK-NEXT:    "memref.copy"(%b, %out) : (memref<5x2xf32>, memref<5x2xf32>) -> ()
// CHECK-NEXT:    blas.trsm %a, %out unit_diagonal : memref<5x5xf32>, memref<5x2xf32>
// CHECK-NEXT:    func.return
func.func private @trsm(%a: memref<5x5xf32>, %b: memref<5x2xf32>, %out: memref<5x2xf32>) attributes {irgrad.factorization = {kind = "trsm", lower = false, unit_diagonal = true}} {
  func.return
}

// -----

// LU: the factored matrix and the two i32 vectors, each per batch element.
// CHECK-LABEL: func.func private @getrf
// CHECK-NEXT:    "memref.copy"(%a, %lu) : (memref<3x4x4xf32>, memref<3x4x4xf32>) -> ()
// CHECK:         scf.for %[[I:.*]] =
// CHECK-NEXT:      %[[A:.*]] = memref.subview %lu[%[[I]], 0, 0] [1, 4, 4] [1, 1, 1]
// CHECK-NEXT:      %[[P:.*]] = memref.subview %piv[%[[I]], 0] [1, 4] [1, 1] : memref<3x4xi32> to memref<4xi32, strided<[1], offset: ?>>
// CHECK-NEXT:      %[[Q:.*]] = memref.subview %perm[%[[I]], 0] [1, 4] [1, 1] : memref<3x4xi32> to memref<4xi32, strided<[1], offset: ?>>
// CHECK-NEXT:      blas.getrf %[[A]], %[[P]], %[[Q]]
func.func private @getrf(%a: memref<3x4x4xf32>, %lu: memref<3x4x4xf32>, %piv: memref<3x4xi32>, %perm: memref<3x4xi32>) attributes {irgrad.factorization = {kind = "getrf", lower = false, unit_diagonal = false}} {
  func.return
}

// -----

// A batch dimension of size 1 needs no loop: a subview at the static offset.
// CHECK-LABEL: func.func private @potrf_unit_batch
// CHECK-NEXT:    "memref.copy"(%a, %out)
// CHECK-NEXT:    %[[V:.*]] = memref.subview %out[0, 0, 0] [1, 3, 3] [1, 1, 1] : memref<1x3x3xf32> to memref<3x3xf32, strided<[3, 1]>>
// CHECK-NEXT:    blas.potrf %[[V]] : memref<3x3xf32, strided<[3, 1]>>
// CHECK-NEXT:    func.return
func.func private @potrf_unit_batch(%a: memref<1x3x3xf32>, %out: memref<1x3x3xf32>) attributes {irgrad.factorization = {kind = "potrf", lower = true, unit_diagonal = false}} {
  func.return
}

// -----

// Functions without the tag are left alone.
// CHECK-LABEL: func.func @untagged
// CHECK-NEXT:    func.return
func.func @untagged(%a: memref<4x4xf64>) {
  func.return
}

// -----

// Before bufferize the signature is on tensors: an error that says what to run.
// ERR: convert-factorizations-to-lapack.mlir:[[# @LINE + 2]]:1: error: 'func.func' op an outlined 'potrf' function takes 2 memrefs after bufferize, got (tensor<4x4xf64>); run bufferize first
// EXIT: exit=1
func.func private @on_tensors(%a: tensor<4x4xf64>) -> tensor<4x4xf64> attributes {irgrad.factorization = {kind = "potrf", lower = true, unit_diagonal = false}} {
  func.return %a : tensor<4x4xf64>
}

// -----

// ERR: convert-factorizations-to-lapack.mlir:[[# @LINE + 1]]:1: error: 'func.func' op unknown factorization kind 'geqrf' (potrf, trsm or getrf)
func.func private @unknown(%a: memref<4x4xf64>, %out: memref<4x4xf64>) attributes {irgrad.factorization = {kind = "geqrf"}} {
  func.return
}

// -----

// From nn: the entry function calls the outlined function, whose body is now the LAPACK call.
// PIPE-LABEL: func.func @solve
// PIPE:         func.call @irgrad_trsm_lower_3x3xf64_3x1xf64(%a, %b, %out)
// PIPE-LABEL: func.func private @irgrad_trsm_lower_3x3xf64_3x1xf64
// PIPE-NEXT:    "memref.copy"(%b, %out)
// PIPE-NEXT:    blas.trsm %a, %out lower : memref<3x3xf64>, memref<3x1xf64>
// PIPE-NEXT:    func.return
func.func @solve(%a: tensor<3x3xf64>, %b: tensor<3x1xf64>) -> tensor<3x1xf64> {
  %x = nn.triangular_solve %a, %b lower : (tensor<3x3xf64>, tensor<3x1xf64>) -> tensor<3x1xf64>
  func.return %x : tensor<3x1xf64>
}
