; The allocation guard and the runtime-check failure path (irgrad/backends/cpu/guard.py):
; _irgrad_guarded_call runs a packed entry under a jump buffer kept in a pthread key;
; _irgrad_aligned_alloc (the `aligned_alloc` generated code calls) and _irgrad_assert_failed
; (a failed `cf.assert`) jump back to it with the size or ASSERT_FAILED.

declare i32 @_irgrad_rt__setjmp(ptr) returns_twice
declare void @_irgrad_rt_longjmp(ptr, i32) noreturn
declare ptr @_irgrad_rt_pthread_getspecific(i32)
declare i32 @_irgrad_rt_pthread_setspecific(i32, ptr)
declare ptr @_irgrad_rt_aligned_alloc(i64, i64)
declare i64 @_irgrad_rt_strlen(ptr)
declare i64 @_irgrad_rt_write(i32, ptr, i64)
declare void @_irgrad_rt_abort() noreturn

@newline = internal constant [1 x i8] c"\0A"

define i64 @_irgrad_guarded_call(ptr %entry, ptr %slots, ptr %jb) {
start:
  %size_slot = getelementptr i8, ptr %jb, i64 ${size_offset}
  store volatile i64 0, ptr %size_slot
  %set = call i32 @_irgrad_rt_pthread_setspecific(i32 ${key}, ptr %jb)
  %r = call i32 @_irgrad_rt__setjmp(ptr %jb) returns_twice
  %ok = icmp eq i32 %r, 0
  br i1 %ok, label %run, label %failed
run:
  call void %entry(ptr %slots)
  %unset = call i32 @_irgrad_rt_pthread_setspecific(i32 ${key}, ptr null)
  ret i64 0
failed:
  %unset2 = call i32 @_irgrad_rt_pthread_setspecific(i32 ${key}, ptr null)
  %size = load volatile i64, ptr %size_slot
  ret i64 %size
}

define ptr @_irgrad_aligned_alloc(i64 %alignment, i64 %size) {
start:
  %p = call ptr @_irgrad_rt_aligned_alloc(i64 %alignment, i64 %size)
  %null = icmp eq ptr %p, null
  br i1 %null, label %failed, label %ok
ok:
  ret ptr %p
failed:
  %jb = call ptr @_irgrad_rt_pthread_getspecific(i32 ${key})
  %outside = icmp eq ptr %jb, null
  br i1 %outside, label %ok, label %escape
escape:
  %size_slot = getelementptr i8, ptr %jb, i64 ${size_offset}
  store volatile i64 %size, ptr %size_slot
  call void @_irgrad_rt_longjmp(ptr %jb, i32 1)
  unreachable
}

define void @_irgrad_assert_failed(ptr %message) {
start:
  %jb = call ptr @_irgrad_rt_pthread_getspecific(i32 ${key})
  %outside = icmp eq ptr %jb, null
  br i1 %outside, label %abort, label %escape
escape:
  %message_slot = getelementptr i8, ptr %jb, i64 ${message_offset}
  store volatile ptr %message, ptr %message_slot
  %size_slot = getelementptr i8, ptr %jb, i64 ${size_offset}
  store volatile i64 ${assert_failed}, ptr %size_slot
  call void @_irgrad_rt_longjmp(ptr %jb, i32 1)
  unreachable
abort:
  %n = call i64 @_irgrad_rt_strlen(ptr %message)
  %w1 = call i64 @_irgrad_rt_write(i32 2, ptr %message, i64 %n)
  %w2 = call i64 @_irgrad_rt_write(i32 2, ptr @newline, i64 1)
  call void @_irgrad_rt_abort()
  unreachable
}
