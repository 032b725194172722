"""`ig.linalg`: numpy.linalg and jax.scipy.linalg functions, composites of `nn` ops and loops.

- `norm` (below).
- Factorizations and solves, as jax.numpy.linalg / jax.scipy.linalg, on float32 and float64 (ints
  become float32; float16/bfloat16 are refused), with leading batch dimensions: `cholesky`,
  `solve_triangular`, `cho_factor` / `cho_solve`, `lu_factor` / `lu` / `lu_solve` (square
  matrices), `solve`, `inv`, `det`, `slogdet`, `matrix_power`, `qr` (Householder).
- Spectral (section "Jacobi eigenvalues and singular values": the reference loops where LAPACK
  is not used): `eigh` / `eigvalsh` (symmetric, parallel cyclic Jacobi), `svd` / `svdvals`
  (one-sided Jacobi; full_matrices=True only for square
  matrices), and on top of them `pinv`, `lstsq` (2-D, JAX's always-full residuals), `matrix_rank`,
  `cond`, and the matrix norms ord=2 / -2 / 'nuc'. Not provided: eig/eigvals (non-symmetric).
- Cholesky, triangular solves, LU, eigh, SVD and QR are the `nn` ops `nn.cholesky`,
  `nn.triangular_solve`, `nn.lu`, `nn.eigh`, `nn.svd` and `nn.qr` (LAPACK's potrf, trsm, getrf,
  syevd, gesdd, geqrf + orgqr): the CPU pipeline calls LAPACK for them, the GPU pipeline and a
  CPU without LAPACK run their reference loops, `_cholesky_loop`, `_trsm_loop`, `_lu_loop`,
  `_eigh_raw`, `_svd_raw` and `_qr_loop` below (plus `_eigh_post` / `_svd_post`: the ops' sign
  convention and NaN rule), which `nn-expand-factorizations` traces (as JAX's `lower_fun`). Every function's derivative is an analytic `ig.custom_jvp` rule (JAX's),
  so reverse mode never tapes a loop at first order. The section "Factorizations and solves"
  below gives the algorithms, their costs and the derivative story.
- Failure modes follow JAX, not numpy (which raises LinAlgError): a matrix that is not positive
  definite gives an all-NaN Cholesky factor; an exactly singular matrix gives a zero on U's
  diagonal (LAPACK's getrf), det 0, slogdet (0, -inf), and inf/NaN from solve and inv; the
  derivative of det at an exactly singular matrix is NaN (JAX uses a cofactor rule there).

`norm` covers the vector norms (ord None/2, 1, inf, -inf, 0, any other p) and the matrix
norms ('fro', 1, -1, inf, -inf, and 2 / -2 / 'nuc' from the singular values). The 2-norm's gradient at the zero vector is decided as 0
(a subgradient) instead of the NaN of sqrt'(0) * 0: the square root reads 1 on the branch not
taken, as `ig.std` does (docs/autodiff.md, Contracts). Ties of the max/min norms share the
cotangent equally (the reduce_max rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax

from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, broadcast_shapes, broadcast_to, lift, normalize_axes, require_float
from irgrad.tracing.tracer import Tracer, full
from irgrad.numpy.control_flow import fori_loop
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.numpy.numerics import all as all_, argmax, isfinite
from irgrad.numpy.reductions import argsort, prod
from irgrad.numpy.shape import take_along_axis
from irgrad.numpy.custom_derivatives import custom_jvp

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
    "eigh",
    "eigvalsh",
    "svd",
    "svdvals",
    "pinv",
    "lstsq",
    "matrix_rank",
    "cond",
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
    if ord == "nuc" or (not isinstance(ord, str) and ord in (2, -2)):
        others = [i for i in range(t.ndim) if i not in (row, col)]
        s = svdvals(lax.transpose(t, [*others, row, col]))
        if ord == "nuc":
            total = np_api.sum(s, axis=-1)
            return lax.reshape(total, [1 if i in (row, col) else d for i, d in enumerate(t.shape)])
        k = s.shape[-1]
        start = [0] * (s.ndim - 1) + [0 if ord == 2 else k - 1]
        pick = lax.slice(s, start, [*s.shape[:-1], start[-1] + 1], [1] * s.ndim)
        return lax.reshape(pick, [1 if i in (row, col) else d for i, d in enumerate(t.shape)])
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
# Ops and loops. The public functions emit `nn.cholesky`, `nn.triangular_solve` and `nn.lu`
# (irgrad/tracing/primitives.py); the loops below are those ops' reference implementations, which
# `nn-expand-factorizations` (irgrad/transforms/nn/nn_expand_factorizations.py) traces wherever LAPACK
# is not used. Measured (benchmarks/linalg.py, 128x128 f64 log-likelihood value and gradient,
# 2 cores): 9.1 ms with the loops, 1.5 ms with LAPACK (jax.jit 0.50, numpy's closed form 0.60).
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
            return lax.triangular_solve(a, b, lower, unit)

        primal.__name__ = primal.__qualname__ = f"solve_triangular_{'lower' if lower else 'upper'}{'_unit' if unit else ''}"
        f = custom_jvp(primal)

        @f.defjvp
        def _rule(primals: tuple[Tracer, Tracer], tangents: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
            (a, b), (da, db) = primals, tangents
            x = lax.triangular_solve(a, b, lower, unit)
            dx = lax.triangular_solve(a, db - np_api.matmul(_triangle(da, lower, -1 if unit else 0), x), lower, unit)
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
    return lax.cholesky(a)


_cholesky_core = custom_jvp(_cholesky_core)


@_cholesky_core.defjvp
def _cholesky_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Tracer, Tracer]:
    """dL = L Phi(L^{-1} dA L^{-T}) (Murray 2016, as JAX), dA symmetrized."""
    (a,), (da,) = primals, tangents
    low = lax.cholesky(a)
    da = 0.5 * (da + _mT(da))
    left = lax.triangular_solve(low, da, True, False)  # L^{-1} dA
    middle = lax.triangular_solve(low, _mT(left), True, False)  # L^{-1} dA L^{-T}
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
    return lax.lu(a)


_lu_core = custom_jvp(_lu_core)


@_lu_core.defjvp
def _lu_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Any, Any]:
    """JAX's LU rule: with X = L^{-1} P dA U^{-1}, dL = L tril(X, -1), dU = triu(X) U."""
    (a,), (da,) = primals, tangents
    lu_, piv, perm = lax.lu(a)
    la = lax.triangular_solve(lu_, _permute_rows(da, perm), True, True)  # L^{-1} P dA
    lau = _mT(lax.triangular_solve(_mT(lu_), _mT(la), True, False))  # L^{-1} P dA U^{-1}
    dlu = np_api.matmul(_unit_lower(lu_), _triangle(lau, True, -1)) + np_api.matmul(_triangle(lau, False), _triangle(lu_, False))
    return (lu_, piv, perm), (dlu, full(piv.shape, 0, piv.dtype), full(perm.shape, 0, perm.dtype))


