"""Trigonometric functions with numpy's names beyond the `nn` ops: tan arctan arcsin arccos
arctan2 hypot deg2rad rad2deg radians degrees sinc (arctan2, hypot and the atan kernel live in
angles.py, below the complex branches of complex_inverse.py, and are exported here).

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
from irgrad.numpy import complex_inverse
from irgrad.numpy.complex_functions import complex_parts, from_parts
from irgrad.numpy.support import api, lift, require_float
from irgrad.numpy.elementwise_support import _float, _stop
from irgrad.numpy.angles import _atan, arctan2, hypot  # noqa: F401  (arctan2, hypot: this module's names too)
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


@api
def arctan(x: Any) -> Tracer:
    """Inverse tangent (Cephes' rational approximation with range reduction; a few ulp).
    Complex: catrig's catan, -i atanh(iz) by Kahan's formulas (complex_inverse.atan), numpy's
    principal branch (cuts on the imaginary axis past +-i)."""
    t = require_float("arctan", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_inverse.atan(t)
    return _atan(t)


@api
def arcsin(x: Any) -> Tracer:
    """atan(x / sqrt((1 - x)(1 + x))): 1 - x is exact near 1, so the argument keeps its
    precision up to |x| = 1 (where it is inf and the result pi/2). NaN for |x| > 1. Complex:
    Hull, Fairgrieve and Tang's algorithm as FreeBSD's catrig (numpy's) writes it
    (complex_inverse.asin): no cancellation near the branch points +-1, no overflow far out;
    numpy's principal branch (cuts on the real axis past +-1)."""
    t = require_float("arcsin", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_inverse.asin(t)
    return _atan(t / np_api.sqrt((1.0 - t) * (1.0 + t)))


@api
def arccos(x: Any) -> Tracer:
    """2 atan(sqrt((1 - x) / (1 + x))): accurate near both ends (pi at x = -1, 0 at 1).
    Complex: Hull, Fairgrieve and Tang's algorithm as catrig's cacos (complex_inverse.acos);
    numpy's principal branch (Re in [0, pi], cuts on the real axis past +-1)."""
    t = require_float("arccos", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_inverse.acos(t)
    return 2.0 * _atan(np_api.sqrt((1.0 - t) / (1.0 + t)))


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
