; void irgrad_lapack_{p}potrf(i64 n, T* a, i64 lda)
;     Cholesky factor of the symmetric n x n matrix at `a`, of which only the lower triangle
;     (diagonal included) is read. On success `a` holds L (A = L L^T) in its lower triangle and
;     zeros in its strict upper triangle. On failure (LAPACK's info != 0: not positive definite;
;     or any diagonal entry of L not > 0, which catches NaN input that OpenBLAS's potrf does not
;     report) all n x n entries become NaN. Entries beyond column n of each row (the padding of
;     a strided buffer) are never touched. n <= 0: nothing.
; Row-major: calls the COLUMN-major routine with uplo='U' on the row-major buffer: read
; column-major with the same stride the buffer is A^T = A, whose upper triangle is A's lower
; triangle, and the factor U (A = U^T U) written there is L^T read column-major, i.e. L read
; row-major. So no transposed copy is made.

define void @irgrad_lapack_${p}potrf(i64 %n, ptr %a, i64 %lda) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %check
check:
  %bad_ld = icmp slt i64 %lda, %n
  %too_big = icmp sgt i64 %lda, ${int_max}
  %bad = or i1 %bad_ld, %too_big
  br i1 %bad, label %fail, label %call
call:
  %in = ${cast} i64 %n to ${I}
  %ilda = ${cast} i64 %lda to ${I}
  ; column-major 'U' on the row-major buffer is row-major 'L' (see the module docstring)
  %info = call ${I} @_irgrad_rt_lapacke_${p}potrf(i32 ${col_major}, i8 signext ${uplo_u}, ${I} %in, ptr %a, ${I} %ilda)
  %ok = icmp eq ${I} %info, 0
  br i1 %ok, label %row.cond, label %fail
row.cond:
  %i = phi i64 [0, %call], [%i.next, %row.body]
  %i.in = icmp slt i64 %i, %n
  br i1 %i.in, label %row.diag, label %done
row.diag:
  %off = mul i64 %i, %lda
  %row = getelementptr ${T}, ptr %a, i64 %off
  %d.ptr = getelementptr ${T}, ptr %row, i64 %i
  %d = load ${T}, ptr %d.ptr
  %positive = fcmp ogt ${T} %d, 0.0
  br i1 %positive, label %row.body, label %fail
row.body:
  %i.next = add i64 %i, 1
  %count = sub i64 %n, %i.next
  %bytes = mul i64 %count, ${size}
  %upper = getelementptr ${T}, ptr %row, i64 %i.next
  call void @llvm.memset.p0.i64(ptr %upper, i8 0, i64 %bytes, i1 false)
  br label %row.cond
fail:
  call void @_irgrad_lapack_${p}fill_nan(i64 %n, i64 %n, ptr %a, i64 %lda)
  br label %done
done:
  ret void
}
