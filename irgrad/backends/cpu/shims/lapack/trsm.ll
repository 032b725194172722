; void irgrad_lapack_{p}trsm(i64 lower, i64 unit, i64 n, i64 k, T* a, i64 lda, T* b, i64 ldb)
;     B := A^{-1} B for the n x n triangular A (lower if `lower` != 0, else upper; if `unit`
;     != 0 its diagonal is taken as ones and not read; the other triangle is never read) and
;     the n x k matrix B. A zero on A's diagonal gives inf/NaN, as BLAS does. n <= 0 or
;     k <= 0: nothing.
; Row-major: CBLAS's row-major order (OpenBLAS swaps side and triangle itself, no copy).

define void @irgrad_lapack_${p}trsm(i64 %lower, i64 %unit, i64 %n, i64 %k, ptr %a, i64 %lda,
                                   ptr %b, i64 %ldb) {
entry:
  %n0 = icmp sle i64 %n, 0
  %k0 = icmp sle i64 %k, 0
  %empty = or i1 %n0, %k0
  br i1 %empty, label %done, label %check
check:
  %bad_a = icmp slt i64 %lda, %n
  %bad_b = icmp slt i64 %ldb, %k
  %big = call i64 @llvm.smax.i64(i64 %lda, i64 %ldb)
  %too_big = icmp sgt i64 %big, ${int_max}
  %e1 = or i1 %bad_a, %bad_b
  %bad = or i1 %e1, %too_big
  br i1 %bad, label %fail, label %call
call:
  %lo = icmp ne i64 %lower, 0
  %uplo = select i1 %lo, i32 ${lower_enum}, i32 ${upper_enum}
  %un = icmp ne i64 %unit, 0
  %diag = select i1 %un, i32 ${unit_enum}, i32 ${non_unit_enum}
  %in = ${cast} i64 %n to ${I}
  %ik = ${cast} i64 %k to ${I}
  %ilda = ${cast} i64 %lda to ${I}
  %ildb = ${cast} i64 %ldb to ${I}
  call void @_irgrad_rt_cblas_${p}trsm(i32 ${row_major}, i32 ${left}, i32 %uplo, i32 ${no_trans}, i32 %diag,
        ${I} %in, ${I} %ik, ${T} 1.0, ptr %a, ${I} %ilda, ptr %b, ${I} %ildb)
  br label %done
fail:
  call void @_irgrad_lapack_${p}fill_nan(i64 %n, i64 %k, ptr %b, i64 %ldb)
  br label %done
done:
  ret void
}
