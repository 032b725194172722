"""Rounding with numpy's names: trunc ceil round around rint, exact for every float (through
int64 below 2**52, where larger floats are already integers), keeping numpy's -0.0.

Composites of `nn` ops, so autodiff, batching and every backend cover them. The result is a
`stop_gradient`, so the gradient is 0 everywhere (the derivative where it exists; a choice at
the jumps), never the 1 a huge |x| would pass through (docs/autodiff.md, Contracts).
`_trunc` and `_round_half_even` are the kernels that log2/log10, sinc and the quantiles reuse.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, lift
from irgrad.numpy.elementwise_support import _stop
from irgrad.tracing.tracer import Tracer
from irgrad.tracing.errors import DTypeError, user_site

__all__ = ["around", "ceil", "rint", "round", "trunc"]


# From 2**52 on every float64 (and every float of a narrower type) is an integer.
_INTEGRAL = 2.0**52


def _keep_zero_sign(result: Tracer, x: Tracer) -> Tracer:
    """`result`, with a zero taking x's sign (x * 0), as numpy's rounding functions give -0.0
    for a negative x that rounds to 0."""
    return np_api.where(result == 0, x * 0.0, result)


def _trunc(t: Tracer) -> Tracer:
    """Toward zero: through int64 where |x| < 2**52; larger values, inf and NaN pass as they are."""
    truncated = lax.convert(lax.convert(t, dtypes.int64), t.dtype)
    small = np_api.abs(t) < _INTEGRAL  # false for NaN and inf
    return _keep_zero_sign(np_api.where(small, truncated, t), t)


@api
def trunc(x: Any) -> Tracer:
    """The integer part, toward zero (numpy's trunc; -0.0 for -1 < x < 0). Gradient 0."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return t
    return _stop(_trunc(t))


@api
def ceil(x: Any) -> Tracer:
    """The least integer >= x (-0.0 for -1 < x <= -0.0, as numpy). Gradient 0."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return t
    r = _trunc(t)
    r = np_api.where(r < t, r + 1.0, r)  # exact: r is an integer below 2**52
    return _stop(_keep_zero_sign(r, t))


def _round_half_even(t: Tracer) -> Tracer:
    r = _trunc(t)
    frac = t - r  # exact for |x| < 2**52; 0 beyond (and NaN for NaN and inf, unselected)
    away = r + np_api.sign(t)
    half = r * 0.5
    odd = _trunc(half) != half
    up = (np_api.abs(frac) > 0.5) | ((np_api.abs(frac) == 0.5) & odd)
    small = np_api.abs(t) < _INTEGRAL
    return _keep_zero_sign(np_api.where(small & up, away, r), t)


@api
def round(x: Any, decimals: int = 0) -> Tracer:  # noqa: A001 (numpy's name)
    """To the nearest integer, halves to even (numpy's round/around), exact for every float
    (|x| >= 2**52 is already integral). `decimals` != 0 scales by 10**decimals first and back
    after, as numpy does (so it inherits numpy's rounding of the scaled value). Gradient 0.
    Integers with decimals >= 0 are returned as they are."""
    t = lift(x)
    if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}{user_site()}")
    decimals = int(decimals)
    if not dtypes.is_float(t.dtype):
        if t.dtype == dtypes.bool_:
            raise DTypeError(f"round: not defined on bool arrays{user_site()}")
        if decimals >= 0:
            return t
        raise NotImplementedError(f"round: decimals < 0 on integer arrays is not supported{user_site()}")
    if decimals == 0:
        return _stop(_round_half_even(t))
    if decimals > 0:
        scale = float(10.0**decimals)
        return _stop(_round_half_even(t * scale) / scale)
    scale = float(10.0 ** (-decimals))
    return _stop(_round_half_even(t / scale) * scale)


around = round


@api
def rint(x: Any) -> Tracer:
    """To the nearest integer, halves to even (as `round`); integers become float32, as
    jnp.rint. Gradient 0."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return lax.convert(t, dtypes.float32)
    return _stop(_round_half_even(t))
