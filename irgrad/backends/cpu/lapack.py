"""The LAPACK entry points generated code calls: `irgrad_lapack_{s,d}{potrf,trsm,getrf}`.

Cholesky, triangular solves and LU are O(n^3) with a sequential dependency along the
diagonal; the compiler's own loop nests for them are correct but far from a tuned LAPACK
(blocked, multithreaded, vectorized). So, like GEMM (see blas.py), the compiler can lower them
to calls of a few fixed-signature runtime symbols, defined here once per process:

- LAPACK: the LAPACKE/CBLAS routines of the library blas.py chose (numpy's bundled OpenBLAS,
  whose symbols are `scipy_LAPACKE_dpotrf_work64_`, `scipy_cblas_dtrsm64_`, ... with 64-bit
  integers), else the first library blas.py's discovery finds that has them. The first symbol
  set that resolves is used: `scipy_*64_` or `*64_` (64-bit integers), then `scipy_*` or the
  plain names `LAPACKE_dpotrf_work`, `cblas_dtrsm` (32-bit integers). The `_work` LAPACKE
  variants are used: the plain ones run a NaN pre-check and return early without factoring.
- A small shim compiled by LLVM adapts the call (layout, enums, integer width), handles empty
  sizes, and implements what LAPACK leaves to the caller (zeroing the other triangle, the
  failure convention, 0-based pivots and the row permutation).
- With no library found, or `IRGRAD_LAPACK=none` (or `off`, `0`), `lapack_info().available`
  is False and the entry points are ctypes callbacks into the reference interpreter's numpy
  implementations (irgrad/backends/interpreter/nn_linalg.py): the same contract, correct and
  slow (the Python interpreter per call), so compiled code never lacks a symbol it calls.
  `IRGRAD_LAPACK=/path/to/lib.so` picks a library.

Contract (all matrices ROW-MAJOR, in place; `ld*` is the row stride in elements, >= the row
length; T is float for the `s` variants, double for `d`; sizes are i64):

`void irgrad_lapack_{p}potrf(i64 n, T* a, i64 lda)`
    Cholesky factor of the symmetric n x n matrix at `a`, of which only the lower triangle
    (diagonal included) is read. On success `a` holds L (A = L L^T) in its lower triangle and
    zeros in its strict upper triangle. On failure (LAPACK's info != 0: not positive definite;
    or any diagonal entry of L not > 0, which catches NaN input that OpenBLAS's potrf does not
    report) all n x n entries become NaN. Entries beyond column n of each row (the padding of
    a strided buffer) are never touched. n <= 0: nothing.

`void irgrad_lapack_{p}trsm(i64 lower, i64 unit, i64 n, i64 k, T* a, i64 lda, T* b, i64 ldb)`
    B := A^{-1} B for the n x n triangular A (lower if `lower` != 0, else upper; if `unit`
    != 0 its diagonal is taken as ones and not read; the other triangle is never read) and
    the n x k matrix B. A zero on A's diagonal gives inf/NaN, as BLAS does. n <= 0 or
    k <= 0: nothing.

`void irgrad_lapack_{p}getrf(i64 n, T* a, i64 lda, i32* pivots, i32* perm)`
    LU with partial pivoting, P A = L U, packed in `a` (L's unit diagonal implied), as
    LAPACK's getrf. `pivots[j]` (0-based) is the row swapped with row j at step j (LAPACK's
    1-based ipiv minus 1); `perm` is those swaps applied in order to 0..n-1, so row i of P A
    is row perm[i] of A (`a[perm] == L @ U`). An exactly singular matrix is not an error: the
    factorization completes with a zero on U's diagonal. n <= 0: nothing.

Errors the caller should never cause but which are handled rather than passed to LAPACK's
xerbla (which would print and return): a row stride below the row length, a size or stride
above the library's integer range (int32 max with a 32-bit library; getrf's i32 pivots also
limit n to int32 max), or memory LAPACKE or the shim could not allocate. Then the output
(potrf's and getrf's n x n `a`, trsm's n x k `b`) is filled with NaN; getrf's pivots and perm
are then the identity.

Row-major notes: potrf calls the COLUMN-major routine with uplo='U' on the row-major buffer:
read column-major with the same stride the buffer is A^T = A, whose upper triangle is A's
lower triangle, and the factor U (A = U^T U) written there is L^T read column-major, i.e. L
read row-major. So no transposed copy is made. trsm uses CBLAS's row-major order (OpenBLAS
swaps side and triangle itself, no copy). getrf has no such trick (getrf on A^T pivots
columns), so it uses LAPACKE's row-major layout, which transposes into a temporary n x n
copy and back: an extra O(n^2) allocation and two passes per call, small next to O(n^3).

Threads: the library's own thread pool and thread count apply (OPENBLAS_NUM_THREADS,
threadpoolctl), shared with numpy and the GEMM entry points. The entry points keep no state
(getrf mallocs its ipiv scratch per call) and may be called from several threads at once, as
far as the library allows it (OpenBLAS does).

`lapack_info()` says which library and symbols were chosen, for benchmarks and bug reports.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import llvmlite.binding as llvm

from irgrad.backends.cpu import blas

LAPACK_ROW_MAJOR = 101
LAPACK_COL_MAJOR = 102
UPLO_U = ord("U")
CBLAS_ROW_MAJOR = 101
CBLAS_LEFT = 141
CBLAS_UPPER = 121
CBLAS_LOWER = 122
CBLAS_NO_TRANS = 111
CBLAS_NON_UNIT = 131
CBLAS_UNIT = 132
INT32_MAX = (1 << 31) - 1

ROUTINES = ("potrf", "trsm", "getrf")
PRECISIONS = (("s", "float", 4), ("d", "double", 8))
ENTRY_POINTS = tuple(f"irgrad_lapack_{p}{r}" for p, _, _ in PRECISIONS for r in ROUTINES)

# (potrf, trsm, getrf) symbol patterns, {p} the precision, and integer bits; preferred first.
_SYMBOLS = (
    ("scipy_LAPACKE_{p}potrf_work64_", "scipy_cblas_{p}trsm64_", "scipy_LAPACKE_{p}getrf_work64_", 64),
    ("LAPACKE_{p}potrf_work64_", "cblas_{p}trsm64_", "LAPACKE_{p}getrf_work64_", 64),
    ("scipy_LAPACKE_{p}potrf_work", "scipy_cblas_{p}trsm", "scipy_LAPACKE_{p}getrf_work", 32),
    ("LAPACKE_{p}potrf_work", "cblas_{p}trsm", "LAPACKE_{p}getrf_work", 32),
)


@dataclass(frozen=True)
class LapackInfo:
    """What the `irgrad_lapack_*` entry points call: a library and its symbols, or (library
    None) the numpy reference through ctypes callbacks."""

    library: str | None
    symbols: tuple[str, ...]
    """The library symbols, in the order of `ENTRY_POINTS` (s potrf, trsm, getrf, then d)."""
    int_bits: int | None
    reason: str
    """Why this one (or why no library)."""

    @property
    def available(self) -> bool:
        return self.library is not None

    def describe(self) -> str:
        if self.library is None:
            return f"no LAPACK ({self.reason}): numpy reference callbacks"
        return f"{os.path.basename(self.library)}: {', '.join(self.symbols)}, {self.int_bits}-bit ints"


_info: LapackInfo | None = None
_engine: llvm.ExecutionEngine | None = None
_lock = threading.Lock()


def lapack_info() -> LapackInfo:
    """The LAPACK this process uses (installing it on first call)."""
    install_lapack()
    assert _info is not None
    return _info


def _resolve(path: str) -> tuple[tuple[int, ...], tuple[str, ...], int] | None:
    try:
        library = ctypes.CDLL(path)
    except OSError:
        return None
    for *patterns, bits in _SYMBOLS:
        names = tuple(pattern.format(p=p) for p, _, _ in PRECISIONS for pattern in patterns)
        try:
            addresses = tuple(ctypes.cast(getattr(library, name), ctypes.c_void_p).value for name in names)
        except AttributeError:
            continue
        if all(addresses):
            return addresses, names, bits  # type: ignore[return-value]
    return None


# Fill the rows x cols block at `a` (row stride ld) with NaN; the padding is not touched.
_FILL_NAN = """
define internal void @_irgrad_lapack_{p}fill_nan(i64 %rows, i64 %cols, ptr %a, i64 %ld) {{
entry:
  br label %i.cond
i.cond:
  %i = phi i64 [0, %entry], [%i.next, %j.exit]
  %i.in = icmp slt i64 %i, %rows
  br i1 %i.in, label %i.body, label %exit
i.body:
  %off = mul i64 %i, %ld
  %row = getelementptr {T}, ptr %a, i64 %off
  br label %j.cond
j.cond:
  %j = phi i64 [0, %i.body], [%j.next, %j.body]
  %j.in = icmp slt i64 %j, %cols
  br i1 %j.in, label %j.body, label %j.exit
j.body:
  %ptr = getelementptr {T}, ptr %row, i64 %j
  store {T} 0x7FF8000000000000, ptr %ptr
  %j.next = add i64 %j, 1
  br label %j.cond
j.exit:
  %i.next = add i64 %i, 1
  br label %i.cond
exit:
  ret void
}}
"""

# pivots and perm := 0..n-1 (getrf's failure path).
_IDENTITY = """
define internal void @_irgrad_lapack_identity(i64 %n, ptr %pivots, ptr %perm) {
entry:
  br label %cond
cond:
  %i = phi i64 [0, %entry], [%i.next, %body]
  %in = icmp slt i64 %i, %n
  br i1 %in, label %body, label %exit
body:
  %v = trunc i64 %i to i32
  %pp = getelementptr i32, ptr %pivots, i64 %i
  store i32 %v, ptr %pp
  %qp = getelementptr i32, ptr %perm, i64 %i
  store i32 %v, ptr %qp
  %i.next = add i64 %i, 1
  br label %cond
exit:
  ret void
}
"""

_POTRF = """
define void @irgrad_lapack_{p}potrf(i64 %n, ptr %a, i64 %lda) {{
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %check
check:
  %bad_ld = icmp slt i64 %lda, %n
  %too_big = icmp sgt i64 %lda, {int_max}
  %bad = or i1 %bad_ld, %too_big
  br i1 %bad, label %fail, label %call
call:
  %in = {cast} i64 %n to {I}
  %ilda = {cast} i64 %lda to {I}
  ; column-major 'U' on the row-major buffer is row-major 'L' (see the module docstring)
  %info = call {I} @_irgrad_rt_lapacke_{p}potrf(i32 {col_major}, i8 signext {uplo_u}, {I} %in, ptr %a, {I} %ilda)
  %ok = icmp eq {I} %info, 0
  br i1 %ok, label %row.cond, label %fail
row.cond:
  %i = phi i64 [0, %call], [%i.next, %row.body]
  %i.in = icmp slt i64 %i, %n
  br i1 %i.in, label %row.diag, label %done
row.diag:
  %off = mul i64 %i, %lda
  %row = getelementptr {T}, ptr %a, i64 %off
  %d.ptr = getelementptr {T}, ptr %row, i64 %i
  %d = load {T}, ptr %d.ptr
  %positive = fcmp ogt {T} %d, 0.0
  br i1 %positive, label %row.body, label %fail
row.body:
  %i.next = add i64 %i, 1
  %count = sub i64 %n, %i.next
  %bytes = mul i64 %count, {size}
  %upper = getelementptr {T}, ptr %row, i64 %i.next
  call void @llvm.memset.p0.i64(ptr %upper, i8 0, i64 %bytes, i1 false)
  br label %row.cond
fail:
  call void @_irgrad_lapack_{p}fill_nan(i64 %n, i64 %n, ptr %a, i64 %lda)
  br label %done
done:
  ret void
}}
"""

_TRSM = """
define void @irgrad_lapack_{p}trsm(i64 %lower, i64 %unit, i64 %n, i64 %k, ptr %a, i64 %lda,
                                   ptr %b, i64 %ldb) {{
entry:
  %n0 = icmp sle i64 %n, 0
  %k0 = icmp sle i64 %k, 0
  %empty = or i1 %n0, %k0
  br i1 %empty, label %done, label %check
check:
  %bad_a = icmp slt i64 %lda, %n
  %bad_b = icmp slt i64 %ldb, %k
  %big = call i64 @llvm.smax.i64(i64 %lda, i64 %ldb)
  %too_big = icmp sgt i64 %big, {int_max}
  %e1 = or i1 %bad_a, %bad_b
  %bad = or i1 %e1, %too_big
  br i1 %bad, label %fail, label %call
call:
  %lo = icmp ne i64 %lower, 0
  %uplo = select i1 %lo, i32 {lower_enum}, i32 {upper_enum}
  %un = icmp ne i64 %unit, 0
  %diag = select i1 %un, i32 {unit_enum}, i32 {non_unit_enum}
  %in = {cast} i64 %n to {I}
  %ik = {cast} i64 %k to {I}
  %ilda = {cast} i64 %lda to {I}
  %ildb = {cast} i64 %ldb to {I}
  call void @_irgrad_rt_cblas_{p}trsm(i32 {row_major}, i32 {left}, i32 %uplo, i32 {no_trans}, i32 %diag,
        {I} %in, {I} %ik, {T} 1.0, ptr %a, {I} %ilda, ptr %b, {I} %ildb)
  br label %done
fail:
  call void @_irgrad_lapack_{p}fill_nan(i64 %n, i64 %k, ptr %b, i64 %ldb)
  br label %done
done:
  ret void
}}
"""

_GETRF = """
define void @irgrad_lapack_{p}getrf(i64 %n, ptr %a, i64 %lda, ptr %pivots, ptr %perm) {{
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %check
check:
  %bad_ld = icmp slt i64 %lda, %n
  %too_big = icmp sgt i64 %lda, {int_max}
  %bad = or i1 %bad_ld, %too_big
  br i1 %bad, label %fail, label %alloc
alloc:
  %bytes = mul i64 %n, {int_size}
  %ipiv = call ptr @malloc(i64 %bytes)
  %no_memory = icmp eq ptr %ipiv, null
  br i1 %no_memory, label %fail, label %call
call:
  %in = {cast} i64 %n to {I}
  %ilda = {cast} i64 %lda to {I}
  %info = call {I} @_irgrad_rt_lapacke_{p}getrf(i32 {row_major}, {I} %in, {I} %in, ptr %a, {I} %ilda, ptr %ipiv)
  ; info > 0 (exactly singular) is not an error; info < 0 is (LAPACKE's transposed copy
  ; could not be allocated)
  %error = icmp slt {I} %info, 0
  br i1 %error, label %fail.free, label %init.cond
init.cond:
  %i = phi i64 [0, %call], [%i.next, %init.body]
  %i.in = icmp slt i64 %i, %n
  br i1 %i.in, label %init.body, label %swap.cond
init.body:
  %iv = trunc i64 %i to i32
  %init.ptr = getelementptr i32, ptr %perm, i64 %i
  store i32 %iv, ptr %init.ptr
  %i.next = add i64 %i, 1
  br label %init.cond
swap.cond:
  %j = phi i64 [0, %init.cond], [%j.next, %swap.body]
  %j.in = icmp slt i64 %j, %n
  br i1 %j.in, label %swap.pivot, label %free
swap.pivot:
  %ipiv.ptr = getelementptr {I}, ptr %ipiv, i64 %j
  %piv1 = load {I}, ptr %ipiv.ptr
  %piv1.64 = {ext} {I} %piv1 to i64
  %piv = sub i64 %piv1.64, 1
  ; LAPACK's pivots are in range; a library bug must not make us write out of bounds
  %in_range = icmp ult i64 %piv, %n
  br i1 %in_range, label %swap.body, label %fail.free
swap.body:
  %piv32 = trunc i64 %piv to i32
  %pivots.ptr = getelementptr i32, ptr %pivots, i64 %j
  store i32 %piv32, ptr %pivots.ptr
  %pj.ptr = getelementptr i32, ptr %perm, i64 %j
  %pp.ptr = getelementptr i32, ptr %perm, i64 %piv
  %pj = load i32, ptr %pj.ptr
  %pp = load i32, ptr %pp.ptr
  store i32 %pp, ptr %pj.ptr
  store i32 %pj, ptr %pp.ptr
  %j.next = add i64 %j, 1
  br label %swap.cond
free:
  call void @free(ptr %ipiv)
  br label %done
fail.free:
  call void @free(ptr %ipiv)
  br label %fail
fail:
  call void @_irgrad_lapack_{p}fill_nan(i64 %n, i64 %n, ptr %a, i64 %lda)
  call void @_irgrad_lapack_identity(i64 %n, ptr %pivots, ptr %perm)
  br label %done
done:
  ret void
}}
"""


def _shim_ir(bits: int) -> str:
    ity = f"i{bits}"
    int_max = (1 << (bits - 1)) - 1
    common = {
        "I": ity,
        "cast": "trunc" if bits < 64 else "bitcast",
        "ext": "sext" if bits < 64 else "bitcast",
        "int_size": bits // 8,
    }
    parts = [
        "declare i64 @llvm.smax.i64(i64, i64)",
        "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)",
        "declare ptr @malloc(i64)",
        "declare void @free(ptr)",
        _IDENTITY,
    ]
    for p, t, size in PRECISIONS:
        parts += [
            f"declare {ity} @_irgrad_rt_lapacke_{p}potrf(i32, i8 signext, {ity}, ptr, {ity})",
            f"declare void @_irgrad_rt_cblas_{p}trsm(i32, i32, i32, i32, i32, {ity}, {ity}, {t}, ptr, "
            f"{ity}, ptr, {ity})",
            f"declare {ity} @_irgrad_rt_lapacke_{p}getrf(i32, {ity}, {ity}, ptr, {ity}, ptr)",
            _FILL_NAN.format(p=p, T=t),
            _POTRF.format(p=p, T=t, size=size, int_max=int_max, col_major=LAPACK_COL_MAJOR, uplo_u=UPLO_U, **common),
            _TRSM.format(
                p=p, T=t, int_max=int_max, row_major=CBLAS_ROW_MAJOR, left=CBLAS_LEFT, no_trans=CBLAS_NO_TRANS,
                lower_enum=CBLAS_LOWER, upper_enum=CBLAS_UPPER, unit_enum=CBLAS_UNIT, non_unit_enum=CBLAS_NON_UNIT,
                **common,
            ),
            # getrf's pivots are i32 whatever the library's integers are
            _GETRF.format(p=p, T=t, int_max=min(int_max, INT32_MAX), row_major=LAPACK_ROW_MAJOR, **common),
        ]
    return "\n".join(parts)


def _runtime_names(p: str) -> tuple[str, str, str]:
    return f"_irgrad_rt_lapacke_{p}potrf", f"_irgrad_rt_cblas_{p}trsm", f"_irgrad_rt_lapacke_{p}getrf"


def _candidates() -> Iterator[str]:
    """The library blas.py chose first (one OpenBLAS, one thread pool), then blas.py's search."""
    chosen = blas.blas_info().library
    if chosen is not None:
        yield chosen
    for path in blas._candidates():
        if path != chosen:
            yield path


