"""`ig.linalg`: numpy.linalg and jax.scipy.linalg functions, composites of `nn` ops and loops.

- `norm` (below).
- Factorizations and solves, as jax.numpy.linalg / jax.scipy.linalg, on float32 and float64 (ints
  become float32; float16/bfloat16 are refused), with leading batch dimensions: `cholesky`,
  `solve_triangular`, `cho_factor` / `cho_solve`, `lu_factor` / `lu` / `lu_solve` (square
  matrices), `solve`, `inv`, `det`, `slogdet`, `matrix_power`, `qr` (Householder). Not provided: eigh,
  svd, pinv, lstsq, and the norms that need singular values.
- Each factorization or solve is one `ig.fori_loop` (IR of constant size in n); its derivative
  is an analytic `ig.custom_jvp` rule (JAX's), so reverse mode never tapes the loop at first
  order. The section "Factorizations and solves" below gives the algorithms, their costs and the
  derivative story.
- Failure modes follow JAX, not numpy (which raises LinAlgError): a matrix that is not positive
  definite gives an all-NaN Cholesky factor; an exactly singular matrix gives a zero on U's
  diagonal (LAPACK's getrf), det 0, slogdet (0, -inf), and inf/NaN from solve and inv; the
  derivative of det at an exactly singular matrix is NaN (JAX uses a cofactor rule there).

`norm` covers the vector norms (ord None/2, 1, inf, -inf, 0, any other p) and the matrix
norms without an SVD ('fro', 1, -1, inf, -inf); ord 2, -2 and 'nuc' on matrices need singular
values and raise NotImplementedError. The 2-norm's gradient at the zero vector is decided as 0
(a subgradient) instead of the NaN of sqrt'(0) * 0: the square root reads 1 on the branch not
taken, as `ig.std` does (docs/autodiff.md, Contracts). Ties of the max/min norms share the
cotangent equally (the reduce_max rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.frontend import dtypes, lax
from irgrad.frontend import numpy_api as np_api
from irgrad.frontend.api_support import api, broadcast_shapes, broadcast_to, lift, normalize_axes, require_float
from irgrad.frontend.constants import full
from irgrad.frontend.control_flow import fori_loop
from irgrad.frontend.errors import DTypeError, ShapeError, user_site
from irgrad.frontend.numerics_api import argmax
from irgrad.frontend.numpy_reductions import prod
from irgrad.frontend.shape_api import take_along_axis
from irgrad.frontend.tracing import Tracer
from irgrad.frontend.transforms import custom_jvp

__all__ = [
    "norm",
    "cholesky",
    "solve_triangular",
    "cho_factor",
    "cho_solve",
    "lu_factor",
    "lu",
    "lu_solve",
    "solve",
    "inv",
    "det",
    "slogdet",
    "matrix_power",
    "qr",
]


def _safe_sqrt(s: Tracer) -> Tracer:
    zero = full(s.shape, 0.0, s.dtype)
    positive = lax.compare("ne", s, zero)
    return np_api.where(positive, np_api.sqrt(np_api.where(positive, s, 1.0)), zero)


def _two_norm(t: Tracer, axes: list[int]) -> Tracer:
    return _safe_sqrt(np_api.sum(t * t, axis=axes, keepdims=True))


def _vector_norm(t: Tracer, ord: Any, ax: int) -> Tracer:  # noqa: A002
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return _two_norm(t, [ax])
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors{user_site()}")
    a = np_api.abs(t)
    if ord == math.inf:
        return np_api.max(a, axis=ax, keepdims=True)
    if ord == -math.inf:
        return np_api.min(a, axis=ax, keepdims=True)
    if ord == 0:
        return np_api.sum(lax.convert(a != 0, t.dtype), axis=ax, keepdims=True)
    if ord == 1:
        return np_api.sum(a, axis=ax, keepdims=True)
    p = float(ord)
    return np_api.power(np_api.sum(np_api.power(a, p), axis=ax, keepdims=True), 1.0 / p)


def _matrix_norm(t: Tracer, ord: Any, row: int, col: int) -> Tracer:  # noqa: A002
    if ord is None or ord == "fro":
        return _two_norm(t, [row, col])
    if ord in (2, -2, "nuc"):
        raise NotImplementedError(f"norm: matrix norm ord={ord!r} needs singular values (an SVD), not supported{user_site()}")
    a = np_api.abs(t)
    if ord in (1, -1):
        sums, over = np_api.sum(a, axis=row, keepdims=True), col
    elif ord in (math.inf, -math.inf):
        sums, over = np_api.sum(a, axis=col, keepdims=True), row
    else:
        raise ValueError(f"norm: invalid norm order {ord!r} for matrices{user_site()}")
    if ord in (1, math.inf):
        return np_api.max(sums, axis=over, keepdims=True)
    return np_api.min(sums, axis=over, keepdims=True)


@api
def norm(x: Any, ord: Any = None, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tracer:  # noqa: A002
    """numpy.linalg.norm: a vector norm over one axis, a matrix norm over two (axis=None: the
    2-norm of the flattened array for ord=None, else the vector norm of a 1-D or the matrix
    norm of a 2-D input). Integers become float32."""
    t = require_float("norm", lift(x))
    if axis is None:
        if ord is None:
            axes = list(range(t.ndim))
            r = _two_norm(t, axes)
            return r if keepdims else lax.reshape(r, ())
        if t.ndim not in (1, 2):
            raise ValueError(f"norm: improper number of dimensions to norm: shape {t.shape} with ord={ord!r}{user_site()}")
        axes = list(range(t.ndim))
    else:
        given = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
        if len(given) not in (1, 2):
            raise ValueError(f"norm: axis must be an int or a pair of ints, got {axis!r}{user_site()}")
        axes = [normalize_axes("norm", a, t.ndim)[0] for a in given]
        if len(set(axes)) != len(axes):
            raise ValueError(f"norm: duplicate axes given: {axis!r}{user_site()}")
    if len(axes) == 1:
        r = _vector_norm(t, ord, axes[0])
    else:
        r = _matrix_norm(t, ord, axes[0], axes[1])
    if keepdims:
        return r
    return lax.reshape(r, [d for i, d in enumerate(r.shape) if i not in axes])




# ---------------------------------------------------------------------------------------------
# Factorizations and solves
# ---------------------------------------------------------------------------------------------
#
# Algorithms. Each factorization and triangular solve is one `ig.fori_loop` over the n columns
# (rows for a solve) whose body updates the whole matrix under iota masks (`where(row > j, ...)`)
# or writes one row/column with `nn.dynamic_update_slice`; the IR is the size of one iteration
# whatever n is. Batch dimensions ride along in every op (the loops are written batched, no vmap).
# Cost: Cholesky and LU O(n^2) per column, O(n^3) in all, about twice LAPACK's flops (the masked
# updates touch the whole matrix, not the trailing block); a triangular solve O(n k) per row.
#
# Derivatives. Every primitive-like function (the triangular solves `_trsm(lower, unit)`,
# `_cholesky_core`, `_lu_core`, `_solve_core`, `_det_core`, `_slogdet_core`) is an
# `ig.custom_jvp` with JAX's analytic rule: forward mode runs the rule, reverse mode transposes
# it. Their bodies and rules call the loops directly (a custom_jvp body is never differentiated),
# except that the rules of solve/det/slogdet get the factorization from `_lu_core`, so that it
# stays a rule at second order; the public entry points call the custom_jvp functions. A rule's
# tangent map is masks, matmuls, permutations and triangular-solve loops in which the matrix is a
# primal value, and the transpose of such a loop is a reverse loop that reads only that matrix:
# at first order nothing per iteration is taped (no `tensor<n x ...>` copy of a carried block;
# test_linalg.py checks the IR). Forward mode never tapes, so `ig.hessian` (forward over reverse)
# and Hessian-vector products have no tape either. Reverse over reverse (grad of grad)
# differentiates the first-order transposes, whose solve loops then depend on the matrix: those
# are taped, n copies of the (..., n, k) block of each triangular solve (k right-hand sides; n for
# det, slogdet, inv and cholesky), still correct.

_SUPPORTED = (dtypes.float32, dtypes.float64)


def _float_array(op_name: str, x: Any) -> Tracer:
    """Integers and bools become float32 (as JAX); float16 and bfloat16 are refused."""
    t = require_float(op_name, lift(x))
    if t.dtype not in _SUPPORTED:
        raise DTypeError(f"{op_name}: dtype {t.dtype} is not supported; use float32 or float64{user_site()}")
    return t


def _square(op_name: str, x: Any) -> Tracer:
    t = _float_array(op_name, x)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ShapeError(
            f"{op_name}: expected a square matrix or a stack of them, shape (..., n, n), got {t.shape}{user_site()}"
        )
    return t


def _mT(x: Tracer) -> Tracer:
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return lax.transpose(x, perm)


def _iota(shape: Sequence[int], dim: int) -> Tracer:
    return lax.iota(tuple(shape), dim, dtypes.int32)


def _where(c: Any, x: Any, y: Any) -> Tracer:
    return np_api.where(c, x, y)


def _triangle(x: Tracer, lower: bool, k: int = 0) -> Tracer:
    """tril(x, k) if lower else triu(x, -k), over the last two axes."""
    n, m = x.shape[-2:]
    diff = _iota((n, m), 1) - _iota((n, m), 0)
    keep = diff <= k if lower else diff >= -k
    return _where(keep, x, full((), 0, x.dtype))


def _diagonal(x: Tracer) -> Tracer:
    """The main diagonal of the last two (square) axes: a strided slice of the flattened matrix."""
    n = x.shape[-1]
    batch = list(x.shape[:-2])
    flat = lax.reshape(x, (*batch, n * n))
    return lax.slice(flat, [0] * len(batch) + [0], batch + [n * n], [1] * len(batch) + [n + 1])


def _eye_like(x: Tracer) -> Tracer:
    n = x.shape[-1]
    e = lax.convert(lax.compare("eq", _iota((n, n), 0), _iota((n, n), 1)), x.dtype)
    return broadcast_to(e, x.shape)


def _trace(x: Tracer) -> Tracer:
    return np_api.sum(_diagonal(x), axis=-1)


def _row(x: Tracer, i: Any) -> Tracer:
    """x[..., i:i+1, :] for a traced i."""
    return lax.dynamic_slice(x, [0] * (x.ndim - 2) + [i, 0], [*x.shape[:-2], 1, x.shape[-1]])


def _col(x: Tracer, j: Any) -> Tracer:
    """x[..., :, j:j+1] for a traced j."""
    return lax.dynamic_slice(x, [0] * (x.ndim - 2) + [0, j], [*x.shape[:-1], 1])


def _elem(x: Tracer, i: Any, j: Any) -> Tracer:
    """x[..., i:i+1, j:j+1]."""
    return lax.dynamic_slice(x, [0] * (x.ndim - 2) + [i, j], [*x.shape[:-2], 1, 1])


def _permute_rows(x: Tracer, perm: Tracer) -> Tracer:
    """x[..., perm, :] per batch element: row i of the result is row perm[i] of x."""
    idx = broadcast_to(lax.reshape(perm, (*perm.shape, 1)), (*perm.shape, x.shape[-1]))
    return take_along_axis(x, idx, axis=-2)


def _inverse_permutation(perm: Tracer) -> Tracer:
    """inv[..., perm[i]] = i, as a sum over a comparison (O(n^2) integer work)."""
    n = perm.shape[-1]
    hit = lax.reshape(perm, (*perm.shape, 1)) == _iota((n, n), 1)  # [i, j]: perm[i] == j
    return np_api.sum(_where(hit, _iota((n, n), 0), 0), axis=-2)


# --- triangular solve --------------------------------------------------------------------------


def _trsm_loop(a: Tracer, b: Tracer, lower: bool, unit: bool) -> Tracer:
    """Solves A X = B, A (..., n, n) triangular, B (..., n, k) of the same batch shape: forward
    (lower) or back (upper) substitution, one row of X per iteration, the unsolved rows of X zero.
    Only A's triangle is read (with `unit`, not its diagonal either), as LAPACK's trsm."""
    n = a.shape[-1]
    a = _triangle(a, lower, -1 if unit else 0)

    def body(s: Tracer, x: Tracer) -> Tracer:
        i = s if lower else (n - 1) - s
        r = _row(b, i) - np_api.matmul(_row(a, i), x)
        if not unit:
            r = r / _elem(a, i, i)
        return lax.dynamic_update_slice(x, r, [0] * (x.ndim - 2) + [i, 0])

    return fori_loop(0, n, body, full(b.shape, 0, b.dtype))


_TRSM: dict[tuple[bool, bool], custom_jvp] = {}


def _trsm(lower: bool, unit: bool) -> custom_jvp:
    """The custom_jvp triangular solve `(a, b) -> A^{-1} B` for one (lower, unit) pair: linear in
    b, and dX = -A^{-1} dA X with dA masked to the triangle that is read."""
    key = (lower, unit)
    if key not in _TRSM:

        def primal(a: Tracer, b: Tracer) -> Tracer:
            return _trsm_loop(a, b, lower, unit)

        primal.__name__ = primal.__qualname__ = f"solve_triangular_{'lower' if lower else 'upper'}{'_unit' if unit else ''}"
        f = custom_jvp(primal)

        @f.defjvp
        def _rule(primals: tuple[Tracer, Tracer], tangents: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
            (a, b), (da, db) = primals, tangents
            x = _trsm_loop(a, b, lower, unit)
            dx = _trsm_loop(a, db - np_api.matmul(_triangle(da, lower, -1 if unit else 0), x), lower, unit)
            return x, dx

        _TRSM[key] = f
    return _TRSM[key]


def _matrix_rhs(op_name: str, a: Tracer, b: Any, vector: bool | None) -> tuple[Tracer, Tracer, bool]:
    """a (..., n, n) and b as a (..., n, k) matrix, both broadcast to one batch shape and dtype;
    `vector` None: b is a vector iff b.ndim == a.ndim - 1 (jax.scipy's rule)."""
    bt = _float_array(op_name, b)
    d = dtypes.promote(a.dtype, bt.dtype)
    a, bt = lax.convert(a, d), lax.convert(bt, d)
    n = a.shape[-1]
    if vector is None:
        vector = bt.ndim == a.ndim - 1
    if bt.ndim < 1 or (not vector and bt.ndim < 2):
        raise ShapeError(f"{op_name}: b must be at least 1-D, got shape {bt.shape}{user_site()}")
    if vector:
        bt = lax.reshape(bt, (*bt.shape, 1))
    if bt.shape[-2] != n:
        raise ShapeError(
            f"{op_name}: a has shape {a.shape} but b has shape {tuple(bt.shape[:-1]) if vector else bt.shape}: "
            f"b's {'length' if vector else 'rows'} must be {n}{user_site()}"
        )
    batch = broadcast_shapes(op_name, a.shape[:-2], bt.shape[:-2])
    return broadcast_to(a, (*batch, n, n)), broadcast_to(bt, (*batch, *bt.shape[-2:])), vector


def _trans_code(op_name: str, trans: Any) -> int:
    codes = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}
    if isinstance(trans, bool) or trans not in codes:
        raise ValueError(f"{op_name}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}{user_site()}")
    return codes[trans]


