// nn-expand-factorizations: nn.cholesky / triangular_solve / lu / eigh / svd / qr as their reference loops,
// outlined into private functions tagged for convert-factorizations-to-lapack (the default,
// the CPU pipeline) or inlined (outline=false, the GPU pipeline).
// RUN: irgrad-opt %s -p nn-expand-factorizations --split-input-file | filecheck %s
// RUN: irgrad-opt %s -p 'nn-expand-factorizations{outline=false}' --split-input-file | filecheck %s --check-prefix=INLINE
// RUN: irgrad-opt %s -p 'nn-expand-factorizations{references=false}' --split-input-file | filecheck %s --check-prefix=DECL
// RUN: not irgrad-opt %s -p 'nn-expand-factorizations{outline=false references=false}' 2>&1 | filecheck %s --check-prefix=BADOPT
// RUN: not irgrad-opt %s -p convert-nn-to-linalg --split-input-file 2>&1 | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt %s -p convert-nn-to-linalg --split-input-file >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// One private function per (op, flags, operand types): the two Cholesky factorizations of the
// same type share one, the triangular solves differ by their flags.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %l = func.call @irgrad_potrf_2x4x4xf64(%a) : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
// CHECK-NEXT:    %l2 = func.call @irgrad_potrf_2x4x4xf64(%a) : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
// CHECK-NEXT:    %x = func.call @irgrad_trsm_lower_2x4x4xf64_2x4x3xf64(%l, %b) : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
// CHECK-NEXT:    %y = func.call @irgrad_trsm_upper_unit_2x4x4xf64_2x4x3xf64(%l2, %x) : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
// CHECK-NEXT:    %lu, %piv, %perm = func.call @irgrad_getrf_2x4x4xf64(%a) : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x4xi32>, tensor<2x4xi32>)
// CHECK:       func.func private @irgrad_potrf_2x4x4xf64(%a: tensor<2x4x4xf64>) -> tensor<2x4x4xf64> attributes {irgrad.factorization = {kind = "potrf", lower = true, unit_diagonal = false}}
// CHECK:         scf.for
// CHECK:         nn.full nan
// CHECK:       func.func private @irgrad_trsm_lower_2x4x4xf64_2x4x3xf64({{.*}} attributes {irgrad.factorization = {kind = "trsm", lower = true, unit_diagonal = false}}
// CHECK:       func.func private @irgrad_trsm_upper_unit_2x4x4xf64_2x4x3xf64({{.*}} attributes {irgrad.factorization = {kind = "trsm", lower = false, unit_diagonal = true}}
// CHECK:       func.func private @irgrad_getrf_2x4x4xf64(%a: tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x4xi32>, tensor<2x4xi32>) attributes {irgrad.factorization = {kind = "getrf", lower = false, unit_diagonal = false}}
// CHECK-NOT:   nn.cholesky
// CHECK-NOT:   nn.triangular_solve
// CHECK-NOT:   nn.lu

// Inlined: no call and no private function; the loops sit in @chain itself.
// INLINE-LABEL: func.func @chain
// INLINE-NOT:   func.call
// INLINE:       scf.for
// INLINE:       scf.for
// INLINE:       scf.for
// INLINE:       scf.for
// INLINE:       scf.for
// INLINE:       func.return
// INLINE-NOT:   func.func private

// references=false (the CPU pipeline): the same calls, of tagged private declarations (no loop
// to trace and lower; convert-factorizations-to-lapack gives them bodies).
// DECL-LABEL: func.func @chain
// DECL-NEXT:    %l = func.call @irgrad_potrf_2x4x4xf64(%a) : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
// DECL-NOT:     scf.for
// DECL:         func.func private @irgrad_potrf_2x4x4xf64(tensor<2x4x4xf64>) -> tensor<2x4x4xf64> attributes {irgrad.factorization = {kind = "potrf", lower = true, unit_diagonal = false}}
// DECL-NEXT:    func.func private @irgrad_trsm_lower_2x4x4xf64_2x4x3xf64(tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64> attributes
// BADOPT: error: nn-expand-factorizations: references=false needs outline=true (an inlined factorization is its loop)

