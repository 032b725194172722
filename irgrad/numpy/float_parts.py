"""A float's parts and special values with numpy's names: signbit copysign frexp ldexp
isposinf isneginf nan_to_num.

Composites of `nn` ops with no bitcast, so autodiff, batching and every backend cover them:
the sign bit of -0.0 is read through 1 / x, the exponent through log2 (corrected where its
rounding crossed an integer); exact for every float, subnormals included. Derivatives decided
here (docs/autodiff.md, Contracts):
- copysign: sign(x1) * sign(x2) in x1, 0 at x1 == 0 (abs's subgradient), 0 in x2;
- frexp: the mantissa's gradient is 2**-exponent (1 at 0, inf and NaN); ldexp's is 2**x2;
- nan_to_num: 1 where x is finite, 0 where it was replaced;
- the integer and bool results (exponents, signbit, isposinf/isneginf) carry none.
"""

from __future__ import annotations

from typing import Any

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, broadcast_shapes, broadcast_to, lift
from irgrad.numpy.elementwise_support import _const, _float, _float_operands, _stop, dtypes_finfo
from irgrad.numpy.exponents import log2
from irgrad.numpy.numerics import isnan
from irgrad.numpy.rounding import trunc
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import DTypeError, user_site

__all__ = ["copysign", "frexp", "isneginf", "isposinf", "ldexp", "modf", "nan_to_num", "signbit"]


def _signbit(t: Tracer) -> Tracer:
    """x < 0 or x is -0.0 (1 / -0.0 = -inf)."""
    one_over = 1.0 / np_api.where(t == 0, t, 1.0)
    return (t < 0) | ((t == 0) & (one_over < 0))


@api
def copysign(x1: Any, x2: Any) -> Tracer:
    """|x1| with the sign of x2 (-0.0 counts as negative). Integers become float32. A NaN x2
    counts as positive (its sign bit cannot be read without a bitcast). Gradient: +-1 in x1
    (the sign of x1 * x2) and 0 at x1 == 0 (abs's subgradient); 0 in x2."""
    a, b = _float_operands("copysign", x1, x2)
    magnitude = np_api.abs(a)
    out = np_api.where(_signbit(b), -magnitude, magnitude)
    if out.weak and not b.weak:
        # A weak x1 already of a strong x2's dtype and shape passes `operands` unchanged, and
        # `where` keeps it weak; the result is strong (jnp.copysign(1.5, x_f64) is float64).
        out.frame.weak_values.discard(out.value)
    return out


@api
def signbit(x: Any) -> Tracer:
    """x < 0 or x is -0.0 (bool); false for NaN (see copysign) and for bools."""
    t = lift(x)
    if t.dtype == dtypes.bool_:
        return full(t.shape, False, dtypes.bool_)
    if not dtypes.is_float(t.dtype):
        return t < 0
    return _signbit(t)


def _pow2(k: Tracer) -> Tracer:
    """2**k for float k holding integers: exact (pow is exact where the result is), 0 below the
    subnormals, inf above the range. No gradient."""
    return _stop(lax.binary(nn.PowOp, _const(k, 2.0), k))


