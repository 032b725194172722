"""Polynomials with numpy's names: polyval (Horner's rule) and vander (running products).

Composites of multiplications, additions and cumprod, with no op or derivative rule of their
own: their derivatives are the polynomial's. polyval turns integers into float32; vander keeps
integers (bool becomes int32).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy.support import api, broadcast_shapes, broadcast_to, lift, result_dtype
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.numpy.arrays import _int
from irgrad.numpy.reductions import cumprod
from irgrad.numpy.shape import concatenate
from irgrad.numpy.statistics_support import _slice_axis

__all__ = ["polyval", "vander"]


@api
def polyval(p: Any, x: Any) -> Tracer:
    """p[0] x^(M-1) + ... + p[M-1] by Horner's rule (y = y * x + p[i] from y = 0, numpy's
    order); p may have trailing axes that broadcast with x (as JAX). Integers stay integers
    (JAX's promotion; numpy's too), bool becomes int32."""
    d = result_dtype(p, x)
    if d == dtypes.bool_:
        d = dtypes.int32
    pt, xt = lift(p, d), lift(x, d)
    if pt.ndim == 0:
        raise ShapeError(f"polyval: p must be at least 1-D, got a scalar{user_site()}")
    shape = broadcast_shapes("polyval", pt.shape[1:], xt.shape)
    xb = broadcast_to(xt, shape)
    y = full(shape, 0.0, d)
    for i in range(pt.shape[0]):
        y = y * xb + broadcast_to(lax.reshape(_slice_axis(pt, 0, i, i + 1), pt.shape[1:]), shape)
    return y


@api
def vander(x: Any, N: int | None = None, increasing: bool = False) -> Tracer:  # noqa: N803
    """The Vandermonde matrix of the 1-D x: columns x^(N-1), ..., x, 1 (reversed with
    `increasing`), N defaulting to len(x), as running products. Integers stay integers (bool
    becomes int32)."""
    t = lift(x)
    if t.ndim != 1:
        raise ValueError(f"vander: x must be a one-dimensional array or sequence, got shape {t.shape}{user_site()}")
    if t.dtype == dtypes.bool_:
        t = lax.convert(t, dtypes.int32)
    n = t.shape[0]
    cols = n if N is None else _int("vander", "N", N)
    if cols < 0:
        raise ValueError(f"vander: N must be non-negative, got {cols}{user_site()}")
    if cols == 0:
        return full((n, 0), 0, t.dtype)
    ones = full((n, 1), 1, t.dtype)
    if cols == 1:
        return ones
    powers = cumprod(concatenate([ones, lax.broadcast_in_dim(t, (n, cols - 1), [0])], axis=1), axis=1)
    return powers if increasing else lax.gather(powers, lift(np.arange(cols - 1, -1, -1, dtype=np.int32)), 1)
