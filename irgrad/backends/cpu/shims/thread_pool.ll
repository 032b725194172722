; The thread pool behind irgrad_parallel_for (irgrad/backends/cpu/threads.py): the caller and
; the workers claim chunks of [0, n) from one shared counter, so no loop waits on a thread
; that has not started; a futex to sleep on for each side.
;
; @pool_word is (generation << 32) | next chunk; its low half is ${closed} while the caller
; writes a new loop's fields. A thread reads the word, then the fields, then claims with a
; compare-and-swap of the word it read: success proves the fields were that loop's.

@pool_word = internal global i64 0, align 64
@pool_fn = internal global ptr null, align 64
@pool_ctx = internal global ptr null
@pool_n = internal global i64 0
@pool_chunks = internal global i64 0
@pool_done = internal global i64 0, align 64
@pool_finished = internal global i32 0, align 64
@pool_caller_asleep = internal global i32 0
@pool_generation = internal global i32 0, align 64
@pool_sleepers = internal global i32 0
@pool_threads = internal global i64 1, align 64
@pool_busy = internal global i32 0, align 64
@pool_started = internal global i64 0, align 64
@pool_spin = internal global i64 ${spin}
@pool_backoff = internal global i64 0
@pool_serial_left = internal global i64 0, align 64
@pool_stats = internal global [3 x i64] zeroinitializer

declare i64 @_irgrad_rt_syscall(i64, ...)
declare i32 @_irgrad_rt_sched_yield()
declare i32 @_irgrad_rt_clock_gettime(i32, ptr)
declare i64 @llvm.umax.i64(i64, i64)
declare i64 @llvm.umin.i64(i64, i64)
${pause_declaration}

