"""The thread pool behind `irgrad_parallel_for`, the entry point parallel loops call.

`convert-scf-parallel-to-threads` turns a large `scf.parallel` into
`irgrad_parallel_for(fn, ctx, n)`: run `fn(ctx, begin, end)` over disjoint ranges covering
`[0, n)`, one per thread, and return when all are done. This module defines that symbol
(once per process, before code calling it is compiled or loaded) as a small LLVM IR runtime
(shims/thread_pool.ll):

- T threads in all: the caller runs range 0, T - 1 workers the others. T is
  `$IRGRAD_NUM_THREADS`, else `$OMP_NUM_THREADS`, else the CPUs this process may run on.
  Ranges are `[n*t/T, n*(t+1)/T)`: static, equal, no work stealing (the loops are uniform).
- Workers are Python threads that call the runtime's `irgrad_worker_main` through ctypes,
  which releases the GIL: from then on they are plain native threads that never return.
- An idle worker checks `$IRGRAD_SPIN` times (default 1), then sleeps on a futex; it does not
  spin longer, as OpenMP runtimes do, because a spinning worker takes a core from the BLAS
  threads of the GEMM that usually follows.
- One caller at a time: a second caller (or a nested parallel loop) runs its loop serially, so
  the pool can never deadlock; after `fork()` the child's pool is serial.
- Without Linux futexes, or with T = 1, every loop runs serially in the caller.
Details: docs/design/cpu-backend.md, "Thread pool (irgrad/backends/cpu/threads.py)".
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time

import llvmlite.binding as llvm

from irgrad.backends.cpu.process import initialize
from irgrad.backends.cpu.runtime_objects import runtime_engine
from irgrad.backends.cpu.shims import template

SYS_FUTEX = {"x86_64": 202, "aarch64": 98}
FUTEX_WAIT_PRIVATE = 128
FUTEX_WAKE_PRIVATE = 129
DEFAULT_SPIN = 1

_lock = threading.Lock()
_engine: llvm.ExecutionEngine | None = None
_threads = 1
_workers: list[threading.Thread] = []


def configured_threads() -> int:
    """Threads the pool uses: $IRGRAD_NUM_THREADS, $OMP_NUM_THREADS, or the usable CPUs."""
    for var in ("IRGRAD_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "").strip()
        if value:
            try:
                return max(1, int(value))
            except ValueError:
                pass
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def configured_spin() -> int:
    """Rounds a parked worker spins before it sleeps: $IRGRAD_SPIN (a positive integer; an
    empty or malformed value means the default, DEFAULT_SPIN, as for the thread count)."""
    try:
        return max(1, int(os.environ.get("IRGRAD_SPIN", "").strip()))
    except ValueError:
        return DEFAULT_SPIN


def pool_threads() -> int:
    """Threads `irgrad_parallel_for` splits a loop over in this process (1: serial)."""
    install_thread_pool()
    return _threads


def install_thread_pool() -> None:
    """Define `irgrad_parallel_for` for LLVM's symbol resolution and start the workers."""
    if _engine is not None:
        return
    initialize()
    with _lock:
        if _engine is None:
            _install()


def _install() -> None:
    global _engine, _threads
    arch = llvm.get_process_triple().split("-")[0]
    sys_futex = SYS_FUTEX.get(arch) if sys.platform.startswith("linux") else None
    threads = configured_threads() if sys_futex is not None else 1
    spin = configured_spin()
    libc = ctypes.CDLL(None)
    for name in ("syscall", "sched_yield"):
        llvm.add_symbol("_irgrad_rt_" + name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
    ir = template("thread_pool.ll").substitute(
        spin=max(1, spin),
        sys_futex=sys_futex or 0,
        wait=FUTEX_WAIT_PRIVATE,
        wake=FUTEX_WAKE_PRIVATE,
    )
    engine = runtime_engine(ir, opt=2)
    set_threads = ctypes.CFUNCTYPE(None, ctypes.c_int64)(engine.get_function_address("irgrad_pool_set_threads"))
    started = ctypes.CFUNCTYPE(ctypes.c_int64)(engine.get_function_address("irgrad_pool_started"))
    worker_main = ctypes.CFUNCTYPE(None, ctypes.c_int64)(engine.get_function_address("irgrad_worker_main"))
    if threads > 1:
        for t in range(1, threads):
            # ctypes drops the GIL for the call, which never returns: a native worker thread.
            worker = threading.Thread(target=worker_main, args=(t,), name=f"irgrad-worker-{t}", daemon=True)
            worker.start()
            _workers.append(worker)
        deadline = time.monotonic() + 10.0
        while started() < threads - 1 and time.monotonic() < deadline:
            time.sleep(0.0005)
        if started() < threads - 1:  # could not start them all: stay serial
            threads = 1
    set_threads(threads)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=lambda: set_threads(1))
    llvm.add_symbol("irgrad_parallel_for", engine.get_function_address("irgrad_parallel_for"))
    # Keep the ctypes function objects alive with the engine.
    _keep.extend([set_threads, started, worker_main])
    _engine = engine
    _threads = threads


_keep: list[object] = []
