"""`nn` dense linear algebra: cholesky, triangular_solve, lu, eigh, eig, svd, qr (LAPACK's potrf,
trsm, getrf, syevd, geev, gesdd, geqrf + orgqr).

Each works on the last two dimensions with any leading batch dimensions, in the operand's dtype
(f32 or f64 only). The implementations follow the traced reference loops of
irgrad/tracing/reference_loops.py (`cholesky_loop`, `trsm_loop`, `lu_loop`) step for
step, so a singular or indefinite input gives the same inf/NaN pattern there and here:

- cholesky: numpy's (LAPACK's) factor of the symmetric matrix whose lower triangle is A's; a batch
  element that is not positive definite (a pivot <= 0 or NaN) is all NaN, as JAX;
- triangular_solve: row-by-row substitution over the triangle that is read (strictly, with a unit
  diagonal), unsolved rows zero, so a zero on the diagonal gives inf/NaN, as BLAS;
- lu: right-looking getf2 with partial pivoting (the first row of largest magnitude), column
  below a zero pivot left as it is (zeros), so a singular A gives a zero on U's diagonal;
- eigh, svd, qr: numpy's (LAPACK's) decompositions, eigenvector and singular vector signs fixed
  by `sign_fix` (the ops' convention), all NaN for a batch element with a NaN or inf in what is read;
- eig: numpy's (LAPACK's geev) eigenvalues and unit right eigenvectors, as (re, im) pairs.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls

from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import nn


def _batch_flat(a: np.ndarray) -> np.ndarray:
    """A copy of `a` (..., n, m) as (B, n, m)."""
    return np.array(a, copy=True).reshape(-1, *a.shape[-2:])


def cholesky(a: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of the symmetric matrix whose lower triangle is `a`'s, per batch
    element; all NaN where that matrix is not positive definite."""
    a = np.asarray(a)
    n = a.shape[-1]
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    flat = sym.reshape(-1, n, n)
    out = np.empty_like(flat)
    for index in range(flat.shape[0]):
        try:
            with np.errstate(all="ignore"):
                low = np.linalg.cholesky(flat[index])
        except np.linalg.LinAlgError:
            out[index] = np.nan
            continue
        diagonal = np.diagonal(low)
        if not np.all(diagonal > 0):  # NaN fails the comparison too
            out[index] = np.nan
            continue
        out[index] = low
    return out.reshape(a.shape).astype(a.dtype, copy=False)


def triangular_solve(a: np.ndarray, b: np.ndarray, lower: bool, unit: bool) -> np.ndarray:
    """X with A X = B, reading only A's `lower` (else upper) triangle, strictly with `unit`."""
    a, b = np.asarray(a), np.asarray(b)
    n = a.shape[-1]
    k = -1 if unit else 0
    tri = np.tril(a, k) if lower else np.triu(a, -k)
    x = np.zeros_like(b)
    with np.errstate(all="ignore"):
        for step in range(n):
            i = step if lower else n - 1 - step
            r = b[..., i : i + 1, :] - np.matmul(tri[..., i : i + 1, :], x)
            if not unit:
                r = r / tri[..., i : i + 1, i : i + 1]
            x[..., i : i + 1, :] = r
    return x


