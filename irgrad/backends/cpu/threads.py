"""The thread pool behind `irgrad_parallel_for`, the entry point parallel loops (and split
GEMMs, shims/blas/split.ll) call: one scheduling policy for all of irgrad's CPU parallelism.

`irgrad_parallel_for(fn, ctx, n)` runs `fn(ctx, begin, end)` over disjoint ranges covering
`[0, n)` and returns when all are done; this module defines it as a small LLVM IR runtime
(shims/thread_pool.ll), once per process, before code calling it is compiled or loaded:
- T threads in all: the caller and T - 1 workers. T is $IRGRAD_NUM_THREADS, else
  $OMP_NUM_THREADS, else the CPUs this process may use (affinity, cgroup quota) divided
  between this job's processes on the host (`local_ranks`).
- A loop is cut into at most CHUNKS_PER_THREAD * T chunks that the caller and the workers
  claim one at a time: no loop waits for a thread that was not scheduled; the caller runs
  what a late worker has not claimed. Ranges depend on n and T only, and every loop's
  iterations are independent, so the bits do not depend on who ran what.
- Waiting degrades gracefully: an idle worker checks $IRGRAD_SPIN times (default 1), then
  sleeps on a futex; the caller waiting for a last chunk spins briefly, then sleeps. After a
  loop whose caller waited for a descheduled worker (a core taken by other work) longer than
  STRAGGLE_NS and than the loop had run, the next loops run serially, for a count that
  doubles on each such wait.
- One caller at a time: a second caller (or a nested loop) runs serially, so the pool can
  never deadlock; after `fork()` the child's pool is serial.
Details: docs/design/cpu-backend.md, "Thread pool (irgrad/backends/cpu/threads.py)".
"""

from __future__ import annotations

import ctypes
import math
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
CHUNKS_PER_THREAD = 4
"""A loop is cut into at most this many chunks per thread, claimed one at a time."""
CALLER_SPIN = 2000
"""Checks (with a CPU pause hint) the caller makes for the last chunk before it sleeps."""
STRAGGLE_NS = 300_000
"""A loop whose caller waited for the last chunk longer than this and longer than the loop had
taken until then (a descheduled worker, not the last chunks' usual imbalance)..."""
BACKOFF_MIN, BACKOFF_MAX = 8, 1024
"""...makes the next loops run serially: 8 after the first such wait, twice as many after each
next one, up to 1024; every loop that ends without such a wait halves the count."""
CLOSED = 0xFFFFFFFF
PAUSE = {  # (declaration, call) of the spin-wait hint
    "x86_64": ("declare void @llvm.x86.sse2.pause()", "call void @llvm.x86.sse2.pause()"),
    "aarch64": ("declare void @llvm.aarch64.hint(i32)", "call void @llvm.aarch64.hint(i32 1)"),
}

_lock = threading.Lock()
_engine: llvm.ExecutionEngine | None = None
_threads = 1
_workers: list[threading.Thread] = []


def configured_threads() -> int:
    """Threads the pool uses: $IRGRAD_NUM_THREADS, $OMP_NUM_THREADS, else the CPUs this
    process may use (`usable_cpus`) divided between the MPI ranks on this host."""
    for var in ("IRGRAD_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "").strip()
        if value:
            try:
                return max(1, int(value))
            except ValueError:
                pass
    return max(1, usable_cpus() // local_ranks())


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), capped by its cgroup's CPU quota
    (a container given 1.5 CPUs of 16 gets 2 threads, not 16)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    if quota is not None:
        cpus = min(cpus, max(1, math.ceil(quota)))
    return max(1, cpus)


def cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> float | None:
    """CPUs' worth of time this process's cgroup may use per period (cgroup v2 `cpu.max`, v1
    `cpu.cfs_quota_us / cpu.cfs_period_us`), or None when unlimited or unknown."""
    for path in _own_cgroup_dirs(root):
        try:
            with open(os.path.join(path, "cpu.max")) as f:
                quota, _, period = f.read().strip().partition(" ")
            if quota != "max":
                return int(quota) / int(period or 100000)
        except (OSError, ValueError):
            pass
        try:
            with open(os.path.join(path, "cpu.cfs_quota_us")) as f:
                quota_us = int(f.read())
            with open(os.path.join(path, "cpu.cfs_period_us")) as f:
                period_us = int(f.read())
            if quota_us > 0 and period_us > 0:
                return quota_us / period_us
        except (OSError, ValueError):
            pass
    return None


def _own_cgroup_dirs(root: str) -> list[str]:
    """This process's cgroup folders (from /proc/self/cgroup), then the root's."""
    folders: list[str] = []
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controllers in ("", "cpu", "cpu,cpuacct", "cpuacct,cpu"):
                    sub = "" if controllers == "" else controllers
                    for base in (os.path.join(root, sub), os.path.join(root, "cpu"), root):
                        folders.append(os.path.normpath(base + path))
    except (OSError, ValueError):
        pass
    return folders + [root, os.path.join(root, "cpu")]


_LOCAL_RANK_VARIABLES = ("IRGRAD_LOCAL_PROCESSES", "MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE",
                         "MV2_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE", "LOCAL_WORLD_SIZE")


def local_ranks() -> int:
    """Processes of this job on this host, from the launcher's environment (irgrad's own,
    MPICH/hydra, Open MPI, MVAPICH, Slurm, torchrun); 1 when not launched as a job."""
    for var in _LOCAL_RANK_VARIABLES:
        try:
            value = int(os.environ.get(var, "").strip().split("(")[0].split(",")[0])
        except ValueError:
            continue
        if value > 0:
            return value
    return 1


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
    global _engine, _threads, _stat
    arch = llvm.get_process_triple().split("-")[0]
    sys_futex = SYS_FUTEX.get(arch) if sys.platform.startswith("linux") else None
    threads = configured_threads() if sys_futex is not None else 1
    spin = configured_spin()
    libc = ctypes.CDLL(None)
    for name in ("syscall", "sched_yield", "clock_gettime"):
        llvm.add_symbol("_irgrad_rt_" + name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
    ir = template("thread_pool.ll").substitute(
        spin=max(1, spin),
        sys_futex=sys_futex or 0,
        wait=FUTEX_WAIT_PRIVATE,
        wake=FUTEX_WAKE_PRIVATE,
        closed=CLOSED,
        chunks_per_thread=CHUNKS_PER_THREAD,
        caller_spin=CALLER_SPIN,
        pause=PAUSE.get(arch, ("", ""))[1],
        pause_declaration=PAUSE.get(arch, ("", ""))[0],
        straggle_ns=STRAGGLE_NS,
        backoff_min=BACKOFF_MIN,
        backoff_max=BACKOFF_MAX,
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
    _stat_function = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(engine.get_function_address("irgrad_pool_stat"))
    _keep.extend([set_threads, started, worker_main, _stat_function])
    _engine = engine
    _threads = threads
    _stat = _stat_function


_keep: list[object] = []
_stat = None


def pool_stats() -> dict[str, int]:
    """Counts since the process started: `parallel` loops run on the pool, `serial` loops run
    in the caller alone while backing off, `straggled` loops whose caller waited long for a
    descheduled worker (each starts a back-off). Loops the pool never saw (one thread, a
    nested or concurrent call) are not counted."""
    install_thread_pool()
    if _stat is None:
        return {"parallel": 0, "serial": 0, "straggled": 0}
    return {name: int(_stat(i)) for i, name in enumerate(("parallel", "serial", "straggled"))}
