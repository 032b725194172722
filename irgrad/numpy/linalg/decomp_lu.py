"""LU with partial pivoting and what is built on it: `lu_factor`, `lu`, `lu_solve`
(jax.scipy.linalg's), `solve`, `inv`, `det`, `slogdet`, `matrix_power` (numpy.linalg's).

`nn.lu` (LAPACK's getrf on the CPU, `reference_loops.lu_loop` elsewhere) under custom_jvp
rules; the rules of solve/det/slogdet get the factorization from `_lu_core`, so that it stays
a rule at second order. Failure modes follow JAX, not numpy (which raises LinAlgError): an
exactly singular matrix gives a zero on U's diagonal (getrf), det 0, slogdet (0, -inf), and
inf/NaN from solve and inv; det's derivative there is NaN (JAX uses a cofactor rule).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.numpy.custom_derivatives import custom_jvp
from irgrad.numpy import basic as np_api
from irgrad.numpy.control_flow import fori_loop
from irgrad.numpy.reductions import prod
from irgrad.numpy.shape import take_along_axis
from irgrad.numpy.support import api, broadcast_to, lift
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.tracer import Tracer, full
from irgrad.numpy.linalg.common import _matrix_rhs, _square, _trans_code
from irgrad.tracing.matrices import (
    diagonal as _diagonal, eye_like as _eye_like, inverse_permutation as _inverse_permutation, iota as _iota,
    mT as _mT, permute_rows as _permute_rows, trace as _trace, triangle as _triangle, where as _where,
)
from irgrad.numpy.linalg.triangular import _trsm


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


# --- solve, inv, det, slogdet, matrix_power ----------------------------------------------------


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
