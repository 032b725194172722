; void irgrad_lapack_{p}getrf(i64 n, T* a, i64 lda, i32* pivots, i32* perm)
;     LU with partial pivoting, P A = L U, packed in `a` (L's unit diagonal implied), as
;     LAPACK's getrf. `pivots[j]` (0-based) is the row swapped with row j at step j (LAPACK's
;     1-based ipiv minus 1); `perm` is those swaps applied in order to 0..n-1, so row i of P A
;     is row perm[i] of A (`a[perm] == L @ U`). An exactly singular matrix is not an error: the
;     factorization completes with a zero on U's diagonal. n <= 0: nothing.
; Row-major: no trick as potrf's (getrf on A^T pivots columns), so LAPACKE's row-major layout,
; which transposes into a temporary n x n copy and back: an extra O(n^2) allocation and two
; passes per call, small next to O(n^3). The ipiv scratch is malloc'ed per call.

define void @irgrad_lapack_${p}getrf(i64 %n, ptr %a, i64 %lda, ptr %pivots, ptr %perm) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %check
check:
  %bad_ld = icmp slt i64 %lda, %n
  %too_big = icmp sgt i64 %lda, ${int_max}
  %bad = or i1 %bad_ld, %too_big
  br i1 %bad, label %fail, label %alloc
alloc:
  %bytes = mul i64 %n, ${int_size}
  %ipiv = call ptr @malloc(i64 %bytes)
  %no_memory = icmp eq ptr %ipiv, null
  br i1 %no_memory, label %fail, label %call
call:
  %in = ${cast} i64 %n to ${I}
  %ilda = ${cast} i64 %lda to ${I}
  %info = call ${I} @_irgrad_rt_lapacke_${p}getrf(i32 ${row_major}, ${I} %in, ${I} %in, ptr %a, ${I} %ilda, ptr %ipiv)
  ; info > 0 (exactly singular) is not an error; info < 0 is (LAPACKE's transposed copy
  ; could not be allocated)
  %error = icmp slt ${I} %info, 0
  br i1 %error, label %fail.free, label %init.cond
init.cond:
  %i = phi i64 [0, %call], [%i.next, %init.body]
  %i.in = icmp slt i64 %i, %n
  br i1 %i.in, label %init.body, label %swap.cond
init.body:
  %iv = trunc i64 %i to i32
  %init.ptr = getelementptr i32, ptr %perm, i64 %i
  store i32 %iv, ptr %init.ptr
  %i.next = add i64 %i, 1
  br label %init.cond
swap.cond:
  %j = phi i64 [0, %init.cond], [%j.next, %swap.body]
  %j.in = icmp slt i64 %j, %n
  br i1 %j.in, label %swap.pivot, label %free
swap.pivot:
  %ipiv.ptr = getelementptr ${I}, ptr %ipiv, i64 %j
  %piv1 = load ${I}, ptr %ipiv.ptr
  %piv1.64 = ${ext} ${I} %piv1 to i64
  %piv = sub i64 %piv1.64, 1
  ; LAPACK's pivots are in range; a library bug must not make us write out of bounds
  %in_range = icmp ult i64 %piv, %n
  br i1 %in_range, label %swap.body, label %fail.free
swap.body:
  %piv32 = trunc i64 %piv to i32
  %pivots.ptr = getelementptr i32, ptr %pivots, i64 %j
  store i32 %piv32, ptr %pivots.ptr
  %pj.ptr = getelementptr i32, ptr %perm, i64 %j
  %pp.ptr = getelementptr i32, ptr %perm, i64 %piv
  %pj = load i32, ptr %pj.ptr
  %pp = load i32, ptr %pp.ptr
  store i32 %pp, ptr %pj.ptr
  store i32 %pj, ptr %pp.ptr
  %j.next = add i64 %j, 1
  br label %swap.cond
free:
  call void @free(ptr %ipiv)
  br label %done
fail.free:
  call void @free(ptr %ipiv)
  br label %fail
fail:
  call void @_irgrad_lapack_${p}fill_nan(i64 %n, i64 %n, ptr %a, i64 %lda)
  call void @_irgrad_lapack_identity(i64 %n, ptr %pivots, ptr %perm)
  br label %done
done:
  ret void
}
