// convert-factorizations-to-lapack: after bufferize, an outlined factorization's body (the
// reference loop) becomes a copy into its out-parameter and one LAPACK call per batch element.
// RUN: not irgrad-opt %s -p convert-factorizations-to-lapack --split-input-file 2>/dev/null | filecheck %s
// RUN: not irgrad-opt %s -p convert-factorizations-to-lapack --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt %s -p convert-factorizations-to-lapack --split-input-file >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// RUN: not irgrad-opt %s -p nn-expand-factorizations,convert-nn-to-linalg,bufferize,convert-factorizations-to-lapack --split-input-file 2>/dev/null | filecheck %s --check-prefix=PIPE
// ERR-NOT: Traceback

// A batch of 2x3 matrices: two loops, a subview of each batch element, the routine on it.
// CHECK-LABEL: func.func private @potrf(%a: memref<2x3x4x4xf64>, %out: memref<2x3x4x4xf64>)
// CHECK-NEXT:    memref.copy %a, %out : memref<2x3x4x4xf64> to memref<2x3x4x4xf64>
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
// CHECK-NEXT:    memref.copy %b, %out : memref<5x2xf32> to memref<5x2xf32>
// CHECK-NEXT:    blas.trsm %a, %out unit_diagonal : memref<5x5xf32>, memref<5x2xf32>
// CHECK-NEXT:    func.return
func.func private @trsm(%a: memref<5x5xf32>, %b: memref<5x2xf32>, %out: memref<5x2xf32>) attributes {irgrad.factorization = {kind = "trsm", lower = false, unit_diagonal = true}} {
  func.return
}

// -----

// A tagged declaration (nn-expand-factorizations{references=false}, the CPU pipeline) gets its
// body here, on its bufferized signature.
// CHECK-LABEL: func.func private @declared_syevd(%0: memref<4x4xf64>, %1: memref<4xf64>, %2: memref<4x4xf64>)
// CHECK-NEXT:    memref.copy %0, %2 : memref<4x4xf64> to memref<4x4xf64>
// CHECK-NEXT:    blas.syevd %2, %1 : memref<4x4xf64>, memref<4xf64>
// CHECK-NEXT:    func.return
func.func private @declared_syevd(memref<4x4xf64>, memref<4xf64>, memref<4x4xf64>) attributes {irgrad.factorization = {kind = "syevd", lower = true, unit_diagonal = false}}

// -----

// LU: the factored matrix and the two i32 vectors, each per batch element.
// CHECK-LABEL: func.func private @getrf
// CHECK-NEXT:    memref.copy %a, %lu : memref<3x4x4xf32> to memref<3x4x4xf32>
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
// CHECK-NEXT:    memref.copy %a, %out
// CHECK-NEXT:    %[[V:.*]] = memref.subview %out[0, 0, 0] [1, 3, 3] [1, 1, 1] : memref<1x3x3xf32> to memref<3x3xf32, strided<[3, 1]>>
// CHECK-NEXT:    blas.potrf %[[V]] : memref<3x3xf32, strided<[3, 1]>>
// CHECK-NEXT:    func.return
func.func private @potrf_unit_batch(%a: memref<1x3x3xf32>, %out: memref<1x3x3xf32>) attributes {irgrad.factorization = {kind = "potrf", lower = true, unit_diagonal = false}} {
  func.return
}

// -----

// eigh: A copied into V, then syevd per batch element on V's matrix and w's vector.
// CHECK-LABEL: func.func private @syevd(%a: memref<2x4x4xf64>, %w: memref<2x4xf64>, %v: memref<2x4x4xf64>)
// CHECK-NEXT:    memref.copy %a, %v : memref<2x4x4xf64> to memref<2x4x4xf64>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[V:.*]] = memref.subview %v[%[[I]], 0, 0] [1, 4, 4] [1, 1, 1] : memref<2x4x4xf64> to memref<4x4xf64, strided<[4, 1], offset: ?>>
// CHECK-NEXT:      %[[W:.*]] = memref.subview %w[%[[I]], 0] [1, 4] [1, 1] : memref<2x4xf64> to memref<4xf64, strided<[1], offset: ?>>
// CHECK-NEXT:      blas.syevd %[[V]], %[[W]] : memref<4x4xf64, strided<[4, 1], offset: ?>>, memref<4xf64, strided<[1], offset: ?>>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func private @syevd(%a: memref<2x4x4xf64>, %w: memref<2x4xf64>, %v: memref<2x4x4xf64>) attributes {irgrad.factorization = {kind = "syevd", lower = true, unit_diagonal = false}} {
  func.return
}

// -----

