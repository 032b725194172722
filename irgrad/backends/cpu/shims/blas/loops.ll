; C = alpha * op(A) @ op(B) + beta * C, one dot product per element; C is not read when beta
; is 0 (BLAS's rule, so an uninitialized C cannot leak a NaN). The fallback of gemm.ll.

define internal void @_irgrad_loops_${p}gemm(i1 %ta, i1 %tb, i64 %m, i64 %n, i64 %k, ${T} %alpha,
        ptr %a, i64 %lda, ptr %b, i64 %ldb, ${T} %beta, ptr %c, i64 %ldc) {
entry:
  %beta0 = fcmp oeq ${T} %beta, 0.0
  br label %i.cond
i.cond:
  %i = phi i64 [0, %entry], [%i.next, %j.exit]
  %i.in = icmp slt i64 %i, %m
  br i1 %i.in, label %j.cond, label %exit
j.cond:
  %j = phi i64 [0, %i.cond], [%j.next, %j.latch]
  %j.in = icmp slt i64 %j, %n
  br i1 %j.in, label %k.cond, label %j.exit
k.cond:
  %p = phi i64 [0, %j.cond], [%p.next, %k.body]
  %acc = phi ${T} [0.0, %j.cond], [%acc.next, %k.body]
  %p.in = icmp slt i64 %p, %k
  br i1 %p.in, label %k.body, label %k.exit
k.body:
  %pa = mul i64 %p, %lda
  %ia = mul i64 %i, %lda
  %a.t = add i64 %pa, %i
  %a.n = add i64 %ia, %p
  %a.idx = select i1 %ta, i64 %a.t, i64 %a.n
  %jb = mul i64 %j, %ldb
  %pb = mul i64 %p, %ldb
  %b.t = add i64 %jb, %p
  %b.n = add i64 %pb, %j
  %b.idx = select i1 %tb, i64 %b.t, i64 %b.n
  %a.ptr = getelementptr ${T}, ptr %a, i64 %a.idx
  %b.ptr = getelementptr ${T}, ptr %b, i64 %b.idx
  %av = load ${T}, ptr %a.ptr
  %bv = load ${T}, ptr %b.ptr
  %prod = fmul ${T} %av, %bv
  %acc.next = fadd ${T} %acc, %prod
  %p.next = add i64 %p, 1
  br label %k.cond
k.exit:
  %ic = mul i64 %i, %ldc
  %c.idx = add i64 %ic, %j
  %c.ptr = getelementptr ${T}, ptr %c, i64 %c.idx
  %scaled = fmul ${T} %alpha, %acc
  br i1 %beta0, label %store, label %accumulate
accumulate:
  %old = load ${T}, ptr %c.ptr
  %old.scaled = fmul ${T} %beta, %old
  %sum = fadd ${T} %old.scaled, %scaled
  store ${T} %sum, ptr %c.ptr
  br label %j.latch
store:
  store ${T} %scaled, ptr %c.ptr
  br label %j.latch
j.latch:
  %j.next = add i64 %j, 1
  br label %j.cond
j.exit:
  %i.next = add i64 %i, 1
  br label %i.cond
exit:
  ret void
}
