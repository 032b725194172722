"""The real angle functions the others are built on: Cephes' atan (`_atan`), `arctan2` and
`hypot`, composites of `nn` ops with C's values at the edges (signed zeros, infinities).

They sit below trigonometric.py (which exports them with arctan, arcsin, arccos) and below
complex_inverse.py, whose complex arcsin ... arctanh take them for the parts, so neither imports
the other. Accurate to a few ulp in float64 (tests/unit/numpy/test_numpy_math.py); hypot has
gradient 0 at the origin (docs/autodiff.md, Contracts).
"""

from __future__ import annotations

import math
from typing import Any

from irgrad.numpy import basic as np_api
from irgrad.numpy.elementwise_support import _const
from irgrad.numpy.float_parts import _signbit
from irgrad.numpy.support import api, operands, result_dtype
from irgrad.tracing import dtypes
from irgrad.tracing.tracer import Tracer

__all__ = ["arctan2", "hypot"]


# Cephes' atan (S. L. Moshier, atan.c): a rational approximation on [0, 0.66] and two range
# reductions, within 2e-16 relative error in float64.
_ATAN_P = (-8.750608600031904122785e-01, -1.615753718733365076637e01, -7.500855792314704667340e01,
           -1.228866684490136173410e02, -6.485021904942025371773e01)  # fmt: skip
_ATAN_Q = (2.485846490142306297962e01, 1.650270098316988542046e02, 4.328810604912902668951e02,
           4.853903996359136964868e02, 1.945506571482613964425e02)  # fmt: skip
_TAN_3PI_8 = 2.41421356237309504880
_MOREBITS = 6.123233995736765886130e-17  # pi/2 - float64(pi/2)


def _atan_kernel(z: Tracer) -> Tracer:
    """atan(z) for |z| <= 0.66 (Cephes' P/Q)."""
    w = z * z
    p = w * _ATAN_P[0] + _ATAN_P[1]
    for c in _ATAN_P[2:]:
        p = p * w + c
    q = w + _ATAN_Q[0]
    for c in _ATAN_Q[1:]:
        q = q * w + c
    return z * (w * p / q) + z


def _atan(t: Tracer) -> Tracer:
    """atan of a float tracer: odd symmetry, then x > tan(3 pi/8): pi/2 - atan(1/x);
    x > 0.66: pi/4 + atan((x - 1)/(x + 1)); else the kernel. Each branch reads a safe argument
    where it is not taken."""
    a = np_api.abs(t)
    big = a > _TAN_3PI_8
    mid = (a > 0.66) & ~big
    a_big = np_api.where(big, a, 1.0)
    a_mid = np_api.where(mid, a, 1.0)
    a_small = np_api.where(big | mid, 0.0, a)
    r_big = (math.pi / 2 + (_MOREBITS + _atan_kernel(-1.0 / a_big)))
    r_mid = (math.pi / 4 + (0.5 * _MOREBITS + _atan_kernel((a_mid - 1.0) / (a_mid + 1.0))))
    r = np_api.where(big, r_big, np_api.where(mid, r_mid, _atan_kernel(a_small)))
    # Odd: a select on the sign (not a multiplication by sign(x), whose derivative at 0 is 0).
    r = np_api.where(t < 0, -r, r)
    return np_api.where(t == 0, t, r)  # keeps -0.0; atan'(0) = 1 through the select


@api
def arctan2(x1: Any, x2: Any) -> Tracer:
    """The angle of the point (x2, x1), in [-pi, pi]: atan(x1 / x2), moved by pi toward x1's
    side where x2 is negative (-0.0 included), with C's values where both are zero (signed
    zeros) or both infinite (odd multiples of pi/4)."""
    d = result_dtype(x1, x2)
    if not dtypes.is_float(d):
        d = dtypes.float32
    (y, x), _ = operands("arctan2", x1, x2, dtype=d)
    inf = float("inf")
    both_zero = (y == 0) & (x == 0)
    both_inf = (np_api.abs(y) == inf) & (np_api.abs(x) == inf)
    q = y / np_api.where(both_zero, 1.0, x)
    q = np_api.where(both_inf, np_api.sign(y) * np_api.sign(x), q)
    a = _atan(q)
    y_neg, x_neg = _signbit(y), _signbit(x)
    around_pi = np_api.where(y_neg, a - math.pi, a + math.pi)
    r = np_api.where(x_neg, around_pi, a)
    at_origin = np_api.where(x_neg, np_api.where(y_neg, _const(y, -math.pi), _const(y, math.pi)), y)
    return np_api.where(both_zero, at_origin, r)


@api
def hypot(x1: Any, x2: Any) -> Tracer:
    """sqrt(x1**2 + x2**2) without overflow or underflow: a * sqrt(1 + (b/a)**2) with
    a = max(|x1|, |x2|), b = min; 0 at the origin (gradient 0 there, a subgradient), inf if
    either is inf (even with a NaN, as C's hypot)."""
    d = result_dtype(x1, x2)
    if not dtypes.is_float(d):
        d = dtypes.float32
    (x, y), _ = operands("hypot", x1, x2, dtype=d)
    ax, ay = np_api.abs(x), np_api.abs(y)
    # The smaller one enters only squared, as itself (not |.|): smooth where it is 0, so
    # hypot(x, 1)'' is 1 at x = 0 (sign(0)**2 = 0 through an abs).
    x_smaller = ax <= ay
    a = np_api.maximum(ax, ay)  # NaN if either is
    zero = a == 0
    r = np_api.where(x_smaller, x, y) / np_api.where(zero, 1.0, a)
    h = a * np_api.sqrt(1.0 + r * r)
    inf = float("inf")
    h = np_api.where((ax == inf) | (ay == inf), inf, h)
    return np_api.where(zero, 0.0, h)
