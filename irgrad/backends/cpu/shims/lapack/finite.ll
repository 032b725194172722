; True iff every entry of the rows x cols block at `a` (row stride ld) is finite; with %lower,
; only the lower triangle (column <= row) is read.

define internal i1 @_irgrad_lapack_${p}finite(i64 %rows, i64 %cols, ptr %a, i64 %ld, i1 %lower) {
entry:
  br label %i.cond
i.cond:
  %i = phi i64 [0, %entry], [%i.next, %j.exit]
  %i.in = icmp slt i64 %i, %rows
  br i1 %i.in, label %i.body, label %yes
i.body:
  %off = mul i64 %i, %ld
  %row = getelementptr ${T}, ptr %a, i64 %off
  %i.next = add i64 %i, 1
  %tri = call i64 @llvm.smin.i64(i64 %i.next, i64 %cols)
  %end = select i1 %lower, i64 %tri, i64 %cols
  br label %j.cond
j.cond:
  %j = phi i64 [0, %i.body], [%j.next, %j.body]
  %j.in = icmp slt i64 %j, %end
  br i1 %j.in, label %j.load, label %j.exit
j.load:
  %ptr = getelementptr ${T}, ptr %row, i64 %j
  %x = load ${T}, ptr %ptr
  ; x - x is 0 for a finite x, NaN for NaN and inf
  %d = fsub ${T} %x, %x
  %ok = fcmp oeq ${T} %d, 0.0
  br i1 %ok, label %j.body, label %no
j.body:
  %j.next = add i64 %j, 1
  br label %j.cond
j.exit:
  br label %i.cond
yes:
  ret i1 true
no:
  ret i1 false
}