def lu(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """getf2 on every batch element at once: (lu, pivots, permutation), the integers int32."""
    a = np.asarray(a)
    shape = a.shape
    n = shape[-1]
    m = _batch_flat(a)
    count = m.shape[0]
    rows = np.arange(count)
    perm = np.tile(np.arange(n, dtype=np.int32), (count, 1))
    piv = np.zeros((count, n), np.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            # The first row >= j of largest magnitude (numpy's argmax: the first NaN wins).
            p = np.argmax(np.abs(m[:, j:, j]), axis=-1) + j
            row_j, row_p = m[rows, j].copy(), m[rows, p].copy()
            m[rows, j], m[rows, p] = row_p, row_j
            perm_j, perm_p = perm[rows, j].copy(), perm[rows, p].copy()
            perm[rows, j], perm[rows, p] = perm_p, perm_j
            piv[:, j] = p
            pivot = m[:, j, j : j + 1]  # (B, 1)
            safe = np.where(pivot == 0, np.ones_like(pivot), pivot)
            low = np.where(pivot == 0, np.zeros_like(pivot), m[:, j + 1 :, j] / safe)  # (B, n-j-1)
            m[:, j + 1 :, j] = low
            m[:, j + 1 :, j + 1 :] -= low[:, :, None] * m[:, j : j + 1, j + 1 :]
    return m.reshape(shape), piv.reshape(shape[:-1]), perm.reshape(shape[:-1])


def sign_fix(columns: np.ndarray) -> np.ndarray:
    """+1 or -1 per column of `columns` (..., m, k): the sign of each column's first entry whose
    magnitude is at least half the column's largest (the ops' sign convention; +1 for a zero or
    NaN column)."""
    mag = np.abs(columns)
    with np.errstate(invalid="ignore"):
        big = mag >= 0.5 * np.max(mag, axis=-2, keepdims=True)
    first = np.argmax(big, axis=-2)[..., None, :]  # the first True (0 if none)
    pick = np.take_along_axis(columns, first, axis=-2)[..., 0, :]
    return np.where(pick < 0, -1, 1).astype(columns.dtype)


def eigh(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(w ascending, v) of the symmetric matrix whose lower triangle is `a`'s; eigenvector signs
    fixed by `sign_fix`; NaN for a batch element whose read triangle is not finite."""
    a = np.asarray(a)
    n = a.shape[-1]
    low = np.tril(a).reshape(-1, n, n)
    flat = low + np.swapaxes(np.tril(low, -1), -1, -2)
    w = np.empty(flat.shape[:-1], a.dtype)
    v = np.empty_like(flat)
    ok = np.isfinite(flat).reshape(flat.shape[0], -1).all(axis=-1)
    if ok.any():
        w[ok], v[ok] = np.linalg.eigh(flat[ok])
    w[~ok], v[~ok] = np.nan, np.nan
    v = v * sign_fix(v)[..., None, :]
    return w.reshape(a.shape[:-1]), v.reshape(a.shape)


def eig(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(w, v) of the real square `a` (..., n, n) as nn.eig gives them: numpy.linalg.eig's (geev's
    order, unit vectors with their largest component real) in the (re, im) pairs layout, w
    (..., n, 2) and v (..., n, n, 2) of a's dtype; NaN for a batch element with a NaN or inf."""
    a = np.asarray(a)
    n = a.shape[-1]
    flat = a.reshape(-1, n, n)
    nan = complex(np.nan, np.nan)  # both parts NaN (np.nan as a complex is nan + 0j)
    w = np.full((flat.shape[0], n), nan, np.complex128)
    v = np.full((flat.shape[0], n, n), nan, np.complex128)
    ok = np.isfinite(flat).reshape(flat.shape[0], -1).all(axis=-1)
    if ok.any() and n:
        w[ok], v[ok] = np.linalg.eig(flat[ok])  # real arrays where every eigenvalue is real
    pairs = [np.stack([x.real, x.imag], axis=-1).astype(a.dtype) for x in (w, v)]
    return pairs[0].reshape(*a.shape[:-1], 2), pairs[1].reshape(*a.shape, 2)


def svd(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reduced (u, s descending, vt), u's column signs fixed by `sign_fix` and vt's rows with
    them; NaN for a batch element with a NaN or inf."""
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = a.reshape(-1, m, n)
    u = np.empty((flat.shape[0], m, k), a.dtype)
    s = np.empty((flat.shape[0], k), a.dtype)
    vt = np.empty((flat.shape[0], k, n), a.dtype)
    ok = np.isfinite(flat).reshape(flat.shape[0], -1).all(axis=-1)
    if ok.any() and k:
        u[ok], s[ok], vt[ok] = np.linalg.svd(flat[ok], full_matrices=False)
    u[~ok], s[~ok], vt[~ok] = np.nan, np.nan, np.nan
    sign = sign_fix(u)
    u, vt = u * sign[..., None, :], vt * sign[..., :, None]
    batch = a.shape[:-2]
    return u.reshape(*batch, m, k), s.reshape(*batch, k), vt.reshape(*batch, k, n)


def qr(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reduced (q, r) of a tall or square `a` (LAPACK's geqrf + orgqr through numpy: LAPACK's
    signs); NaN for a batch element with a NaN or inf."""
    a = np.asarray(a)
    m, n = a.shape[-2:]
    flat = a.reshape(-1, m, n)
    q = np.empty_like(flat)
    r = np.empty((flat.shape[0], n, n), a.dtype)
    ok = np.isfinite(flat).reshape(flat.shape[0], -1).all(axis=-1)
    if ok.any() and n:
        q[ok], r[ok] = np.linalg.qr(flat[ok], mode="reduced")
    q[~ok], r[~ok] = np.nan, np.nan
    return q.reshape(a.shape), r.reshape(*a.shape[:-2], n, n)


@register_impls
class NNLinalgFunctions(InterpreterFunctions):
    @numpy_impl(nn.CholeskyOp)
    def run_cholesky(self, interpreter: Interpreter, op: nn.CholeskyOp, args: PythonValues):
        (a,) = args
        return (cholesky(a),)

    @numpy_impl(nn.TriangularSolveOp)
    def run_triangular_solve(self, interpreter: Interpreter, op: nn.TriangularSolveOp, args: PythonValues):
        a, b = args
        return (triangular_solve(a, b, op.is_lower, op.is_unit),)

    @numpy_impl(nn.LUOp)
    def run_lu(self, interpreter: Interpreter, op: nn.LUOp, args: PythonValues):
        (a,) = args
        return lu(a)

    @numpy_impl(nn.EighOp)
    def run_eigh(self, interpreter: Interpreter, op: nn.EighOp, args: PythonValues):
        (a,) = args
        return eigh(a)

    @numpy_impl(nn.EigOp)
    def run_eig(self, interpreter: Interpreter, op: nn.EigOp, args: PythonValues):
        (a,) = args
        return eig(a)

    @numpy_impl(nn.SvdOp)
    def run_svd(self, interpreter: Interpreter, op: nn.SvdOp, args: PythonValues):
        (a,) = args
        return svd(a)

    @numpy_impl(nn.QrOp)
    def run_qr(self, interpreter: Interpreter, op: nn.QrOp, args: PythonValues):
        (a,) = args
        return qr(a)
