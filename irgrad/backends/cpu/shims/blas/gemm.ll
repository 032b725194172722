; irgrad_blas_{s,d}gemm: the fixed signature generated code calls (row-major, i64 sizes and
; flags; irgrad/lowering/llvm/blas_to_llvm.py). The library branch when the arguments are ones
; BLAS accepts, the loop nest (loops.ll) otherwise. ${library_call} is whole lines:
; library_args.ll, swap_nt.ll (sgemm only), library_call.ll; empty without a library.
; Filled in by irgrad/backends/cpu/blas.py.

define void @irgrad_blas_${p}gemm(i64 %ta, i64 %tb, i64 %m, i64 %n, i64 %k, ${T} %alpha, ptr %a,
                                 i64 %lda, ptr %b, i64 %ldb, ${T} %beta, ptr %c, i64 %ldc) {
entry:
  %ta1 = icmp ne i64 %ta, 0
  %tb1 = icmp ne i64 %tb, 0
  %cols_a = select i1 %ta1, i64 %m, i64 %k
  %cols_b = select i1 %tb1, i64 %k, i64 %n
  %ca1 = call i64 @llvm.smax.i64(i64 %cols_a, i64 1)
  %cb1 = call i64 @llvm.smax.i64(i64 %cols_b, i64 1)
  %cc1 = call i64 @llvm.smax.i64(i64 %n, i64 1)
  %bad_a = icmp slt i64 %lda, %ca1
  %bad_b = icmp slt i64 %ldb, %cb1
  %bad_c = icmp slt i64 %ldc, %cc1
  %m0 = icmp sle i64 %m, 0
  %n0 = icmp sle i64 %n, 0
  %k0 = icmp sle i64 %k, 0
  %big = call i64 @llvm.smax.i64(i64 %m, i64 %n)
  %big2 = call i64 @llvm.smax.i64(i64 %big, i64 %k)
  %big3 = call i64 @llvm.smax.i64(i64 %big2, i64 %lda)
  %big4 = call i64 @llvm.smax.i64(i64 %big3, i64 %ldb)
  %big5 = call i64 @llvm.smax.i64(i64 %big4, i64 %ldc)
  %too_big = icmp sgt i64 %big5, ${int_max}
  %e1 = or i1 %bad_a, %bad_b
  %e2 = or i1 %e1, %bad_c
  %e3 = or i1 %e2, %m0
  %e4 = or i1 %e3, %n0
  %e5 = or i1 %e4, %k0
  %e6 = or i1 %e5, %too_big
  %e7 = or i1 %e6, ${no_library}
  br i1 %e7, label %loops, label %library
loops:
  call void @_irgrad_loops_${p}gemm(i1 %ta1, i1 %tb1, i64 %m, i64 %n, i64 %k, ${T} %alpha, ptr %a,
                                   i64 %lda, ptr %b, i64 %ldb, ${T} %beta, ptr %c, i64 %ldc)
  ret void
library:

${library_call}  ret void
}
