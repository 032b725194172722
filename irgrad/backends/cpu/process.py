"""Process set-up for the CPU backend: done once, before any code is compiled or loaded.

`initialize()` initializes LLVM's native target (target.py), registers the C functions
generated code may call, installs the allocation guard and the assert fallback (guard.py),
and tunes glibc's malloc. compile.py, loading.py, abi.py and every runtime (blas.py,
lapack/, threads.py) call it; it imports none of them.

Symbols: LLVM resolves external calls through symbols registered with `add_symbol`, not the
process's dynamic symbol table, so `register_runtime_symbols` registers the C library and
libm functions the generated code may call (and the compiler-rt helpers codegen may emit);
compile.py refuses code that calls anything else, rather than letting a call jump to
address 0.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading

import llvmlite.binding as llvm

from irgrad.backends.cpu.guard import install_allocation_guard, install_assert_fallback
from irgrad.backends.cpu.target import initialize_native_target

_LIBC_SYMBOLS = ("aligned_alloc", "malloc", "calloc", "free", "memcpy", "memmove", "memset")
_LIBM_FUNCTIONS = (
    "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "pow", "erf", "erfc", "fmod", "remainder", "round",
    "roundeven", "rint", "nearbyint", "trunc", "floor", "ceil", "fma", "copysign", "ldexp",
    "frexp", "sincos", "fmin", "fmax", "fminimum", "fmaximum", "fminimum_num",
    "fmaximum_num", "hypot",
)  # fmt: skip
_COMPILER_RT = (
    "__truncdfhf2", "__truncsfhf2", "__extendhfsf2", "__gnu_h2f_ieee", "__gnu_f2h_ieee",
    "__truncdfbf2", "__truncsfbf2", "__powisf2", "__powidf2", "__floattisf", "__floattidf",
    "__floatuntisf", "__floatuntidf", "__fixsfti", "__fixdfti", "__fixunssfti",
    "__fixunsdfti", "__divti3", "__udivti3", "__modti3", "__umodti3", "__muloti4",
)  # fmt: skip
_ALLOWED = frozenset(
    (*_LIBC_SYMBOLS, *(n + suffix for n in _LIBM_FUNCTIONS for suffix in ("", "f")), *_COMPILER_RT)
)

_lock = threading.Lock()
_initialized = False


def _libraries() -> list[ctypes.CDLL]:
    libraries = [ctypes.CDLL(None)]
    for name in ("m", "gcc_s"):
        path = ctypes.util.find_library(name)
        if path:
            try:
                libraries.append(ctypes.CDLL(path))
            except OSError:
                pass
    return libraries


RUNTIME_PREFIXES = ("irgrad_", "_irgrad_", "llvm.", "_ZGV")
"""Names generated code may declare besides the C functions below: irgrad's runtimes (BLAS,
LAPACK, MPI, thread pool, debug print, checks), LLVM intrinsics and libmvec's vector math."""


def is_runtime_function(name: str) -> bool:
    """Whether generated code may call the external function `name` without the user's leave:
    irgrad's runtimes, the libc memory functions and libm (and compiler-rt's helpers)."""
    return name.startswith(RUNTIME_PREFIXES) or name in _ALLOWED


def register_runtime_symbols() -> None:
    """Register the C functions generated code may call (once per process)."""
    names = [
        *_LIBC_SYMBOLS,
        *(n + suffix for n in _LIBM_FUNCTIONS for suffix in ("", "f")),
        *_COMPILER_RT,
    ]
    libraries = _libraries()
    for name in names:
        for library in libraries:
            try:
                function = getattr(library, name)
            except AttributeError:
                continue
            address = ctypes.cast(function, ctypes.c_void_p).value
            if address:
                llvm.add_symbol(name, address)
                break


def initialize() -> None:
    """Initialize LLVM's native target and the runtime symbols, once per process."""
    global _initialized
    with _lock:
        if _initialized:
            return
        initialize_native_target()
        register_runtime_symbols()
        install_allocation_guard()  # after the symbols: it replaces `aligned_alloc`
        install_assert_fallback()
        _keep_freed_memory()
        _initialized = True


M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
KEEP_BELOW_BYTES = 1 << 30


def _keep_freed_memory() -> None:
    """Make glibc's malloc keep freed memory for reuse instead of returning it to the OS.

    A training step allocates and frees the same large buffers every call (its temporaries,
    and numpy's arrays for its results). glibc serves blocks above a threshold with mmap and
    gives them back on free, so the next call page-faults them in again (zeroed by the
    kernel), a sizeable part of a step's time depending on how glibc's adaptive threshold
    happened to move (docs/design/cpu-backend.md, "Runtime"). Blocks under 1 GiB now come
    from the heap, and free memory at its top is kept (PyTorch's and JAX's CPU allocators
    cache blocks for the same reason). The resident set stays at its peak rather than
    shrinking between calls. `IRGRAD_MALLOC_TUNING=off` leaves malloc alone.
    """
    if os.environ.get("IRGRAD_MALLOC_TUNING", "").strip().lower() in ("off", "0", "no"):
        return
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except AttributeError:  # not glibc
        return
    mallopt(M_MMAP_THRESHOLD, KEEP_BELOW_BYTES)
    mallopt(M_TRIM_THRESHOLD, KEEP_BELOW_BYTES)


__all__ = ["initialize", "is_runtime_function", "register_runtime_symbols"]
