; The thread pool behind irgrad_parallel_for (irgrad/backends/cpu/threads.py): a generation
; counter, a futex to sleep on, and one static range per thread.

@pool_generation = internal global i32 0, align 64
@pool_fn = internal global ptr null, align 64
@pool_ctx = internal global ptr null
@pool_n = internal global i64 0
@pool_threads = internal global i64 1, align 64
@pool_pending = internal global i64 0, align 64
@pool_busy = internal global i32 0, align 64
@pool_sleepers = internal global i32 0, align 64
@pool_started = internal global i64 0, align 64
@pool_spin = internal global i64 ${spin}

declare i64 @_irgrad_rt_syscall(i64, ...)
declare i32 @_irgrad_rt_sched_yield()

define internal void @run_range(ptr %fn, ptr %ctx, i64 %n, i64 %t, i64 %threads) {
entry:
  %nt = mul i64 %n, %t
  %begin = udiv i64 %nt, %threads
  %t1 = add i64 %t, 1
  %nt1 = mul i64 %n, %t1
  %end = udiv i64 %nt1, %threads
  %some = icmp ult i64 %begin, %end
  br i1 %some, label %run, label %done
run:
  call void %fn(ptr %ctx, i64 %begin, i64 %end)
  br label %done
done:
  ret void
}

define void @irgrad_parallel_for(ptr %fn, ptr %ctx, i64 %n) {
entry:
  %threads = load i64, ptr @pool_threads
  %single = icmp ule i64 %threads, 1
  %tiny = icmp ult i64 %n, 2
  %serial0 = or i1 %single, %tiny
  br i1 %serial0, label %serial, label %lock
lock:
  %pair = cmpxchg ptr @pool_busy, i32 0, i32 1 acquire monotonic
  %locked = extractvalue { i32, i1 } %pair, 1
  br i1 %locked, label %publish, label %serial
serial:
  call void %fn(ptr %ctx, i64 0, i64 %n)
  ret void
publish:
  store ptr %fn, ptr @pool_fn
  store ptr %ctx, ptr @pool_ctx
  store i64 %n, ptr @pool_n
  %workers = sub i64 %threads, 1
  store atomic i64 %workers, ptr @pool_pending seq_cst, align 8
  %g = atomicrmw add ptr @pool_generation, i32 1 seq_cst
  %sleepers = load atomic i32, ptr @pool_sleepers seq_cst, align 4
  %any = icmp ne i32 %sleepers, 0
  br i1 %any, label %wake, label %work
wake:
  %w = call i64 (i64, ...) @_irgrad_rt_syscall(i64 ${sys_futex}, ptr @pool_generation, i64 ${wake}, i64 2147483647)
  br label %work
work:
  call void @run_range(ptr %fn, ptr %ctx, i64 %n, i64 0, i64 %threads)
  br label %wait
wait:
  %p = load atomic i64, ptr @pool_pending acquire, align 8
  %finished = icmp eq i64 %p, 0
  br i1 %finished, label %unlock, label %yield
yield:
  %y = call i32 @_irgrad_rt_sched_yield()
  br label %wait
unlock:
  store atomic i32 0, ptr @pool_busy release, align 4
  ret void
}

define void @irgrad_worker_main(i64 %t) {
entry:
  %started = atomicrmw add ptr @pool_started, i64 1 seq_cst
  br label %next
next:
  %seen = phi i32 [0, %entry], [%g, %ran]
  br label %spin
spin:
  %k = phi i64 [0, %next], [%k1, %spin_again], [0, %awake]
  %g0 = load atomic i32, ptr @pool_generation acquire, align 4
  %new0 = icmp ne i32 %g0, %seen
  br i1 %new0, label %go, label %spin_more
spin_more:
  %limit = load i64, ptr @pool_spin
  %k1 = add i64 %k, 1
  %tired = icmp uge i64 %k1, %limit
  br i1 %tired, label %sleep, label %spin_again
spin_again:
  %y = call i32 @_irgrad_rt_sched_yield()
  br label %spin
sleep:
  %s = atomicrmw add ptr @pool_sleepers, i32 1 seq_cst
  %g1 = load atomic i32, ptr @pool_generation seq_cst, align 4
  %same = icmp eq i32 %g1, %seen
  br i1 %same, label %wait, label %awake
wait:
  %seen64 = zext i32 %seen to i64
  %r = call i64 (i64, ...) @_irgrad_rt_syscall(i64 ${sys_futex}, ptr @pool_generation, i64 ${wait}, i64 %seen64, ptr null)
  br label %awake
awake:
  %s2 = atomicrmw sub ptr @pool_sleepers, i32 1 seq_cst
  br label %spin
go:
  %g = phi i32 [%g0, %spin]
  %fn = load ptr, ptr @pool_fn
  %ctx = load ptr, ptr @pool_ctx
  %n = load i64, ptr @pool_n
  %threads = load i64, ptr @pool_threads
  call void @run_range(ptr %fn, ptr %ctx, i64 %n, i64 %t, i64 %threads)
  %left = atomicrmw sub ptr @pool_pending, i64 1 seq_cst
  br label %ran
ran:
  br label %next
}

define void @irgrad_pool_set_threads(i64 %threads) {
entry:
  store i64 %threads, ptr @pool_threads
  ret void
}

define i64 @irgrad_pool_started() {
entry:
  %s = load atomic i64, ptr @pool_started seq_cst, align 8
  ret i64 %s
}
