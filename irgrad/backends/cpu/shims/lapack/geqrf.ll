; void irgrad_lapack_{p}geqrf(i64 m, i64 n, T* q, i64 ldq, T* r, i64 ldr)
;     Reduced QR A = Q R of the m x n matrix A, m >= n, held at `q` on entry (LAPACK's geqrf,
;     then orgqr for Q): on return `q` holds Q (m x n, orthonormal columns) and `r` the n x n R,
;     upper triangular with zeros below the diagonal, with LAPACK's Householder signs (those of
;     numpy.linalg.qr). On failure (m < n; a NaN or inf in A, checked first) all m x n entries
;     of `q` and n x n of `r` become NaN. n <= 0: nothing.
; Row-major: LAPACKE's row-major layout, transposing into a temporary and back (geqrf on A^T
; would be an LQ of A, not a QR).

define void @irgrad_lapack_${p}geqrf(i64 %m, i64 %n, ptr %q, i64 %ldq, ptr %r, i64 %ldr) {
entry:
  %qwork = alloca ${T}
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %check
check:
  %wide = icmp slt i64 %m, %n
  %bad_q = icmp slt i64 %ldq, %n
  %bad_r = icmp slt i64 %ldr, %n
  %big1 = call i64 @llvm.smax.i64(i64 %ldq, i64 %ldr)
  %big = call i64 @llvm.smax.i64(i64 %big1, i64 %m)
  %too_big = icmp sgt i64 %big, ${int_max}
  %e1 = or i1 %wide, %bad_q
  %e2 = or i1 %bad_r, %too_big
  %bad = or i1 %e1, %e2
  br i1 %bad, label %fail, label %scan
scan:
  %finite = call i1 @_irgrad_lapack_${p}finite(i64 %m, i64 %n, ptr %q, i64 %ldq, i1 false)
  br i1 %finite, label %tau.alloc, label %fail
tau.alloc:
  %tbytes = mul i64 %n, ${size}
  %tau = call ptr @malloc(i64 %tbytes)
  %t_null = icmp eq ptr %tau, null
  br i1 %t_null, label %fail, label %query
query:
  %im = ${cast} i64 %m to ${I}
  %in = ${cast} i64 %n to ${I}
  %ildq = ${cast} i64 %ldq to ${I}
  store ${T} 0.0, ptr %qwork
  %qinfo1 = call ${I} @_irgrad_rt_lapacke_${p}geqrf(i32 ${row_major}, ${I} %im, ${I} %in, ptr %q, ${I} %ildq,
        ptr %tau, ptr %qwork, ${I} -1)
  %q1 = load ${T}, ptr %qwork
  store ${T} 0.0, ptr %qwork
  %qinfo2 = call ${I} @_irgrad_rt_lapacke_${p}orgqr(i32 ${row_major}, ${I} %im, ${I} %in, ${I} %in, ptr %q,
        ${I} %ildq, ptr %tau, ptr %qwork, ${I} -1)
  %q2 = load ${T}, ptr %qwork
  %qbad1 = icmp ne ${I} %qinfo1, 0
  %qbad2 = icmp ne ${I} %qinfo2, 0
  %qbad = or i1 %qbad1, %qbad2
  br i1 %qbad, label %fail.tau, label %sizes
sizes:
  ; documented minimum: n for both
  %lwork1 = call i64 @_irgrad_lapack_${p}lwork(${T} %q1, i64 %n)
  %lwork2 = call i64 @_irgrad_lapack_${p}lwork(${T} %q2, i64 %n)
  %lwork = call i64 @llvm.smax.i64(i64 %lwork1, i64 %lwork2)
  %lwmin = call i64 @llvm.smin.i64(i64 %lwork1, i64 %lwork2)
  %lw_bad = icmp slt i64 %lwmin, 0
  %lw_big = icmp sgt i64 %lwork, ${int_max}
  %sizes_bad = or i1 %lw_bad, %lw_big
  br i1 %sizes_bad, label %fail.tau, label %alloc
alloc:
  %wbytes = mul i64 %lwork, ${size}
  %work = call ptr @malloc(i64 %wbytes)
  %w_null = icmp eq ptr %work, null
  br i1 %w_null, label %fail.tau, label %factor
factor:
  %ilwork = ${cast} i64 %lwork to ${I}
  ; info < 0 only: LAPACKE's transposed copy could not be allocated
  %info1 = call ${I} @_irgrad_rt_lapacke_${p}geqrf(i32 ${row_major}, ${I} %im, ${I} %in, ptr %q, ${I} %ildq,
        ptr %tau, ptr %work, ${I} %ilwork)
  %ok1 = icmp eq ${I} %info1, 0
  br i1 %ok1, label %r.cond, label %fail.work
r.cond:
  ; R := the upper triangle of the factored n x n top, zeros below its diagonal
  %i = phi i64 [0, %factor], [%i.next, %r.body]
  %i.in = icmp slt i64 %i, %n
  br i1 %i.in, label %r.body, label %expand
r.body:
  %qoff = mul i64 %i, %ldq
  %qrow = getelementptr ${T}, ptr %q, i64 %qoff
  %roff = mul i64 %i, %ldr
  %rrow = getelementptr ${T}, ptr %r, i64 %roff
  %zbytes = mul i64 %i, ${size}
  call void @llvm.memset.p0.i64(ptr %rrow, i8 0, i64 %zbytes, i1 false)
  %qdiag = getelementptr ${T}, ptr %qrow, i64 %i
  %rdiag = getelementptr ${T}, ptr %rrow, i64 %i
  %count = sub i64 %n, %i
  %cbytes = mul i64 %count, ${size}
  call void @llvm.memcpy.p0.p0.i64(ptr %rdiag, ptr %qdiag, i64 %cbytes, i1 false)
  %i.next = add i64 %i, 1
  br label %r.cond
expand:
  %info2 = call ${I} @_irgrad_rt_lapacke_${p}orgqr(i32 ${row_major}, ${I} %im, ${I} %in, ${I} %in, ptr %q,
        ${I} %ildq, ptr %tau, ptr %work, ${I} %ilwork)
  call void @free(ptr %work)
  call void @free(ptr %tau)
  %ok2 = icmp eq ${I} %info2, 0
  br i1 %ok2, label %done, label %fail
fail.work:
  call void @free(ptr %work)
  br label %fail.tau
fail.tau:
  call void @free(ptr %tau)
  br label %fail
fail:
  call void @_irgrad_lapack_${p}fill_nan(i64 %m, i64 %n, ptr %q, i64 %ldq)
  call void @_irgrad_lapack_${p}fill_nan(i64 %n, i64 %n, ptr %r, i64 %ldr)
  br label %done
done:
  ret void
}
