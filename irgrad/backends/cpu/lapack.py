"""The LAPACK entry points generated code calls:
`irgrad_lapack_{s,d}{potrf,trsm,getrf,syevd,gesdd,geqrf}`.

Cholesky, triangular solves, LU, the symmetric eigendecomposition, the SVD and QR are O(n^3)
with a sequential dependency along the diagonal (or, for eigh and svd, iterations to
convergence); the compiler's own loop nests for them are correct but far from a tuned LAPACK
(blocked, multithreaded, vectorized). So, like GEMM (see blas.py), the compiler can lower them
to calls of a few fixed-signature runtime symbols, each defined here once per process, when
code first calls it (`install_lapack`: a program compiles only the shims it uses):

- LAPACK: the LAPACKE/CBLAS routines of the library blas.py chose (numpy's bundled OpenBLAS,
  whose symbols are `scipy_LAPACKE_dpotrf_work64_`, `scipy_cblas_dtrsm64_`, ... with 64-bit
  integers), else the first library blas.py's discovery finds that has them. The first naming
  under which potrf, getrf (LAPACKE) and trsm (CBLAS) all resolve in both precisions is used:
  `scipy_*64_` or `*64_` (64-bit integers), then `scipy_*` or the plain names
  `LAPACKE_dpotrf_work`, `cblas_dtrsm` (32-bit integers). The `_work` LAPACKE variants are
  used: the plain ones run a NaN pre-check and return early without factoring.
- syevd, gesdd and geqrf (LAPACKE `{p}syevd_work`, `{p}gesdd_work`, `{p}geqrf_work` +
  `{p}orgqr_work`) are looked up under that same naming, but do not decide the choice: an entry
  point whose routines the chosen library lacks is, alone, the numpy callback described below
  (`lapack_info().fallbacks` lists them; empty for numpy's OpenBLAS, which has them all). So a
  library with an incomplete LAPACK still serves the routines it has.
- A small shim compiled by LLVM adapts the call (layout, enums, integer width), handles empty
  sizes, and implements what LAPACK leaves to the caller (zeroing the other triangle, the
  failure convention, 0-based pivots and the row permutation).
- With no library found, or `IRGRAD_LAPACK=none` (or `off`, `0`), `lapack_info().available`
  is False and all the entry points are ctypes callbacks into the reference interpreter's numpy
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

`void irgrad_lapack_{p}syevd(i64 n, T* a, i64 lda, T* w)`
    Eigendecomposition A = V diag(w) V^T of the symmetric n x n matrix at `a`, of which only
    the lower triangle (diagonal included) is read (LAPACK's syevd, jobz = 'V', uplo = 'L').
    On return `a` holds the orthonormal eigenvectors as COLUMNS (a[i*lda + j] = V[i][j]), of
    any signs, and the n contiguous entries at `w` the eigenvalues, ascending. On failure (a
    NaN or inf in the lower triangle, which is checked before LAPACK is called; info != 0: no
    convergence) all n x n entries of `a` and all of `w` become NaN. n <= 0: nothing.

`void irgrad_lapack_{p}gesdd(i64 m, i64 n, T* a, i64 lda, T* s, T* u, i64 ldu, T* vt, i64 ldvt)`
    Reduced SVD A = U diag(s) V^T of the m x n matrix at `a` (LAPACK's gesdd, jobz = 'S'), k =
    min(m, n): the k contiguous entries at `s` descending and >= 0, U (m x k) at `u` and V^T
    (k x n) at `vt` (row strides ldu >= k, ldvt >= n), orthonormal columns / rows of any
    signs (a column of U and the matching row of V^T flipped together). `a` is scratch: its
    m x n entries are overwritten with unspecified values (its padding is not). On failure (a
    NaN or inf in A, checked first; info != 0: no convergence) all of s, U and V^T become NaN.
    m <= 0 or n <= 0: nothing.

`void irgrad_lapack_{p}geqrf(i64 m, i64 n, T* q, i64 ldq, T* r, i64 ldr)`
    Reduced QR A = Q R of the m x n matrix A, m >= n, held at `q` on entry (LAPACK's geqrf,
    then orgqr for Q): on return `q` holds Q (m x n, orthonormal columns) and `r` the n x n R,
    upper triangular with zeros below the diagonal, with LAPACK's Householder signs (those of
    numpy.linalg.qr). On failure (m < n; a NaN or inf in A, checked first) all m x n entries
    of `q` and n x n of `r` become NaN. n <= 0: nothing.

syevd, gesdd and geqrf ask LAPACK for their workspace sizes first (lwork = -1), take at least
the documented minimum (and a margin over a float32 answer, which may be rounded down), then
malloc and free the work, iwork and tau arrays per call. They never call LAPACK on a non-finite
input (some routines may loop or misbehave on one); the ops they serve make such a result NaN
anyway.

Errors the caller should never cause but which are handled rather than passed to LAPACK's
xerbla (which would print and return): a row stride below the row length, a size or stride
above the library's integer range (int32 max with a 32-bit library; getrf's i32 pivots also
limit n to int32 max; a workspace size too), or memory LAPACKE or the shim could not
allocate. Then the output (potrf's and getrf's n x n `a`, trsm's n x k `b`, and all outputs
of syevd, gesdd and geqrf as for their failure) is filled with NaN; getrf's pivots and perm
are then the identity.

Row-major notes: potrf calls the COLUMN-major routine with uplo='U' on the row-major buffer:
read column-major with the same stride the buffer is A^T = A, whose upper triangle is A's
lower triangle, and the factor U (A = U^T U) written there is L^T read column-major, i.e. L
read row-major. So no transposed copy is made. trsm uses CBLAS's row-major order (OpenBLAS
swaps side and triangle itself, no copy). getrf has no such trick (getrf on A^T pivots
columns), so it uses LAPACKE's row-major layout, which transposes into a temporary n x n
copy and back: an extra O(n^2) allocation and two passes per call, small next to O(n^3).
syevd and geqrf + orgqr use LAPACKE's row-major layout too (syevd with uplo = 'L'), each
call transposing into a temporary and back (geqrf on A^T would be an LQ of A, not a QR).
gesdd calls the COLUMN-major routine on the row-major buffers: `a` read column-major with
the same stride is A^T (n x m) = V diag(s) U^T, so its U factor (n x k) is asked for in the
`vt` buffer, where read row-major it is V^T (k x n), and its V^T factor (k x m) in the `u`
buffer, where it is U (m x k); the strides are exactly what LAPACK requires (lda >= n,
ldvt >= n, ldu >= k), and no copy is made.

Threads: the library's own thread pool and thread count apply (OPENBLAS_NUM_THREADS,
threadpoolctl), shared with numpy and the GEMM entry points. The entry points keep no state
(getrf mallocs its ipiv scratch per call, syevd, gesdd and geqrf their workspaces) and may be
called from several threads at once, as far as the library allows it (OpenBLAS does).

`lapack_info()` says which library and symbols were chosen, for benchmarks and bug reports.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Collection, Iterator
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

JOBZ_V = ord("V")
JOBZ_S = ord("S")
UPLO_L = ord("L")

ROUTINES = ("potrf", "trsm", "getrf", "syevd", "gesdd", "geqrf")
REQUIRED = ("potrf", "trsm", "getrf")
"""The routines a library must have to be chosen; the others fall back one by one."""
PRECISIONS = (("s", "float", 4), ("d", "double", 8))
ENTRY_POINTS = tuple(f"irgrad_lapack_{p}{r}" for p, _, _ in PRECISIONS for r in ROUTINES)

# The library routines each entry point calls, {p} the precision.
_LIBRARY_ROUTINES: dict[str, tuple[str, ...]] = {
    "potrf": ("LAPACKE_{p}potrf_work",),
    "trsm": ("cblas_{p}trsm",),
    "getrf": ("LAPACKE_{p}getrf_work",),
    "syevd": ("LAPACKE_{p}syevd_work",),
    "gesdd": ("LAPACKE_{p}gesdd_work",),
    "geqrf": ("LAPACKE_{p}geqrf_work", "LAPACKE_{p}orgqr_work"),
}

# How a library spells those names, and its integer bits; preferred first.
_NAMINGS = (("scipy_{}64_", 64), ("{}64_", 64), ("scipy_{}", 32), ("{}", 32))


@dataclass(frozen=True)
class LapackInfo:
    """What the `irgrad_lapack_*` entry points call: a library and its symbols, or (library
    None) the numpy reference through ctypes callbacks."""

    library: str | None
    symbols: tuple[str, ...]
    """The library symbols the entry points call, in the order of `ENTRY_POINTS` (s potrf,
    trsm, getrf, syevd, gesdd, geqrf + orgqr, then d), less those of `fallbacks`."""
    int_bits: int | None
    reason: str
    """Why this one (or why no library)."""
    fallbacks: tuple[str, ...] = ()
    """Entry points that are numpy callbacks although a library was chosen (it lacks their
    routines); empty for numpy's OpenBLAS."""

    @property
    def available(self) -> bool:
        return self.library is not None

    def describe(self) -> str:
        if self.library is None:
            return f"no LAPACK ({self.reason}): numpy reference callbacks"
        text = f"{os.path.basename(self.library)}: {', '.join(self.symbols)}, {self.int_bits}-bit ints"
        if self.fallbacks:
            text += f"; numpy reference callbacks for {', '.join(self.fallbacks)}"
        return text