def _lu_solve_perm(lu_: Tracer, perm: Tracer, b: Tracer, transpose: bool, raw: bool = True) -> Tracer:
    """x with A x = b (A^T x = b with `transpose`), P A = L U packed in lu_, b (..., n, k) of lu_'s
    batch shape. `raw`: the solve loops themselves (inside custom_jvp primals and rules), else the
    custom_jvp triangular solves (public entry points, differentiable without a tape)."""

    def tri(a: Tracer, rhs: Tracer, lower: bool, unit: bool) -> Tracer:
        return lax.triangular_solve(a, rhs, lower, unit) if raw else _trsm(lower, unit)(a, rhs)

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
    lu_, _, perm = lax.lu(a)
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
    lu_, piv, _ = lax.lu(a)
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
    lu_, piv, _ = lax.lu(a)
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


def _finite_or_nan(a: Tracer, *results: Tracer) -> list[Tracer]:
    """`results` per batch element of a (..., m, n), all NaN where a has a NaN or inf (the
    contract of nn.eigh, nn.svd and nn.qr)."""
    ok = all_(isfinite(a), axis=(-2, -1))
    out = []
    for r in results:
        mask = lax.reshape(ok, (*ok.shape, *([1] * (r.ndim - ok.ndim))))
        out.append(_where(mask, r, full((), np.nan, r.dtype)))
    return out


def _sign_fix(x: Tracer) -> Tracer:
    """+1 or -1 per column of x (..., m, k): the sign of each column's first entry of at least
    half the column's largest magnitude (the sign convention of nn.eigh and nn.svd)."""
    mag = np_api.abs(x)
    big = mag >= 0.5 * np_api.max(mag, axis=-2, keepdims=True)
    first = argmax(lax.convert(big, dtypes.int32), axis=-2, keepdims=True)
    pick = take_along_axis(x, first, axis=-2)
    one = full((), 1, x.dtype)
    return lax.reshape(_where(pick < 0, -one, one), (*x.shape[:-2], x.shape[-1]))


def _qr_reference(a: Tracer) -> tuple[Tracer, Tracer]:
    """nn.qr's reference: the Householder loop, NaN where a is not finite."""
    q, r = _finite_or_nan(a, *_qr_loop(a))
    return q, r


def _qr_core(a: Tracer) -> tuple[Tracer, Tracer]:
    return lax.qr(a)


_qr_core = custom_jvp(_qr_core)


@_qr_core.defjvp
def _qr_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Any, Any]:
    """JAX's rule (m >= n, full column rank): with X = Q^T dA R^{-1} and the skew-symmetric
    dO = tril(X, -1) - tril(X, -1)^T, dQ = Q (dO - X) + dA R^{-1}, dR = (X - dO) R."""
    (a,), (da,) = primals, tangents
    q, r = lax.qr(a)
    da_rinv = _mT(lax.triangular_solve(_mT(r), _mT(da), True, False))  # dA R^{-1}
    x = np_api.matmul(_mT(q), da_rinv)
    low = _triangle(x, True, -1)
    do = low - _mT(low)
    return (q, r), (np_api.matmul(q, do - x) + da_rinv, np_api.matmul(x - do, r))


