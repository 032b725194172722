"""A private, single-threaded instance of the BLAS library irgrad found (numpy's OpenBLAS).

Why: OpenBLAS runs its own thread pool, with static shares and workers that spin then sleep;
beside irgrad's pool, and beside any other busy process, the two fight for the same cores and
a GEMM waits a scheduler time slice for a descheduled worker (issue 26: the W1 step's p90 went
from about 1 ms to 120 ms with one busy process). irgrad instead calls one thread of the library
per tile and schedules the tiles on its own pool (shims/blas/split.ll). numpy's copy cannot be
made single-threaded for irgrad alone (its thread count is global and is numpy's to set), so
irgrad loads the same file a second time under another name: glibc's `dlopen` shares a library
by path and by file identity, so a copy is a separate instance with its own thread count, set
to one before its constructor runs (OPENBLAS_NUM_THREADS, read at load). numpy keeps its own.

Where the copy lives: `blas/` in the compile cache's folder when that can be trusted (written
once, atomically, checked by size and modification time against the original), else an
in-memory file (`memfd_create`). Eviction (cache.evict) leaves subfolders alone.
`IRGRAD_BLAS_THREADS=library` skips all this and shares the library with numpy, threads and all.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
import threading

from irgrad.backends import cache

_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_SET_THREADS = ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "openblas_set_num_threads",
                "MKL_Set_Num_Threads")
_lock = threading.Lock()
_loaded: dict[str, tuple[str, ctypes.CDLL]] = {}


def wanted() -> bool:
    """Whether irgrad uses a private single-threaded copy (the default, $IRGRAD_BLAS_THREADS
    unset or `pool`) rather than the library itself ($IRGRAD_BLAS_THREADS=library)."""
    return os.environ.get("IRGRAD_BLAS_THREADS", "").strip().lower() != "library"


def load_private(path: str) -> tuple[str, ctypes.CDLL] | None:
    """(the copy's path, the loaded copy) of the library at `path`, single-threaded; None when
    no copy could be made or loaded (the caller then uses `path` itself)."""
    with _lock:
        if path not in _loaded:
            copy = _copy(path)
            library = _open_single_threaded(copy) if copy else None
            if library is None:
                return None
            _loaded[path] = (copy, library)
        return _loaded[path]


def _copy(path: str) -> str | None:
    try:
        source = os.stat(path)
    except OSError:
        return None
    folder = cache.trusted_folder()
    if folder is not None:
        target = os.path.join(str(folder), "blas", os.path.basename(path))
        try:
            if _same_file_contents(source, target):
                return target
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=os.path.dirname(target), delete=False) as out:
                with open(path, "rb") as src:
                    shutil.copyfileobj(src, out)
            os.utime(out.name, ns=(source.st_atime_ns, source.st_mtime_ns))
            os.replace(out.name, target)
            return target
        except OSError:
            pass
    return _memory_copy(path)


def _same_file_contents(source: os.stat_result, target: str) -> bool:
    try:
        copied = os.stat(target)
    except OSError:
        return False
    return copied.st_size == source.st_size and copied.st_mtime_ns == source.st_mtime_ns


def _memory_copy(path: str) -> str | None:
    if not hasattr(os, "memfd_create"):
        return None
    try:
        fd = os.memfd_create("irgrad-blas")
        with open(path, "rb") as src, os.fdopen(os.dup(fd), "wb") as out:
            shutil.copyfileobj(src, out)
    except OSError:
        return None
    return f"/proc/self/fd/{fd}"  # kept open for the life of the process


def _open_single_threaded(path: str) -> ctypes.CDLL | None:
    saved = {name: os.environ.get(name) for name in _THREAD_VARIABLES}
    try:
        for name in _THREAD_VARIABLES:
            os.environ[name] = "1"
        library = ctypes.CDLL(path, mode=os.RTLD_LOCAL | os.RTLD_NOW)
    except OSError:
        return None
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    for name in _SET_THREADS:
        setter = getattr(library, name, None)
        if setter is not None:
            setter.argtypes = [ctypes.c_int]
            setter.restype = None
            setter(1)
            break
    return library