_info: LapackInfo | None = None
_found: _Resolved | None = None  # chosen with _info
_engines: list[llvm.ExecutionEngine] = []  # the shims' code, alive as long as the process
_installed: set[str] = set()
_lock = threading.Lock()


def lapack_info() -> LapackInfo:
    """The LAPACK this process uses (installing every entry point on first call)."""
    install_lapack()
    assert _info is not None
    return _info


@dataclass(frozen=True)
class _Resolved:
    """A library's symbols: per entry point it serves, the (runtime name, library name,
    address) of each routine it calls."""

    bits: int
    routines: dict[str, tuple[tuple[str, str, int], ...]]


def _runtime_name(p: str, routine: str) -> str:
    """The process symbol a shim calls for one library routine (pattern of _LIBRARY_ROUTINES)."""
    base = routine.format(p=p).removesuffix("_work")
    return "_irgrad_rt_" + (base if base.startswith("cblas_") else "lapacke_" + base.removeprefix("LAPACKE_"))


def _resolve(path: str) -> _Resolved | None:
    """The first naming under which `path` has every REQUIRED routine, both precisions, with
    the other entry points whose routines it has under that naming; None if there is none."""
    try:
        library = ctypes.CDLL(path)
    except OSError:
        return None

    def lookup(naming: str, p: str, routine: str) -> tuple[tuple[str, str, int], ...] | None:
        found = []
        for pattern in _LIBRARY_ROUTINES[routine]:
            name = naming.format(pattern.format(p=p))
            try:
                address = ctypes.cast(getattr(library, name), ctypes.c_void_p).value
            except AttributeError:
                return None
            if not address:
                return None
            found.append((_runtime_name(p, pattern), name, address))
        return tuple(found)

    for naming, bits in _NAMINGS:
        routines: dict[str, tuple[tuple[str, str, int], ...]] = {}
        for p, _, _ in PRECISIONS:
            for routine in ROUTINES:
                symbols = lookup(naming, p, routine)
                if symbols is not None:
                    routines[f"irgrad_lapack_{p}{routine}"] = symbols
        if all(f"irgrad_lapack_{p}{r}" in routines for p, _, _ in PRECISIONS for r in REQUIRED):
            return _Resolved(bits, routines)
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