def _solve_tri(a: Tracer, b: Tracer, lower: bool, transpose: bool, unit: bool) -> Tracer:
    if transpose:
        return _trsm(not lower, unit)(_mT(a), b)
    return _trsm(lower, unit)(a, b)


@api
def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False, unit_diagonal: bool = False) -> Tracer:
    """jax.scipy.linalg.solve_triangular: x with op(a) x = b, op = identity (trans 0 or 'N') or
    transpose (1/'T', and 2/'C' for these real dtypes). Only the `lower` (else upper) triangle of a
    is read, and not its diagonal with `unit_diagonal`. b is a vector (..., n) if it has one
    dimension fewer than a, else a matrix (..., n, k); batch dimensions broadcast."""
    t = _trans_code("solve_triangular", trans)
    at, bt, vector = _matrix_rhs("solve_triangular", _square("solve_triangular", a), b, None)
    x = _solve_tri(at, bt, bool(lower), t != 0, bool(unit_diagonal))
    return lax.reshape(x, x.shape[:-1]) if vector else x


# --- Cholesky ----------------------------------------------------------------------------------


def _cholesky_loop(a: Tracer) -> Tracer:
    """Left-looking Cholesky of a symmetric (..., n, n) a (its lower triangle is read): column j
    of L is (a[:, j] - L L[j, :]^T) / sqrt(that at j), below the diagonal, one matvec per column.
    A batch element that is not positive definite (a pivot <= 0 or NaN) becomes all NaN, as
    jax.numpy.linalg.cholesky."""
    n = a.shape[-1]
    rows = _iota((n, 1), 0)

    def body(j: Tracer, low: Tracer) -> Tracer:
        v = _col(a, j) - np_api.matmul(low, _mT(_row(low, j)))  # (..., n, 1)
        d = np_api.sqrt(lax.dynamic_slice(v, [0] * (v.ndim - 2) + [j, 0], [*v.shape[:-2], 1, 1]))
        column = _where(rows > j, v / d, _where(rows == j, d, full((), 0, a.dtype)))
        return lax.dynamic_update_slice(low, column, [0] * (low.ndim - 2) + [0, j])

    low = fori_loop(0, n, body, full(a.shape, 0, a.dtype))
    ok = np_api.sum(lax.convert(_diagonal(low) > 0, dtypes.int32), axis=-1, keepdims=True) == n
    ok = lax.reshape(ok, (*ok.shape, 1))
    return _where(ok, low, full((), np.nan, a.dtype))


