; void irgrad_lapack_{p}syevd(i64 n, T* a, i64 lda, T* w)
;     Eigendecomposition A = V diag(w) V^T of the symmetric n x n matrix at `a`, of which only
;     the lower triangle (diagonal included) is read (LAPACK's syevd, jobz = 'V', uplo = 'L').
;     On return `a` holds the orthonormal eigenvectors as COLUMNS (a[i*lda + j] = V[i][j]), of
;     any signs, and the n contiguous entries at `w` the eigenvalues, ascending. On failure (a
;     NaN or inf in the lower triangle, which is checked before LAPACK is called; info != 0: no
;     convergence) all n x n entries of `a` and all of `w` become NaN. n <= 0: nothing.
; Row-major: LAPACKE's row-major layout (uplo = 'L'), transposing into a temporary and back.
; The `alloc` block (work and iwork, on to `call` or to `fail.free`) is gesdd.ll's too.

define void @irgrad_lapack_${p}syevd(i64 %n, ptr %a, i64 %lda, ptr %w) {
entry:
  %qwork = alloca ${T}
  %qiwork = alloca ${I}
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %check
check:
  %bad_ld = icmp slt i64 %lda, %n
  %too_big = icmp sgt i64 %lda, ${int_max}
  %bad = or i1 %bad_ld, %too_big
  br i1 %bad, label %fail, label %scan
scan:
  ; never hand LAPACK a non-finite matrix (only the lower triangle is read)
  %finite = call i1 @_irgrad_lapack_${p}finite(i64 %n, i64 %n, ptr %a, i64 %lda, i1 true)
  br i1 %finite, label %query, label %fail
query:
  store ${T} 0.0, ptr %qwork
  store ${I} 0, ptr %qiwork
  %in = ${cast} i64 %n to ${I}
  %ilda = ${cast} i64 %lda to ${I}
  %qinfo = call ${I} @_irgrad_rt_lapacke_${p}syevd(i32 ${row_major}, i8 signext ${jobz_v}, i8 signext ${uplo_l},
        ${I} %in, ptr %a, ${I} %ilda, ptr %w, ptr %qwork, ${I} -1, ptr %qiwork, ${I} -1)
  %qok = icmp eq ${I} %qinfo, 0
  br i1 %qok, label %sizes, label %fail
sizes:
  ; documented minimums: lwork 1 + 6 n + 2 n^2, liwork 3 + 5 n
  %qw = load ${T}, ptr %qwork
  %nn = mul i64 %n, %n
  %nn2 = shl i64 %nn, 1
  %n6 = mul i64 %n, 6
  %n6p = add i64 %n6, 1
  %lwmin = add i64 %n6p, %nn2
  %lwork = call i64 @_irgrad_lapack_${p}lwork(${T} %qw, i64 %lwmin)
  %qi = load ${I}, ptr %qiwork
  %qi64 = ${ext} ${I} %qi to i64
  %n5 = mul i64 %n, 5
  %liwmin = add i64 %n5, 3
  %liwork = call i64 @llvm.smax.i64(i64 %qi64, i64 %liwmin)
  %biggest = call i64 @llvm.smax.i64(i64 %lwork, i64 %liwork)
  %lw_bad = icmp slt i64 %lwork, 0
  %lw_big = icmp sgt i64 %biggest, ${int_max}
  %sizes_bad = or i1 %lw_bad, %lw_big
  br i1 %sizes_bad, label %fail, label %alloc
alloc:
  %wbytes = mul i64 %lwork, ${size}
  %work = call ptr @malloc(i64 %wbytes)
  %ibytes = mul i64 %liwork, ${int_size}
  %iwork = call ptr @malloc(i64 %ibytes)
  %w_null = icmp eq ptr %work, null
  %i_null = icmp eq ptr %iwork, null
  %no_memory = or i1 %w_null, %i_null
  br i1 %no_memory, label %fail.free, label %call
call:
  %ilwork = ${cast} i64 %lwork to ${I}
  %iliwork = ${cast} i64 %liwork to ${I}
  %info = call ${I} @_irgrad_rt_lapacke_${p}syevd(i32 ${row_major}, i8 signext ${jobz_v}, i8 signext ${uplo_l},
        ${I} %in, ptr %a, ${I} %ilda, ptr %w, ptr %work, ${I} %ilwork, ptr %iwork, ${I} %iliwork)
  call void @free(ptr %work)
  call void @free(ptr %iwork)
  ; info > 0: no convergence; info < 0: LAPACKE's transposed copy could not be allocated
  %ok = icmp eq ${I} %info, 0
  br i1 %ok, label %done, label %fail
fail.free:
  call void @free(ptr %work)
  call void @free(ptr %iwork)
  br label %fail
fail:
  call void @_irgrad_lapack_${p}fill_nan(i64 %n, i64 %n, ptr %a, i64 %lda)
  call void @_irgrad_lapack_${p}fill_nan(i64 1, i64 %n, ptr %w, i64 %n)
  br label %done
done:
  ret void
}