# True iff every entry of the rows x cols block at `a` (row stride ld) is finite; with %lower,
# only the lower triangle (column <= row) is read.
_FINITE = """
define internal i1 @_irgrad_lapack_{p}finite(i64 %rows, i64 %cols, ptr %a, i64 %ld, i1 %lower) {{
entry:
  br label %i.cond
i.cond:
  %i = phi i64 [0, %entry], [%i.next, %j.exit]
  %i.in = icmp slt i64 %i, %rows
  br i1 %i.in, label %i.body, label %yes
i.body:
  %off = mul i64 %i, %ld
  %row = getelementptr {T}, ptr %a, i64 %off
  %i.next = add i64 %i, 1
  %tri = call i64 @llvm.smin.i64(i64 %i.next, i64 %cols)
  %end = select i1 %lower, i64 %tri, i64 %cols
  br label %j.cond
j.cond:
  %j = phi i64 [0, %i.body], [%j.next, %j.body]
  %j.in = icmp slt i64 %j, %end
  br i1 %j.in, label %j.load, label %j.exit
j.load:
  %ptr = getelementptr {T}, ptr %row, i64 %j
  %x = load {T}, ptr %ptr
  ; x - x is 0 for a finite x, NaN for NaN and inf
  %d = fsub {T} %x, %x
  %ok = fcmp oeq {T} %d, 0.0
  br i1 %ok, label %j.body, label %no
j.body:
  %j.next = add i64 %j, 1
  br label %j.cond
j.exit:
  br label %i.cond
yes:
  ret i1 true
no:
  ret i1 false
}}
"""

# The workspace size to allocate from a LAPACK query's answer (work[0], a float): rounded up
# with a margin (a float32 query of a size above 2^24 may have been rounded down), at least
# `min` (the documented minimum); -1 when the answer is NaN or absurd.
_LWORK = """
define internal i64 @_irgrad_lapack_{p}lwork({T} %q, i64 %min) {{
entry:
  %d = {to_double}
  %scaled = fmul double %d, 0x3FF0000100000000
  %c = fadd double %scaled, 1.0
  %fits = fcmp olt double %c, 0x43D0000000000000
  br i1 %fits, label %ok, label %bad
ok:
  %i = fptosi double %c to i64
  %r = call i64 @llvm.smax.i64(i64 %i, i64 %min)
  ret i64 %r
bad:
  ret i64 -1
}}
"""