def _phi(x: Tracer) -> Tracer:
    """The lower triangle of x with its diagonal halved."""
    n = x.shape[-1]
    diff = _iota((n, n), 1) - _iota((n, n), 0)
    return _where(diff < 0, x, _where(diff == 0, 0.5 * x, full((), 0, x.dtype)))


def _cholesky_core(a: Tracer) -> Tracer:
    return _cholesky_loop(a)


_cholesky_core = custom_jvp(_cholesky_core)


@_cholesky_core.defjvp
def _cholesky_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Tracer, Tracer]:
    """dL = L Phi(L^{-1} dA L^{-T}) (Murray 2016, as JAX), dA symmetrized."""
    (a,), (da,) = primals, tangents
    low = _cholesky_loop(a)
    da = 0.5 * (da + _mT(da))
    left = _trsm_loop(low, da, True, False)  # L^{-1} dA
    middle = _trsm_loop(low, _mT(left), True, False)  # L^{-1} dA L^{-T}
    return low, np_api.matmul(low, _phi(middle))


def _symmetric_from(a: Tracer, lower: bool) -> Tracer:
    """The symmetric matrix whose `lower` (else upper) triangle is a's."""
    return _triangle(a, lower) + _mT(_triangle(a, lower, -1))


@api
def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Tracer:
    """jax.numpy.linalg.cholesky: L lower triangular with a = L L^T (with `upper`, L^T). With
    `symmetrize_input` (the default, as JAX) a is replaced by (a + a^T) / 2, so the derivative is
    symmetric too; without it only a's lower triangle is read (LAPACK's potrf). A matrix that is
    not positive definite gives all NaN (as JAX; numpy raises LinAlgError)."""
    t = _square("cholesky", a)
    t = 0.5 * (t + _mT(t)) if symmetrize_input else _symmetric_from(t, True)
    low = _cholesky_core(t)
    return _mT(low) if upper else low


