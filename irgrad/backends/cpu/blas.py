"""The GEMM entry points generated code calls: `irgrad_blas_sgemm` and `irgrad_blas_dgemm`.

`convert-blas-to-llvm` lowers `blas.gemm` to a call of one of these two symbols, with one
fixed signature (row-major, i64 sizes and flags; see irgrad/lowering/llvm/blas_to_llvm.py). This
module defines them once per process, before any such code is compiled or loaded:

- BLAS: the CBLAS library numpy itself uses (numpy's wheels bundle OpenBLAS, whose symbols
  are `scipy_cblas_sgemm64_` with 64-bit integers), found among the libraries the process has
  loaded, next to numpy, or by name (`openblas`, `cblas`, `blas`). Sharing numpy's copy means
  one thread pool and the thread count numpy obeys (OPENBLAS_NUM_THREADS, threadpoolctl).
- A small shim compiled by LLVM adapts the call (row-major order, transpose enums, 32- or
  64-bit integers) and routes what BLAS would reject (empty sizes, leading dimensions
  below the row length, sizes a 32-bit BLAS cannot take) to the loop nest below.
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

    @property
    def uses_library(self) -> bool:
        return self.library is not None

    def describe(self) -> str:
        if self.library is None:
            return f"generated loops ({self.reason})"
        return f"{os.path.basename(self.library)}: {self.sgemm}/{self.dgemm}, {self.int_bits}-bit ints"


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


def _candidates() -> Iterator[str]:
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


def _resolve(path: str) -> tuple[int, int, str, str, int] | None:
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


# The shim: one entry point per precision, the fixed signature generated code calls. It takes
# the library's path when the arguments are ones BLAS accepts, the loop nest otherwise.
_ENTRY = """
define void @irgrad_blas_{p}gemm(i64 %ta, i64 %tb, i64 %m, i64 %n, i64 %k, {T} %alpha, ptr %a,
                                 i64 %lda, ptr %b, i64 %ldb, {T} %beta, ptr %c, i64 %ldc) {{
entry:
  %ta1 = icmp ne i64 %ta, 0
  %tb1 = icmp ne i64 %tb, 0
  %cols_a = select i1 %ta1, i64 %m, i64 %k
  %cols_b = select i1 %tb1, i64 %k, i64 %n
  %ca1 = call i64 @llvm.smax.i64(i64 %cols_a, i64 1)
  %cb1 = call i64 @llvm.smax.i64(i64 %cols_b, i64 1)
  %cc1 = call i64 @llvm.smax.i64(i64 %n, i64 1)
  %bad_a = icmp slt i64 %lda, %ca1
  %bad_b = icmp slt i64 %ldb, %cb1
  %bad_c = icmp slt i64 %ldc, %cc1
  %m0 = icmp sle i64 %m, 0
  %n0 = icmp sle i64 %n, 0
  %k0 = icmp sle i64 %k, 0
  %big = call i64 @llvm.smax.i64(i64 %m, i64 %n)
  %big2 = call i64 @llvm.smax.i64(i64 %big, i64 %k)
  %big3 = call i64 @llvm.smax.i64(i64 %big2, i64 %lda)
  %big4 = call i64 @llvm.smax.i64(i64 %big3, i64 %ldb)
  %big5 = call i64 @llvm.smax.i64(i64 %big4, i64 %ldc)
  %too_big = icmp sgt i64 %big5, {int_max}
  %e1 = or i1 %bad_a, %bad_b
  %e2 = or i1 %e1, %bad_c
  %e3 = or i1 %e2, %m0
  %e4 = or i1 %e3, %n0
  %e5 = or i1 %e4, %k0
  %e6 = or i1 %e5, %too_big
  %e7 = or i1 %e6, {no_library}
  br i1 %e7, label %loops, label %library
loops:
  call void @_irgrad_loops_{p}gemm(i1 %ta1, i1 %tb1, i64 %m, i64 %n, i64 %k, {T} %alpha, ptr %a,
                                   i64 %lda, ptr %b, i64 %ldb, {T} %beta, ptr %c, i64 %ldc)
  ret void
library:
{library_call}
  ret void
}}
"""

# The library branch: the arguments cast to the library's integers, then (sgemm: the swapped
# product below, when it applies) the call.
_LIBRARY_ARGS = """
  %tra = select i1 %ta1, i32 {trans}, i32 {no_trans}
  %trb = select i1 %tb1, i32 {trans}, i32 {no_trans}
  %im = {cast} i64 %m to {I}
  %in = {cast} i64 %n to {I}
  %ik = {cast} i64 %k to {I}
  %ilda = {cast} i64 %lda to {I}
  %ildb = {cast} i64 %ldb to {I}
  %ildc = {cast} i64 %ldc to {I}"""
_LIBRARY_CALL = """
  call void @_irgrad_rt_cblas_{p}gemm(i32 {row_major}, i32 %tra, i32 %trb, {I} %im, {I} %in, {I} %ik,
        {T} %alpha, ptr %a, {I} %ilda, ptr %b, {I} %ildb, {T} %beta, ptr %c, {I} %ildc)"""

# sgemm only: C = A @ B^T with m < n and a long k (a weight gradient, dY @ X^T) computed as
# C^T = B @ A^T into a temporary, then transposed into C. Why: numpy's OpenBLAS (SkylakeX
# kernels) runs that product 1.2-2.3 times faster with the larger of m and n first, at 1, 2
# and 4 threads (2026-11-30, numpy's `a @ b.T` against `(b @ a.T).T`: 32 x 144 x 25088, a
# conv2d's weight gradient, 3.54 -> 1.67 ms at 2 threads; 16 x 288 x 25088 3.85 -> 1.80;
# 128 x 256 x 2048 0.81 -> 0.68), and slower when k is short (256 x 784 x 128: 0.33 -> 0.59 ms).
# Applied where k >= 4n and m*n*k >= 2^24 (the transposing loop, compiled at -O0 as the rest
# of the shim, is then a few percent of the product); not to dgemm, where the same swap was
# slower as often as faster. Without memory for the temporary, the direct call.
_SWAP_NT = """
  %nta = xor i1 %ta1, true
  %sw.nt = and i1 %nta, %tb1
  %sw.mn = icmp slt i64 %m, %n
  %n4 = mul i64 %n, 4
  %sw.k = icmp sge i64 %k, %n4
  %mn = mul i64 %m, %n
  %sw.small = icmp sle i64 %mn, 67108864
  %k.min = udiv i64 16777216, %mn
  %sw.work = icmp sge i64 %k, %k.min
  %sw1 = and i1 %sw.nt, %sw.mn
  %sw2 = and i1 %sw1, %sw.k
  %sw3 = and i1 %sw2, %sw.small
  %sw4 = and i1 %sw3, %sw.work
  br i1 %sw4, label %swap.alloc, label %direct
