"""`norm` and `cond` (numpy.linalg's).

`norm` covers the vector norms (ord None/2, 1, inf, -inf, 0, any other p) and the matrix
norms ('fro', 1, -1, inf, -inf, and 2 / -2 / 'nuc' from the singular values). The 2-norm's
gradient at the zero vector is decided as 0 (a subgradient) instead of the NaN of
sqrt'(0) * 0: the square root reads 1 on the branch not taken, as `ig.std` does
(docs/autodiff.md, Contracts). Ties of the max/min norms share the cotangent equally (the
reduce_max rule). `cond` is a ratio of singular values, or a norm of x times that of inv(x).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, lift, normalize_axes, require_float
from irgrad.tracing import primitives as lax
from irgrad.tracing.errors import user_site
from irgrad.tracing.tracer import Tracer
from irgrad.numpy.linalg.common import _matrix_arg, _square
from irgrad.tracing.matrices import safe_sqrt as _safe_sqrt
from irgrad.numpy.linalg.decomp_lu import inv
from irgrad.numpy.linalg.decomp_svd import svdvals


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
