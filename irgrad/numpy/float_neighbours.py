"""A float's neighbours with numpy's names: nextafter spacing.

Composites of `nn` ops with no bitcast, built on float_parts' frexp arithmetic: x = m * 2**e
with 1/2 <= |m| < 1 gives the gap above |x| as 2**(max(e - 1, minexp) - nmant) and the gap
below it as the same, halved where |x| is a power of two above the smallest normal. Adding or
subtracting a gap is exact, so every result is the neighbouring float, subnormals included.
Semantics are numpy's: nextafter(x, x) is x2, NaN in gives NaN, +-0 steps to +-the smallest
subnormal, +-inf toward a finite x2 gives +-max and max toward inf gives inf; spacing(x) is
nextafter(x, sign(x) * inf) - x (so it has x's sign; +-0 gives the smallest subnormal, as
numpy; +-inf and NaN give NaN). Integers become float32, as in JAX.
Derivatives decided here (the ulp step is piecewise constant and carries no gradient):
- nextafter: 1 in x1, 0 in x2;
- spacing: 0.
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy import basic as np_api
from irgrad.numpy.elementwise_support import _const, _float, _float_operands, _stop, dtypes_finfo
from irgrad.numpy.float_parts import _frexp_parts, _pow2, _signbit
from irgrad.numpy.numerics import isnan
from irgrad.numpy.support import api
from irgrad.tracing.tracer import Tracer

__all__ = ["nextafter", "spacing"]


def _gaps(t: Tracer) -> tuple[Tracer, Tracer]:
    """(gap above |t|, gap below |t|) for finite nonzero t (elsewhere: values to be masked)."""
    info = dtypes_finfo(t.dtype)
    minexp, nmant = float(info.minexp), float(info.nmant)
    m, e, _ = _frexp_parts(t)
    up = _pow2(np_api.maximum(e - 1.0, _const(e, minexp)) - nmant)
    halved = _pow2(np_api.maximum(e - 2.0, _const(e, minexp)) - nmant)
    down = np_api.where(np_api.abs(m) == 0.5, halved, up)
    return up, down


def _toward(t: Tracer, away: Tracer) -> Tracer:
    """The float next to a nonzero t, away from 0 where `away` else toward it (+-max from
    +-inf; no gradient)."""
    up, down = _gaps(t)
    a = np_api.abs(t)
    magnitude = np_api.where(away, a + up, a - down)
    magnitude = np_api.where(a == float("inf"), _const(t, float(dtypes_finfo(t.dtype).max)), magnitude)
    return _stop(np_api.where(_signbit(t), -magnitude, magnitude))


@api
def nextafter(x1: Any, x2: Any) -> Tracer:
    """The float after x1 in the direction of x2 (numpy's nextafter): x2 where x1 == x2, NaN
    where either is NaN, +-the smallest subnormal from +-0, +-max from +-inf toward a finite
    x2. Integers become float32. Gradient: 1 in x1 where x1 is finite (the ulp step is piecewise
    constant), 0 in x2."""
    a, b = _float_operands("nextafter", x1, x2)
    # Away from 0 where x2 lies beyond x1; from +-0 the smallest subnormal with x2's sign.
    away = (b > a) == (a > 0)
    r = _toward(_stop(a), away)
    tiny = float(dtypes_finfo(a.dtype).smallest_subnormal)
    r = np_api.where(a == 0, np_api.where(b > 0, _const(a, tiny), _const(a, -tiny)), r)
    v = _stop(np_api.where(isnan(a) | isnan(b), a + b, np_api.where(a == b, b, r)))
    # v + (x1 - stop(x1)) carries x1's gradient, written with |v| so that -0.0 keeps its sign.
    s = np_api.where(_signbit(v), _const(v, -1.0), _const(v, 1.0))
    finite = np_api.where(np_api.abs(a) < float("inf"), a, _const(a, 0.0))
    return s * (np_api.abs(v) + s * (finite - _stop(finite)))


@api
def spacing(x: Any) -> Tracer:
    """numpy's spacing: nextafter(x, sign(x) * inf) - x, the gap to the next float away from 0
    with x's sign; the smallest subnormal for +-0 (positive, as numpy), NaN for +-inf and NaN,
    inf for +-max. Integers become float32. Gradient: 0."""
    t = _stop(_float("spacing", x))
    a = np_api.abs(t)
    up, _ = _gaps(t)
    tiny = float(dtypes_finfo(t.dtype).smallest_subnormal)
    gap = np_api.where(a == 0, _const(t, tiny), np_api.where(_signbit(t), -up, up))
    # Past max, a + up rounds to inf: numpy's spacing is +-inf there.
    inf = _const(t, float("inf"))
    gap = np_api.where(a + up == float("inf"), np_api.where(t < 0, -inf, inf), gap)
    return _stop(np_api.where(a < float("inf"), gap, _const(t, float("nan"))))