def _pad_columns(x: Tracer, total: int) -> Tracer:
    """x (..., m, k) with zero columns appended up to `total` columns."""
    zeros = full((*x.shape[:-1], total - x.shape[-1]), 0, x.dtype)
    return lax.concatenate([x, zeros], x.ndim - 1)


def _columns_from(x: Tracer, start: int) -> Tracer:
    return lax.slice(x, [0] * (x.ndim - 1) + [start], list(x.shape), [1] * x.ndim)


def _transported(q1: Tracer, dq1: Tracer, q2: Tracer) -> Tracer:
    """The tangent of completing columns q2 (orthonormal, orthogonal to q1's columns) that moves
    them with the column space as q1 moves by dq1: -q1 dq1^T q2. The completion of a basis is not
    unique (JAX raises here); this choice is exact for whatever depends on q2 only through its
    span, e.g. the projector q2 q2^T = I - q1 q1^T, which is all a non-unique basis determines."""
    return -np_api.matmul(q1, np_api.matmul(_mT(dq1), q2))


def _qr_complete_raw(a: Tracer) -> tuple[Tracer, Tracer]:
    """Complete QR of a tall a (..., m, n), m > n: q (..., m, m), r (..., m, n). nn.qr of [a | 0]
    (square): past column n the columns are zero below the diagonal, so Householder reflects
    no more and q = H_1 ... H_n, whose last m - n columns complete a's column space; r's first n
    columns are [R; 0]."""
    n = a.shape[-1]
    q, r = lax.qr(_pad_columns(a, a.shape[-2]))
    return q, lax.slice(r, [0] * r.ndim, [*r.shape[:-1], n], [1] * r.ndim)


_qr_complete = custom_jvp(_qr_complete_raw)


@_qr_complete.defjvp
def _qr_complete_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Any, Any]:
    """The reduced QR's rule for q's first n columns and r's first n rows (r's others are 0),
    `_transported` for q's completing columns."""
    (a,), (da,) = primals, tangents
    n = a.shape[-1]
    q, r = _qr_complete_raw(a)
    _, (dq1, dr1) = _qr_jvp((a,), (da,))
    dq2 = _transported(lax.slice(q, [0] * q.ndim, [*q.shape[:-1], n], [1] * q.ndim), dq1, _columns_from(q, n))
    dr = lax.concatenate([dr1, full((*a.shape[:-2], a.shape[-2] - n, n), 0, a.dtype)], a.ndim - 2)
    return (q, r), (lax.concatenate([dq1, dq2], a.ndim - 1), dr)


@api
def qr(a: Any, mode: str = "reduced") -> Any:
    """numpy.linalg.qr by Householder reflections: mode 'reduced' (q (..., m, k), r (..., k, n),
    k = min(m, n)), 'r' (r alone) or 'complete' (q (..., m, m), r (..., m, n); the same as
    'reduced' where m <= n; for m > n the completing columns' derivative is `_transported`'s,
    JAX raises there). R's diagonal has
    LAPACK's signs, so q and r match numpy's (q's completing columns too, up to roundoff). A
    wide a (m < n) is QR of its first m columns, then r's other columns are q^T a. The
    derivative (JAX's rule) needs full column rank in the square block."""
    if mode not in ("reduced", "r", "complete"):
        raise ValueError(f"qr: mode must be 'reduced', 'r' or 'complete', got {mode!r}{user_site()}")
    t = _float_array("qr", a)
    if t.ndim < 2:
        raise ShapeError(f"qr: expected a matrix or a stack of them, shape (..., m, n), got {t.shape}{user_site()}")
    m, n = t.shape[-2:]
    if mode == "complete" and m > n:
        return _qr_complete(t)
    if m >= n:
        q, r = _qr_core(t)
    else:
        lead = lax.slice(t, [0] * t.ndim, [*t.shape[:-1], m], [1] * t.ndim)
        rest = lax.slice(t, [0] * (t.ndim - 1) + [m], list(t.shape), [1] * t.ndim)
        q, r1 = _qr_core(lead)
        r = lax.concatenate([r1, np_api.matmul(_mT(q), rest)], t.ndim - 1)
    return r if mode == "r" else (q, r)