_ALLOC_WORK_IWORK = """alloc:
  %wbytes = mul i64 %lwork, {size}
  %work = call ptr @malloc(i64 %wbytes)
  %ibytes = mul i64 %liwork, {int_size}
  %iwork = call ptr @malloc(i64 %ibytes)
  %w_null = icmp eq ptr %work, null
  %i_null = icmp eq ptr %iwork, null
  %no_memory = or i1 %w_null, %i_null
  br i1 %no_memory, label %fail.free, label %call
"""
"""syevd's and gesdd's workspaces (`%lwork` and `%liwork` elements): block `alloc`, on to
`call`, or to `fail.free` (which frees both; free(NULL) is a no-op) when either is missing."""

_SYEVD = (
    """
define void @irgrad_lapack_{p}syevd(i64 %n, ptr %a, i64 %lda, ptr %w) {{
entry:
  %qwork = alloca {T}
  %qiwork = alloca {I}
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %check
check:
  %bad_ld = icmp slt i64 %lda, %n
  %too_big = icmp sgt i64 %lda, {int_max}
  %bad = or i1 %bad_ld, %too_big
  br i1 %bad, label %fail, label %scan
scan:
  ; never hand LAPACK a non-finite matrix (only the lower triangle is read)
  %finite = call i1 @_irgrad_lapack_{p}finite(i64 %n, i64 %n, ptr %a, i64 %lda, i1 true)
  br i1 %finite, label %query, label %fail
query:
  store {T} 0.0, ptr %qwork
  store {I} 0, ptr %qiwork
  %in = {cast} i64 %n to {I}
  %ilda = {cast} i64 %lda to {I}
  %qinfo = call {I} @_irgrad_rt_lapacke_{p}syevd(i32 {row_major}, i8 signext {jobz_v}, i8 signext {uplo_l},
        {I} %in, ptr %a, {I} %ilda, ptr %w, ptr %qwork, {I} -1, ptr %qiwork, {I} -1)
  %qok = icmp eq {I} %qinfo, 0
  br i1 %qok, label %sizes, label %fail
sizes:
  ; documented minimums: lwork 1 + 6 n + 2 n^2, liwork 3 + 5 n
  %qw = load {T}, ptr %qwork
  %nn = mul i64 %n, %n
  %nn2 = shl i64 %nn, 1
  %n6 = mul i64 %n, 6
  %n6p = add i64 %n6, 1
  %lwmin = add i64 %n6p, %nn2
  %lwork = call i64 @_irgrad_lapack_{p}lwork({T} %qw, i64 %lwmin)
  %qi = load {I}, ptr %qiwork
  %qi64 = {ext} {I} %qi to i64
  %n5 = mul i64 %n, 5
  %liwmin = add i64 %n5, 3
  %liwork = call i64 @llvm.smax.i64(i64 %qi64, i64 %liwmin)
  %biggest = call i64 @llvm.smax.i64(i64 %lwork, i64 %liwork)
  %lw_bad = icmp slt i64 %lwork, 0
  %lw_big = icmp sgt i64 %biggest, {int_max}
  %sizes_bad = or i1 %lw_bad, %lw_big
  br i1 %sizes_bad, label %fail, label %alloc
"""
    + _ALLOC_WORK_IWORK
    + """call:
  %ilwork = {cast} i64 %lwork to {I}
  %iliwork = {cast} i64 %liwork to {I}
  %info = call {I} @_irgrad_rt_lapacke_{p}syevd(i32 {row_major}, i8 signext {jobz_v}, i8 signext {uplo_l},
        {I} %in, ptr %a, {I} %ilda, ptr %w, ptr %work, {I} %ilwork, ptr %iwork, {I} %iliwork)
  call void @free(ptr %work)
  call void @free(ptr %iwork)
  ; info > 0: no convergence; info < 0: LAPACKE's transposed copy could not be allocated
  %ok = icmp eq {I} %info, 0
  br i1 %ok, label %done, label %fail
fail.free:
  call void @free(ptr %work)
  call void @free(ptr %iwork)
  br label %fail
fail:
  call void @_irgrad_lapack_{p}fill_nan(i64 %n, i64 %n, ptr %a, i64 %lda)
  call void @_irgrad_lapack_{p}fill_nan(i64 1, i64 %n, ptr %w, i64 %n)
  br label %done
done:
  ret void
}}
"""
)