// Without the expansion, convert-nn-to-linalg says what to run.
// ERR: nn-expand-factorizations.mlir:[[# @LINE + 3]]:3: error: 'nn.cholesky' op is a factorization: run nn-expand-factorizations first, which writes it as loops of nn ops (-p nn-expand-factorizations,convert-nn-to-linalg)
// EXIT: exit=1
func.func @chain(%a: tensor<2x4x4xf64>, %b: tensor<2x4x3xf64>) -> (tensor<2x4x3xf64>, tensor<2x4x4xf64>, tensor<2x4xi32>) {
  %l = nn.cholesky %a : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
  %l2 = nn.cholesky %a : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
  %x = nn.triangular_solve %l, %b lower : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
  %y = nn.triangular_solve %l2, %x unit_diagonal : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
  %lu, %piv, %perm = nn.lu %a : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x4xi32>, tensor<2x4xi32>)
  func.return %y, %lu, %perm : tensor<2x4x3xf64>, tensor<2x4x4xf64>, tensor<2x4xi32>
}

// -----

// A name that is taken gets a suffix instead of clashing.
// CHECK-LABEL: func.func @taken
// CHECK-NEXT:    %l = func.call @irgrad_potrf_3x3xf32_1(%a)
// CHECK:       func.func private @irgrad_potrf_3x3xf32(
// CHECK:       func.func private @irgrad_potrf_3x3xf32_1(
// INLINE-LABEL: func.func @taken
// INLINE-NOT:   func.call
func.func @taken(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %l = nn.cholesky %a : (tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return %l : tensor<3x3xf32>
}
func.func private @irgrad_potrf_3x3xf32(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  func.return %a : tensor<3x3xf32>
}

// -----

// eigh, svd and qr: the raw factorization is outlined (LAPACK's syevd / gesdd / geqrf+orgqr
// replace it on the CPU); the op's contract (the sign convention, NaN for a non-finite input)
// follows inline, as ordinary ops on the call's results.
// CHECK-LABEL: func.func @decompositions
// CHECK-NEXT:    %[[W:.*]], %[[V:.*]] = func.call @irgrad_syevd_4x4xf64(%a) : (tensor<4x4xf64>) -> (tensor<4xf64>, tensor<4x4xf64>)
// CHECK:         nn.abs %[[V]]
// CHECK:         nn.select
// CHECK:         %{{.*}}, %[[S:.*]], %{{.*}} = func.call @irgrad_gesdd_3x5xf32(%b) : (tensor<3x5xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3x5xf32>)
// CHECK:         %{{.*}}, %[[R:.*]] = func.call @irgrad_geqrf_6x4xf64(%c) : (tensor<6x4xf64>) -> (tensor<6x4xf64>, tensor<4x4xf64>)
// CHECK:         nn.select %{{.*}}, %[[R]]
// CHECK:         func.return
// CHECK:       func.func private @irgrad_syevd_4x4xf64(%a: tensor<4x4xf64>) -> (tensor<4xf64>, tensor<4x4xf64>) attributes {irgrad.factorization = {kind = "syevd", lower = true, unit_diagonal = false}}
// CHECK:         scf.for
// CHECK:       func.func private @irgrad_gesdd_3x5xf32(%a: tensor<3x5xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3x5xf32>) attributes {irgrad.factorization = {kind = "gesdd", lower = false, unit_diagonal = false}}
// CHECK:       func.func private @irgrad_geqrf_6x4xf64(%a: tensor<6x4xf64>) -> (tensor<6x4xf64>, tensor<4x4xf64>) attributes {irgrad.factorization = {kind = "geqrf", lower = false, unit_diagonal = false}}
// CHECK-NOT:   nn.eigh
// INLINE-LABEL: func.func @decompositions
// INLINE-NOT:   func.call
// INLINE:       scf.for
// INLINE-NOT:   func.func private
// ERR: nn-expand-factorizations.mlir:[[# @LINE + 2]]:3: error: 'nn.eigh' op is a factorization: run nn-expand-factorizations first
func.func @decompositions(%a: tensor<4x4xf64>, %b: tensor<3x5xf32>, %c: tensor<6x4xf64>) -> (tensor<4x4xf64>, tensor<3xf32>, tensor<4x4xf64>) {
  %w, %v = nn.eigh %a : (tensor<4x4xf64>) -> (tensor<4xf64>, tensor<4x4xf64>)
  %u, %s, %vt = nn.svd %b : (tensor<3x5xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3x5xf32>)
  %q, %r = nn.qr %c : (tensor<6x4xf64>) -> (tensor<6x4xf64>, tensor<4x4xf64>)
  func.return %v, %s, %r : tensor<4x4xf64>, tensor<3xf32>, tensor<4x4xf64>
}