def _choose() -> tuple[LapackInfo, tuple[int, ...] | None]:
    setting = os.environ.get("IRGRAD_LAPACK", "").strip()
    if setting.lower() in ("none", "off", "0", "loops"):
        return LapackInfo(None, (), None, "IRGRAD_LAPACK=" + setting), None
    paths: Iterator[str] = iter([setting]) if setting else _candidates()
    for path in paths:
        found = _resolve(path)
        if found is not None:
            addresses, names, bits = found
            how = "IRGRAD_LAPACK" if setting else "numpy's BLAS" if "numpy" in path else "found by name"
            return LapackInfo(path, names, bits, how), addresses
    reason = f"IRGRAD_LAPACK={setting} has no LAPACKE potrf/getrf and CBLAS trsm" if setting else "no LAPACK found"
    return LapackInfo(None, (), None, reason), None


def install_lapack() -> None:
    """Define the `irgrad_lapack_*` entry points for LLVM's symbol resolution, once per
    process: the library's shims, or the numpy callbacks when none is available."""
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
        assert info.int_bits is not None
        runtime = [name for p, _, _ in PRECISIONS for name in _runtime_names(p)]
        for name, address in zip(runtime, addresses, strict=True):
            llvm.add_symbol(name, address)
        _engine = blas.compile_shim(_shim_ir(info.int_bits), ENTRY_POINTS, level=2, vectorize=False)
    else:
        _install_fallback()
    _info = info
    if os.environ.get("IRGRAD_BLAS_VERBOSE") or os.environ.get("IRGRAD_LAPACK_VERBOSE"):
        print(f"irgrad: LAPACK through {info.describe()}", file=sys.stderr)