swap.alloc:
  %bytes = mul i64 %mn, 4
  %tmp = call ptr @malloc(i64 %bytes)
  %tmp.null = icmp eq ptr %tmp, null
  br i1 %tmp.null, label %direct, label %swap
swap:
  call void @_irgrad_rt_cblas_sgemm(i32 {row_major}, i32 {no_trans}, i32 {trans}, {I} %in, {I} %im, {I} %ik,
        float %alpha, ptr %b, {I} %ildb, ptr %a, {I} %ilda, float 0.0, ptr %tmp, {I} %im)
  %beta0 = fcmp oeq float %beta, 0.0
  br label %t.i.cond
t.i.cond:
  %ti = phi i64 [0, %swap], [%ti.next, %t.j.exit]
  %ti.in = icmp slt i64 %ti, %m
  br i1 %ti.in, label %t.j.cond, label %t.exit
t.j.cond:
  %tj = phi i64 [0, %t.i.cond], [%tj.next, %t.j.latch]
  %tj.in = icmp slt i64 %tj, %n
  br i1 %tj.in, label %t.body, label %t.j.exit
t.body:
  %tjm = mul i64 %tj, %m
  %t.idx = add i64 %tjm, %ti
  %t.ptr = getelementptr float, ptr %tmp, i64 %t.idx
  %tv = load float, ptr %t.ptr
  %tic = mul i64 %ti, %ldc
  %tc.idx = add i64 %tic, %tj
  %tc.ptr = getelementptr float, ptr %c, i64 %tc.idx
  br i1 %beta0, label %t.store, label %t.accumulate