# --- Jacobi eigenvalues and singular values ----------------------------------------------------
#
# Both are parallel cyclic Jacobi (Brent-Luk round-robin ordering): a sweep is n - 1 rounds (n
# rounded up to even), each round pairs every index with another one (an index left over for an
# odd n sits out) and applies all n/2 disjoint plane rotations at once as one orthogonal matrix J
# built under masks from the round's partner table: J[i, i] = c_i, J[i, partner(i)] = s_i. eigh
# updates A <- J^T A J (then symmetrizes), V <- V J; svd is one-sided (Hestenes): A <- A J, V <- V J,
# each rotation chosen from the 2 x 2 Gram block of the two columns, so A's columns become
# orthogonal, their norms the singular values and V the right singular vectors. The whole thing
# is one `fori_loop` of sweeps * (n - 1) rounds, O(n^3) per round (a matmul); the sweep count is
# fixed, `_sweeps(n)`: Jacobi converges quadratically and 10 sweeps reach float64 roundoff far
# beyond the sizes here. The results are sorted (eigh ascending, svd descending). svd's U is the
# Householder Q of A V (columns sorted, sign-fixed by R's diagonal), so U stays orthonormal when A
# is rank deficient (the columns of zero singular values complete the basis).
#
# Derivatives: custom_jvp rules with JAX's formulas (eigh: dw = diag(V^T dA V), dV = V (F o
# V^T dA V), F_ij = 1 / (w_j - w_i); svd: JAX's `_svd_jvp_rule`; svdvals: ds = diag(U^T dA V);
# pinv: Golub-Pereyra). Like JAX, degenerate eigenvalues (or singular values, for U and V) make
# F infinite and the derivative of the vectors inf/NaN; the eigenvalues' and singular values' own
# derivatives stay finite.


def _sweeps(n: int) -> int:
    return max(10, 2 * math.ceil(math.log2(max(n, 2))))


