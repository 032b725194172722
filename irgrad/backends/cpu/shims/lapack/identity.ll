; pivots and perm := 0..n-1 (getrf's failure path).

define internal void @_irgrad_lapack_identity(i64 %n, ptr %pivots, ptr %perm) {
entry:
  br label %cond
cond:
  %i = phi i64 [0, %entry], [%i.next, %body]
  %in = icmp slt i64 %i, %n
  br i1 %in, label %body, label %exit
body:
  %v = trunc i64 %i to i32
  %pp = getelementptr i32, ptr %pivots, i64 %i
  store i32 %v, ptr %pp
  %qp = getelementptr i32, ptr %perm, i64 %i
  store i32 %v, ptr %qp
  %i.next = add i64 %i, 1
  br label %cond
exit:
  ret void
}