def _frexp_parts(t: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """(mantissa, exponent as float, finite-and-nonzero mask) for a float tracer: x = m * 2**e
    with 1/2 <= |m| < 1. The exponent is floor(log2|x|) + 1, corrected by one either way
    where log2's rounding crossed an integer; x is scaled by 2**-e in two exact steps (2**-e
    itself may not be a float). Elsewhere m = 1, e = 0."""
    a = np_api.abs(t)
    regular = (a > 0) & (a < float("inf"))
    safe = np_api.where(regular, t, 1.0)
    e = _stop(np_api.floor(log2(np_api.where(regular, a, 1.0))) + 1.0)
    e1 = _stop(np_api.floor(e * 0.5))
    m = (safe * _pow2(-e1)) * _pow2(e1 - e)
    big = np_api.abs(m) >= 1.0
    m = np_api.where(big, m * 0.5, m)
    e = np_api.where(big, e + 1.0, e)
    small = np_api.abs(m) < 0.5
    m = np_api.where(small, m * 2.0, m)
    e = np_api.where(small, e - 1.0, e)
    return m, e, regular


@api
def frexp(x: Any) -> tuple[Tracer, Tracer]:
    """(mantissa, exponent) with x = mantissa * 2**exponent and 1/2 <= |mantissa| < 1; the
    exponent is int32. 0, +-inf and NaN give (x, 0), as numpy. Integers become float32 first
    (as jnp.frexp). Exact for every float, subnormals included (no bitcast needed: the
    exponent comes from log2 and is corrected by one where rounding crossed an integer). The
    mantissa's gradient is 2**-exponent (1 at the special values); the exponent has none."""
    t = _float("frexp", x)
    m, e, regular = _frexp_parts(t)
    mantissa = np_api.where(regular, m, t)
    exponent = lax.convert(np_api.where(regular, e, 0.0), dtypes.int32)
    return mantissa, exponent


@api
def ldexp(x1: Any, x2: Any) -> Tracer:
    """x1 * 2**x2 for an integer x2, rounded once (so subnormal results are correctly rounded,
    and x2 may exceed the exponent range where x1 makes up for it). The result has x1's float
    dtype (integers become float32); x2 must be an integer array or int. Gradient: 2**x2 in x1
    (saturating at the largest power of two), none in x2."""
    t = _float("ldexp", x1)
    n = lift(x2)
    if not dtypes.is_int(n.dtype):
        raise DTypeError(f"ldexp: x2 must be an integer, got {n.dtype}{user_site()}")
    shape = broadcast_shapes("ldexp", t.shape, n.shape)
    t, n = broadcast_to(t, shape), broadcast_to(n, shape)
    info = dtypes_finfo(t.dtype)
    minexp, maxexp, nmant = int(info.minexp), int(info.maxexp), int(info.nmant)
    # Beyond +-limit every result is 0 or inf; the clamp keeps e + n exact in the float.
    limit = maxexp - minexp + nmant + 2
    nf = lax.convert(np_api.minimum(np_api.maximum(n, -limit), limit), t.dtype)
    m, e, regular = _frexp_parts(t)
    k = e + nf
    # A normal result is (2m) * 2**(k-1), both factors exact; a subnormal one is the normal
    # m * 2**(minexp+1) times 2**(k - minexp - 1) <= 1: one rounding either way.
    p = np_api.where(k >= minexp + 1, _const(k, 1.0), _const(k, float(minexp + 1)))
    r = (m * _pow2(p)) * _pow2(k - p)
    special = t * _pow2(np_api.minimum(np_api.maximum(nf, float(minexp - nmant)), float(maxexp - 1)))
    return np_api.where(regular, r, special)


@api
def isposinf(x: Any) -> Tracer:
    """x == +inf (bool); false for integers and bools."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return full(t.shape, False, dtypes.bool_)
    return t == float("inf")


@api
def isneginf(x: Any) -> Tracer:
    """x == -inf (bool); false for integers and bools."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return full(t.shape, False, dtypes.bool_)
    return t == float("-inf")


@api
def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tracer:  # fmt: skip
    """NaN -> `nan`, +inf -> `posinf` (default: the dtype's largest finite value), -inf ->
    `neginf` (default: the most negative). Integers and bools are returned as they are."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return t
    info = dtypes_finfo(t.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    inf = float("inf")
    out = np_api.where(t == inf, _const(t, hi), t)
    out = np_api.where(t == -inf, _const(t, lo), out)
    return np_api.where(isnan(t), _const(t, nan), out)


@api
def modf(x: Any) -> tuple[Tracer, Tracer]:
    """numpy's modf: (fractional part, integral part), both with x's sign (-0.0 kept, as
    numpy), for +-inf (+-0.0, +-inf), NaN for NaN; integers become float32. Derivatives: 1
    for the fraction, 0 for the integral part (a step function)."""
    t = _float("modf", x)
    whole = trunc(t)
    inf = np_api.abs(t) == float("inf")
    fraction = np_api.where(inf, copysign(0.0, t), t - whole)
    return copysign(fraction, t), whole