def _round_robin(n: int) -> np.ndarray:
    """(rounds, n) int32: partner[r, i] is the index paired with i in round r (i itself if i sits
    out, for an odd n); every pair meets once in the n - 1 (n even) or n (n odd) rounds."""
    big = n + (n % 2)
    rounds = max(big - 1, 1)
    table = np.tile(np.arange(n, dtype=np.int32), (rounds, 1))
    for r in range(big - 1):
        pairs = [(big - 1, r)] + [((r + k) % (big - 1), (r - k) % (big - 1)) for k in range(1, big // 2)]
        for p, q in pairs:
            if p < n and q < n:
                table[r, p], table[r, q] = q, p
    return table


def _rotations(app: Tracer, aqq: Tracer, apq: Tracer, partner: Tracer) -> Tracer:
    """The round's rotation J (..., n, n) from, per index i with partner p(i): app = M[i, i],
    aqq = M[p, p], apq = M[i, p] of the symmetric M (A for eigh, A^T A for svd), all (..., n).
    The angle zeroes M[i, p] in J^T M J (Rutishauser's formula, the small angle); the pair's lower
    index decides the sign convention so that both ends build the same rotation."""
    n = partner.shape[-1]
    idx = _iota((n,), 0)
    lo = idx < partner
    active = (partner != idx) & (apq != 0)
    one = full((), 1, app.dtype)
    zero = full((), 0, app.dtype)
    d_lo, d_hi = _where(lo, app, aqq), _where(lo, aqq, app)
    theta = (d_hi - d_lo) / (2.0 * _where(active, apq, one))
    big = np_api.abs(theta) > 1e100
    safe = _where(big, one, theta)
    t = _where(theta >= 0, one, -one) / (np_api.abs(safe) + np_api.sqrt(safe * safe + 1.0))
    t = _where(active, _where(big, 0.5 / _where(big, theta, one), t), zero)
    c = 1.0 / np_api.sqrt(t * t + 1.0)
    s = _where(lo, t * c, -(t * c))
    eye = lax.compare("eq", _iota((n, n), 0), _iota((n, n), 1))
    hit = lax.reshape(partner, (n, 1)) == _iota((n, n), 1)
    c2, s2 = lax.reshape(c, (*c.shape, 1)), lax.reshape(s, (*s.shape, 1))
    return _where(eye, c2, _where(hit & ~eye, s2, zero))


def _jacobi(a: Tracer, one_sided: bool) -> tuple[Tracer, Tracer]:
    """(A', V) after the fixed sweeps: A' = V^T A V (nearly diagonal) for eigh, A' = A V (orthogonal
    columns) for the one-sided svd (a (..., m, n), m >= n)."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    table_np = _round_robin(n)
    rounds = table_np.shape[0]
    table = lift(table_np)

    def body(k: Tracer, state: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
        m, v = state
        partner = lax.reshape(lax.dynamic_slice(table, [k % rounds, 0], [1, n]), (n,))
        if one_sided:
            app = np_api.sum(m * m, axis=-2)
            other = take_along_axis(m, broadcast_to(partner, m.shape), axis=-1)  # column p(i) at i
            apq = np_api.sum(m * other, axis=-2)
        else:
            app = _diagonal(m)
            apq = lax.reshape(
                take_along_axis(m, broadcast_to(lax.reshape(partner, (n, 1)), (*batch, n, 1)), axis=-1), (*batch, n)
            )
        aqq = take_along_axis(app, broadcast_to(partner, app.shape), axis=-1)
        j = _rotations(app, aqq, apq, partner)
        if one_sided:
            m = np_api.matmul(m, j)
        else:
            m = np_api.matmul(_mT(j), np_api.matmul(m, j))
            m = 0.5 * (m + _mT(m))
        return m, np_api.matmul(v, j)

    eye = broadcast_to(_eye_like(full((n, n), 0, a.dtype)), (*batch, n, n))
    return fori_loop(0, _sweeps(n) * rounds, body, (a, eye))


def _sort_columns(idx: Tracer, *xs: Tracer) -> list[Tracer]:
    """Each x[..., :, idx] (idx (..., n) over x's last axis)."""
    out = []
    for x in xs:
        i = broadcast_to(lax.reshape(idx, (*idx.shape[:-1], 1, idx.shape[-1])), x.shape)
        out.append(take_along_axis(x, i, axis=-1))
    return out


def _eigh_raw(a: Tracer) -> tuple[Tracer, Tracer]:
    """Eigenvalues ascending and eigenvectors (columns, any signs) of the symmetric (..., n, n)
    matrix whose lower triangle is a's (LAPACK's syevd's contract)."""
    d, v = _jacobi(_symmetric_from(a, True), one_sided=False)
    w = _diagonal(d)
    idx = argsort(w, axis=-1)
    (v,) = _sort_columns(idx, v)
    return take_along_axis(w, idx, axis=-1), v


def _eigh_post(a: Tracer, w: Tracer, v: Tracer) -> tuple[Tracer, Tracer]:
    """nn.eigh's contract on top of a raw eigendecomposition: signs fixed, NaN where the lower
    triangle of a is not finite."""
    v = v * _row_vec(_sign_fix(v))
    w, v = _finite_or_nan(_triangle(a, True), w, v)
    return w, v


def _eigh_reference(a: Tracer) -> tuple[Tracer, Tracer]:
    """nn.eigh's reference: Jacobi, then its contract."""
    return _eigh_post(a, *_eigh_raw(a))


def _eigh_core(a: Tracer) -> tuple[Tracer, Tracer]:
    return lax.eigh(a)


_eigh_core = custom_jvp(_eigh_core)


@_eigh_core.defjvp
def _eigh_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Any, Any]:
    """JAX's rule: with dA symmetrized and X = V^T dA V, dw = diag(X), dV = V (F o X),
    F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it."""
    (a,), (da,) = primals, tangents
    w, v = lax.eigh(a)
    da = 0.5 * (da + _mT(da))
    x = np_api.matmul(_mT(v), np_api.matmul(da, v))
    n = w.shape[-1]
    eye = lax.compare("eq", _iota((n, n), 0), _iota((n, n), 1))
    diff = lax.reshape(w, (*w.shape[:-1], 1, n)) - lax.reshape(w, (*w.shape, 1))
    f = _where(eye, full((), 0, a.dtype), 1.0 / _where(eye, full((), 1, a.dtype), diff))
    return (w, v), (_diagonal(x), np_api.matmul(v, f * x))


def _uplo_lower(op_name: str, uplo: Any) -> bool:
    if uplo not in ("L", "U"):
        raise ValueError(f"{op_name}: UPLO must be 'L' or 'U', got {uplo!r}{user_site()}")
    return uplo == "L"


@api
def eigh(a: Any, UPLO: str = "L", symmetrize_input: bool = True) -> tuple[Tracer, Tracer]:  # noqa: N803
    """jax.numpy.linalg.eigh of a symmetric (..., n, n) a: (w, v), the eigenvalues ascending and
    the eigenvectors as the columns of v (a v = v diag(w)), by parallel cyclic Jacobi rotations. With
    `symmetrize_input` (the default, as JAX) a is replaced by (a + a^T) / 2; without it only the
    `UPLO` triangle ('L' or 'U') is read, as numpy. Each eigenvector's sign is fixed (its first
    entry of at least half its largest magnitude is positive; nn.eigh's convention), so results
    agree across backends; numpy's signs are LAPACK's and may differ.
    The derivative is JAX's: degenerate eigenvalues make the eigenvectors' derivative inf/NaN."""
    lower = _uplo_lower("eigh", UPLO)
    t = _square("eigh", a)
    t = 0.5 * (t + _mT(t)) if symmetrize_input else _symmetric_from(t, lower)
    return _eigh_core(t)


@api
def eigvalsh(a: Any, UPLO: str = "L", symmetrize_input: bool = True) -> Tracer:  # noqa: N803
    """numpy.linalg.eigvalsh: eigh's eigenvalues, ascending (their derivative diag(V^T dA V) is
    finite even for degenerate eigenvalues)."""
    return eigh(a, UPLO, symmetrize_input)[0]


# --- SVD ---------------------------------------------------------------------------------------


def _svd_tall(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """Reduced (u, s, vt) of a (..., m, n) a with m >= n, s descending."""
    av, v = _jacobi(a, one_sided=True)
    s = _safe_sqrt(np_api.sum(av * av, axis=-2))
    idx = argsort(-s, axis=-1)
    s = take_along_axis(s, idx, axis=-1)
    av, v = _sort_columns(idx, av, v)
    q, r = _qr_loop(av)
    sign = _where(_diagonal(r) < 0, full((), -1, a.dtype), full((), 1, a.dtype))
    u = q * lax.reshape(sign, (*sign.shape[:-1], 1, sign.shape[-1]))
    return u, s, _mT(v)


def _svd_raw(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """Reduced (u (..., m, k), s (..., k), vt (..., k, n)), k = min(m, n), any signs: a wide a is
    done as a^T."""
    m, n = a.shape[-2:]
    if m >= n:
        return _svd_tall(a)
    u, s, vt = _svd_tall(_mT(a))
    return _mT(vt), s, _mT(u)


def _svd_post(a: Tracer, u: Tracer, s: Tracer, vt: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """nn.svd's contract on top of a raw SVD: u's column signs fixed (vt's rows with them), NaN
    where a is not finite."""
    sign = _sign_fix(u)
    u, vt = u * _row_vec(sign), vt * _mT(_row_vec(sign))
    u, s, vt = _finite_or_nan(a, u, s, vt)
    return u, s, vt


def _svd_reference(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """nn.svd's reference: one-sided Jacobi, then its contract."""
    return _svd_post(a, *_svd_raw(a))


def _svd_loop(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """The reduced SVD as the nn.svd op (LAPACK on the CPU, `_svd_reference` elsewhere)."""
    return lax.svd(a)


def _svd_core(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    return lax.svd(a)


_svd_core = custom_jvp(_svd_core)


def _row_vec(s: Tracer) -> Tracer:
    return lax.reshape(s, (*s.shape[:-1], 1, s.shape[-1]))


@_svd_core.defjvp
def _svd_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Any, Any]:
    """JAX's `_svd_jvp_rule` (reduced): with dS = U^T dA V, ds = diag(dS),
    F_ij = 1 / (s_j^2 - s_i^2) (0 on the diagonal), dU = U (F o (dS S + S dS^T) + (dS - dS^T) / 2 S^{-1})
    + (I - U U^T) dA V S^{-1} (m > n), dV = V (F o (S dS + dS^T S)) + (I - V V^T) dA^T U S^{-1} (n > m)."""
    (a,), (da,) = primals, tangents
    u, s, vt = _svd_loop(a)
    v = _mT(vt)
    k = s.shape[-1]
    m, n = a.shape[-2:]
    ds_mat = np_api.matmul(_mT(u), np_api.matmul(da, v))
    ds = _diagonal(ds_mat)
    s_row = _row_vec(s)
    s_col = _mT(s_row)
    eye = _eye_like(full((k, k), 0, a.dtype))
    diffs = (s_row + s_col) * (s_row - s_col)
    f = 1.0 / (diffs + eye) - eye
    dss = s_row * ds_mat
    sds = s_col * ds_mat
    zero_s = lax.convert(s == 0, a.dtype)
    s_inv = 1.0 / (s + zero_s) - zero_s
    du = np_api.matmul(u, f * (dss + _mT(dss)) + 0.5 * (ds_mat - _mT(ds_mat)) * (eye * _row_vec(s_inv)))
    dv = np_api.matmul(v, f * (sds + _mT(sds)))
    if m > n:
        dav = np_api.matmul(da, v)
        du = du + (dav - np_api.matmul(u, np_api.matmul(_mT(u), dav))) / s_row
    if n > m:
        dau = np_api.matmul(_mT(da), u)
        dv = dv + (dau - np_api.matmul(v, np_api.matmul(vt, dau))) / s_row
    return (u, s, vt), (du, ds, _mT(dv))


def _complete_columns(u: Tracer) -> Tracer:
    """u (..., m, k) with orthonormal columns, m > k, completed to an orthogonal (..., m, m): its
    first k columns are u's, the rest the last m - k columns of nn.qr([u | 0]) (see
    `_qr_complete_raw`)."""
    q, _ = lax.qr(_pad_columns(u, u.shape[-2]))
    return lax.concatenate([u, _columns_from(q, u.shape[-1])], u.ndim - 1)


def _svd_full_raw(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """The full SVD of a non-square a: u (..., m, m), s (..., k), vt (..., n, n), the reduced one
    with the shorter factor's basis completed."""
    u, s, vt = lax.svd(a)
    m, n = a.shape[-2:]
    if m > n:
        u = _complete_columns(u)
    else:
        vt = _mT(_complete_columns(_mT(vt)))
    return u, s, vt


_svd_full = custom_jvp(_svd_full_raw)


@_svd_full.defjvp
def _svd_full_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Any, Any]:
    """The reduced SVD's rule for u's and vt's first k columns (rows), `_transported` for the
    completing ones."""
    (a,), (da,) = primals, tangents
    m, n = a.shape[-2:]
    k = min(m, n)
    u, s, vt = _svd_full_raw(a)
    _, (du, ds, dvt) = _svd_jvp((a,), (da,))
    if m > n:
        du = lax.concatenate([du, _transported(lax.slice(u, [0] * u.ndim, [*u.shape[:-1], k], [1] * u.ndim), du, _columns_from(u, k))], u.ndim - 1)
    else:
        v = _mT(vt)
        dv = _mT(dvt)
        v1 = lax.slice(v, [0] * v.ndim, [*v.shape[:-1], k], [1] * v.ndim)
        dvt = _mT(lax.concatenate([dv, _transported(v1, dv, _columns_from(v, k))], v.ndim - 1))
    return (u, s, vt), (du, ds, dvt)


def _svdvals_core(a: Tracer) -> Tracer:
    return _svd_loop(a)[1]


_svdvals_core = custom_jvp(_svdvals_core)


@_svdvals_core.defjvp
def _svdvals_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Tracer, Tracer]:
    """ds = diag(U^T dA V) (finite also for repeated singular values)."""
    (a,), (da,) = primals, tangents
    u, s, vt = _svd_loop(a)
    return s, _diagonal(np_api.matmul(_mT(u), np_api.matmul(da, _mT(vt))))


def _matrix_arg(op_name: str, x: Any) -> Tracer:
    t = _float_array(op_name, x)
    if t.ndim < 2:
        raise ShapeError(f"{op_name}: expected a matrix or a stack of them, shape (..., m, n), got {t.shape}{user_site()}")
    return t


@api
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """numpy.linalg.svd: (u, s, vh) with a = u diag(s) vh, s descending (nn.svd: LAPACK's gesdd
    on the CPU, one-sided Jacobi elsewhere); only s with `compute_uv=False`. Reduced u (..., m, k),
    vh (..., k, n), k = min(m, n), with `full_matrices=False`; with `full_matrices=True` (the
    default, as numpy and JAX) a non-square a's shorter factor is completed to a square
    orthogonal matrix (its extra columns span the orthogonal complement; any such basis is
    valid, numpy's may differ; their derivative is `_transported`'s, exact for what depends
    only on their span; JAX raises there). Singular vector signs follow nn.svd's convention (u's columns as eigh's
    eigenvectors, vh's rows with them), not necessarily numpy's. Derivatives are JAX's rules;
    u's and vh's are inf/NaN at repeated (or, for the extra columns of a non-square a, zero)
    singular values, s's are always finite. With `hermitian=True` a symmetric a is decomposed
    through eigh (of (a + a^T) / 2, as JAX): s = |w| descending, u = the eigenvectors in that
    order, vh = u^T with the rows of negative eigenvalues negated; derivatives through eigh's."""
    t = _matrix_arg("svd", a)
    if hermitian:
        return _svd_hermitian(_square("svd", t), compute_uv)
    if not compute_uv:
        return _svdvals_core(t)
    m, n = t.shape[-2:]
    if full_matrices and m != n:
        return _svd_full(t)
    return _svd_core(t)


def _svd_hermitian(t: Tracer, compute_uv: bool) -> Any:
    """svd(hermitian=True) from eigh (see `svd`)."""
    w, v = _eigh_core(0.5 * (t + _mT(t)))
    order = argsort(-np_api.abs(w), axis=-1)
    w = take_along_axis(w, order, axis=-1)
    s = np_api.abs(w)
    if not compute_uv:
        return s
    (u,) = _sort_columns(order, v)
    one = full((), 1, t.dtype)
    sign = _where(w < 0, -one, one)
    return u, s, _mT(u * _row_vec(sign))


@api
def svdvals(x: Any) -> Tracer:
    """numpy.linalg.svdvals: the singular values, descending (svd with compute_uv=False)."""
    return _svdvals_core(_matrix_arg("svdvals", x))


# --- pinv, lstsq, matrix_rank, cond ------------------------------------------------------------


def _static_float(op_name: str, what: str, v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, Tracer) or np.ndim(v) != 0:
        raise TypeError(f"{op_name}: {what} must be None or a Python float, not an array or a traced value{user_site()}")
    return float(v)


def _pinv_loop(a: Tracer, rtol: float, strict: bool) -> Tracer:
    """V diag(1/s) U^T over the singular values above rtol * s_max (>= with strict False)."""
    u, s, vt = _svd_loop(a)
    cutoff = rtol * lax.slice(s, [0] * s.ndim, [*s.shape[:-1], 1], [1] * s.ndim)
    keep = s > cutoff if strict else s >= cutoff
    s_inv = _where(keep, 1.0 / _where(keep, s, full((), 1, a.dtype)), full((), 0, a.dtype))
    return np_api.matmul(_mT(vt) * _row_vec(s_inv), _mT(u))


_PINV: dict[tuple[float, bool], custom_jvp] = {}


def _pinv(rtol: float, strict: bool) -> custom_jvp:
    """The custom_jvp pseudo-inverse for one cutoff, with Golub and Pereyra's derivative (as JAX):
    dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P."""
    key = (rtol, strict)
    if key not in _PINV:

        def primal(a: Tracer) -> Tracer:
            return _pinv_loop(a, rtol, strict)

        f = custom_jvp(primal)

        @f.defjvp
        def _rule(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Tracer, Tracer]:
            (a,), (da,) = primals, tangents
            p = _pinv_loop(a, rtol, strict)
            pt, dat = _mT(p), _mT(da)
            dp = -np_api.matmul(p, np_api.matmul(da, p))
            dp = dp + np_api.matmul(np_api.matmul(p, pt), dat - np_api.matmul(dat, np_api.matmul(a, p)))
            dp = dp + np_api.matmul(dat - np_api.matmul(np_api.matmul(p, a), dat), np_api.matmul(pt, p))
            return p, dp

        _PINV[key] = f
    return _PINV[key]


def _default_rtol(t: Tracer) -> float:
    return float(np.finfo(np.dtype(t.dtype)).eps) * max(t.shape[-2:])


@api
def pinv(a: Any, rtol: Any = None, hermitian: bool = False) -> Tracer:
    """jax.numpy.linalg.pinv: the Moore-Penrose pseudo-inverse (..., n, m) from the SVD, singular
    values <= rtol * s_max dropped (rtol a Python float; default max(m, n) * eps). The derivative
    is JAX's (Golub-Pereyra), correct where the rank does not change. `hermitian=True` (numpy's
    hint that a is symmetric) computes the same pseudo-inverse by the general SVD."""
    t = _matrix_arg("pinv", a)
    r = _static_float("pinv", "rtol", rtol)
    return _pinv(_default_rtol(t) if r is None else r, True)(t)


@api
def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Tracer, Tracer, Tracer, Tracer]:
    """jax.numpy.linalg.lstsq of a 2-D (m, n) a: (x, residuals, rank, s). x minimizes |a x - b|
    (the minimum-norm one), from the SVD with singular values < rcond * s_max dropped (rcond a
    Python float; default max(m, n) * eps); b (m,) or (m, k). As JAX (not numpy), residuals are
    always |b - a x|^2 per column, shape (k,) (or (1,) for a vector b); rank is int32; s the
    singular values. x's derivative is the pseudo-inverse's."""
    at = _float_array("lstsq", a)
    bt = _float_array("lstsq", b)
    if at.ndim != 2:
        raise ShapeError(f"lstsq: a must be 2-D, got shape {at.shape}{user_site()}")
    if bt.ndim not in (1, 2) or bt.shape[0] != at.shape[0]:
        raise ShapeError(f"lstsq: b must be (m,) or (m, k) with m = {at.shape[0]}, got shape {bt.shape}{user_site()}")
    d = dtypes.promote(at.dtype, bt.dtype)
    at, bt = lax.convert(at, d), lax.convert(bt, d)
    vector = bt.ndim == 1
    if vector:
        bt = lax.reshape(bt, (bt.shape[0], 1))
    r = _static_float("lstsq", "rcond", rcond)
    r = _default_rtol(at) if r is None else r
    x = np_api.matmul(_pinv(r, False)(at), bt)
    resid = np_api.sum((bt - np_api.matmul(at, x)) ** 2, axis=0)
    s = _svdvals_core(at)
    cutoff = r * lax.slice(s, [0], [1], [1])
    rank = np_api.sum(lax.convert(s >= cutoff, dtypes.int32))
    return (lax.reshape(x, (x.shape[0],)) if vector else x), resid, rank, s


@api
def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Tracer:  # noqa: N803
    """numpy.linalg.matrix_rank (int32, as JAX): the number of singular values > tol (absolute), or
    > rtol * s_max (default rtol max(m, n) * eps). A 1-D (or 0-D) input: 1 unless it is all zero.
    `hermitian` (numpy's hint) changes nothing: the general singular values are used."""
    t = _float_array("matrix_rank", A)
    if t.ndim < 2:
        return lax.convert(np_api.sum(lax.convert(t != 0, dtypes.int32)) > 0, dtypes.int32)
    s = _svdvals_core(t)
    if tol is not None:
        cutoff = lax.convert(lift(tol), s.dtype)
        cutoff = lax.reshape(cutoff, (*cutoff.shape, 1))
    else:
        rr = _static_float("matrix_rank", "rtol", rtol)
        cutoff = (_default_rtol(t) if rr is None else rr) * lax.slice(s, [0] * s.ndim, [*s.shape[:-1], 1], [1] * s.ndim)
    return np_api.sum(lax.convert(s > cutoff, dtypes.int32), axis=-1)


@api
def cond(x: Any, p: Any = None) -> Tracer:
    """numpy.linalg.cond: s_max / s_min for p None or 2 (s_min / s_max for -2), else
    norm(x, p) * norm(inv(x), p) (square x). inf for a singular x."""
    t = _matrix_arg("cond", x)
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svdvals(t)
        k = s.shape[-1]
        hi = lax.reshape(lax.slice(s, [0] * s.ndim, [*s.shape[:-1], 1], [1] * s.ndim), s.shape[:-1])
        lo = lax.reshape(lax.slice(s, [0] * (s.ndim - 1) + [k - 1], list(s.shape), [1] * s.ndim), s.shape[:-1])
        return lo / hi if p == -2 else hi / lo
    t = _square("cond", t)
    return norm(t, p, axis=(-2, -1)) * norm(inv(t), p, axis=(-2, -1))