def _static_bool(op_name: str, what: str, v: Any) -> bool:
    if isinstance(v, Tracer):
        raise TypeError(f"{op_name}: {what} must be a Python bool, not a traced value{user_site()}")
    return bool(np.asarray(v))


def cho_factor(a: Any, lower: bool = False) -> tuple[Any, bool]:
    """jax.scipy.linalg.cho_factor: (c, lower) for cho_solve; c is the lower (else upper)
    Cholesky factor, the other triangle zero. Only a's `lower` (else upper) triangle is read."""
    lower = _static_bool("cho_factor", "lower", lower)
    return _cho_factor(a, lower), lower


@api
def _cho_factor(a: Any, lower: bool) -> Tracer:
    t = _symmetric_from(_square("cho_factor", a), lower)
    low = _cholesky_core(t)
    return low if lower else _mT(low)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any) -> Any:
    """jax.scipy.linalg.cho_solve: x with A x = b, A = c c^T (lower) or c^T c (upper), from
    cho_factor's (c, lower). b: (..., n) vector if it has one dimension fewer than c, else (..., n, k)."""
    c, lower = c_and_lower
    return _cho_solve(c, _static_bool("cho_solve", "lower", lower), b)


@api
def _cho_solve(c: Any, lower: bool, b: Any) -> Tracer:
    ct, bt, vector = _matrix_rhs("cho_solve", _square("cho_solve", c), b, None)
    y = _solve_tri(ct, bt, lower, not lower, False)
    x = _solve_tri(ct, y, lower, lower, False)
    return lax.reshape(x, x.shape[:-1]) if vector else x