_GESDD = (
    """
define void @irgrad_lapack_{p}gesdd(i64 %m, i64 %n, ptr %a, i64 %lda, ptr %s, ptr %u, i64 %ldu,
                                    ptr %vt, i64 %ldvt) {{
entry:
  %qwork = alloca {T}
  %qiwork = alloca {I}
  %m0 = icmp sle i64 %m, 0
  %n0 = icmp sle i64 %n, 0
  %empty = or i1 %m0, %n0
  br i1 %empty, label %done, label %check
check:
  %k = call i64 @llvm.smin.i64(i64 %m, i64 %n)
  %mx = call i64 @llvm.smax.i64(i64 %m, i64 %n)
  %bad_a = icmp slt i64 %lda, %n
  %bad_u = icmp slt i64 %ldu, %k
  %bad_vt = icmp slt i64 %ldvt, %n
  %big1 = call i64 @llvm.smax.i64(i64 %lda, i64 %ldu)
  %big2 = call i64 @llvm.smax.i64(i64 %ldvt, i64 %mx)
  %big = call i64 @llvm.smax.i64(i64 %big1, i64 %big2)
  %too_big = icmp sgt i64 %big, {int_max}
  %e1 = or i1 %bad_a, %bad_u
  %e2 = or i1 %bad_vt, %too_big
  %bad = or i1 %e1, %e2
  br i1 %bad, label %fail, label %scan
scan:
  %finite = call i1 @_irgrad_lapack_{p}finite(i64 %m, i64 %n, ptr %a, i64 %lda, i1 false)
  br i1 %finite, label %query, label %fail
query:
  ; COLUMN-major on the row-major buffers (see the module docstring): A read column-major is
  ; A^T (n x m) = V S U^T, so its U (n x k) is written into vt and its V^T (k x m) into u
  store {T} 0.0, ptr %qwork
  %im = {cast} i64 %m to {I}
  %in = {cast} i64 %n to {I}
  %ilda = {cast} i64 %lda to {I}
  %ildu = {cast} i64 %ldu to {I}
  %ildvt = {cast} i64 %ldvt to {I}
  %qinfo = call {I} @_irgrad_rt_lapacke_{p}gesdd(i32 {col_major}, i8 signext {jobz_s}, {I} %in, {I} %im,
        ptr %a, {I} %ilda, ptr %s, ptr %vt, {I} %ildvt, ptr %u, {I} %ildu, ptr %qwork, {I} -1, ptr %qiwork)
  %qok = icmp eq {I} %qinfo, 0
  br i1 %qok, label %sizes, label %fail
sizes:
  ; documented minimum for jobz = 'S' (of LAPACK 3.7 and of before, whichever is larger):
  ; lwork k (4 k + 7) + max(m, n); liwork 8 k
  %qw = load {T}, ptr %qwork
  %k4 = mul i64 %k, 4
  %k47 = add i64 %k4, 7
  %kk = mul i64 %k, %k47
  %lwmin = add i64 %kk, %mx
  %lwork = call i64 @_irgrad_lapack_{p}lwork({T} %qw, i64 %lwmin)
  %liwork = mul i64 %k, 8
  %biggest = call i64 @llvm.smax.i64(i64 %lwork, i64 %liwork)
  %lw_bad = icmp slt i64 %lwork, 0
  %lw_big = icmp sgt i64 %biggest, {int_max}
  %sizes_bad = or i1 %lw_bad, %lw_big
  br i1 %sizes_bad, label %fail, label %alloc
"""
    + _ALLOC_WORK_IWORK
    + """call:
  %ilwork = {cast} i64 %lwork to {I}
  %info = call {I} @_irgrad_rt_lapacke_{p}gesdd(i32 {col_major}, i8 signext {jobz_s}, {I} %in, {I} %im,
        ptr %a, {I} %ilda, ptr %s, ptr %vt, {I} %ildvt, ptr %u, {I} %ildu, ptr %work, {I} %ilwork, ptr %iwork)
  call void @free(ptr %work)
  call void @free(ptr %iwork)
  %ok = icmp eq {I} %info, 0
  br i1 %ok, label %done, label %fail
fail.free:
  call void @free(ptr %work)
  call void @free(ptr %iwork)
  br label %fail
fail:
  call void @_irgrad_lapack_{p}fill_nan(i64 %m, i64 %k, ptr %u, i64 %ldu)
  call void @_irgrad_lapack_{p}fill_nan(i64 1, i64 %k, ptr %s, i64 %k)
  call void @_irgrad_lapack_{p}fill_nan(i64 %k, i64 %n, ptr %vt, i64 %ldvt)
  br label %done
done:
  ret void
}}
"""
)

