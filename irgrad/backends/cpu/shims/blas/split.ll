; _irgrad_split_${p}gemm: the CBLAS call (same arguments), split into a grid of tiles of C,
; gm row strips by gn column strips, run on irgrad's thread pool. Why: the library is a private
; single-threaded copy (blas.py), so the pool is the one place where irgrad's CPU parallelism
; is scheduled; tiles are claimed one at a time, so a GEMM never waits for a thread the system
; has not scheduled yet. Each tile packs its rows of A and its columns of B again, which costs
; about gn / n + gm / m of the product: strips are at least ${min_strip} wide, and the grid
; grows the dimension whose strips are wider.
; The tiles depend on the shape only, never on the thread count (one thread runs them in
; turn), so the bits do not either: a library may compute a tile otherwise than the same
; elements in one call (OpenBLAS's small-matrix kernels do). Edges are multiples of 16.

; layout, tra, trb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, gm, gn
%${p}gemm_tiles = type { i32, i32, i32, ${I}, ${I}, ${I}, ${T}, ptr, ${I}, ptr, ${I}, ${T}, ptr, ${I}, i64, i64 }

define internal void @_irgrad_tile_${p}gemm(ptr %ctx, i64 %begin, i64 %end) {
entry:
  %layout = load i32, ptr %ctx
  %tra.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 1
  %tra = load i32, ptr %tra.p
  %trb.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 2
  %trb = load i32, ptr %trb.p
  %m.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 3
  %m = load ${I}, ptr %m.p
  %n.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 4
  %n = load ${I}, ptr %n.p
  %k.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 5
  %k = load ${I}, ptr %k.p
  %alpha.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 6
  %alpha = load ${T}, ptr %alpha.p
  %a.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 7
  %a = load ptr, ptr %a.p
  %lda.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 8
  %lda = load ${I}, ptr %lda.p
  %b.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 9
  %b = load ptr, ptr %b.p
  %ldb.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 10
  %ldb = load ${I}, ptr %ldb.p
  %beta.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 11
  %beta = load ${T}, ptr %beta.p
  %c.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 12
  %c = load ptr, ptr %c.p
  %ldc.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 13
  %ldc = load ${I}, ptr %ldc.p
  %gm.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 14
  %gm = load i64, ptr %gm.p
  %gn.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 15
  %gn = load i64, ptr %gn.p
  %m64 = ${widen} ${I} %m to i64
  %n64 = ${widen} ${I} %n to i64
  %lda64 = ${widen} ${I} %lda to i64
  %ldb64 = ${widen} ${I} %ldb to i64
  %ldc64 = ${widen} ${I} %ldc to i64
  %ta = icmp eq i32 %tra, ${trans}
  %tb = icmp eq i32 %trb, ${trans}
  br label %cond
cond:
  %t = phi i64 [%begin, %entry], [%t.next, %tile]
  %more = icmp slt i64 %t, %end
  br i1 %more, label %tile, label %done
tile:
  ; tile t is row strip t / gn, column strip t % gn
  %i = udiv i64 %t, %gn
  %j = urem i64 %t, %gn
  %i1 = add i64 %i, 1
  %j1 = add i64 %j, 1
  %r0 = call i64 @_irgrad_tile_edge(i64 %i, i64 %m64, i64 %gm)
  %r1 = call i64 @_irgrad_tile_edge(i64 %i1, i64 %m64, i64 %gm)
  %c0 = call i64 @_irgrad_tile_edge(i64 %j, i64 %n64, i64 %gn)
  %c1 = call i64 @_irgrad_tile_edge(i64 %j1, i64 %n64, i64 %gn)
  %rows64 = sub i64 %r1, %r0
  %cols64 = sub i64 %c1, %c0
  %rows = ${cast} i64 %rows64 to ${I}
  %cols = ${cast} i64 %cols64 to ${I}
  ; A's rows r0.. (A^T's columns), B's columns c0.. (B^T's rows), C at (r0, c0)
  %r0.lda = mul i64 %r0, %lda64
  %a.off = select i1 %ta, i64 %r0, i64 %r0.lda
  %c0.ldb = mul i64 %c0, %ldb64
  %b.off = select i1 %tb, i64 %c0.ldb, i64 %c0
  %r0.ldc = mul i64 %r0, %ldc64
  %c.off = add i64 %r0.ldc, %c0
  %a.t = getelementptr ${T}, ptr %a, i64 %a.off
  %b.t = getelementptr ${T}, ptr %b, i64 %b.off
  %c.t = getelementptr ${T}, ptr %c, i64 %c.off
  call void @_irgrad_rt_cblas_${p}gemm(i32 %layout, i32 %tra, i32 %trb, ${I} %rows, ${I} %cols, ${I} %k,
        ${T} %alpha, ptr %a.t, ${I} %lda, ptr %b.t, ${I} %ldb, ${T} %beta, ptr %c.t, ${I} %ldc)
  %t.next = add i64 %t, 1
  br label %cond