# --- LU with partial pivoting ------------------------------------------------------------------


def _lu_loop(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """Right-looking LU with partial pivoting (LAPACK's getf2) of a square (..., n, n) a. Column
    j: the pivot is the first row >= j of largest |a[i, j]|; rows j and p swap (whole rows, as
    LAPACK); the column below the pivot is divided by it (left as 0 where the pivot is 0, as
    getf2 does, so a singular a gives a zero on U's diagonal) and the trailing block gets the
    rank-1 update. Returns (lu, piv, perm): piv[j] the row swapped with j (scipy's 0-based
    pivots), perm the permutation with (P a)[i] = a[perm[i]] = (L U)[i]."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    rows, cols, vec = _iota((n, 1), 0), _iota((1, n), 1), _iota((n,), 0)
    zero = full((), 0, a.dtype)

    def body(j: Tracer, state: tuple[Tracer, Tracer, Tracer]) -> tuple[Tracer, Tracer, Tracer]:
        m, perm, piv = state
        column = lax.reshape(_col(m, j), (*batch, n))
        magnitude = _where(vec >= j, np_api.abs(column), full((), -1, a.dtype))
        p = lax.reshape(argmax(magnitude, axis=-1), (*batch, 1))  # (..., 1) int32
        p2 = lax.reshape(p, (*batch, 1, 1))
        row_j = _row(m, j)
        row_p = take_along_axis(m, broadcast_to(p2, (*batch, 1, n)), axis=-2)
        m = _where(rows == j, row_p, _where(rows == p2, row_j, m))
        perm_j = lax.dynamic_slice(perm, [0] * len(batch) + [j], [*batch, 1])
        perm_p = take_along_axis(perm, p, axis=-1)
        perm = _where(vec == j, perm_p, _where(vec == p, perm_j, perm))
        piv = lax.dynamic_update_slice(piv, p, [0] * len(batch) + [j])
        pivot = _elem(m, j, j)
        below = _col(m, j)
        safe = _where(pivot == 0, lax.convert(lift(1), a.dtype), pivot)
        low = _where(rows > j, _where(pivot == 0, zero, below / safe), zero)  # (..., n, 1)
        upper_row = _row(m, j)  # (..., 1, n)
        m = _where(rows > j, _where(cols > j, m - low * upper_row, _where(cols == j, low, m)), m)
        return m, perm, piv

    perm0 = broadcast_to(vec, (*batch, n))
    piv0 = full((*batch, n), 0, dtypes.int32)
    m, perm, piv = fori_loop(0, n, body, (a, perm0, piv0))
    return m, piv, perm


def _unit_lower(lu_: Tracer) -> Tracer:
    return _triangle(lu_, True, -1) + _eye_like(lu_)


def _lu_core(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    return _lu_loop(a)


_lu_core = custom_jvp(_lu_core)


@_lu_core.defjvp
def _lu_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Any, Any]:
    """JAX's LU rule: with X = L^{-1} P dA U^{-1}, dL = L tril(X, -1), dU = triu(X) U."""
    (a,), (da,) = primals, tangents
    lu_, piv, perm = _lu_loop(a)
    la = _trsm_loop(lu_, _permute_rows(da, perm), True, True)  # L^{-1} P dA
    lau = _mT(_trsm_loop(_mT(lu_), _mT(la), True, False))  # L^{-1} P dA U^{-1}
    dlu = np_api.matmul(_unit_lower(lu_), _triangle(lau, True, -1)) + np_api.matmul(_triangle(lau, False), _triangle(lu_, False))
    return (lu_, piv, perm), (dlu, full(piv.shape, 0, piv.dtype), full(perm.shape, 0, perm.dtype))


def _lu_solve_perm(lu_: Tracer, perm: Tracer, b: Tracer, transpose: bool, raw: bool = True) -> Tracer:
    """x with A x = b (A^T x = b with `transpose`), P A = L U packed in lu_, b (..., n, k) of lu_'s
    batch shape. `raw`: the solve loops themselves (inside custom_jvp primals and rules), else the
    custom_jvp triangular solves (public entry points, differentiable without a tape)."""

    def tri(a: Tracer, rhs: Tracer, lower: bool, unit: bool) -> Tracer:
        return _trsm_loop(a, rhs, lower, unit) if raw else _trsm(lower, unit)(a, rhs)

    if not transpose:
        return tri(lu_, tri(lu_, _permute_rows(b, perm), True, True), False, False)
    y = tri(_mT(lu_), b, True, False)  # U^T y = b
    z = tri(_mT(lu_), y, False, True)  # L^T z = y
    return _permute_rows(z, _inverse_permutation(perm))


def _perm_from_piv(piv: Tracer) -> Tracer:
    """The row permutation that the swaps piv[0], piv[1], ... make, as a loop of swaps."""
    n = piv.shape[-1]
    batch = piv.shape[:-1]
    vec = _iota((n,), 0)

    def body(j: Tracer, perm: Tracer) -> Tracer:
        p = lax.dynamic_slice(piv, [0] * len(batch) + [j], [*batch, 1])
        perm_j = lax.dynamic_slice(perm, [0] * len(batch) + [j], [*batch, 1])
        perm_p = take_along_axis(perm, p, axis=-1)
        return _where(vec == j, perm_p, _where(vec == p, perm_j, perm))

    return fori_loop(0, n, body, broadcast_to(vec, piv.shape))


@api
def lu_factor(a: Any) -> tuple[Tracer, Tracer]:
    """jax.scipy.linalg.lu_factor of a square (..., n, n) a: (lu, piv), L (unit diagonal, not
    stored) below and U on and above the diagonal of lu, piv (int32, 0-based) the row swapped with
    row i at step i. Partial pivoting picks the first largest |entry|, as LAPACK, so piv matches
    scipy's on inputs without ties."""
    lu_, piv, _ = _lu_core(_square("lu_factor", a))
    return lu_, piv


@api
def lu(a: Any, permute_l: bool = False) -> Any:
    """jax.scipy.linalg.lu of a square (..., n, n) a: (p, l, u) with a = p @ l @ u (p a permutation
    matrix in a's dtype); with `permute_l`, (p @ l, u)."""
    lu_, _, perm = _lu_core(_square("lu", a))
    n = lu_.shape[-1]
    low, up = _unit_lower(lu_), _triangle(lu_, False)
    if permute_l:
        return _permute_rows(low, _inverse_permutation(perm)), up
    p = lax.convert(lax.reshape(perm, (*perm.shape[:-1], 1, n)) == _iota((n, 1), 0), lu_.dtype)
    return p, low, up


@api
def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: Any = 0) -> Tracer:
    """jax.scipy.linalg.lu_solve: x with a x = b (trans 0), a^T x = b (1, 2), from lu_factor's
    (lu, piv). b: (..., n) vector if it has one dimension fewer than lu, else (..., n, k)."""
    lu_, piv = lu_and_piv
    t = _trans_code("lu_solve", trans)
    lt, bt, vector = _matrix_rhs("lu_solve", _square("lu_solve", lu_), b, None)
    pv = lift(piv)
    want = _square("lu_solve", lu_).shape[:-1]
    if pv.shape != want or not dtypes.is_int(pv.dtype):
        raise ShapeError(f"lu_solve: piv must be integers of shape {want}, got {pv.dtype} {pv.shape}{user_site()}")
    perm = _perm_from_piv(lax.convert(pv, dtypes.int32))
    perm = broadcast_to(perm, lt.shape[:-1])
    x = _lu_solve_perm(lt, perm, bt, t != 0, raw=False)
    return lax.reshape(x, x.shape[:-1]) if vector else x