_GEQRF = """
define void @irgrad_lapack_{p}geqrf(i64 %m, i64 %n, ptr %q, i64 %ldq, ptr %r, i64 %ldr) {{
entry:
  %qwork = alloca {T}
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %check
check:
  %wide = icmp slt i64 %m, %n
  %bad_q = icmp slt i64 %ldq, %n
  %bad_r = icmp slt i64 %ldr, %n
  %big1 = call i64 @llvm.smax.i64(i64 %ldq, i64 %ldr)
  %big = call i64 @llvm.smax.i64(i64 %big1, i64 %m)
  %too_big = icmp sgt i64 %big, {int_max}
  %e1 = or i1 %wide, %bad_q
  %e2 = or i1 %bad_r, %too_big
  %bad = or i1 %e1, %e2
  br i1 %bad, label %fail, label %scan
scan:
  %finite = call i1 @_irgrad_lapack_{p}finite(i64 %m, i64 %n, ptr %q, i64 %ldq, i1 false)
  br i1 %finite, label %tau.alloc, label %fail
tau.alloc:
  %tbytes = mul i64 %n, {size}
  %tau = call ptr @malloc(i64 %tbytes)
  %t_null = icmp eq ptr %tau, null
  br i1 %t_null, label %fail, label %query
query:
  %im = {cast} i64 %m to {I}
  %in = {cast} i64 %n to {I}
  %ildq = {cast} i64 %ldq to {I}
  store {T} 0.0, ptr %qwork
  %qinfo1 = call {I} @_irgrad_rt_lapacke_{p}geqrf(i32 {row_major}, {I} %im, {I} %in, ptr %q, {I} %ildq,
        ptr %tau, ptr %qwork, {I} -1)
  %q1 = load {T}, ptr %qwork
  store {T} 0.0, ptr %qwork
  %qinfo2 = call {I} @_irgrad_rt_lapacke_{p}orgqr(i32 {row_major}, {I} %im, {I} %in, {I} %in, ptr %q,
        {I} %ildq, ptr %tau, ptr %qwork, {I} -1)
  %q2 = load {T}, ptr %qwork
  %qbad1 = icmp ne {I} %qinfo1, 0
  %qbad2 = icmp ne {I} %qinfo2, 0
  %qbad = or i1 %qbad1, %qbad2
  br i1 %qbad, label %fail.tau, label %sizes
sizes:
  ; documented minimum: n for both
  %lwork1 = call i64 @_irgrad_lapack_{p}lwork({T} %q1, i64 %n)
  %lwork2 = call i64 @_irgrad_lapack_{p}lwork({T} %q2, i64 %n)
  %lwork = call i64 @llvm.smax.i64(i64 %lwork1, i64 %lwork2)
  %lwmin = call i64 @llvm.smin.i64(i64 %lwork1, i64 %lwork2)
  %lw_bad = icmp slt i64 %lwmin, 0
  %lw_big = icmp sgt i64 %lwork, {int_max}
  %sizes_bad = or i1 %lw_bad, %lw_big
  br i1 %sizes_bad, label %fail.tau, label %alloc
alloc:
  %wbytes = mul i64 %lwork, {size}
  %work = call ptr @malloc(i64 %wbytes)
  %w_null = icmp eq ptr %work, null
  br i1 %w_null, label %fail.tau, label %factor
factor:
  %ilwork = {cast} i64 %lwork to {I}
  ; info < 0 only: LAPACKE's transposed copy could not be allocated
  %info1 = call {I} @_irgrad_rt_lapacke_{p}geqrf(i32 {row_major}, {I} %im, {I} %in, ptr %q, {I} %ildq,
        ptr %tau, ptr %work, {I} %ilwork)
  %ok1 = icmp eq {I} %info1, 0
  br i1 %ok1, label %r.cond, label %fail.work
r.cond:
  ; R := the upper triangle of the factored n x n top, zeros below its diagonal
  %i = phi i64 [0, %factor], [%i.next, %r.body]
  %i.in = icmp slt i64 %i, %n
  br i1 %i.in, label %r.body, label %expand
r.body:
  %qoff = mul i64 %i, %ldq
  %qrow = getelementptr {T}, ptr %q, i64 %qoff
  %roff = mul i64 %i, %ldr
  %rrow = getelementptr {T}, ptr %r, i64 %roff
  %zbytes = mul i64 %i, {size}
  call void @llvm.memset.p0.i64(ptr %rrow, i8 0, i64 %zbytes, i1 false)
  %qdiag = getelementptr {T}, ptr %qrow, i64 %i
  %rdiag = getelementptr {T}, ptr %rrow, i64 %i
  %count = sub i64 %n, %i
  %cbytes = mul i64 %count, {size}
  call void @llvm.memcpy.p0.p0.i64(ptr %rdiag, ptr %qdiag, i64 %cbytes, i1 false)
  %i.next = add i64 %i, 1
  br label %r.cond
expand:
  %info2 = call {I} @_irgrad_rt_lapacke_{p}orgqr(i32 {row_major}, {I} %im, {I} %in, {I} %in, ptr %q,
        {I} %ildq, ptr %tau, ptr %work, {I} %ilwork)
  call void @free(ptr %work)
  call void @free(ptr %tau)
  %ok2 = icmp eq {I} %info2, 0
  br i1 %ok2, label %done, label %fail
fail.work:
  call void @free(ptr %work)
  br label %fail.tau
fail.tau:
  call void @free(ptr %tau)
  br label %fail
fail:
  call void @_irgrad_lapack_{p}fill_nan(i64 %m, i64 %n, ptr %q, i64 %ldq)
  call void @_irgrad_lapack_{p}fill_nan(i64 %n, i64 %n, ptr %r, i64 %ldr)
  br label %done
done:
  ret void
}}
"""