done:
  ret void
}

define internal void @_irgrad_split_${p}gemm(i32 %layout, i32 %tra, i32 %trb, ${I} %m, ${I} %n, ${I} %k,
        ${T} %alpha, ptr %a, ${I} %lda, ptr %b, ${I} %ldb, ${T} %beta, ptr %c, ${I} %ldc) {
entry:
  ; wanted tiles: about m*n*k / ${tile_work} (mn / max(1, ${tile_work} / k)), at most ${max_tiles}
  %m64 = ${widen} ${I} %m to i64
  %n64 = ${widen} ${I} %n to i64
  %k64 = ${widen} ${I} %k to i64
  %k1 = call i64 @llvm.smax.i64(i64 %k64, i64 1)
  %mn = mul i64 %m64, %n64
  %per0 = udiv i64 ${tile_work}, %k1
  %per = call i64 @llvm.smax.i64(i64 %per0, i64 1)
  %by_work = udiv i64 %mn, %per
  %wanted = call i64 @llvm.smin.i64(i64 %by_work, i64 ${max_tiles})
  %most_m = udiv i64 %m64, ${min_strip}
  %most_n = udiv i64 %n64, ${min_strip}
  br label %grow
grow:
  ; double gn or gm while the grid has fewer tiles than wanted: the one whose strips are wider
  %gm = phi i64 [1, %entry], [%gm.next, %step]
  %gn = phi i64 [1, %entry], [%gn.next, %step]
  %count = mul i64 %gm, %gn
  %count2 = shl i64 %count, 1
  %room = icmp sle i64 %count2, %wanted
  br i1 %room, label %pick, label %grown
pick:
  %gm2 = shl i64 %gm, 1
  %gn2 = shl i64 %gn, 1
  %m.ok = icmp sle i64 %gm2, %most_m
  %n.ok = icmp sle i64 %gn2, %most_n
  %strip_m = udiv i64 %m64, %gm
  %strip_n = udiv i64 %n64, %gn
  %n.wider = icmp sge i64 %strip_n, %strip_m
  %n.first = and i1 %n.ok, %n.wider
  %m.only = xor i1 %n.first, true
  %m.pick = and i1 %m.only, %m.ok
  %either = or i1 %n.first, %m.pick
  %n.pick0 = xor i1 %m.pick, true
  %n.pick = and i1 %n.pick0, %n.ok
  %any = or i1 %either, %n.pick
  br i1 %any, label %step, label %grown
step:
  %grow.n = or i1 %n.first, %n.pick
  %gn.next = select i1 %grow.n, i64 %gn2, i64 %gn
  %gm.next = select i1 %grow.n, i64 %gm, i64 %gm2
  br label %grow
grown:
  %several = icmp sge i64 %count, 2
  %split = and i1 %several, ${split}
  br i1 %split, label %tiles, label %whole
whole:
  call void @_irgrad_rt_cblas_${p}gemm(i32 %layout, i32 %tra, i32 %trb, ${I} %m, ${I} %n, ${I} %k,
        ${T} %alpha, ptr %a, ${I} %lda, ptr %b, ${I} %ldb, ${T} %beta, ptr %c, ${I} %ldc)
  ret void
tiles:
  %ctx = alloca %${p}gemm_tiles
  store i32 %layout, ptr %ctx
  %f1 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 1
  store i32 %tra, ptr %f1
  %f2 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 2
  store i32 %trb, ptr %f2
  %f3 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 3
  store ${I} %m, ptr %f3
  %f4 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 4
  store ${I} %n, ptr %f4
  %f5 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 5
  store ${I} %k, ptr %f5
  %f6 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 6
  store ${T} %alpha, ptr %f6
  %f7 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 7
  store ptr %a, ptr %f7
  %f8 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 8
  store ${I} %lda, ptr %f8
  %f9 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 9
  store ptr %b, ptr %f9
  %f10 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 10
  store ${I} %ldb, ptr %f10
  %f11 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 11
  store ${T} %beta, ptr %f11
  %f12 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 12
  store ptr %c, ptr %f12
  %f13 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 13
  store ${I} %ldc, ptr %f13
  %f14 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 14
  store i64 %gm, ptr %f14
  %f15 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 15
  store i64 %gn, ptr %f15
  call void @irgrad_parallel_for(ptr @_irgrad_tile_${p}gemm, ptr %ctx, i64 %count)
  ret void
}