; Run the chunks still unclaimed in the current loop, then return.
define internal void @claim_chunks() {
entry:
  br label %read
read:
  %w = load atomic i64, ptr @pool_word seq_cst, align 8
  %index = and i64 %w, 4294967295
  %fn = load atomic ptr, ptr @pool_fn monotonic, align 8
  %ctx = load atomic ptr, ptr @pool_ctx monotonic, align 8
  %n = load atomic i64, ptr @pool_n monotonic, align 8
  %chunks = load atomic i64, ptr @pool_chunks monotonic, align 8
  %open = icmp ult i64 %index, %chunks
  br i1 %open, label %claim, label %out
claim:
  %w1 = add i64 %w, 1
  %pair = cmpxchg ptr @pool_word, i64 %w, i64 %w1 seq_cst seq_cst
  %won = extractvalue { i64, i1 } %pair, 1
  br i1 %won, label %run, label %read
run:
  ; chunk i is [i*q + min(i, r), that + q + (i < r)), q = n / chunks, r = n % chunks
  %q = udiv i64 %n, %chunks
  %r = urem i64 %n, %chunks
  %iq = mul i64 %index, %q
  %extra = call i64 @llvm.umin.i64(i64 %index, i64 %r)
  %begin = add i64 %iq, %extra
  %longer = icmp ult i64 %index, %r
  %one = zext i1 %longer to i64
  %size = add i64 %q, %one
  %end = add i64 %begin, %size
  call void %fn(ptr %ctx, i64 %begin, i64 %end)
  %d = atomicrmw add ptr @pool_done, i64 1 seq_cst
  %d1 = add i64 %d, 1
  %last = icmp eq i64 %d1, %chunks
  br i1 %last, label %finish, label %read
finish:
  store atomic i32 1, ptr @pool_finished seq_cst, align 4
  %asleep = load atomic i32, ptr @pool_caller_asleep seq_cst, align 4
  %wake = icmp ne i32 %asleep, 0
  br i1 %wake, label %wake_caller, label %out
wake_caller:
  %woken = call i64 (i64, ...) @_irgrad_rt_syscall(i64 ${sys_futex}, ptr @pool_finished, i64 ${wake}, i64 1)
  br label %out
out:
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
  br i1 %locked, label %backing_off, label %serial
serial:
  call void %fn(ptr %ctx, i64 0, i64 %n)
  ret void
backing_off:
  ; after a loop that waited long for a descheduled thread, the next loops run serially
  %left = load atomic i64, ptr @pool_serial_left monotonic, align 8
  %backing = icmp ne i64 %left, 0
  br i1 %backing, label %serial_for_now, label %publish
serial_for_now:
  %left1 = sub i64 %left, 1
  store atomic i64 %left1, ptr @pool_serial_left monotonic, align 8
  call void @count(i64 1)
  call void %fn(ptr %ctx, i64 0, i64 %n)
  store atomic i32 0, ptr @pool_busy release, align 4
  ret void
publish:
  call void @count(i64 0)
  %started_at = call i64 @now_ns()
  %most = mul i64 %threads, ${chunks_per_thread}
  %chunks = call i64 @llvm.umin.i64(i64 %n, i64 %most)
  %w = load atomic i64, ptr @pool_word seq_cst, align 8
  %g = lshr i64 %w, 32
  %g1 = add i64 %g, 1
  %g1w = shl i64 %g1, 32
  %closed = or i64 %g1w, ${closed}
  store atomic i64 %closed, ptr @pool_word seq_cst, align 8
  store atomic ptr %fn, ptr @pool_fn monotonic, align 8
  store atomic ptr %ctx, ptr @pool_ctx monotonic, align 8
  store atomic i64 %n, ptr @pool_n monotonic, align 8
  store atomic i64 %chunks, ptr @pool_chunks monotonic, align 8
  store atomic i64 0, ptr @pool_done seq_cst, align 8
  store atomic i32 0, ptr @pool_finished seq_cst, align 4
  store atomic i64 %g1w, ptr @pool_word seq_cst, align 8
  %gen = atomicrmw add ptr @pool_generation, i32 1 seq_cst
  %sleepers = load atomic i32, ptr @pool_sleepers seq_cst, align 4
  %any = icmp ne i32 %sleepers, 0
  br i1 %any, label %wake, label %work
wake:
  %helpers = sub i64 %chunks, 1
  %wanted = call i64 @llvm.umin.i64(i64 %helpers, i64 2147483647)
  %woken = call i64 (i64, ...) @_irgrad_rt_syscall(i64 ${sys_futex}, ptr @pool_generation, i64 ${wake}, i64 %wanted)
  br label %work
work:
  call void @claim_chunks()
  br label %wait
wait:
  %k = phi i64 [0, %work], [%k1, %yield], [0, %awake]
  %since = phi i64 [0, %work], [%since, %yield], [%since1, %awake]
  %f = load atomic i32, ptr @pool_finished seq_cst, align 4
  %finished = icmp ne i32 %f, 0
  br i1 %finished, label %unlock, label %spin_more
spin_more:
  %k1 = add i64 %k, 1
  %tired = icmp ugt i64 %k1, ${caller_spin}
  br i1 %tired, label %sleep, label %yield
yield:
  ; a CPU hint, not sched_yield: yielding would hand this core to whatever else runs here
  ${pause}
  br label %wait
sleep:
  ; A worker still runs a chunk: sleep until the last one finishes (a Dekker pair with the
  ; worker's store of @pool_finished and load of @pool_caller_asleep).
  %first = icmp eq i64 %since, 0
  br i1 %first, label %clock, label %asleep
clock:
  %now0 = call i64 @now_ns()
  br label %asleep
asleep:
  %since1 = phi i64 [%since, %sleep], [%now0, %clock]
  store atomic i32 1, ptr @pool_caller_asleep seq_cst, align 4
  %f2 = load atomic i32, ptr @pool_finished seq_cst, align 4
  %not_yet = icmp eq i32 %f2, 0
  br i1 %not_yet, label %block, label %awake
block:
  %r = call i64 (i64, ...) @_irgrad_rt_syscall(i64 ${sys_futex}, ptr @pool_finished, i64 ${wait}, i64 0, ptr null)
  br label %awake
awake:
  store atomic i32 0, ptr @pool_caller_asleep seq_cst, align 4
  br label %wait
unlock:
  %slept = icmp ne i64 %since, 0
  br i1 %slept, label %measure, label %calm
measure:
  %now1 = call i64 @now_ns()
  ; a straggler: a wait longer than ${straggle_ns} ns and than the loop had taken before it
  ; (the normal imbalance of the last chunks is a fraction of that)
  %waited = sub i64 %now1, %since
  %worked = sub i64 %since, %started_at
  %long = icmp ugt i64 %waited, ${straggle_ns}
  %longer = icmp ugt i64 %waited, %worked
  %straggled = and i1 %long, %longer
  br i1 %straggled, label %back_off, label %calm
back_off:
  call void @count(i64 2)
  %b = load i64, ptr @pool_backoff
  %b2 = shl i64 %b, 1
  %b3 = call i64 @llvm.umax.i64(i64 %b2, i64 ${backoff_min})
  %b4 = call i64 @llvm.umin.i64(i64 %b3, i64 ${backoff_max})
  store i64 %b4, ptr @pool_backoff
  store atomic i64 %b4, ptr @pool_serial_left monotonic, align 8
  br label %release
calm:
  %c = load i64, ptr @pool_backoff
  %c2 = lshr i64 %c, 1
  store i64 %c2, ptr @pool_backoff
  br label %release
release:
  store atomic i32 0, ptr @pool_busy release, align 4
  ret void
}

; CLOCK_MONOTONIC in nanoseconds
define internal i64 @now_ns() {
entry:
  %ts = alloca { i64, i64 }
  %rc = call i32 @_irgrad_rt_clock_gettime(i32 1, ptr %ts)
  %s = load i64, ptr %ts
  %ns.p = getelementptr { i64, i64 }, ptr %ts, i32 0, i32 1
  %ns = load i64, ptr %ns.p
  %s.ns = mul i64 %s, 1000000000
  %t = add i64 %s.ns, %ns
  ret i64 %t
}

; @pool_stats: [0] loops run on the pool, [1] loops run serially while backing off,
; [2] loops after which the caller waited longer than ${straggle_ns} ns (only the caller counts)
define internal void @count(i64 %which) {
entry:
  %p = getelementptr [3 x i64], ptr @pool_stats, i64 0, i64 %which
  %v = load atomic i64, ptr %p monotonic, align 8
  %v1 = add i64 %v, 1
  store atomic i64 %v1, ptr %p monotonic, align 8
  ret void
}

define i64 @irgrad_pool_stat(i64 %which) {
entry:
  %p = getelementptr [3 x i64], ptr @pool_stats, i64 0, i64 %which
  %v = load atomic i64, ptr %p monotonic, align 8
  ret i64 %v
}

define void @irgrad_worker_main(i64 %t) {
entry:
  %started = atomicrmw add ptr @pool_started, i64 1 seq_cst
  br label %next
next:
  %seen = phi i32 [0, %entry], [%g, %go]
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
  call void @claim_chunks()
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
