; Fill the rows x cols block at `a` (row stride ld) with NaN; the padding is not touched.

define internal void @_irgrad_lapack_${p}fill_nan(i64 %rows, i64 %cols, ptr %a, i64 %ld) {
entry:
  br label %i.cond
i.cond:
  %i = phi i64 [0, %entry], [%i.next, %j.exit]
  %i.in = icmp slt i64 %i, %rows
  br i1 %i.in, label %i.body, label %exit
i.body:
  %off = mul i64 %i, %ld
  %row = getelementptr ${T}, ptr %a, i64 %off
  br label %j.cond
j.cond:
  %j = phi i64 [0, %i.body], [%j.next, %j.body]
  %j.in = icmp slt i64 %j, %cols
  br i1 %j.in, label %j.body, label %j.exit
j.body:
  %ptr = getelementptr ${T}, ptr %row, i64 %j
  store ${T} 0x7FF8000000000000, ptr %ptr
  %j.next = add i64 %j, 1
  br label %j.cond
j.exit:
  %i.next = add i64 %i, 1
  br label %i.cond
exit:
  ret void
}