# --- solve, inv, det, slogdet ------------------------------------------------------------------


def _solve_core(a: Tracer, b: Tracer) -> Tracer:
    lu_, _, perm = _lu_loop(a)
    return _lu_solve_perm(lu_, perm, b, False)


_solve_core = custom_jvp(_solve_core)


@_solve_core.defjvp
def _solve_jvp(primals: tuple[Tracer, Tracer], tangents: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
    """dx = solve(a, db - da x), reusing the factorization."""
    (a, b), (da, db) = primals, tangents
    lu_, _, perm = _lu_core(a)
    x = _lu_solve_perm(lu_, perm, b, False)
    return x, _lu_solve_perm(lu_, perm, db - np_api.matmul(da, x), False)


@api
def solve(a: Any, b: Any) -> Tracer:
    """numpy.linalg.solve (numpy 2 semantics): x with a x = b, by LU with partial pivoting. b is a
    vector if it is 1-D (x (..., n)), else a stack of matrices (..., n, k); batch dimensions
    broadcast. A singular a gives inf/NaN (numpy raises LinAlgError)."""
    at = _square("solve", a)
    vector = np.ndim(b) == 1 if not isinstance(b, Tracer) else b.ndim == 1
    at, bt, vector = _matrix_rhs("solve", at, b, vector)
    x = _solve_core(at, bt)
    return lax.reshape(x, x.shape[:-1]) if vector else x


@api
def inv(a: Any) -> Tracer:
    """numpy.linalg.inv: solve(a, I) (its derivative -inv da inv comes from solve's rule)."""
    at = _square("inv", a)
    return _solve_core(at, _eye_like(at))


def _pivot_sign(piv: Tracer, dtype: Any) -> Tracer:
    """(-1)^(number of actual row swaps)."""
    n = piv.shape[-1]
    swaps = np_api.sum(lax.convert(piv != _iota((n,), 0), dtypes.int32), axis=-1)
    odd = lax.convert(swaps % 2, dtype)
    return 1.0 - 2.0 * odd


def _det_core(a: Tracer) -> Tracer:
    lu_, piv, _ = _lu_loop(a)
    return _pivot_sign(piv, a.dtype) * prod(_diagonal(lu_), axis=-1)


_det_core = custom_jvp(_det_core)


@_det_core.defjvp
def _det_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Tracer, Tracer]:
    """d det = det tr(a^{-1} da)."""
    (a,), (da,) = primals, tangents
    lu_, piv, perm = _lu_core(a)
    d = _pivot_sign(piv, a.dtype) * prod(_diagonal(lu_), axis=-1)
    return d, d * _trace(_lu_solve_perm(lu_, perm, da, False))