// svd of one wide matrix: gesdd destroys its A, so it works on a scratch copy (the read-only
// argument may be the caller's), freed at the end; s, u and vt are written directly.
// CHECK-LABEL: func.func private @gesdd(%a: memref<3x5xf32>, %u: memref<3x3xf32>, %s: memref<3xf32>, %vt: memref<3x5xf32>)
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() : memref<3x5xf32>
// CHECK-NEXT:    memref.copy %a, %[[T]] : memref<3x5xf32> to memref<3x5xf32>
// CHECK-NEXT:    blas.gesdd %[[T]], %s, %u, %vt : memref<3x5xf32>, memref<3xf32>, memref<3x3xf32>, memref<3x5xf32>
// CHECK-NEXT:    memref.dealloc %[[T]] : memref<3x5xf32>
// CHECK-NEXT:    func.return
func.func private @gesdd(%a: memref<3x5xf32>, %u: memref<3x3xf32>, %s: memref<3xf32>, %vt: memref<3x5xf32>) attributes {irgrad.factorization = {kind = "gesdd", lower = false, unit_diagonal = false}} {
  func.return
}

// -----

// A batch of tall matrices: one scratch for the batch, a subview of it and of each output per element.
// CHECK-LABEL: func.func private @gesdd_batched
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() : memref<2x5x3xf64>
// CHECK-NEXT:    memref.copy %a, %[[T]]
// CHECK:         scf.for %[[I:.*]] =
// CHECK-NEXT:      %[[A:.*]] = memref.subview %[[T]][%[[I]], 0, 0] [1, 5, 3] [1, 1, 1] : memref<2x5x3xf64> to memref<5x3xf64, strided<[3, 1], offset: ?>>
// CHECK-NEXT:      %[[S:.*]] = memref.subview %s[%[[I]], 0] [1, 3] [1, 1] : memref<2x3xf64> to memref<3xf64, strided<[1], offset: ?>>
// CHECK-NEXT:      %[[U:.*]] = memref.subview %u[%[[I]], 0, 0] [1, 5, 3] [1, 1, 1]
// CHECK-NEXT:      %[[VT:.*]] = memref.subview %vt[%[[I]], 0, 0] [1, 3, 3] [1, 1, 1]
// CHECK-NEXT:      blas.gesdd %[[A]], %[[S]], %[[U]], %[[VT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[T]] : memref<2x5x3xf64>
// CHECK-NEXT:    func.return
func.func private @gesdd_batched(%a: memref<2x5x3xf64>, %u: memref<2x5x3xf64>, %s: memref<2x3xf64>, %vt: memref<2x3x3xf64>) attributes {irgrad.factorization = {kind = "gesdd", lower = false, unit_diagonal = false}} {
  func.return
}

// -----

