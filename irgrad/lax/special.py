"""jax.lax's exponentially scaled modified Bessel functions of the first kind: `bessel_i0e`
(exp(-|x|) I0(x)) and `bessel_i1e` (exp(-|x|) I1(x)).

Cephes' Chebyshev series (those of scipy.special.i0e / i1e and XLA's), summed with Clenshaw's
recurrence in traced ops (irgrad/numpy/bessel.py holds the tables and the recurrence, shared
with ig.i0). i1e near 0 is x times its series, so it is odd and its derivative at 0 is 1/2.
Float32 stays float32, integers become float32. Derivatives are the composite's and match the
analytic ones: i0e' = i1e - sign(x) i0e, i1e' = i0e - i1e (sign(x) + 1/x) (1/2 at 0).

Also lax's names for the error-function family (`erfc`, `erf_inv`: ig.scipy.special's erfc and
erfinv) and the two elementwise ops whose lax meaning differs from numpy's function of the
same name: `round` (halves away from zero by default, numpy rounds them to even) and `div`
(integers truncate toward zero, numpy's floor_divide floors).
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy.bessel import _i0e, _i1e
from irgrad.tracing import dtypes
from irgrad.numpy.elementwise_support import _float
from irgrad.numpy.basic import abs as _abs, divide, floor_divide, sign, where
from irgrad.numpy.rounding import round as _round_even, trunc
from irgrad.numpy.support import api, lift
from irgrad.tracing.tracer import Tracer

__all__ = ["bessel_i0e", "bessel_i1e", "div", "erf_inv", "erfc", "round"]

AWAY_FROM_ZERO, TO_NEAREST_EVEN = 0, 1  # lax.RoundingMethod's values (an IntEnum there)


@api
def bessel_i0e(x: Any) -> Tracer:
    """exp(-|x|) I0(x), as lax.bessel_i0e and scipy.special.i0e. Gradient: i1e(x) - sign(x)
    i0e(x) (0 at 0)."""
    return _i0e(_float("bessel_i0e", x))


@api
def bessel_i1e(x: Any) -> Tracer:
    """exp(-|x|) I1(x), as lax.bessel_i1e and scipy.special.i1e (odd). Gradient: i0e(x) -
    i1e(x) (sign(x) + 1/x), 1/2 at 0."""
    return _i1e(_float("bessel_i1e", x))


@api
def erfc(x: Any) -> Tracer:
    """1 - erf(x), as lax.erfc: ig.scipy.special.erfc (accurate in the upper tail)."""
    from irgrad.scipy.special import erfc as _erfc

    return _erfc(x)


@api
def erf_inv(x: Any) -> Tracer:
    """The inverse of erf on [-1, 1], as lax.erf_inv: ig.scipy.special.erfinv."""
    from irgrad.scipy.special import erfinv as _erfinv

    return _erfinv(x)


@api
def round(x: Any, rounding_method: Any = AWAY_FROM_ZERO) -> Tracer:  # noqa: A001 (lax's name)
    """To the nearest integer, as lax.round: halves away from zero (lax's default,
    RoundingMethod.AWAY_FROM_ZERO = 0), or to even with TO_NEAREST_EVEN = 1 (ig.round).
    Exact for every float (trunc is, and x - trunc(x) is exact); keeps -0.0; gradient 0."""
    t = _float("round", x)
    if int(rounding_method) == TO_NEAREST_EVEN:
        return _round_even(t)
    r = trunc(t)  # a stop_gradient; sign's gradient is 0, so the result's is 0
    return where(_abs(t - r) >= 0.5, r + sign(t), r)


@api
def div(x: Any, y: Any) -> Tracer:
    """x / y, as lax.div: true division on floats and complex numbers; on integers the quotient
    truncated toward zero (C's, and XLA's, integer division; numpy's floor_divide floors instead)."""
    a, b = lift(x), lift(y)
    if dtypes.is_inexact(a.dtype) or dtypes.is_inexact(b.dtype):
        return divide(a, b)
    q = floor_divide(a, b)
    inexact = (q * b != a) & ((a < 0) != (b < 0))  # floor went one below the truncation
    return where(inexact, q + 1, q)