def _slogdet_core(a: Tracer) -> tuple[Tracer, Tracer]:
    lu_, piv, _ = _lu_loop(a)
    diag = _diagonal(lu_)
    sign = _pivot_sign(piv, a.dtype) * prod(np_api.sign(diag), axis=-1)
    return sign, np_api.sum(np_api.log(np_api.abs(diag)), axis=-1)


_slogdet_core = custom_jvp(_slogdet_core)


@_slogdet_core.defjvp
def _slogdet_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Any, Any]:
    """d log|det| = tr(a^{-1} da); the sign is piecewise constant."""
    (a,), (da,) = primals, tangents
    lu_, piv, perm = _lu_core(a)
    diag = _diagonal(lu_)
    sign = _pivot_sign(piv, a.dtype) * prod(np_api.sign(diag), axis=-1)
    logabs = np_api.sum(np_api.log(np_api.abs(diag)), axis=-1)
    return (sign, logabs), (full(sign.shape, 0, sign.dtype), _trace(_lu_solve_perm(lu_, perm, da, False)))


@api
def det(a: Any) -> Tracer:
    """numpy.linalg.det from the LU factorization: sign of the pivoting times the product of U's
    diagonal (0 exactly for an exactly singular a). Its derivative det tr(a^{-1} da) is NaN at an
    exactly singular a (JAX's cofactor rule is not reproduced)."""
    return _det_core(_square("det", a))


@api
def slogdet(a: Any) -> tuple[Tracer, Tracer]:
    """numpy.linalg.slogdet: (sign, log|det|) from the LU factorization; (0, -inf) when singular."""
    return _slogdet_core(_square("slogdet", a))


