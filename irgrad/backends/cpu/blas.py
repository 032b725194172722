"""The GEMM entry points generated code calls: `irgrad_blas_sgemm` and `irgrad_blas_dgemm`.

`convert-blas-to-llvm` lowers `blas.gemm` to a call of one of these two symbols, with one
fixed signature (row-major, i64 sizes and flags; see irgrad/lowering/llvm/blas_to_llvm.py). This
module defines them once per process, before any such code is compiled or loaded:

- BLAS: the CBLAS library numpy itself uses (numpy's wheels bundle OpenBLAS, whose symbols
  are `scipy_cblas_sgemm64_` with 64-bit integers), found among the libraries the process has
  loaded, next to numpy, or by name (`openblas`, `cblas`, `blas`); called through a private
  single-threaded instance of it (private_blas.py), large products split into tiles on
  irgrad's thread pool (shims/blas/split.ll), so one pool schedules all of irgrad's threads.
  $IRGRAD_BLAS_THREADS=library calls the library itself, with its own threads.
- A small shim compiled by LLVM (shims/blas/) adapts the call (row-major order, transpose
  enums, 32- or 64-bit integers) and routes what BLAS would reject (empty sizes, leading
  dimensions below the row length, sizes a 32-bit BLAS cannot take) to its loop nest.
- Fallback: with no BLAS found, or `IRGRAD_BLAS=none`, both symbols are a plain loop nest
  compiled by LLVM at O3: correct, not fast. `IRGRAD_BLAS=/path/to/libblas.so` picks a library.

`blas_info()` says which was chosen, for benchmarks and bug reports.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm

from irgrad.backends.cpu.private_blas import load_private, wanted as private_wanted
from irgrad.backends.cpu.process import initialize
from irgrad.backends.cpu.runtime_objects import define_symbols, runtime_engine
from irgrad.backends.cpu.shims import template
from irgrad.backends.cpu.threads import install_thread_pool

CBLAS_ROW_MAJOR = 101
CBLAS_NO_TRANS = 111
CBLAS_TRANS = 112

# (sgemm symbol, dgemm symbol, integer bits), preferred first.
_SYMBOLS = (
    ("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_", 64),
    ("cblas_sgemm64_", "cblas_dgemm64_", 64),
    ("scipy_cblas_sgemm", "scipy_cblas_dgemm", 32),
    ("cblas_sgemm", "cblas_dgemm", 32),
)
TILE_WORK = 1 << 22
"""A product is split into about m*n*k / TILE_WORK tiles (a power-of-two grid of at most
MAX_TILES, strips at least MIN_STRIP rows or columns wide) that the pool's threads claim one
at a time. Wide strips: each tile packs its rows of A and columns of B again."""
MAX_TILES = 16
MIN_STRIP = 128
_LIBRARY_NAME = re.compile(r"(openblas|mkl_rt|blis|flexiblas|cblas|libblas)[^/]*\.(so|dylib)", re.I)


@dataclass(frozen=True)
class BlasInfo:
    """What `irgrad_blas_sgemm`/`dgemm` call: a library and its symbols, or the loop nest."""

    library: str | None
    sgemm: str | None
    dgemm: str | None
    int_bits: int | None
    reason: str
    """Why this one (or why no library)."""
    private_copy: str | None = None
    """The path the single-threaded private instance was loaded from (private_blas.py), or
    None when the library itself is called, with its own threads."""

    @property
    def loaded_path(self) -> str | None:
        """The file irgrad's calls go to: the private copy, else the library."""
        return self.private_copy or self.library

    @property
    def uses_library(self) -> bool:
        return self.library is not None

    def describe(self) -> str:
        if self.library is None:
            return f"generated loops ({self.reason})"
        threads = "a private single-threaded copy, tiles on irgrad's pool" if self.private_copy else "its own threads"
        return f"{os.path.basename(self.library)}: {self.sgemm}/{self.dgemm}, {self.int_bits}-bit ints, {threads}"


_info: BlasInfo | None = None
_engine: llvm.ExecutionEngine | None = None
_lock = threading.Lock()


def blas_info() -> BlasInfo:
    """The GEMM implementation this process uses (installing it on first call)."""
    install_blas()
    assert _info is not None
    return _info


def _loaded_libraries() -> list[str]:
    """Paths of BLAS-looking shared libraries this process has mapped (Linux)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "/" in line}
    except OSError:
        return []
    return sorted(p for p in paths if _LIBRARY_NAME.search(os.path.basename(p)))


def _numpy_libraries() -> list[str]:
    """BLAS libraries shipped inside numpy's wheel (numpy.libs on Linux, .dylibs on macOS)."""
    import numpy

    base = os.path.dirname(numpy.__file__)
    found: list[str] = []
    for pattern in ("../numpy.libs/*", ".dylibs/*", "../numpy/.dylibs/*"):
        found += [p for p in glob.glob(os.path.join(base, pattern)) if _LIBRARY_NAME.search(os.path.basename(p))]
    return sorted(found)


def candidates() -> Iterator[str]:
    """Library paths to try, most likely first; `find_library` (which may run ldconfig or a
    compiler, tens of milliseconds) only when numpy's own BLAS was not found."""
    import numpy  # noqa: F401  (numpy's BLAS is then among the loaded libraries)

    seen: set[str] = set()
    for path in _loaded_libraries() + _numpy_libraries():
        if path not in seen:
            seen.add(path)
            yield path
    for name in ("openblas", "cblas", "blas"):
        path = ctypes.util.find_library(name)
        if path and path not in seen:
            seen.add(path)
            yield path