def _shim_ir(bits: int, entry_points: Collection[str]) -> str:
    """The shims of `entry_points` (a subset of ENTRY_POINTS) for a library with `bits`-bit
    integers, and the declarations of the library routines they call."""
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
        "declare i64 @llvm.smin.i64(i64, i64)",
        "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)",
        "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
        "declare ptr @malloc(i64)",
        "declare void @free(ptr)",
        _IDENTITY,
    ]
    for p, t, size in PRECISIONS:
        wanted = {r for r in ROUTINES if f"irgrad_lapack_{p}{r}" in entry_points}
        parts += [
            _FILL_NAN.format(p=p, T=t),
            _FINITE.format(p=p, T=t),
            _LWORK.format(p=p, T=t, to_double="fpext float %q to double" if t == "float" else "fadd double %q, 0.0"),
        ]
        if "potrf" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}potrf(i32, i8 signext, {ity}, ptr, {ity})",
                _POTRF.format(
                    p=p, T=t, size=size, int_max=int_max, col_major=LAPACK_COL_MAJOR, uplo_u=UPLO_U, **common
                ),
            ]
        if "trsm" in wanted:
            parts += [
                f"declare void @_irgrad_rt_cblas_{p}trsm(i32, i32, i32, i32, i32, {ity}, {ity}, {t}, ptr, "
                f"{ity}, ptr, {ity})",
                _TRSM.format(
                    p=p, T=t, int_max=int_max, row_major=CBLAS_ROW_MAJOR, left=CBLAS_LEFT, no_trans=CBLAS_NO_TRANS,
                    lower_enum=CBLAS_LOWER, upper_enum=CBLAS_UPPER, unit_enum=CBLAS_UNIT,
                    non_unit_enum=CBLAS_NON_UNIT, **common,
                ),
            ]
        if "getrf" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}getrf(i32, {ity}, {ity}, ptr, {ity}, ptr)",
                # getrf's pivots are i32 whatever the library's integers are
                _GETRF.format(p=p, T=t, int_max=min(int_max, INT32_MAX), row_major=LAPACK_ROW_MAJOR, **common),
            ]
        if "syevd" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}syevd(i32, i8 signext, i8 signext, {ity}, ptr, {ity}, ptr, "
                f"ptr, {ity}, ptr, {ity})",
                _SYEVD.format(
                    p=p, T=t, size=size, int_max=int_max, row_major=LAPACK_ROW_MAJOR, jobz_v=JOBZ_V, uplo_l=UPLO_L,
                    **common,
                ),
            ]
        if "gesdd" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}gesdd(i32, i8 signext, {ity}, {ity}, ptr, {ity}, ptr, "
                f"ptr, {ity}, ptr, {ity}, ptr, {ity}, ptr)",
                _GESDD.format(
                    p=p, T=t, size=size, int_max=int_max, col_major=LAPACK_COL_MAJOR, jobz_s=JOBZ_S, **common
                ),
            ]
        if "geqrf" in wanted:
            parts += [
                f"declare {ity} @_irgrad_rt_lapacke_{p}geqrf(i32, {ity}, {ity}, ptr, {ity}, ptr, ptr, {ity})",
                f"declare {ity} @_irgrad_rt_lapacke_{p}orgqr(i32, {ity}, {ity}, {ity}, ptr, {ity}, ptr, ptr, {ity})",
                _GEQRF.format(p=p, T=t, size=size, int_max=int_max, row_major=LAPACK_ROW_MAJOR, **common),
            ]
    return "\n".join(parts)


def _candidates() -> Iterator[str]:
    """The library blas.py chose first (one OpenBLAS, one thread pool), then blas.py's search."""
    chosen = blas.blas_info().library
    if chosen is not None:
        yield chosen
    for path in blas._candidates():
        if path != chosen:
            yield path


def _choose() -> tuple[LapackInfo, _Resolved | None]:
    setting = os.environ.get("IRGRAD_LAPACK", "").strip()
    if setting.lower() in ("none", "off", "0", "loops"):
        return LapackInfo(None, (), None, "IRGRAD_LAPACK=" + setting), None
    paths: Iterator[str] = iter([setting]) if setting else _candidates()
    for path in paths:
        found = _resolve(path)
        if found is not None:
            how = "IRGRAD_LAPACK" if setting else "numpy's BLAS" if "numpy" in path else "found by name"
            names = tuple(name for entry in ENTRY_POINTS for _, name, _ in found.routines.get(entry, ()))
            fallbacks = tuple(entry for entry in ENTRY_POINTS if entry not in found.routines)
            return LapackInfo(path, names, found.bits, how, fallbacks), found
    reason = f"IRGRAD_LAPACK={setting} has no LAPACKE potrf/getrf and CBLAS trsm" if setting else "no LAPACK found"
    return LapackInfo(None, (), None, reason), None


