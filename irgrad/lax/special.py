"""jax.lax's exponentially scaled modified Bessel functions of the first kind: `bessel_i0e`
(exp(-|x|) I0(x)) and `bessel_i1e` (exp(-|x|) I1(x)).

Cephes' Chebyshev series (those of scipy.special.i0e / i1e and XLA's), summed with Clenshaw's
recurrence in traced ops (irgrad/numpy/bessel.py holds the tables and the recurrence, shared
with ig.i0). i1e near 0 is x times its series, so it is odd and its derivative at 0 is 1/2.
Float32 stays float32, integers become float32. Derivatives are the composite's and match the
analytic ones: i0e' = i1e - sign(x) i0e, i1e' = i0e - i1e (sign(x) + 1/x) (1/2 at 0).
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy.bessel import _i0e, _i1e
from irgrad.numpy.elementwise_support import _float
from irgrad.numpy.support import api
from irgrad.tracing.tracer import Tracer

__all__ = ["bessel_i0e", "bessel_i1e"]


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