@api
def matrix_power(a: Any, n: int) -> Tracer:
    """numpy.linalg.matrix_power for a Python int n: repeated squaring (about 2 log2|n| matmuls,
    unrolled in Python); n = 0 gives the identity, n < 0 powers inv(a)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: exponent must be an integer, got {n!r}{user_site()}")
    n = int(n)
    t = lift(a)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ShapeError(
            f"matrix_power: expected a square matrix or a stack of them, shape (..., n, n), got {t.shape}{user_site()}"
        )
    if n == 0:
        return _eye_like(t)
    if n < 0:
        t, n = inv(t), -n
    result = None
    z = t
    while True:
        if n & 1:
            result = z if result is None else np_api.matmul(result, z)
        n >>= 1
        if not n:
            return result
        z = np_api.matmul(z, z)


# --- QR (Householder) --------------------------------------------------------------------------


def _qr_loop(a: Tracer) -> tuple[Tracer, Tracer]:
    """Householder QR of a (..., m, n) a with m >= n (LAPACK's geqrf + orgqr): reduced (q, r).

    Column j: the reflector H = I - u u^T (|u|^2 = 2) maps a's column j below row j - 1 onto
    beta e_j with beta = -sign(a[j, j]) |x| (sign(0) = +, as dlarfg), so R's diagonal has LAPACK's
    signs; where the column is already zero below the diagonal there is no reflection (u = 0).
    The u's are kept in the columns of a (..., m, n) matrix; a second loop applies them from the
    right end to the first n columns of the identity (O(mn) per step, no m x m matrix)."""
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    rows = _iota((m, 1), 0)
    zero = full((), 0, a.dtype)

    def reflect(j: Tracer, state: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
        r, us = state
        col = _col(r, j)  # (..., m, 1)
        x = _where(rows >= j, col, zero)
        xj = _elem(r, j, j)
        below = np_api.sum(_where(rows > j, col * col, zero), axis=-2, keepdims=True)
        norm = np_api.sqrt(xj * xj + below)
        beta = _where(xj >= 0, -norm, norm)
        v = x - _where(rows == j, beta, zero)
        vv = np_api.sum(v * v, axis=-2, keepdims=True)
        reflects = below > 0
        u = _where(reflects, v * np_api.sqrt(2.0 / _where(reflects, vv, 1.0)), zero)
        r = r - u * np_api.matmul(_mT(u), r)
        return r, lax.dynamic_update_slice(us, u, [0] * len(batch) + [0, j])

    r, us = fori_loop(0, n, reflect, (a, full(a.shape, 0, a.dtype)))

    def accumulate(s: Tracer, q: Tracer) -> Tracer:
        u = _col(us, (n - 1) - s)
        return q - u * np_api.matmul(_mT(u), q)

    eye = lax.convert(lax.compare("eq", _iota((m, n), 0), _iota((m, n), 1)), a.dtype)
    q = fori_loop(0, n, accumulate, broadcast_to(eye, a.shape))
    r = _triangle(lax.slice(r, [0] * a.ndim, [*batch, n, n], [1] * a.ndim), False)
    return q, r


def _qr_core(a: Tracer) -> tuple[Tracer, Tracer]:
    return _qr_loop(a)


_qr_core = custom_jvp(_qr_core)


@_qr_core.defjvp
def _qr_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Any, Any]:
    """JAX's rule (m >= n, full column rank): with X = Q^T dA R^{-1} and the skew-symmetric
    dO = tril(X, -1) - tril(X, -1)^T, dQ = Q (dO - X) + dA R^{-1}, dR = (X - dO) R."""
    (a,), (da,) = primals, tangents
    q, r = _qr_loop(a)
    da_rinv = _mT(_trsm_loop(_mT(r), _mT(da), True, False))  # dA R^{-1}
    x = np_api.matmul(_mT(q), da_rinv)
    low = _triangle(x, True, -1)
    do = low - _mT(low)
    return (q, r), (np_api.matmul(q, do - x) + da_rinv, np_api.matmul(x - do, r))


@api
def qr(a: Any, mode: str = "reduced") -> Any:
    """numpy.linalg.qr by Householder reflections: mode 'reduced' (q (..., m, k), r (..., k, n),
    k = min(m, n)), 'r' (r alone) or 'complete' (only where m <= n, where it equals 'reduced';
    JAX has no derivative for m > n either). R's diagonal has LAPACK's signs, so q and r match
    numpy's. A wide a (m < n) is QR of its first m columns, then r's other columns are q^T a.
    The derivative (JAX's rule) needs full column rank in the square block."""
    if mode not in ("reduced", "r", "complete"):
        raise ValueError(f"qr: mode must be 'reduced', 'r' or 'complete', got {mode!r}{user_site()}")
    t = _float_array("qr", a)
    if t.ndim < 2:
        raise ShapeError(f"qr: expected a matrix or a stack of them, shape (..., m, n), got {t.shape}{user_site()}")
    m, n = t.shape[-2:]
    if mode == "complete" and m > n:
        raise NotImplementedError(
            f"qr: mode='complete' with more rows than columns ({m} > {n}) is not supported; use 'reduced'{user_site()}"
        )
    if m >= n:
        q, r = _qr_core(t)
    else:
        lead = lax.slice(t, [0] * t.ndim, [*t.shape[:-1], m], [1] * t.ndim)
        rest = lax.slice(t, [0] * (t.ndim - 1) + [m], list(t.shape), [1] * t.ndim)
        q, r1 = _qr_core(lead)
        r = lax.concatenate([r1, np_api.matmul(_mT(q), rest)], t.ndim - 1)
    return r if mode == "r" else (q, r)
