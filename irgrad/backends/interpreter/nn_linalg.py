"""`nn` dense linear algebra: cholesky, triangular_solve, lu (LAPACK's potrf, trsm, getrf).

Each works on the last two dimensions with any leading batch dimensions, in the operand's dtype
(f32 or f64 only). The implementations follow the traced reference loops of
irgrad/frontend/linalg.py (`_cholesky_loop`, `_trsm_loop`, `_lu_loop`) step for step, so a
singular or indefinite input gives the same inf/NaN pattern there and here:

- cholesky: numpy's (LAPACK's) factor of the symmetric matrix whose lower triangle is A's; a batch
  element that is not positive definite (a pivot <= 0 or NaN) is all NaN, as JAX;
- triangular_solve: row-by-row substitution over the triangle that is read (strictly, with a unit
  diagonal), unsolved rows zero, so a zero on the diagonal gives inf/NaN, as BLAS;
- lu: right-looking getf2 with partial pivoting (the first row of largest magnitude), column
  below a zero pivot left as it is (zeros), so a singular A gives a zero on U's diagonal.
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
