; The workspace size to allocate from a LAPACK query's answer (work[0], a float): rounded up
; with a margin (a float32 query of a size above 2^24 may have been rounded down), at least
; `min` (the documented minimum); -1 when the answer is NaN or absurd.

define internal i64 @_irgrad_lapack_${p}lwork(${T} %q, i64 %min) {
entry:
  %d = ${to_double}
  %scaled = fmul double %d, 0x3FF0000100000000
  %c = fadd double %scaled, 1.0
  %fits = fcmp olt double %c, 0x43D0000000000000
  br i1 %fits, label %ok, label %bad
ok:
  %i = fptosi double %c to i64
  %r = call i64 @llvm.smax.i64(i64 %i, i64 %min)
  ret i64 %r
bad:
  ret i64 -1
}
