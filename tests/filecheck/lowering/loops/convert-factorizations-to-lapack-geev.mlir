// convert-factorizations-to-lapack on a tagged geev declaration (nn.eig): a scratch copy of A
// (geev destroys it), one blas.geev per batch element on A's matrix, w's n x 2 and v's n x n x 2
// subviews, the scratch freed. convert-blas-to-llvm then calls irgrad_lapack_{s,d}geev with
// (n, a, lda, w, v, ldv), ldv in elements (2n for contiguous rows of pairs).
// RUN: irgrad-opt %s -p convert-factorizations-to-lapack --split-input-file | filecheck %s
// RUN: irgrad-opt %s -p convert-factorizations-to-lapack,convert-blas-to-llvm --split-input-file | filecheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func private @geev(%0: memref<2x4x4xf64>, %1: memref<2x4x2xf64>, %2: memref<2x4x4x2xf64>)
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() : memref<2x4x4xf64>
// CHECK-NEXT:    memref.copy %0, %[[T]] : memref<2x4x4xf64> to memref<2x4x4xf64>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[A:.*]] = memref.subview %[[T]][%[[I]], 0, 0] [1, 4, 4] [1, 1, 1] : memref<2x4x4xf64> to memref<4x4xf64, strided<[4, 1], offset: ?>>
// CHECK-NEXT:      %[[W:.*]] = memref.subview %1[%[[I]], 0, 0] [1, 4, 2] [1, 1, 1] : memref<2x4x2xf64> to memref<4x2xf64, strided<[2, 1], offset: ?>>
// CHECK-NEXT:      %[[V:.*]] = memref.subview %2[%[[I]], 0, 0, 0] [1, 4, 4, 2] [1, 1, 1, 1] : memref<2x4x4x2xf64> to memref<4x4x2xf64, strided<[8, 2, 1], offset: ?>>
// CHECK-NEXT:      blas.geev %[[A]], %[[W]], %[[V]] : memref<4x4xf64, strided<[4, 1], offset: ?>>, memref<4x2xf64, strided<[2, 1], offset: ?>>, memref<4x4x2xf64, strided<[8, 2, 1], offset: ?>>
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[T]] : memref<2x4x4xf64>
// CHECK-NEXT:    func.return
// LLVM-LABEL: func.func private @geev
// LLVM:         llvm.call @irgrad_lapack_dgeev(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64) -> ()
// LLVM-NOT:     blas.geev
func.func private @geev(memref<2x4x4xf64>, memref<2x4x2xf64>, memref<2x4x4x2xf64>) attributes {irgrad.factorization = {kind = "geev", lower = false, unit_diagonal = false}}

// -----

// One f32 matrix, no batch: no loop; the call is the single-precision entry point.
// CHECK-LABEL: func.func private @geev_f32(%0: memref<3x3xf32>, %1: memref<3x2xf32>, %2: memref<3x3x2xf32>)
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() : memref<3x3xf32>
// CHECK-NEXT:    memref.copy %0, %[[T]]
// CHECK-NEXT:    blas.geev %[[T]], %1, %2 : memref<3x3xf32>, memref<3x2xf32>, memref<3x3x2xf32>
// CHECK-NEXT:    memref.dealloc %[[T]]
// LLVM-LABEL: func.func private @geev_f32
// LLVM:         llvm.call @irgrad_lapack_sgeev
func.func private @geev_f32(memref<3x3xf32>, memref<3x2xf32>, memref<3x3x2xf32>) attributes {irgrad.factorization = {kind = "geev", lower = false, unit_diagonal = false}}
