"""LLVM IR text -> object code: the optimizing half of a compile, in this process or in a worker.

`build(request)` parses and verifies the module, runs LLVM's O3 pipeline (loop and SLP
vectorization on), renames vector math intrinsics to libmvec (veclib.py) and emits an object
file for the target the request names. compile.py calls it through `CompileWorker`, which runs
it in a child process (this file run as a script) once a process has compiled
IN_PROCESS_COMPILES modules itself.

Why a child: llvmlite 0.50's pass builder leaks its PassInstrumentationCallbacks (about 88 KiB
per compile, never freed; docs/design/cpu-backend.md), so a process compiling thousands of
functions would grow without bound. The child takes the leak and is replaced when its memory
passes RECYCLE_RSS_BYTES; an LLVM crash in it is a CompileError, not the end of the caller.
The first compiles stay in-process: a program compiling a few functions never starts a child.
IRGRAD_COMPILE_WORKER=never keeps every compile in-process, =always sends even the first.

Only llvmlite and the standard library are imported here (veclib.py, also llvmlite-only, is
loaded by path in the child), so the child starts in a fraction of irgrad's import time.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm

FULL_UNROLL_MAX_COUNT = 4
"""The largest trip count LLVM's loop unroller may unroll completely (its default: unbounded).

Full unrolling of small static loops (a 3x3 convolution window, the 8 lanes of an attention head)
inside bigger nests multiplies the code the rest of O3 optimizes, for no speed: capping it makes
cold compiles much shorter at the same run time (figures: docs/design/cpu-backend.md, "Measured").
Partial and runtime unrolling, which the reductions' inner loops use, stay on."""

IN_PROCESS_COMPILES = 8
RECYCLE_RSS_BYTES = 1 << 30
MODE_ENV = "IRGRAD_COMPILE_WORKER"
_UNROLL_OPTION = threading.Lock()


def optimize(ref: llvm.ModuleRef, tm: llvm.TargetMachine, speed_level: int, loop_unrolling: bool) -> None:
    """LLVM's per-module pipeline at `speed_level` over `ref`, in place."""
    tuning = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    tuning.loop_vectorization = speed_level >= 2
    tuning.slp_vectorization = speed_level >= 2
    tuning.loop_unrolling = loop_unrolling and speed_level >= 2
    builder = llvm.create_pass_builder(tm, tuning)
    # The cap is a process-wide LLVM option: set for this run only (the GPU backend's NVPTX
    # pipeline and other llvmlite users in the process keep LLVM's default).
    with _UNROLL_OPTION:
        llvm.set_option("irgrad", f"-unroll-full-max-count={FULL_UNROLL_MAX_COUNT}")
        try:
            builder.getModulePassManager().run(ref, builder)
        finally:
            llvm.set_option("irgrad", f"-unroll-full-max-count={2**32 - 1}")


@functools.cache
def _veclib() -> Any:
    if __package__:
        from irgrad.backends.cpu import veclib

        return veclib
    spec = importlib.util.spec_from_file_location("_irgrad_veclib", Path(__file__).with_name("veclib.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(request: dict[str, Any]) -> dict[str, Any]:
    """Object code for `request` (text, triple, cpu, features, opt_level, loop_unrolling,
    keep_module): {object, declared, stats} or {error}. `module` is the optimized ModuleRef
    when `keep_module` (in-process only)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    stats = {}
    start = time.perf_counter()
    try:
        ref = llvm.parse_assembly(request["text"])
        ref.verify()
    except RuntimeError as err:
        return {"error": f"LLVM rejected the translated module: {err}"}
    stats["parse"] = time.perf_counter() - start
    start = time.perf_counter()
    level = request["opt_level"]
    target = llvm.Target.from_triple(request["triple"])
    tm = target.create_target_machine(cpu=request["cpu"], features=request["features"], opt=level, reloc="pic")
    if level > 0:
        optimize(ref, tm, level, request["loop_unrolling"])
        _veclib().use_vector_math(ref, request["features"])
    declared = [fn.name for fn in ref.functions if fn.is_declaration]
    stats["optimize"] = time.perf_counter() - start
    start = time.perf_counter()
    data = tm.emit_object(ref)
    stats["codegen"] = time.perf_counter() - start
    reply: dict[str, Any] = {"object": data, "declared": declared, "stats": stats, "rss": _rss_bytes()}
    if request.get("keep_module"):
        reply["module"] = ref
    return reply


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _send(stream: Any, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream: Any) -> Any:
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError
    (size,) = struct.unpack("<Q", header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def serve() -> None:
    """The child's loop: a request from stdin, its reply to stdout, until stdin closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write into the reply stream
    while True:
        try:
            request = _receive(requests)
        except EOFError:
            return
        try:
            reply = build(request)
        except Exception as err:  # noqa: BLE001 - reported to the parent, which raises it
            reply = {"error": f"{type(err).__name__}: {err}"}
        _send(replies, reply)


class WorkerDied(RuntimeError):
    """The child ended (LLVM crashed or it was killed) before replying."""


class CompileWorker:
    """The parent's side: one child at a time, started on first use and replaced when it
    dies or grows past RECYCLE_RSS_BYTES. Thread-safe: requests take turns."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self.in_process = 0
        self.started = 0

    def wanted(self) -> bool:
        """Whether the next compile goes to the child (IRGRAD_COMPILE_WORKER, then the count)."""
        mode = os.environ.get(MODE_ENV, "auto").strip().lower()
        if mode in ("never", "off", "0"):
            return False
        return mode in ("always", "on", "1") or self.in_process >= IN_PROCESS_COMPILES

    def build(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            child = self._ensure_child()
            try:
                assert child.stdin is not None and child.stdout is not None
                _send(child.stdin, request)
                reply = _receive(child.stdout)
            except (EOFError, BrokenPipeError, OSError) as err:
                code = child.wait()
                self._child = None
                why = f"signal {-code}" if code < 0 else f"exit status {code}"
                raise WorkerDied(f"LLVM's compile worker (pid {child.pid}) ended with {why} while compiling") from err
            if reply.get("rss", 0) > RECYCLE_RSS_BYTES:
                self._stop()
            return reply

    def _ensure_child(self) -> subprocess.Popen[bytes]:
        if self._child is None or self._child.poll() is not None:
            self._child = subprocess.Popen(
                [sys.executable, "-S", __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": _llvmlite_path()}, close_fds=True)
            self.started += 1
        return self._child

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is not None and child.stdin is not None:
            child.stdin.close()
            child.wait()

    def close(self) -> None:
        with self._lock:
            self._stop()


def _llvmlite_path() -> str:
    """The folder llvmlite is installed in (the child runs with -S, without site-packages:
    its own start costs less than irgrad's import, and it imports nothing else)."""
    return str(Path(llvm.__file__).resolve().parents[2])


if __name__ == "__main__":
    serve()