# Without a library: ctypes callbacks (kept alive here) running the numpy reference.
_FALLBACKS: list[object] = []


def _matrix(pointer: int, rows: int, cols: int, stride: int, ctype: type, dtype: type) -> "np.ndarray":
    """A numpy view of `rows` x `cols` elements at `pointer`, rows `stride` elements apart."""
    import numpy as np

    if rows <= 0 or cols <= 0:
        return np.zeros((max(rows, 0), max(cols, 0)), dtype)
    flat = np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctype)), shape=((rows - 1) * stride + cols,))
    return np.lib.stride_tricks.as_strided(flat, (rows, cols), (stride * flat.itemsize, flat.itemsize))


def _install_fallback() -> None:
    """Define the entry points as callbacks into irgrad/backends/interpreter/nn_linalg.py."""
    import numpy as np

    from irgrad.backends.interpreter import nn_linalg as ref

    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    for p, ctype, dtype in (("s", ctypes.c_float, np.float32), ("d", ctypes.c_double, np.float64)):

        def potrf(n: int, a: int, lda: int, ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0:
                view = _matrix(a, n, n, lda, ctype, dtype)
                view[...] = ref.cholesky(view)

        def trsm(lower: int, unit: int, n: int, k: int, a: int, lda: int, b: int, ldb: int,
                 ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0 and k > 0:
                x = _matrix(b, n, k, ldb, ctype, dtype)
                x[...] = ref.triangular_solve(_matrix(a, n, n, lda, ctype, dtype), x, bool(lower), bool(unit))

        def getrf(n: int, a: int, lda: int, pivots: int, perm: int, ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0:
                view = _matrix(a, n, n, lda, ctype, dtype)
                lu, piv, permutation = ref.lu(view)
                view[...] = lu
                _matrix(pivots, 1, n, n, ctypes.c_int32, np.int32)[0] = piv
                _matrix(perm, 1, n, n, ctypes.c_int32, np.int32)[0] = permutation

        thunks = (
            (f"irgrad_lapack_{p}potrf", ctypes.CFUNCTYPE(None, i64, ptr, i64)(potrf)),
            (f"irgrad_lapack_{p}trsm", ctypes.CFUNCTYPE(None, i64, i64, i64, i64, ptr, i64, ptr, i64)(trsm)),
            (f"irgrad_lapack_{p}getrf", ctypes.CFUNCTYPE(None, i64, ptr, i64, ptr, ptr)(getrf)),
        )
        for name, thunk in thunks:
            _FALLBACKS.append(thunk)
            llvm.add_symbol(name, ctypes.cast(thunk, ctypes.c_void_p).value)
