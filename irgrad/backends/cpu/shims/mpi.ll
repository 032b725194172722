; The MPI runtime compiled code calls (irgrad/backends/mpi/compiled.py): irgrad_mpi_alltoall,
; irgrad_mpi_allgather (nonblocking MPI calls tested until done, against a deadline) and
; irgrad_mpi_comm_rank. ${C}, ${D}, ${R}: the MPI library's handle types; ${status_bytes}:
; sizeof(MPI_Status). A failure records (site, kind, MPI error code) in @irgrad_mpi_state and
; leaves through irgrad_assert_failed (the guard's longjmp back to the caller).

declare i32 @_irgrad_rt_MPI_Ialltoall(ptr, i32, ${D}, ptr, i32, ${D}, ${C}, ptr)
declare i32 @_irgrad_rt_MPI_Iallgather(ptr, i32, ${D}, ptr, i32, ${D}, ${C}, ptr)
declare i32 @_irgrad_rt_MPI_Ibarrier(${C}, ptr)
declare i32 @_irgrad_rt_MPI_Test(ptr, ptr, ptr)
declare i32 @_irgrad_rt_MPI_Comm_rank(${C}, ptr)
declare double @_irgrad_rt_MPI_Wtime()
declare i32 @_irgrad_rt_sched_yield()
declare i32 @_irgrad_rt_usleep(i32)
declare void @irgrad_assert_failed(ptr)

; state: [0] failed site, [1] failure kind (1 deadline, 2 MPI error, 3 over 2 GiB),
; [2] the MPI error code, [3] bytes sent, [4] alltoalls, [5] allgathers.
@irgrad_mpi_state = global [6 x i64] zeroinitializer
@irgrad_mpi_timeout = global double 3.0e2
; slot g + 1 for group g (slot 0: the world): the communicator and its size.
@irgrad_mpi_comms = global [65 x ${C}] zeroinitializer
@irgrad_mpi_sizes = global [65 x i64] zeroinitializer
@irgrad_mpi_byte = global ${D} zeroinitializer
@message = internal constant [34 x i8] c"irgrad: an MPI collective failed.\00"

define internal void @fail(i64 %site, i64 %kind, i64 %code) noinline {
start:
  store volatile i64 %site, ptr @irgrad_mpi_state
  %k = getelementptr [6 x i64], ptr @irgrad_mpi_state, i64 0, i64 1
  store volatile i64 %kind, ptr %k
  %c = getelementptr [6 x i64], ptr @irgrad_mpi_state, i64 0, i64 2
  store volatile i64 %code, ptr %c
  call void @irgrad_assert_failed(ptr @message)
  ret void
}

define internal void @count(i64 %field, i64 %bytes) {
start:
  %b = getelementptr [6 x i64], ptr @irgrad_mpi_state, i64 0, i64 3
  %old = load i64, ptr %b
  %new = add i64 %old, %bytes
  store i64 %new, ptr %b
  %f = getelementptr [6 x i64], ptr @irgrad_mpi_state, i64 0, i64 %field
  %n = load i64, ptr %f
  %n1 = add i64 %n, 1
  store i64 %n1, ptr %f
  ret void
}

; Test %request until it completes, past the deadline failing. Between tests: with %naps
; (waiting for the group to arrive), yield the core for the first 50 ms, then 1 ms naps (a
; late peer must not cost this one a core); without (a transfer in flight, which MPICH moves
; only while it is tested: a nap per segment would stretch it), always yield.
define internal void @wait(ptr %request, i64 %site, i1 %naps) {
start:
  %flag = alloca i32
  %status = alloca [${status_bytes} x i8]
  %t0 = call double @_irgrad_rt_MPI_Wtime()
  %timeout = load double, ptr @irgrad_mpi_timeout
  %naps_off = xor i1 %naps, true
  br label %test
test:
  %rc = call i32 @_irgrad_rt_MPI_Test(ptr %request, ptr %flag, ptr %status)
  %bad = icmp ne i32 %rc, 0
  br i1 %bad, label %error, label %check
error:
  %code = sext i32 %rc to i64
  call void @fail(i64 %site, i64 2, i64 %code)
  ret void
check:
  %done = load i32, ptr %flag
  %finished = icmp ne i32 %done, 0
  br i1 %finished, label %out, label %late
late:
  %now = call double @_irgrad_rt_MPI_Wtime()
  %elapsed = fsub double %now, %t0
  %over = fcmp ogt double %elapsed, %timeout
  br i1 %over, label %expired, label %pause
expired:
  call void @fail(i64 %site, i64 1, i64 0)
  ret void
pause:
  %early = fcmp olt double %elapsed, 5.0e-2
  %spin = or i1 %early, %naps_off
  br i1 %spin, label %yield, label %nap
yield:
  %y = call i32 @_irgrad_rt_sched_yield()
  br label %test
nap:
  %z = call i32 @_irgrad_rt_usleep(i32 1000)
  br label %test
out:
  ret void
}

define internal ${C} @comm(i64 %group) {
start:
  %slot = add i64 %group, 1
  %p = getelementptr [65 x ${C}], ptr @irgrad_mpi_comms, i64 0, i64 %slot
  %c = load ${C}, ptr %p
  ret ${C} %c
}

define internal i64 @others(i64 %group) {
start:
  %slot = add i64 %group, 1
  %p = getelementptr [65 x i64], ptr @irgrad_mpi_sizes, i64 0, i64 %slot
  %n = load i64, ptr %p
  %o = sub i64 %n, 1
  ret i64 %o
}

; Before a large transfer, the group meets at a barrier (waited for with naps), so the
; transfer itself runs with every member testing it.
define internal void @arrive(${C} %comm, i64 %bytes, i64 %site) {
start:
  %small = icmp slt i64 %bytes, 65536
  br i1 %small, label %out, label %meet
meet:
  %request = alloca ${R}
  %rc = call i32 @_irgrad_rt_MPI_Ibarrier(${C} %comm, ptr %request)
  %bad = icmp ne i32 %rc, 0
  br i1 %bad, label %error, label %wait
error:
  %code = sext i32 %rc to i64
  call void @fail(i64 %site, i64 2, i64 %code)
  br label %out
wait:
  call void @wait(ptr %request, i64 %site, i1 true)
  br label %out
out:
  ret void
}

define internal i1 @too_large(i64 %bytes, i64 %site) {
start:
  %big = icmp sgt i64 %bytes, 2147483647
  br i1 %big, label %fail, label %ok
fail:
  call void @fail(i64 %site, i64 3, i64 0)
  ret i1 true
ok:
  ret i1 false
}

define void @irgrad_mpi_alltoall(ptr %send, ptr %recv, i64 %block, i64 %group, i64 %site) {
start:
  %big = call i1 @too_large(i64 %block, i64 %site)
  br i1 %big, label %out, label %go
go:
  %n = trunc i64 %block to i32
  %comm = call ${C} @comm(i64 %group)
  %byte = load ${D}, ptr @irgrad_mpi_byte
  %others0 = call i64 @others(i64 %group)
  %total = mul i64 %block, %others0
  call void @arrive(${C} %comm, i64 %total, i64 %site)
  %request = alloca ${R}
  %rc = call i32 @_irgrad_rt_MPI_Ialltoall(ptr %send, i32 %n, ${D} %byte, ptr %recv, i32 %n, ${D} %byte, ${C} %comm, ptr %request)
  %bad = icmp ne i32 %rc, 0
  br i1 %bad, label %error, label %started
error:
  %code = sext i32 %rc to i64
  call void @fail(i64 %site, i64 2, i64 %code)
  br label %out
started:
  %small = icmp slt i64 %total, 65536
  call void @wait(ptr %request, i64 %site, i1 %small)
  %others = call i64 @others(i64 %group)
  %sent = mul i64 %block, %others
  call void @count(i64 4, i64 %sent)
  br label %out
out:
  ret void
}

define void @irgrad_mpi_allgather(ptr %send, ptr %recv, i64 %bytes, i64 %group, i64 %site) {
start:
  %big = call i1 @too_large(i64 %bytes, i64 %site)
  br i1 %big, label %out, label %go
go:
  %n = trunc i64 %bytes to i32
  %comm = call ${C} @comm(i64 %group)
  %byte = load ${D}, ptr @irgrad_mpi_byte
  %others0 = call i64 @others(i64 %group)
  %total = mul i64 %bytes, %others0
  call void @arrive(${C} %comm, i64 %total, i64 %site)
  %request = alloca ${R}
  %rc = call i32 @_irgrad_rt_MPI_Iallgather(ptr %send, i32 %n, ${D} %byte, ptr %recv, i32 %n, ${D} %byte, ${C} %comm, ptr %request)
  %bad = icmp ne i32 %rc, 0
  br i1 %bad, label %error, label %started
error:
  %code = sext i32 %rc to i64
  call void @fail(i64 %site, i64 2, i64 %code)
  br label %out
started:
  %small = icmp slt i64 %total, 65536
  call void @wait(ptr %request, i64 %site, i1 %small)
  %others = call i64 @others(i64 %group)
  %sent = mul i64 %bytes, %others
  call void @count(i64 5, i64 %sent)
  br label %out
out:
  ret void
}

define i32 @irgrad_mpi_comm_rank(i64 %group) {
start:
  %comm = call ${C} @comm(i64 %group)
  %rank = alloca i32
  %rc = call i32 @_irgrad_rt_MPI_Comm_rank(${C} %comm, ptr %rank)
  %r = load i32, ptr %rank
  ret i32 %r
}
