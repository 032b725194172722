; _irgrad_split_${p}gemm: the CBLAS call (same arguments), split into tiles of C's rows (when
; m >= n; each tile packs all of B) or columns (each packs all of A) run on irgrad's thread
; pool. Why: the library is a private single-threaded copy (blas.py), so the pool is the one
; place where irgrad's CPU parallelism is scheduled; tiles are claimed one at a time, so a
; GEMM never waits for a thread the system has not scheduled yet.
; The tiles depend on the shape only, never on the thread count (one thread runs them in
; turn), so the bits do not either: a library may compute a tile otherwise than the same
; elements in one call (OpenBLAS's small-matrix kernels do). Edges are multiples of 16.

%${p}gemm_tiles = type { i32, i32, i32, ${I}, ${I}, ${I}, ${T}, ptr, ${I}, ptr, ${I}, ${T}, ptr, ${I}, i64, i1 }

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
  %count.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 14
  %count = load i64, ptr %count.p
  %rows.p = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 15
  %rows = load i1, ptr %rows.p
  %m64 = ${widen} ${I} %m to i64
  %n64 = ${widen} ${I} %n to i64
  %lda64 = ${widen} ${I} %lda to i64
  %ldb64 = ${widen} ${I} %ldb to i64
  %ldc64 = ${widen} ${I} %ldc to i64
  %total = select i1 %rows, i64 %m64, i64 %n64
  %ta = icmp eq i32 %tra, ${trans}
  %tb = icmp eq i32 %trb, ${trans}
  br label %cond
cond:
  %t = phi i64 [%begin, %entry], [%t.next, %call]
  %more = icmp slt i64 %t, %end
  br i1 %more, label %tile, label %done
tile:
  ; tile t is [edge(t), edge(t + 1)), edge(t) = t * total / count rounded down to 16
  %lo = call i64 @_irgrad_tile_edge(i64 %t, i64 %total, i64 %count)
  %t1 = add i64 %t, 1
  %hi = call i64 @_irgrad_tile_edge(i64 %t1, i64 %total, i64 %count)
  %size64 = sub i64 %hi, %lo
  %size = ${cast} i64 %size64 to ${I}
  ; rows [lo, hi): A's rows (A^T's columns), C's rows; columns: B's columns (B^T's rows), C's columns
  %a.rows = select i1 %ta, i64 %lo, i64 0
  %lo.lda = mul i64 %lo, %lda64
  %a.rows2 = select i1 %ta, i64 %a.rows, i64 %lo.lda
  %a.off = select i1 %rows, i64 %a.rows2, i64 0
  %lo.ldb = mul i64 %lo, %ldb64
  %b.cols = select i1 %tb, i64 %lo.ldb, i64 %lo
  %b.off = select i1 %rows, i64 0, i64 %b.cols
  %lo.ldc = mul i64 %lo, %ldc64
  %c.off = select i1 %rows, i64 %lo.ldc, i64 %lo
  %a.t = getelementptr ${T}, ptr %a, i64 %a.off
  %b.t = getelementptr ${T}, ptr %b, i64 %b.off
  %c.t = getelementptr ${T}, ptr %c, i64 %c.off
  %m.t = select i1 %rows, ${I} %size, ${I} %m
  %n.t = select i1 %rows, ${I} %n, ${I} %size
  call void @_irgrad_rt_cblas_${p}gemm(i32 %layout, i32 %tra, i32 %trb, ${I} %m.t, ${I} %n.t, ${I} %k,
        ${T} %alpha, ptr %a.t, ${I} %lda, ptr %b.t, ${I} %ldb, ${T} %beta, ptr %c.t, ${I} %ldc)
  br label %call
call:
  %t.next = add i64 %t, 1
  br label %cond
done:
  ret void
}

define internal void @_irgrad_split_${p}gemm(i32 %layout, i32 %tra, i32 %trb, ${I} %m, ${I} %n, ${I} %k,
        ${T} %alpha, ptr %a, ${I} %lda, ptr %b, ${I} %ldb, ${T} %beta, ptr %c, ${I} %ldc) {
entry:
  ; tiles: about m*n*k / ${tile_work} (mn / max(1, ${tile_work} / k)), at most ${max_tiles} and
  ; total / 32, rounded down to a power of two; fewer than 2: one call
  %m64 = ${widen} ${I} %m to i64
  %n64 = ${widen} ${I} %n to i64
  %k64 = ${widen} ${I} %k to i64
  %k1 = call i64 @llvm.smax.i64(i64 %k64, i64 1)
  %mn = mul i64 %m64, %n64
  %per0 = udiv i64 ${tile_work}, %k1
  %per = call i64 @llvm.smax.i64(i64 %per0, i64 1)
  %by_work = udiv i64 %mn, %per
  %rows = icmp sge i64 %m64, %n64
  %total = select i1 %rows, i64 %m64, i64 %n64
  %units = udiv i64 %total, 32
  %cap0 = call i64 @llvm.smin.i64(i64 %by_work, i64 %units)
  %cap = call i64 @llvm.smin.i64(i64 %cap0, i64 ${max_tiles})
  %cap1 = call i64 @llvm.smax.i64(i64 %cap, i64 1)
  %lz = call i64 @llvm.ctlz.i64(i64 %cap1, i1 true)
  %log = sub i64 63, %lz
  %tiles0 = shl i64 1, %log
  %several = icmp sge i64 %tiles0, 2
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
  store i64 %tiles0, ptr %f14
  %f15 = getelementptr %${p}gemm_tiles, ptr %ctx, i32 0, i32 15
  store i1 %rows, ptr %f15
  call void @irgrad_parallel_for(ptr @_irgrad_tile_${p}gemm, ptr %ctx, i64 %tiles0)
  ret void
}