def install_lapack(entry_points: Collection[str] | None = None) -> None:
    """Define `entry_points` (default: every `irgrad_lapack_*` entry point) for LLVM's symbol
    resolution: the library's shims, or the numpy callbacks where it lacks a routine or there
    is none. The library is chosen once per process; each entry point is defined once, when a
    program first needs it (a program compiles only the shims it calls: about 20 ms each
    instead of 125 ms for all twelve)."""
    wanted = set(ENTRY_POINTS) if entry_points is None else set(entry_points) & set(ENTRY_POINTS)
    if _info is not None and wanted <= _installed:
        return
    from irgrad.backends.cpu.jit import initialize

    initialize()
    with _lock:
        if _info is None:
            _choose_library()
        missing = wanted - _installed
        if missing:
            _install(missing)


def _choose_library() -> None:
    global _info, _found
    info, found = _choose()
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
        _engines.append(blas.compile_shim(_shim_ir(found.bits, served), served, level=2, vectorize=False))
    fallbacks = [e for e in ENTRY_POINTS if e in missing and e not in served]
    if fallbacks:
        _install_fallback(fallbacks)
    _installed.update(missing)


# Without a library: ctypes callbacks (kept alive here) running the numpy reference.
_FALLBACKS: list[object] = []


def _matrix(pointer: int, rows: int, cols: int, stride: int, ctype: type, dtype: type) -> "np.ndarray":
    """A numpy view of `rows` x `cols` elements at `pointer`, rows `stride` elements apart."""
    import numpy as np

    if rows <= 0 or cols <= 0:
        return np.zeros((max(rows, 0), max(cols, 0)), dtype)
    flat = np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctype)), shape=((rows - 1) * stride + cols,))
    return np.lib.stride_tricks.as_strided(flat, (rows, cols), (stride * flat.itemsize, flat.itemsize))


def _install_fallback(entry_points: Collection[str]) -> None:
    """Define `entry_points` as callbacks into irgrad/backends/interpreter/nn_linalg.py."""
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

        # The reference's vectors have the nn ops' signs: one of the "any signs" allowed.
        def syevd(n: int, a: int, lda: int, w: int, ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0:
                view = _matrix(a, n, n, lda, ctype, dtype)
                values, vectors = ref.eigh(view)
                view[...] = vectors
                _matrix(w, 1, n, n, ctype, dtype)[0] = values

        def gesdd(m: int, n: int, a: int, lda: int, s: int, u: int, ldu: int, vt: int, ldvt: int,
                  ctype: type = ctype, dtype: type = dtype) -> None:
            if m > 0 and n > 0:
                k = min(m, n)
                left, values, right = ref.svd(_matrix(a, m, n, lda, ctype, dtype))
                _matrix(u, m, k, ldu, ctype, dtype)[...] = left
                _matrix(s, 1, k, k, ctype, dtype)[0] = values
                _matrix(vt, k, n, ldvt, ctype, dtype)[...] = right

        def geqrf(m: int, n: int, q: int, ldq: int, r: int, ldr: int, ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0:
                view = _matrix(q, max(m, 0), n, ldq, ctype, dtype)
                out = _matrix(r, n, n, ldr, ctype, dtype)
                if m < n:  # not a tall matrix: the failure convention
                    view[...], out[...] = np.nan, np.nan
                    return
                view[...], out[...] = ref.qr(view)

        thunks = (
            (f"irgrad_lapack_{p}potrf", ctypes.CFUNCTYPE(None, i64, ptr, i64)(potrf)),
            (f"irgrad_lapack_{p}trsm", ctypes.CFUNCTYPE(None, i64, i64, i64, i64, ptr, i64, ptr, i64)(trsm)),
            (f"irgrad_lapack_{p}getrf", ctypes.CFUNCTYPE(None, i64, ptr, i64, ptr, ptr)(getrf)),
            (f"irgrad_lapack_{p}syevd", ctypes.CFUNCTYPE(None, i64, ptr, i64, ptr)(syevd)),
            (f"irgrad_lapack_{p}gesdd", ctypes.CFUNCTYPE(None, i64, i64, ptr, i64, ptr, ptr, i64, ptr, i64)(gesdd)),
            (f"irgrad_lapack_{p}geqrf", ctypes.CFUNCTYPE(None, i64, i64, ptr, i64, ptr, i64)(geqrf)),
        )
        for name, thunk in thunks:
            if name in entry_points:
                _FALLBACKS.append(thunk)
                llvm.add_symbol(name, ctypes.cast(thunk, ctypes.c_void_p).value)
