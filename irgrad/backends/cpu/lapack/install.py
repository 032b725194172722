"""Defining the LAPACK entry points for LLVM's symbol resolution, each when code first calls it.

The library is chosen once per process (library.py); an entry point it serves is a shim
compiled from shim_ir.py's IR (disk-cached, runtime_objects.py), any other a numpy callback
(fallback.py). Called by loading.py for the entry points a program's code names, and by
`lapack_info()` for all of them.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Collection

import llvmlite.binding as llvm

from irgrad.backends.cpu.blas import compile_shim
from irgrad.backends.cpu.lapack.entry_points import ENTRY_POINTS
from irgrad.backends.cpu.lapack.fallback import install_fallback
from irgrad.backends.cpu.lapack.library import LapackInfo, Resolved, choose
from irgrad.backends.cpu.lapack.shim_ir import shim_ir
from irgrad.backends.cpu.process import initialize

_info: LapackInfo | None = None
_found: Resolved | None = None  # chosen with _info
_engines: list[llvm.ExecutionEngine] = []  # the shims' code, alive as long as the process
_installed: set[str] = set()
_lock = threading.Lock()


def lapack_info() -> LapackInfo:
    """The LAPACK this process uses (installing every entry point on first call)."""
    install_lapack()
    assert _info is not None
    return _info


def install_lapack(entry_points: Collection[str] | None = None) -> None:
    """Define `entry_points` (default: every `irgrad_lapack_*` entry point) for LLVM's symbol
    resolution: the library's shims, or the numpy callbacks where it lacks a routine or there
    is none. The library is chosen once per process; each entry point is defined once, when a
    program first needs it (a program compiles only the shims it calls, not all of them)."""
    wanted = set(ENTRY_POINTS) if entry_points is None else set(entry_points) & set(ENTRY_POINTS)
    if _info is not None and wanted <= _installed:
        return
    initialize()
    with _lock:
        if _info is None:
            _choose_library()
        missing = wanted - _installed
        if missing:
            _install(missing)


def _choose_library() -> None:
    global _info, _found
    info, found = choose()
    if found is not None:
        for entry in found.routines:
            for runtime, _, address in found.routines[entry]:
                llvm.add_symbol(runtime, address)
    _info, _found = info, found
    if os.environ.get("IRGRAD_BLAS_VERBOSE") or os.environ.get("IRGRAD_LAPACK_VERBOSE"):
        print(f"irgrad: LAPACK through {info.describe()}", file=sys.stderr)


def _install(missing: set[str]) -> None:
    """Shims for the entry points of `missing` the library serves, callbacks for the others."""
    found = _found
    served = [e for e in ENTRY_POINTS if e in missing and found is not None and e in found.routines]
    if served:
        assert found is not None
        _engines.append(compile_shim(shim_ir(found.bits, served), served, level=2, vectorize=False))
    fallbacks = [e for e in ENTRY_POINTS if e in missing and e not in served]
    if fallbacks:
        install_fallback(fallbacks)
    _installed.update(missing)


__all__ = ["install_lapack", "lapack_info"]