def _resolve(path: str, library: ctypes.CDLL | None = None) -> tuple[int, int, str, str, int] | None:
    if library is None:
        try:
            library = ctypes.CDLL(path)
        except OSError:
            return None
    for sgemm, dgemm, bits in _SYMBOLS:
        try:
            s = ctypes.cast(getattr(library, sgemm), ctypes.c_void_p).value
            d = ctypes.cast(getattr(library, dgemm), ctypes.c_void_p).value
        except AttributeError:
            continue
        if s and d:
            return s, d, sgemm, dgemm, bits
    return None


def _shim_ir(bits: int | None, split: bool = False) -> str:
    """The shim (shims/blas/): per precision the loop nest and the entry point, which calls
    the library (with `bits`-bit integers) where BLAS accepts the arguments; None: no library."""
    parts = ["declare i64 @llvm.smax.i64(i64, i64)", "declare i64 @llvm.smin.i64(i64, i64)",
             "declare ptr @malloc(i64)", "declare void @free(ptr)"]
    if bits is not None:
        parts += ["declare void @irgrad_parallel_for(ptr, ptr, i64)", "declare i64 @llvm.ctlz.i64(i64, i1)",
                  template("blas/tile_edge.ll").template]
    for p, t in (("s", "float"), ("d", "double")):
        parts.append(template("blas/loops.ll").substitute(p=p, T=t))
        if bits is None:
            library_call = ""
            no_library = "true"
        else:
            ity = f"i{bits}"
            parts.append(
                f"declare void @_irgrad_rt_cblas_{p}gemm(i32, i32, i32, {ity}, {ity}, {ity}, {t}, ptr, "
                f"{ity}, ptr, {ity}, {t}, ptr, {ity})"
            )
            enums = {"trans": CBLAS_TRANS, "no_trans": CBLAS_NO_TRANS, "row_major": CBLAS_ROW_MAJOR}
            fields = {"p": p, "T": t, "I": ity, "cast": "trunc" if bits < 64 else "bitcast", **enums}
            swap = template("blas/swap_nt.ll").substitute(fields) if p == "s" else ""
            parts.append(template("blas/split.ll").substitute(
                fields, widen="sext" if bits < 64 else "bitcast", tile_work=TILE_WORK,
                max_tiles=MAX_TILES, min_strip=MIN_STRIP, split="true" if split else "false"))
            library_call = (
                template("blas/library_args.ll").substitute(fields)
                + swap
                + template("blas/library_call.ll").substitute(fields)
            )
            no_library = "false"
        int_max = (1 << (bits - 1)) - 1 if bits else (1 << 62)
        parts.append(
            template("blas/gemm.ll").substitute(
                p=p, T=t, int_max=int_max, no_library=no_library, library_call=library_call
            )
        )
    return "\n".join(parts)


def compile_shim(ir: str, entry_points: Sequence[str], *, level: int, vectorize: bool) -> llvm.ExecutionEngine:
    """Compile a runtime shim (LLVM IR text) for this host's CPU at `level` (disk-cached) and
    define `entry_points` as process symbols, for the generated code that calls them. Keep the
    engine alive as long as they are used."""
    engine = runtime_engine(ir, opt=level, host_cpu=True, passes=True, vectorize=vectorize)
    define_symbols(engine, entry_points)
    return engine


def _choose() -> tuple[BlasInfo, tuple[int, int] | None]:
    setting = os.environ.get("IRGRAD_BLAS", "").strip()
    if setting.lower() in ("none", "off", "0", "loops"):
        return BlasInfo(None, None, None, None, "IRGRAD_BLAS=" + setting), None
    paths: Iterator[str] = iter([setting]) if setting else candidates()
    for path in paths:
        found = _resolve(path)
        if found is not None:
            how = "IRGRAD_BLAS" if setting else "numpy's BLAS" if "numpy" in path else "found by name"
            private = load_private(path) if private_wanted() else None
            if private is not None:
                copy_found = _resolve(private[0], private[1])
                if copy_found is not None:
                    found = copy_found
            s, d, sname, dname, bits = found
            instance = private[0] if private is not None else None
            return BlasInfo(path, sname, dname, bits, how, instance), (s, d)
    reason = f"IRGRAD_BLAS={setting} has no CBLAS sgemm/dgemm" if setting else "no CBLAS library found"
    return BlasInfo(None, None, None, None, reason), None


def install_blas() -> None:
    """Define `irgrad_blas_sgemm`/`dgemm` for LLVM's symbol resolution (once per process).

    """
    if _info is not None:
        return
    initialize()
    with _lock:
        if _info is None:
            _install()


def _install() -> None:
    global _info, _engine
    info, addresses = _choose()
    install_thread_pool()  # the split products call irgrad_parallel_for
    if addresses is not None:
        llvm.add_symbol("_irgrad_rt_cblas_sgemm", addresses[0])
        llvm.add_symbol("_irgrad_rt_cblas_dgemm", addresses[1])
    # With a library the loops only take the degenerate cases (an empty dimension, a
    # dimension past the library's integers), where their speed does not matter, and the
    # entry is a few compares before the library call: LLVM's -O0 compiles the shim far
    # faster than -O2 or -O3, a cost every process pays on its first GEMM.
    _engine = compile_shim(
        _shim_ir(info.int_bits, split=info.private_copy is not None),
        ("irgrad_blas_sgemm", "irgrad_blas_dgemm"),
        level=0 if info.uses_library else 3,
        vectorize=not info.uses_library,
    )
    _info = info
    if os.environ.get("IRGRAD_BLAS_VERBOSE"):
        print(f"irgrad: GEMM through {info.describe()}", file=sys.stderr)