t.accumulate:
  %t.old = load float, ptr %tc.ptr
  %t.old.scaled = fmul float %beta, %t.old
  %t.sum = fadd float %t.old.scaled, %tv
  store float %t.sum, ptr %tc.ptr
  br label %t.j.latch
t.store:
  store float %tv, ptr %tc.ptr
  br label %t.j.latch
t.j.latch:
  %tj.next = add i64 %tj, 1
  br label %t.j.cond
t.j.exit:
  %ti.next = add i64 %ti, 1
  br label %t.i.cond
t.exit:
  call void @free(ptr %tmp)
  ret void
direct:"""

# C = alpha * op(A) @ op(B) + beta * C, one dot product per element; C is not read when beta
# is 0 (BLAS's rule, so an uninitialized C cannot leak a NaN).
_LOOPS = """
define internal void @_irgrad_loops_{p}gemm(i1 %ta, i1 %tb, i64 %m, i64 %n, i64 %k, {T} %alpha,
        ptr %a, i64 %lda, ptr %b, i64 %ldb, {T} %beta, ptr %c, i64 %ldc) {{
entry:
  %beta0 = fcmp oeq {T} %beta, 0.0
  br label %i.cond
i.cond:
  %i = phi i64 [0, %entry], [%i.next, %j.exit]
  %i.in = icmp slt i64 %i, %m
  br i1 %i.in, label %j.cond, label %exit
j.cond:
  %j = phi i64 [0, %i.cond], [%j.next, %j.latch]
  %j.in = icmp slt i64 %j, %n
  br i1 %j.in, label %k.cond, label %j.exit
k.cond:
  %p = phi i64 [0, %j.cond], [%p.next, %k.body]
  %acc = phi {T} [0.0, %j.cond], [%acc.next, %k.body]
  %p.in = icmp slt i64 %p, %k
  br i1 %p.in, label %k.body, label %k.exit
k.body:
  %pa = mul i64 %p, %lda
  %ia = mul i64 %i, %lda
  %a.t = add i64 %pa, %i
  %a.n = add i64 %ia, %p
  %a.idx = select i1 %ta, i64 %a.t, i64 %a.n
  %jb = mul i64 %j, %ldb
  %pb = mul i64 %p, %ldb
  %b.t = add i64 %jb, %p
  %b.n = add i64 %pb, %j
  %b.idx = select i1 %tb, i64 %b.t, i64 %b.n
  %a.ptr = getelementptr {T}, ptr %a, i64 %a.idx
  %b.ptr = getelementptr {T}, ptr %b, i64 %b.idx
  %av = load {T}, ptr %a.ptr
  %bv = load {T}, ptr %b.ptr
  %prod = fmul {T} %av, %bv
  %acc.next = fadd {T} %acc, %prod
  %p.next = add i64 %p, 1
  br label %k.cond
k.exit:
  %ic = mul i64 %i, %ldc
  %c.idx = add i64 %ic, %j
  %c.ptr = getelementptr {T}, ptr %c, i64 %c.idx
  %scaled = fmul {T} %alpha, %acc
  br i1 %beta0, label %store, label %accumulate
accumulate:
  %old = load {T}, ptr %c.ptr
  %old.scaled = fmul {T} %beta, %old
  %sum = fadd {T} %old.scaled, %scaled
  store {T} %sum, ptr %c.ptr
  br label %j.latch
store:
  store {T} %scaled, ptr %c.ptr
  br label %j.latch
j.latch:
  %j.next = add i64 %j, 1
  br label %j.cond
j.exit:
  %i.next = add i64 %i, 1
  br label %i.cond
exit:
  ret void
}}
"""


def _shim_ir(bits: int | None) -> str:
    parts = ["declare i64 @llvm.smax.i64(i64, i64)", "declare ptr @malloc(i64)", "declare void @free(ptr)"]
    for p, t in (("s", "float"), ("d", "double")):
        parts.append(_LOOPS.format(p=p, T=t))
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
            swap = _SWAP_NT.format(**fields) if p == "s" else ""
            library_call = _LIBRARY_ARGS.format(**fields) + swap + _LIBRARY_CALL.format(**fields)
            no_library = "false"
        int_max = (1 << (bits - 1)) - 1 if bits else (1 << 62)
        parts.append(
            _ENTRY.format(p=p, T=t, int_max=int_max, no_library=no_library, library_call=library_call)
        )
    return "\n".join(parts)


def compile_shim(ir: str, entry_points: Sequence[str], *, level: int, vectorize: bool) -> llvm.ExecutionEngine:
    """Compile a runtime shim (LLVM IR text) for this host's CPU at `level` (disk-cached) and
    define `entry_points` as process symbols, for the generated code that calls them. Keep the
    engine alive as long as they are used."""
    from irgrad.backends.cpu.runtime_objects import define_symbols, runtime_engine

    engine = runtime_engine(ir, opt=level, host_cpu=True, passes=True, vectorize=vectorize)
    define_symbols(engine, entry_points)
    return engine


def _choose() -> tuple[BlasInfo, tuple[int, int] | None]:
    setting = os.environ.get("IRGRAD_BLAS", "").strip()
    if setting.lower() in ("none", "off", "0", "loops"):
        return BlasInfo(None, None, None, None, "IRGRAD_BLAS=" + setting), None
    paths: Iterator[str] = iter([setting]) if setting else _candidates()
    for path in paths:
        found = _resolve(path)
        if found is not None:
            s, d, sname, dname, bits = found
            how = "IRGRAD_BLAS" if setting else "numpy's BLAS" if "numpy" in path else "found by name"
            return BlasInfo(path, sname, dname, bits, how), (s, d)
    reason = f"IRGRAD_BLAS={setting} has no CBLAS sgemm/dgemm" if setting else "no CBLAS library found"
    return BlasInfo(None, None, None, None, reason), None


def install_blas() -> None:
    """Define `irgrad_blas_sgemm`/`dgemm` for LLVM's symbol resolution (once per process).

    """
    if _info is not None:
        return
    from irgrad.backends.cpu.jit import initialize

    initialize()
    with _lock:
        if _info is None:
            _install()


def _install() -> None:
    global _info, _engine
    info, addresses = _choose()
    if addresses is not None:
        llvm.add_symbol("_irgrad_rt_cblas_sgemm", addresses[0])
        llvm.add_symbol("_irgrad_rt_cblas_dgemm", addresses[1])
    # With a library the loops only take the degenerate cases (an empty dimension, a
    # dimension past the library's integers), where their speed does not matter, and the
    # entry is a few compares before the library call: LLVM's -O0 compiles the shim in 3 ms
    # instead of 33 ms at -O2 (200 ms at -O3), which every process pays on its first GEMM.
    _engine = compile_shim(
        _shim_ir(info.int_bits),
        ("irgrad_blas_sgemm", "irgrad_blas_dgemm"),
        level=0 if info.uses_library else 3,
        vectorize=not info.uses_library,
    )
    _info = info
    if os.environ.get("IRGRAD_BLAS_VERBOSE"):
        print(f"irgrad: GEMM through {info.describe()}", file=sys.stderr)
