"""Trigonometric functions with numpy's names beyond the `nn` ops: tan arctan arcsin arccos
arctan2 hypot deg2rad rad2deg radians degrees sinc.

Composites of `nn` ops, so autodiff, batching and every backend cover them; integer and bool
inputs become float32. Accurate to a few ulp in float64 over the whole domain (arctan is
Cephes' rational approximation; tests/unit/numpy/test_numpy_math.py measures against numpy,
and sinc against mpmath). sin(pi x) comes from an exact argument reduction (`_sin_cos_pi`,
also scipy.special's). Derivatives decided here (docs/autodiff.md, Contracts): sinc'(0) = 0
exactly (a Taylor polynomial near 0), sinc''(0) = -pi**2/3; hypot has gradient 0 at the origin.
"""

from __future__ import annotations

import math
from typing import Any

from irgrad.tracing import dtypes
from irgrad.numpy import basic as np_api
from irgrad.numpy import complex_functions
from irgrad.numpy.complex_functions import complex_parts, from_parts
from irgrad.numpy.support import api, lift, operands, require_float, result_dtype
from irgrad.numpy.elementwise_support import _const, _float, _stop
from irgrad.numpy.float_parts import _signbit
from irgrad.numpy.rounding import _round_half_even, _trunc
from irgrad.tracing.tracer import Tracer

__all__ = [
    "arccos",
    "arcsin",
    "arctan",
    "arctan2",
    "deg2rad",
    "degrees",
    "hypot",
    "rad2deg",
    "radians",
    "sinc",
    "tan",
]


@api
def tan(x: Any) -> Tracer:
    """sin(x) / cos(x) (each within an ulp, so the quotient is within a few, poles included).
    Complex: tan(z) = -i tanh(iz), nn.tanh's stable form (no overflow for a large imaginary part)."""
    t = require_float("tan", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        re, im = complex_parts(t)
        w_re, w_im = complex_parts(np_api.tanh(from_parts(-im, re)))
        return from_parts(w_im, -w_re)
    return np_api.sin(t) / np_api.cos(t)


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
def arctan(x: Any) -> Tracer:
    """Inverse tangent (Cephes' rational approximation with range reduction; a few ulp).
    Complex: catrig's catan, -i atanh(iz) by Kahan's formulas (complex_functions.atan), numpy's
    principal branch (cuts on the imaginary axis past +-i)."""
    t = require_float("arctan", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_functions.atan(t)
    return _atan(t)


@api
def arcsin(x: Any) -> Tracer:
    """atan(x / sqrt((1 - x)(1 + x))): 1 - x is exact near 1, so the argument keeps its
    precision up to |x| = 1 (where it is inf and the result pi/2). NaN for |x| > 1. Complex:
    Hull, Fairgrieve and Tang's algorithm as FreeBSD's catrig (numpy's) writes it
    (complex_functions.asin): no cancellation near the branch points +-1, no overflow far out;
    numpy's principal branch (cuts on the real axis past +-1)."""
    t = require_float("arcsin", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_functions.asin(t)
    return _atan(t / np_api.sqrt((1.0 - t) * (1.0 + t)))


@api
def arccos(x: Any) -> Tracer:
    """2 atan(sqrt((1 - x) / (1 + x))): accurate near both ends (pi at x = -1, 0 at 1).
    Complex: Hull, Fairgrieve and Tang's algorithm as catrig's cacos (complex_functions.acos);
    numpy's principal branch (Re in [0, pi], cuts on the real axis past +-1)."""
    t = require_float("arccos", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_functions.acos(t)
    return 2.0 * _atan(np_api.sqrt((1.0 - t) / (1.0 + t)))


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


@api
def deg2rad(x: Any) -> Tracer:
    """x * (pi / 180), as numpy computes it."""
    return _float("deg2rad", x) * (math.pi / 180.0)


@api
def rad2deg(x: Any) -> Tracer:
    """x * (180 / pi), as numpy computes it."""
    return _float("rad2deg", x) * (180.0 / math.pi)


radians = deg2rad
degrees = rad2deg


def _sin_cos_pi(t: Tracer) -> tuple[Tracer, Tracer]:
    """(sin(pi x), cos(pi x)) with an exact argument reduction: x = n + r, n the nearest
    integer (no gradient), |r| <= 1/2 (exact below 2**52, 0 above, where x is an integer), and
    the signs of sin(pi r), cos(pi r) flipped for odd n. Exact zeros at the integers (sin) and
    half-integers (cos), unlike sin(pi * x). NaN for +-inf."""
    n = _stop(_round_half_even(t))
    r = t - n
    half = n * 0.5
    odd = _trunc(half) != half
    s = np_api.sin(r * math.pi)
    c = np_api.cos(r * math.pi)
    return np_api.where(odd, -s, s), np_api.where(odd, -c, c)


# Below this |x| sinc is its Taylor polynomial 1 - y**2/6 + y**4/120 (y = pi x), which is
# within 2e-19 of it there, and whose derivative at 0 is exactly 0.
_SINC_TAYLOR = 1e-3


@api
def sinc(x: Any) -> Tracer:
    """sin(pi x) / (pi x), 1 at x = 0 (numpy's normalized sinc). sin(pi x) comes from an exact
    argument reduction (so sinc is exactly 0 at the nonzero integers and accurate for large x,
    where numpy's sin(pi * x) is not); near 0 the Taylor polynomial, so sinc'(0) = 0 exactly
    and sinc'' is finite. NaN at +-inf (as numpy)."""
    t = _float("sinc", x)
    near = np_api.abs(t) < _SINC_TAYLOR
    y = np_api.where(near, t, 0.0) * math.pi
    y2 = y * y
    taylor = 1.0 - y2 * (1.0 / 6.0 - y2 * (1.0 / 120.0))
    tf = np_api.where(near, 1.0, t)
    s, _ = _sin_cos_pi(tf)
    # + 0.0: the zeros at the integers are +0.0 (the reduction may give -0.0).
    return np_api.where(near, taylor, s / (tf * math.pi) + 0.0)
