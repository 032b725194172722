; void irgrad_lapack_{p}gesdd(i64 m, i64 n, T* a, i64 lda, T* s, T* u, i64 ldu, T* vt, i64 ldvt)
;     Reduced SVD A = U diag(s) V^T of the m x n matrix at `a` (LAPACK's gesdd, jobz = 'S'), k =
;     min(m, n): the k contiguous entries at `s` descending and >= 0, U (m x k) at `u` and V^T
;     (k x n) at `vt` (row strides ldu >= k, ldvt >= n), orthonormal columns / rows of any
;     signs (a column of U and the matching row of V^T flipped together). `a` is scratch: its
;     m x n entries are overwritten with unspecified values (its padding is not). On failure (a
;     NaN or inf in A, checked first; info != 0: no convergence) all of s, U and V^T become NaN.
;     m <= 0 or n <= 0: nothing.
; Row-major: calls the COLUMN-major routine on the row-major buffers: `a` read column-major with
; the same stride is A^T (n x m) = V diag(s) U^T, so its U factor (n x k) is asked for in the
; `vt` buffer, where read row-major it is V^T (k x n), and its V^T factor (k x m) in the `u`
; buffer, where it is U (m x k); the strides are exactly what LAPACK requires (lda >= n,
; ldvt >= n, ldu >= k), and no copy is made.
; The `alloc` block (work and iwork, on to `call` or to `fail.free`) is syevd.ll's too.

define void @irgrad_lapack_${p}gesdd(i64 %m, i64 %n, ptr %a, i64 %lda, ptr %s, ptr %u, i64 %ldu,
                                    ptr %vt, i64 %ldvt) {
entry:
  %qwork = alloca ${T}
  %qiwork = alloca ${I}
  %m0 = icmp sle i64 %m, 0
  %n0 = icmp sle i64 %n, 0
  %empty = or i1 %m0, %n0
  br i1 %empty, label %done, label %check
check:
  %k = call i64 @llvm.smin.i64(i64 %m, i64 %n)
  %mx = call i64 @llvm.smax.i64(i64 %m, i64 %n)
  %bad_a = icmp slt i64 %lda, %n
  %bad_u = icmp slt i64 %ldu, %k
  %bad_vt = icmp slt i64 %ldvt, %n
  %big1 = call i64 @llvm.smax.i64(i64 %lda, i64 %ldu)
  %big2 = call i64 @llvm.smax.i64(i64 %ldvt, i64 %mx)
  %big = call i64 @llvm.smax.i64(i64 %big1, i64 %big2)
  %too_big = icmp sgt i64 %big, ${int_max}
  %e1 = or i1 %bad_a, %bad_u
  %e2 = or i1 %bad_vt, %too_big
  %bad = or i1 %e1, %e2
  br i1 %bad, label %fail, label %scan
scan:
  %finite = call i1 @_irgrad_lapack_${p}finite(i64 %m, i64 %n, ptr %a, i64 %lda, i1 false)
  br i1 %finite, label %query, label %fail
query:
  ; COLUMN-major on the row-major buffers (see the module docstring): A read column-major is
  ; A^T (n x m) = V S U^T, so its U (n x k) is written into vt and its V^T (k x m) into u
  store ${T} 0.0, ptr %qwork
  %im = ${cast} i64 %m to ${I}
  %in = ${cast} i64 %n to ${I}
  %ilda = ${cast} i64 %lda to ${I}
  %ildu = ${cast} i64 %ldu to ${I}
  %ildvt = ${cast} i64 %ldvt to ${I}
  %qinfo = call ${I} @_irgrad_rt_lapacke_${p}gesdd(i32 ${col_major}, i8 signext ${jobz_s}, ${I} %in, ${I} %im,
        ptr %a, ${I} %ilda, ptr %s, ptr %vt, ${I} %ildvt, ptr %u, ${I} %ildu, ptr %qwork, ${I} -1, ptr %qiwork)
  %qok = icmp eq ${I} %qinfo, 0
  br i1 %qok, label %sizes, label %fail
sizes:
  ; documented minimum for jobz = 'S' (of LAPACK 3.7 and of before, whichever is larger):
  ; lwork k (4 k + 7) + max(m, n); liwork 8 k
  %qw = load ${T}, ptr %qwork
  %k4 = mul i64 %k, 4
  %k47 = add i64 %k4, 7
  %kk = mul i64 %k, %k47
  %lwmin = add i64 %kk, %mx
  %lwork = call i64 @_irgrad_lapack_${p}lwork(${T} %qw, i64 %lwmin)
  %liwork = mul i64 %k, 8
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
  %info = call ${I} @_irgrad_rt_lapacke_${p}gesdd(i32 ${col_major}, i8 signext ${jobz_s}, ${I} %in, ${I} %im,
        ptr %a, ${I} %ilda, ptr %s, ptr %vt, ${I} %ildvt, ptr %u, ${I} %ildu, ptr %work, ${I} %ilwork, ptr %iwork)
  call void @free(ptr %work)
  call void @free(ptr %iwork)
  %ok = icmp eq ${I} %info, 0
  br i1 %ok, label %done, label %fail
fail.free:
  call void @free(ptr %work)
  call void @free(ptr %iwork)
  br label %fail
fail:
  call void @_irgrad_lapack_${p}fill_nan(i64 %m, i64 %k, ptr %u, i64 %ldu)
  call void @_irgrad_lapack_${p}fill_nan(i64 1, i64 %k, ptr %s, i64 %k)
  call void @_irgrad_lapack_${p}fill_nan(i64 %k, i64 %n, ptr %vt, i64 %ldvt)
  br label %done
done:
  ret void
}
