; void irgrad_lapack_{p}geev(i64 n, T* a, i64 lda, T* w, T* v, i64 ldv)
;     Eigenvalues and right eigenvectors of the real n x n matrix at `a` (LAPACK's geev, jobvl =
;     'N', jobvr = 'V'), as (re, im) pairs: the n x 2 contiguous entries at `w` the eigenvalues in
;     geev's order (a conjugate pair adjacent, positive imaginary part first), and at `v` (n rows
;     of n pairs, row stride ldv >= 2n elements) the eigenvectors as columns, v[i*ldv + 2j + {0,1}]
;     = (re, im) of V[i][j]: geev's own vectors (unit 2-norm, largest component real), its packed
;     real columns of a conjugate pair (re, im) unpacked into x + iy and x - iy, as numpy does.
;     `a` is scratch: its n x n entries are overwritten (its padding is not). On failure (a NaN or
;     inf in A, checked first; info != 0: no convergence, or no memory) all of w and the n x 2n
;     entries of v become NaN. n <= 0: nothing.
; Row-major: LAPACKE's row-major layout (it transposes into temporaries and back); wr, wi and vr
; (n x n, row stride n) live in one malloc'd buffer, unpacked into w and v at the end.

define internal void @_irgrad_lapack_${p}geev_unpack(i64 %n, ptr %wr, ptr %wi, ptr %vr, ptr %w, ptr %v, i64 %ldv) {
entry:
  br label %e.cond
e.cond:
  ; the eigenvalues: w[2j] = wr[j], w[2j + 1] = wi[j]
  %e = phi i64 [0, %entry], [%e.next, %e.body]
  %e.in = icmp slt i64 %e, %n
  br i1 %e.in, label %e.body, label %j.cond
e.body:
  %per = getelementptr ${T}, ptr %wr, i64 %e
  %ere = load ${T}, ptr %per
  %pei = getelementptr ${T}, ptr %wi, i64 %e
  %eim = load ${T}, ptr %pei
  %e2 = shl i64 %e, 1
  %pw = getelementptr ${T}, ptr %w, i64 %e2
  store ${T} %ere, ptr %pw
  %pw1 = getelementptr ${T}, ptr %pw, i64 1
  store ${T} %eim, ptr %pw1
  %e.next = add i64 %e, 1
  br label %e.cond
j.cond:
  ; the vectors, column by column: one real column, or the two of a conjugate pair
  %j = phi i64 [0, %e.cond], [%j.next, %i.exit]
  %j.in = icmp slt i64 %j, %n
  br i1 %j.in, label %j.body, label %exit
j.body:
  %pji = getelementptr ${T}, ptr %wi, i64 %j
  %im = load ${T}, ptr %pji
  %j1 = add i64 %j, 1
  %has_next = icmp slt i64 %j1, %n
  %positive = fcmp ogt ${T} %im, 0.0
  %pair = and i1 %has_next, %positive
  %j2 = shl i64 %j, 1
  br label %i.cond
i.cond:
  %i = phi i64 [0, %j.body], [%i.next, %i.latch]
  %i.in = icmp slt i64 %i, %n
  br i1 %i.in, label %i.body, label %i.exit
i.body:
  %rowr = mul i64 %i, %n
  %kr = add i64 %rowr, %j
  %px = getelementptr ${T}, ptr %vr, i64 %kr
  %x = load ${T}, ptr %px
  ; a pair's imaginary part is vr's next column (not read for a real column: it may not exist)
  %py.next = getelementptr ${T}, ptr %px, i64 1
  %py = select i1 %pair, ptr %py.next, ptr %px
  %y.read = load ${T}, ptr %py
  %y = select i1 %pair, ${T} %y.read, ${T} 0.0
  %rowv = mul i64 %i, %ldv
  %kv = add i64 %rowv, %j2
  %pv = getelementptr ${T}, ptr %v, i64 %kv
  store ${T} %x, ptr %pv
  %pv1 = getelementptr ${T}, ptr %pv, i64 1
  store ${T} %y, ptr %pv1
  br i1 %pair, label %i.conj, label %i.latch
i.conj:
  ; column j + 1 is column j's conjugate
  %pv2 = getelementptr ${T}, ptr %pv, i64 2
  store ${T} %x, ptr %pv2
  %pv3 = getelementptr ${T}, ptr %pv, i64 3
  %ny = fneg ${T} %y
  store ${T} %ny, ptr %pv3
  br label %i.latch
i.latch:
  %i.next = add i64 %i, 1
  br label %i.cond
i.exit:
  %step = select i1 %pair, i64 2, i64 1
  %j.next = add i64 %j, %step
  br label %j.cond
exit:
  ret void
}

