; sgemm only: C = A @ B^T with m < n and a long k (a weight gradient, dY @ X^T) computed as
; C^T = B @ A^T into a temporary, then transposed into C. Why: numpy's OpenBLAS (SkylakeX
; kernels) runs that product 1.2-2.3 times faster with the larger of m and n first, at 1, 2
; and 4 threads (2026-11-30, numpy's `a @ b.T` against `(b @ a.T).T`: 32 x 144 x 25088, a
; conv2d's weight gradient, 3.54 -> 1.67 ms at 2 threads; 16 x 288 x 25088 3.85 -> 1.80;
; 128 x 256 x 2048 0.81 -> 0.68), and slower when k is short (256 x 784 x 128: 0.33 -> 0.59 ms).
; Applied where k >= 4n and m*n*k >= 2^24 (the transposing loop, compiled at -O0 as the rest
; of the shim, is then a few percent of the product); not to dgemm, where the same swap was
; slower as often as faster. Without memory for the temporary, the direct call (library_call.ll,
; after the `direct` label).
  %nta = xor i1 %ta1, true
  %sw.nt = and i1 %nta, %tb1
  %sw.mn = icmp slt i64 %m, %n
  %n4 = mul i64 %n, 4
  %sw.k = icmp sge i64 %k, %n4
  %mn = mul i64 %m, %n
  %sw.small = icmp sle i64 %mn, 67108864
  %k.min = udiv i64 16777216, %mn
  %sw.work = icmp sge i64 %k, %k.min
  %sw1 = and i1 %sw.nt, %sw.mn
  %sw2 = and i1 %sw1, %sw.k
  %sw3 = and i1 %sw2, %sw.small
  %sw4 = and i1 %sw3, %sw.work
  br i1 %sw4, label %swap.alloc, label %direct
swap.alloc:
  %bytes = mul i64 %mn, 4
  %tmp = call ptr @malloc(i64 %bytes)
  %tmp.null = icmp eq ptr %tmp, null
  br i1 %tmp.null, label %direct, label %swap
swap:
  call void @_irgrad_split_sgemm(i32 ${row_major}, i32 ${no_trans}, i32 ${trans}, ${I} %in, ${I} %im, ${I} %ik,
        float %alpha, ptr %b, ${I} %ildb, ptr %a, ${I} %ilda, float 0.0, ptr %tmp, ${I} %im)
  %beta0 = fcmp oeq float %beta, 0.0
  br label %t.i.cond
t.i.cond:
  %ti = phi i64 [0, %swap], [%ti.next, %t.j.exit]
  %ti.in = icmp slt i64 %ti, %m
  br i1 %ti.in, label %t.j.cond, label %t.exit
t.j.cond:
  %tj = phi i64 [0, %t.i.cond], [%tj.next, %t.j.latch]
  %tj.in = icmp slt i64 %tj, %n
  br i1 %tj.in, label %t.body, label %t.j.exit
t.body:
  %tjm = mul i64 %tj, %m
  %t.idx = add i64 %tjm, %ti
  %t.ptr = getelementptr float, ptr %tmp, i64 %t.idx
  %tv = load float, ptr %t.ptr
  %tic = mul i64 %ti, %ldc
  %tc.idx = add i64 %tic, %tj
  %tc.ptr = getelementptr float, ptr %c, i64 %tc.idx
  br i1 %beta0, label %t.store, label %t.accumulate
t.accumulate:
  %t.old = load float, ptr %tc.ptr
  %t.old.scaled = fmul float %beta, %t.old
  %t.sum = fadd float %t.old.scaled, %tv
  store float %t.sum, ptr %tc.ptr
  br label %t.j.latch
t.store:
  store float %tv, ptr %tc.ptr
  br label %t.j.latch
t.j.latch:
  %tj.next = add i64 %tj, 1
  br label %t.j.cond
t.j.exit:
  %ti.next = add i64 %ti, 1
  br label %t.i.cond
t.exit:
  call void @free(ptr %tmp)
  ret void
direct:
