"""`qr` (numpy.linalg's; modes 'reduced', 'r', 'complete').

`nn.qr` (LAPACK's geqrf + orgqr on the CPU, Householder `reference_loops.qr_loop` elsewhere,
both with LAPACK's signs) under JAX's custom_jvp rule. The completion of a basis
(`_pad_columns`, `_columns_from`, `_transported`) is shared with svd(full_matrices=True).
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy.custom_derivatives import custom_jvp
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api
from irgrad.tracing import primitives as lax
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.tracer import Tracer, full
from irgrad.numpy.linalg.common import _float_array
from irgrad.tracing.matrices import mT as _mT, triangle as _triangle


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