// qr: A copied into Q, then geqrf (+ orgqr) per batch element on Q's and R's matrices.
// CHECK-LABEL: func.func private @geqrf
// CHECK-NEXT:    memref.copy %a, %q : memref<3x5x3xf32> to memref<3x5x3xf32>
// CHECK:         scf.for %[[I:.*]] =
// CHECK-NEXT:      %[[Q:.*]] = memref.subview %q[%[[I]], 0, 0] [1, 5, 3] [1, 1, 1] : memref<3x5x3xf32> to memref<5x3xf32, strided<[3, 1], offset: ?>>
// CHECK-NEXT:      %[[R:.*]] = memref.subview %r[%[[I]], 0, 0] [1, 3, 3] [1, 1, 1] : memref<3x3x3xf32> to memref<3x3xf32, strided<[3, 1], offset: ?>>
// CHECK-NEXT:      blas.geqrf %[[Q]], %[[R]] : memref<5x3xf32, strided<[3, 1], offset: ?>>, memref<3x3xf32, strided<[3, 1], offset: ?>>
func.func private @geqrf(%a: memref<3x5x3xf32>, %q: memref<3x5x3xf32>, %r: memref<3x3x3xf32>) attributes {irgrad.factorization = {kind = "geqrf", lower = false, unit_diagonal = false}} {
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

// A signature whose shapes disagree: the copy the pass inserts fails its verifier, reported at
// the function it was put in (the copy has no location of its own), not without a location.
// ERR: convert-factorizations-to-lapack.mlir:[[# @LINE + 1]]:1: error: 'memref.copy' op Expected source and destination to have the same shape.
func.func private @mismatched(%a: memref<1x3x3xf32>, %out: memref<2x3x3xf32>) attributes {irgrad.factorization = {kind = "potrf", lower = true, unit_diagonal = false}} {
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

// Wrong arity for the kind: syevd has a matrix in and two results out.
// ERR: convert-factorizations-to-lapack.mlir:[[# @LINE + 1]]:1: error: 'func.func' op an outlined 'syevd' function takes 3 memrefs after bufferize, got (memref<4x4xf64>, memref<4x4xf64>); run bufferize first
func.func private @syevd_arity(%a: memref<4x4xf64>, %v: memref<4x4xf64>) attributes {irgrad.factorization = {kind = "syevd", lower = true, unit_diagonal = false}} {
  func.return
}

// -----

// ERR: convert-factorizations-to-lapack.mlir:[[# @LINE + 1]]:1: error: 'func.func' op an outlined 'gesdd' function takes 4 memrefs after bufferize, got (memref<5x3xf64>, memref<5x3xf64>, memref<3x3xf64>); run bufferize first
func.func private @gesdd_arity(%a: memref<5x3xf64>, %u: memref<5x3xf64>, %vt: memref<3x3xf64>) attributes {irgrad.factorization = {kind = "gesdd", lower = false, unit_diagonal = false}} {
  func.return
}

// -----

// ERR: convert-factorizations-to-lapack.mlir:[[# @LINE + 1]]:1: error: 'func.func' op an outlined 'geqrf' function takes 3 memrefs after bufferize, got (tensor<5x3xf64>); run bufferize first
func.func private @geqrf_tensors(%a: tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<3x3xf64>) attributes {irgrad.factorization = {kind = "geqrf", lower = false, unit_diagonal = false}} {
  %r = tensor.empty() : tensor<3x3xf64>
  func.return %a, %r : tensor<5x3xf64>, tensor<3x3xf64>
}

// -----

// ERR: convert-factorizations-to-lapack.mlir:[[# @LINE + 1]]:1: error: 'func.func' op unknown factorization kind 'gelsd' (potrf, trsm, getrf, syevd, geev, gesdd or geqrf)
func.func private @unknown(%a: memref<4x4xf64>, %out: memref<4x4xf64>) attributes {irgrad.factorization = {kind = "gelsd"}} {
  func.return
}

// -----

// From nn: the entry function calls the outlined function, whose body is now the LAPACK call.
// PIPE-LABEL: func.func @solve
// PIPE:         func.call @irgrad_trsm_lower_3x3xf64_3x1xf64(%a, %b, %out)
// PIPE-LABEL: func.func private @irgrad_trsm_lower_3x3xf64_3x1xf64
// PIPE-NEXT:    memref.copy %b, %out
// PIPE-NEXT:    blas.trsm %a, %out lower : memref<3x3xf64>, memref<3x1xf64>
// PIPE-NEXT:    func.return
func.func @solve(%a: tensor<3x3xf64>, %b: tensor<3x1xf64>) -> tensor<3x1xf64> {
  %x = nn.triangular_solve %a, %b lower : (tensor<3x3xf64>, tensor<3x1xf64>) -> tensor<3x1xf64>
  func.return %x : tensor<3x1xf64>
}

// -----

// eigh, svd and qr from nn: each a call of its outlined function, whose body is now the LAPACK call.
// PIPE-LABEL: func.func @decompose
// PIPE:         func.call @irgrad_syevd_3x3xf64(%a, %{{.*}}, %{{.*}}) : (memref<3x3xf64>, memref<3xf64>, memref<3x3xf64>) -> ()
// PIPE:         func.call @irgrad_gesdd_2x4x3xf32(%b, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<2x4x3xf32>, memref<2x4x3xf32>, memref<2x3xf32>, memref<2x3x3xf32>) -> ()
// PIPE:         func.call @irgrad_geqrf_2x4x3xf32(%b, %{{.*}}, %{{.*}}) : (memref<2x4x3xf32>, memref<2x4x3xf32>, memref<2x3x3xf32>) -> ()
// PIPE-LABEL: func.func private @irgrad_syevd_3x3xf64
// PIPE-NEXT:    memref.copy %a, %out1
// PIPE-NEXT:    blas.syevd %out1, %out0 : memref<3x3xf64>, memref<3xf64>
// PIPE-NEXT:    func.return
// PIPE-LABEL: func.func private @irgrad_gesdd_2x4x3xf32
// PIPE-NEXT:    memref.alloc() : memref<2x4x3xf32>
// PIPE:         blas.gesdd
// PIPE:         memref.dealloc
// PIPE-NEXT:    func.return
// PIPE-LABEL: func.func private @irgrad_geqrf_2x4x3xf32
// PIPE-NEXT:    memref.copy %a, %out0
// PIPE:         blas.geqrf
// PIPE-NOT:     linalg
// PIPE:         func.return
func.func @decompose(%a: tensor<3x3xf64>, %b: tensor<2x4x3xf32>) -> (tensor<3xf64>, tensor<3x3xf64>, tensor<2x4x3xf32>, tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x4x3xf32>, tensor<2x3x3xf32>) {
  %w, %v = nn.eigh %a : (tensor<3x3xf64>) -> (tensor<3xf64>, tensor<3x3xf64>)
  %u, %s, %vt = nn.svd %b : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xf32>, tensor<2x3x3xf32>)
  %q, %r = nn.qr %b : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3x3xf32>)
  func.return %w, %v, %u, %s, %vt, %q, %r : tensor<3xf64>, tensor<3x3xf64>, tensor<2x4x3xf32>, tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x4x3xf32>, tensor<2x3x3xf32>
}
