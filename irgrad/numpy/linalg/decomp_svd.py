"""`svd`, `svdvals` (numpy.linalg's), and on the singular values `pinv`, `lstsq` and
`matrix_rank`.

`nn.svd` (LAPACK's gesdd on the CPU, one-sided Jacobi, `reference_loops.svd_raw`, elsewhere)
under custom_jvp rules with JAX's formulas: svd's `_svd_jvp_rule`, svdvals' ds = diag(U^T dA V),
pinv's Golub-Pereyra. As in JAX, repeated singular values make U's and V's derivatives inf/NaN;
the singular values' own derivative stays finite. full_matrices=True completes the shorter
factor of a non-square matrix (decomp_qr's `_transported` derivative).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.numpy.custom_derivatives import custom_jvp
from irgrad.numpy import basic as np_api
from irgrad.numpy.reductions import argsort
from irgrad.numpy.shape import take_along_axis
from irgrad.numpy.support import api, lift
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.tracer import Tracer, full
from irgrad.numpy.linalg.common import _float_array, _matrix_arg, _square, _static_float
from irgrad.tracing.matrices import (
    diagonal as _diagonal, eye_like as _eye_like, mT as _mT, row_vec as _row_vec, sort_columns as _sort_columns,
    where as _where,
)
from irgrad.numpy.linalg.decomp_eigh import _eigh_core
from irgrad.numpy.linalg.decomp_qr import _columns_from, _pad_columns, _transported


def _svd_loop(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """The reduced SVD as the nn.svd op (LAPACK on the CPU, `reference_loops.svd_raw` and
    `svd_post` elsewhere)."""
    return lax.svd(a)


def _svd_core(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    return lax.svd(a)


_svd_core = custom_jvp(_svd_core)


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


# --- pinv, lstsq, matrix_rank ------------------------------------------------------------------


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
