; split.ll's tile edges: edge(t) = t * total / count rounded down to a multiple of 16, and
; edge(count) = total.
define internal i64 @_irgrad_tile_edge(i64 %t, i64 %total, i64 %count) {
entry:
  %last = icmp eq i64 %t, %count
  %tt = mul i64 %t, %total
  %q = udiv i64 %tt, %count
  %edge = and i64 %q, -16
  %r = select i1 %last, i64 %total, i64 %edge
  ret i64 %r
}