define void @irgrad_lapack_${p}geev(i64 %n, ptr %a, i64 %lda, ptr %w, ptr %v, i64 %ldv) {
entry:
  %qwork = alloca ${T}
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %check
check:
  %n2 = shl i64 %n, 1
  %bad_a = icmp slt i64 %lda, %n
  %bad_v = icmp slt i64 %ldv, %n2
  %too_big = icmp sgt i64 %lda, ${int_max}
  %e1 = or i1 %bad_a, %bad_v
  %bad = or i1 %e1, %too_big
  br i1 %bad, label %fail, label %scan
scan:
  ; never hand LAPACK a non-finite matrix
  %finite = call i1 @_irgrad_lapack_${p}finite(i64 %n, i64 %n, ptr %a, i64 %lda, i1 false)
  br i1 %finite, label %alloc, label %fail
alloc:
  ; wr (n), wi (n) and vr (n x n) in one buffer
  %nn = mul i64 %n, %n
  %count = add i64 %nn, %n2
  %bytes = mul i64 %count, ${size}
  %buf = call ptr @malloc(i64 %bytes)
  %no_buf = icmp eq ptr %buf, null
  br i1 %no_buf, label %fail, label %query
query:
  %wi = getelementptr ${T}, ptr %buf, i64 %n
  %vr = getelementptr ${T}, ptr %buf, i64 %n2
  store ${T} 0.0, ptr %qwork
  %in = ${cast} i64 %n to ${I}
  %ilda = ${cast} i64 %lda to ${I}
  %qinfo = call ${I} @_irgrad_rt_lapacke_${p}geev(i32 ${row_major}, i8 signext ${jobv_n}, i8 signext ${jobv_v},
        ${I} %in, ptr %a, ${I} %ilda, ptr %buf, ptr %wi, ptr null, ${I} 1, ptr %vr, ${I} %in, ptr %qwork, ${I} -1)
  %qok = icmp eq ${I} %qinfo, 0
  br i1 %qok, label %sizes, label %fail.buf
sizes:
  ; documented minimum with jobvr = 'V': lwork 4 n
  %qw = load ${T}, ptr %qwork
  %n4 = shl i64 %n, 2
  %lwork = call i64 @_irgrad_lapack_${p}lwork(${T} %qw, i64 %n4)
  %lw_bad = icmp slt i64 %lwork, 0
  %lw_big = icmp sgt i64 %lwork, ${int_max}
  %sizes_bad = or i1 %lw_bad, %lw_big
  br i1 %sizes_bad, label %fail.buf, label %workspace
workspace:
  %wbytes = mul i64 %lwork, ${size}
  %work = call ptr @malloc(i64 %wbytes)
  %no_work = icmp eq ptr %work, null
  br i1 %no_work, label %fail.buf, label %call
call:
  %ilwork = ${cast} i64 %lwork to ${I}
  %info = call ${I} @_irgrad_rt_lapacke_${p}geev(i32 ${row_major}, i8 signext ${jobv_n}, i8 signext ${jobv_v},
        ${I} %in, ptr %a, ${I} %ilda, ptr %buf, ptr %wi, ptr null, ${I} 1, ptr %vr, ${I} %in, ptr %work, ${I} %ilwork)
  call void @free(ptr %work)
  ; info > 0: the QR algorithm did not converge; info < 0: LAPACKE's transposed copies could not
  ; be allocated
  %ok = icmp eq ${I} %info, 0
  br i1 %ok, label %unpack, label %fail.buf
unpack:
  call void @_irgrad_lapack_${p}geev_unpack(i64 %n, ptr %buf, ptr %wi, ptr %vr, ptr %w, ptr %v, i64 %ldv)
  call void @free(ptr %buf)
  br label %done
fail.buf:
  call void @free(ptr %buf)
  br label %fail
fail:
  call void @_irgrad_lapack_${p}fill_nan(i64 %n, i64 2, ptr %w, i64 2)
  call void @_irgrad_lapack_${p}fill_nan(i64 %n, i64 %n2, ptr %v, i64 %ldv)
  br label %done
done:
  ret void
}
