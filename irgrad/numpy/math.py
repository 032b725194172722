"""Elementwise math with numpy's names beyond the `nn` ops: rounding, exp2/log2/log10, the
hyperbolic and inverse trigonometric and hyperbolic functions, logaddexp(2), hypot, cbrt, fmod,
nan_to_num, heaviside, sinc, the logical functions, fmax/fmin, copysign/signbit, float_power,
ldexp/frexp, divmod, gcd/lcm.

Each is a composite of `nn` ops (through the other frontend functions), so autodiff, batching
and every backend cover it with no rules of their own. Integer and bool inputs to the float-only
ones become float32, as in JAX (float_power alone computes in float64, as numpy's). Each is
written to be accurate to a few ulp in float64 over its whole domain (tests/unit/numpy/test_numpy_math.py
measures it against numpy, and sinc against mpmath), and its derivative at a kink is decided
here (docs/autodiff.md, Contracts): the rounding functions have gradient 0 everywhere, a tie
splits the gradient 1/2 to each side, integer-valued results carry none.
Each choice: docs/api/python.md, "irgrad/numpy/math.py".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.basic import expm1
from irgrad.numpy.support import (
    api,
    broadcast_shapes,
    broadcast_to,
    lift,
    operands,
    require_float,
    result_dtype,
)
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import DTypeError, user_site
from irgrad.numpy.numerics import isnan

__all__ = [
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "around",
    "cbrt",
    "ceil",
    "copysign",
    "cosh",
    "deg2rad",
    "degrees",
    "divmod",
    "exp2",
    "fabs",
    "float_power",
    "fmax",
    "fmin",
    "fmod",
    "frexp",
    "gcd",
    "heaviside",
    "hypot",
    "isneginf",
    "isposinf",
    "lcm",
    "ldexp",
    "log10",
    "log2",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_or",
    "logical_xor",
    "nan_to_num",
    "positive",
    "rad2deg",
    "radians",
    "reciprocal",
    "rint",
    "round",
    "signbit",
    "sinc",
    "sinh",
    "tan",
    "trunc",
]


def _float(name: str, x: Any) -> Tracer:
    return require_float(name, lift(x))


def _const(t: Tracer, value: float) -> Tracer:
    return full(t.shape, value, t.dtype)


def _stop(x: Tracer) -> Tracer:
    from irgrad.numpy.custom_derivatives import stop_gradient

    return stop_gradient(x)


# ---------------------------------------------------------------------------------------------
# Rounding
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# Exponentials and logarithms
# ---------------------------------------------------------------------------------------------


@api
def exp2(x: Any) -> Tracer:
    """2**x, as `nn.pow(2, x)` (libm's pow: exact at integers, within an ulp elsewhere)."""
    t = _float("exp2", x)
    return lax.binary(nn.PowOp, _const(t, 2.0), t)


def _log_base(name: str, x: Any, base: float) -> Tracer:
    """log(x) / log(base), made exact where x is an integer power of the base (numpy gives
    log2(8) == 3 exactly): the nearest integer k is taken where base**k == x, as a correction
    k - r that carries no gradient, so the derivative is still 1 / (x log(base))."""
    t = _float(name, x)
    r = np_api.log(t) * (1.0 / math.log(base))
    k = _stop(_round_half_even(r))
    finite = np_api.abs(r) < float("inf")
    exact = finite & (lax.binary(nn.PowOp, _const(t, base), np_api.where(finite, k, 0.0)) == t)
    return r + np_api.where(exact, _stop(k - r), 0.0)


@api
def log2(x: Any) -> Tracer:
    """Base-2 logarithm (exact at powers of two)."""
    return _log_base("log2", x, 2.0)


@api
def log10(x: Any) -> Tracer:
    """Base-10 logarithm (exact at powers of ten that the dtype holds exactly)."""
    return _log_base("log10", x, 10.0)


@api
def logaddexp(x: Any, y: Any) -> Tracer:
    """log(exp(x) + exp(y)) = max(x, y) + log1p(exp(-|x - y|)): no overflow; where x == y
    (infinities included, so inf - inf never arises) it is (x + y)/2 + log 2, whose gradient
    is 1/2 to each side, the limit from both sides."""
    d = result_dtype(x, y)
    if not dtypes.is_float(d):
        d = dtypes.float32
    (a, b), _ = operands("logaddexp", x, y, dtype=d)
    same = a == b
    diff = np_api.where(same, 0.0, a - b)
    apart = np_api.maximum(a, b) + np_api.log1p(np_api.exp(-np_api.abs(diff)))
    return np_api.where(same, (a + b) * 0.5 + math.log(2.0), apart)


# ---------------------------------------------------------------------------------------------
# Trigonometric and hyperbolic
# ---------------------------------------------------------------------------------------------


@api
def tan(x: Any) -> Tracer:
    """sin(x) / cos(x) (each within an ulp, so the quotient is within a few, poles included)."""
    t = _float("tan", x)
    return np_api.sin(t) / np_api.cos(t)


# Beyond this |x|, e**-|x| is below an ulp of e**|x| and the hyperbolic functions are e**|x| / 2.
_HYPERBOLIC_FAR = 20.0


@api
def sinh(x: Any) -> Tracer:
    """(expm1(x) - expm1(-x)) / 2 for |x| < 20 (no cancellation near 0: the two terms have
    opposite signs); beyond, e**(|x|/2) * (e**(|x|/2) / 2) with x's sign, which stays finite up
    to numpy's overflow point (710.47 in float64), past exp's."""
    t = _float("sinh", x)
    near = np_api.abs(t) < _HYPERBOLIC_FAR
    tn = np_api.where(near, t, 0.0)
    close = (expm1(tn) - expm1(-tn)) * 0.5
    h = np_api.exp(np_api.maximum(np_api.abs(t), _HYPERBOLIC_FAR) * 0.5)
    far = (h * 0.5) * h
    return np_api.where(near, close, np_api.where(t < 0, -far, far))


@api
def cosh(x: Any) -> Tracer:
    """1 + m**2 / (2 (1 + m)) with m = expm1(|x|) for |x| < 20 (that is (e**x + e**-x) / 2,
    with cosh(x) - 1 computed without cancellation); beyond, e**(|x|/2) * (e**(|x|/2) / 2)."""
    t = _float("cosh", x)
    a = np_api.abs(t)
    near = a < _HYPERBOLIC_FAR
    m = expm1(np_api.where(near, a, 0.0))
    close = 1.0 + m * m / (2.0 * (1.0 + m))
    h = np_api.exp(np_api.maximum(a, _HYPERBOLIC_FAR) * 0.5)
    return np_api.where(near, close, (h * 0.5) * h)


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
    """Inverse tangent (Cephes' rational approximation with range reduction; a few ulp)."""
    return _atan(_float("arctan", x))


@api
def arcsin(x: Any) -> Tracer:
    """atan(x / sqrt((1 - x)(1 + x))): 1 - x is exact near 1, so the argument keeps its
    precision up to |x| = 1 (where it is inf and the result pi/2). NaN for |x| > 1."""
    t = _float("arcsin", x)
    return _atan(t / np_api.sqrt((1.0 - t) * (1.0 + t)))


@api
def arccos(x: Any) -> Tracer:
    """2 atan(sqrt((1 - x) / (1 + x))): accurate near both ends (pi at x = -1, 0 at 1)."""
    t = _float("arccos", x)
    return 2.0 * _atan(np_api.sqrt((1.0 - t) / (1.0 + t)))


def _signbit(t: Tracer) -> Tracer:
    """x < 0 or x is -0.0 (1 / -0.0 = -inf)."""
    one_over = 1.0 / np_api.where(t == 0, t, 1.0)
    return (t < 0) | ((t == 0) & (one_over < 0))


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


# ---------------------------------------------------------------------------------------------
# Other binary and unary functions
# ---------------------------------------------------------------------------------------------


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
    a, b = np_api.maximum(ax, ay), np_api.minimum(ax, ay)
    zero = a == 0
    r = b / np_api.where(zero, 1.0, a)
    h = a * np_api.sqrt(1.0 + r * r)
    inf = float("inf")
    h = np_api.where((ax == inf) | (ay == inf), inf, h)
    return np_api.where(zero, 0.0, h)


@api
def reciprocal(x: Any) -> Tracer:
    """1 / x (integers become float32 first, as jnp.reciprocal)."""
    t = _float("reciprocal", x)
    return 1.0 / t


@api
def cbrt(x: Any) -> Tracer:
    """The real cube root: |x|**(1/3) with x's sign, refined by one Newton step
    y - (y - x / y**2) / 3 (1/3 is not exact in binary, so pow alone is off by up to ~60 ulp
    for large |x|). The derivative at 0 is infinite (not finite: inf or NaN)."""
    t = _float("cbrt", x)
    a = np_api.abs(t)
    y = lax.binary(nn.PowOp, a, _const(a, 1.0 / 3.0))
    refinable = (y > 0) & (y < float("inf"))
    ys = np_api.where(refinable, y, 1.0)
    refined = ys - (ys - np_api.where(refinable, a, 1.0) / (ys * ys)) * (1.0 / 3.0)
    y = np_api.where(refinable, refined, y)
    return np_api.where(t < 0, -y, np_api.where(t == 0, t, y))


@api
def fmod(x1: Any, x2: Any) -> Tracer:
    """C's fmod: x1 - trunc(x1 / x2) * x2, with x1's sign (numpy's fmod; `remainder` takes the
    divisor's). Built as sign(x1) * remainder(|x1|, |x2|); integers give 0 for a zero divisor
    (numpy's value, without its warning), floats NaN; a finite x1 over an infinite x2 is x1.
    Floats are as accurate as `remainder`: exact while the quotient |x1 / x2| is small, an
    absolute error of a few ulp of x1 as it grows; unlike C's fmod, which is always exact, a
    quotient past 2**53 loses the result and one past the float range gives inf or NaN."""
    (a, b), d = operands("fmod", x1, x2)
    if d == dtypes.bool_:
        raise DTypeError(f"fmod: not defined on bool arrays{user_site()}")
    r = np_api.remainder(np_api.abs(a), np_api.abs(b))
    if not dtypes.is_float(d):
        return np_api.where(a < 0, -r, r)
    r = np_api.where(_signbit(a), -r, r)
    inf = float("inf")
    return np_api.where((np_api.abs(b) == inf) & (np_api.abs(a) < inf), a, r)


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


def dtypes_finfo(d: np.dtype) -> Any:
    import ml_dtypes

    return ml_dtypes.finfo(d) if d == dtypes.bfloat16 else np.finfo(d)


@api
def heaviside(x1: Any, x2: Any) -> Tracer:
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0, NaN where x1 is NaN (numpy's
    heaviside; the result has the promoted dtype of both)."""
    (a, b), d = operands("heaviside", x1, x2)
    if d == dtypes.bool_:
        raise DTypeError(f"heaviside: not defined on bool arrays{user_site()}")
    zero, one = full(a.shape, 0, d), full(a.shape, 1, d)
    out = np_api.where(a < 0, zero, np_api.where(a > 0, one, b))
    if dtypes.is_float(d):
        out = np_api.where(isnan(a), a, out)
    return out



# ---------------------------------------------------------------------------------------------
# Logical functions, signs and simple float functions
# ---------------------------------------------------------------------------------------------


def _truth(x: Any) -> Tracer:
    """x != 0 as bool (NaN is true, as in numpy)."""
    t = lift(x)
    return t if t.dtype == dtypes.bool_ else lax.convert(t, dtypes.bool_)


def _logical(name: str, op_class: type[nn.ElementwiseBinaryOp], x1: Any, x2: Any) -> Tracer:
    a, b = _truth(x1), _truth(x2)
    shape = broadcast_shapes(name, a.shape, b.shape)
    return lax.binary(op_class, broadcast_to(a, shape), broadcast_to(b, shape))


@api
def logical_and(x1: Any, x2: Any) -> Tracer:
    """Both nonzero (bool), for operands of any dtype."""
    return _logical("logical_and", nn.AndOp, x1, x2)


@api
def logical_or(x1: Any, x2: Any) -> Tracer:
    """Either nonzero (bool), for operands of any dtype."""
    return _logical("logical_or", nn.OrOp, x1, x2)


@api
def logical_xor(x1: Any, x2: Any) -> Tracer:
    """Exactly one nonzero (bool), for operands of any dtype."""
    return _logical("logical_xor", nn.XorOp, x1, x2)


def _extremum_ignoring_nan(name: str, x1: Any, x2: Any, pick: Any) -> Tracer:
    (a, b), d = operands(name, x1, x2)
    if d == dtypes.bool_:
        op = nn.OrOp if pick is np_api.maximum else nn.AndOp
        return lax.binary(op, a, b)
    m = pick(a, b)
    if not dtypes.is_float(d):
        return m
    return np_api.where(isnan(b), a, np_api.where(isnan(a), b, m))


@api
def fmax(x1: Any, x2: Any) -> Tracer:
    """The larger of x1 and x2, ignoring a NaN (NaN only where both are): numpy's fmax. The
    gradient follows the value: a tie splits it 1/2 to each side (as `maximum`), and where one
    operand is NaN the other one takes all of it."""
    return _extremum_ignoring_nan("fmax", x1, x2, np_api.maximum)


@api
def fmin(x1: Any, x2: Any) -> Tracer:
    """The smaller of x1 and x2, ignoring a NaN (numpy's fmin); gradients as `fmax`."""
    return _extremum_ignoring_nan("fmin", x1, x2, np_api.minimum)


def _float_operands(name: str, x1: Any, x2: Any) -> list[Tracer]:
    d = result_dtype(x1, x2)
    if not dtypes.is_float(d):
        d = dtypes.float32
    return operands(name, x1, x2, dtype=d)[0]


@api
def copysign(x1: Any, x2: Any) -> Tracer:
    """|x1| with the sign of x2 (-0.0 counts as negative). Integers become float32. A NaN x2
    counts as positive (its sign bit cannot be read without a bitcast). Gradient: +-1 in x1
    (the sign of x1 * x2) and 0 at x1 == 0 (abs's subgradient); 0 in x2."""
    a, b = _float_operands("copysign", x1, x2)
    magnitude = np_api.abs(a)
    return np_api.where(_signbit(b), -magnitude, magnitude)


@api
def signbit(x: Any) -> Tracer:
    """x < 0 or x is -0.0 (bool); false for NaN (see copysign) and for bools."""
    t = lift(x)
    if t.dtype == dtypes.bool_:
        return full(t.shape, False, dtypes.bool_)
    if not dtypes.is_float(t.dtype):
        return t < 0
    return _signbit(t)


@api
def positive(x: Any) -> Tracer:
    """+x: x itself (numpy's positive; not defined on bools)."""
    t = lift(x)
    if t.dtype == dtypes.bool_:
        raise DTypeError(f"positive: not defined on bool arrays{user_site()}")
    return t


@api
def fabs(x: Any) -> Tracer:
    """|x| as a float (integers become float32, as jnp.fabs). Gradient 0 at 0."""
    return np_api.abs(_float("fabs", x))


@api
def rint(x: Any) -> Tracer:
    """To the nearest integer, halves to even (as `round`); integers become float32, as
    jnp.rint. Gradient 0."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return lax.convert(t, dtypes.float32)
    return _stop(_round_half_even(t))


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


# ---------------------------------------------------------------------------------------------
# Inverse hyperbolic functions (fdlibm's formulas: no cancellation near 0, no overflow far out)
# ---------------------------------------------------------------------------------------------


def _far_threshold(d: np.dtype) -> float:
    """Past this |x|, asinh(x) = log(2|x|) and acosh(x) = log(2x) to the dtype's precision
    (the next term, 1/(4x**2), is below an ulp), and x**2 does not overflow below it:
    2**28 for float64, 2**13 for float32, 2**7 for float16, 2**5 for bfloat16."""
    nmant = int(dtypes_finfo(d).nmant)
    return float(2.0 ** math.ceil((nmant + 3) / 2))


@api
def arcsinh(x: Any) -> Tracer:
    """Inverse hyperbolic sine: log1p(|x| + x**2 / (1 + sqrt(1 + x**2))) for |x| <= 2,
    log(2|x| + 1 / (|x| + sqrt(x**2 + 1))) up to 2**28 (float64), log(|x|) + log(2) beyond;
    odd, with -0.0 kept."""
    t = _float("arcsinh", x)
    a = np_api.abs(t)
    far = a > _far_threshold(t.dtype)
    mid = (a > 2.0) & ~far
    r_far = np_api.log(np_api.where(far, a, 1.0)) + math.log(2.0)
    am = np_api.where(mid, a, 2.0)
    r_mid = np_api.log(2.0 * am + 1.0 / (np_api.sqrt(am * am + 1.0) + am))
    an = np_api.where(far | mid, 0.0, a)
    a2 = an * an
    r_near = np_api.log1p(an + a2 / (1.0 + np_api.sqrt(1.0 + a2)))
    r = np_api.where(far, r_far, np_api.where(mid, r_mid, r_near))
    r = np_api.where(t < 0, -r, r)
    return np_api.where(t == 0, t, r)  # keeps -0.0; asinh'(0) = 1 through the select


@api
def arccosh(x: Any) -> Tracer:
    """Inverse hyperbolic cosine, for x >= 1 (NaN below): log1p(u + sqrt(2u + u**2)) with
    u = x - 1 (exact) up to 2, log(2x - 1 / (x + sqrt(x**2 - 1))) up to 2**28 (float64),
    log(x) + log(2) beyond. The derivative at 1 is infinite."""
    t = _float("arccosh", x)
    far = t > _far_threshold(t.dtype)
    mid = (t > 2.0) & ~far
    r_far = np_api.log(np_api.where(far, t, 1.0)) + math.log(2.0)
    tm = np_api.where(mid, t, 2.0)
    r_mid = np_api.log(2.0 * tm - 1.0 / (tm + np_api.sqrt(tm * tm - 1.0)))
    u = np_api.where(far | mid, 2.0, t) - 1.0
    r_near = np_api.log1p(u + np_api.sqrt(2.0 * u + u * u))
    return np_api.where(far, r_far, np_api.where(mid, r_mid, r_near))


@api
def arctanh(x: Any) -> Tracer:
    """Inverse hyperbolic tangent: log1p(2a + 2a**2 / (1 - a)) / 2 for a = |x| < 1/2,
    log1p(2a / (1 - a)) / 2 from 1/2 on (1 - a is exact there); +-inf at +-1, NaN beyond; odd,
    with -0.0 kept."""
    t = _float("arctanh", x)
    a = np_api.abs(t)
    near = a < 0.5
    an = np_api.where(near, a, 0.0)
    r_near = 0.5 * np_api.log1p(2.0 * an + 2.0 * an * an / (1.0 - an))
    af = np_api.where(near, 0.5, a)
    r_far = 0.5 * np_api.log1p(2.0 * af / (1.0 - af))
    r = np_api.where(near, r_near, r_far)
    r = np_api.where(t < 0, -r, r)
    return np_api.where(t == 0, t, r)


# ---------------------------------------------------------------------------------------------
# Exponents, powers and the float's parts
# ---------------------------------------------------------------------------------------------


@api
def logaddexp2(x1: Any, x2: Any) -> Tracer:
    """log2(2**x1 + 2**x2) = max + log1p(2**-|x1 - x2|) / log(2) (numpy's formula); where
    x1 == x2 it is (x1 + x2)/2 + 1, so the gradient there is 1/2 to each side."""
    a, b = _float_operands("logaddexp2", x1, x2)
    same = a == b
    diff = np_api.where(same, 0.0, a - b)
    tail = np_api.log1p(lax.binary(nn.PowOp, _const(a, 2.0), -np_api.abs(diff))) * (1.0 / math.log(2.0))
    return np_api.where(same, (a + b) * 0.5 + 1.0, np_api.maximum(a, b) + tail)


@api
def float_power(x1: Any, x2: Any) -> Tracer:
    """x1 ** x2 computed in float64, whatever the operands' dtypes, as numpy's float_power
    (the point of the function: integer, float16 and float32 operands get a float64 result;
    JAX instead promotes to the operands' float type). Negative bases with non-integer
    exponents give NaN."""
    (a, b), _ = operands("float_power", x1, x2, dtype=dtypes.float64)
    return lax.binary(nn.PowOp, a, b)


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
def divmod(x1: Any, x2: Any) -> tuple[Tracer, Tracer]:  # noqa: A001 (numpy's name)
    """(floor_divide(x1, x2), remainder(x1, x2)), as jnp.divmod (each as documented there)."""
    (a, b), d = operands("divmod", x1, x2)
    if d == dtypes.bool_:
        raise DTypeError(f"divmod: not defined on bool arrays{user_site()}")
    return np_api.floor_divide(a, b), np_api.remainder(a, b)


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


# ---------------------------------------------------------------------------------------------
# Integer functions
# ---------------------------------------------------------------------------------------------


def _int_operands(name: str, x1: Any, x2: Any) -> tuple[Tracer, Tracer]:
    (a, b), d = operands(name, x1, x2)
    if not dtypes.is_int(d):
        raise DTypeError(f"{name}: arguments must be integers, got {d}{user_site()}")
    return a, b


# Euclid's algorithm takes the most steps on consecutive Fibonacci numbers: F(47) > 2**31 and
# F(93) > 2**63, so this many steps finish every pair of the dtype.
_EUCLID_STEPS = {4: 47, 8: 93}


def _gcd(a: Tracer, b: Tracer) -> Tracer:
    from irgrad.numpy.control_flow import fori_loop

    def step(_: Tracer, carry: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
        u, v = carry
        nonzero = v != 0
        vs = np_api.where(nonzero, v, 1)
        r = u - lax.binary(nn.DivOp, u, vs) * vs  # u % v for u, v >= 0
        return np_api.where(nonzero, v, u), np_api.where(nonzero, r, v)

    g, _ = fori_loop(0, _EUCLID_STEPS[a.dtype.itemsize], step, (np_api.abs(a), np_api.abs(b)))
    return g


@api
def gcd(x1: Any, x2: Any) -> Tracer:
    """The greatest common divisor of |x1| and |x2| (0 for gcd(0, 0)), integers only: Euclid's
    algorithm as one fixed-count `fori_loop` (enough steps for any pair of the dtype)."""
    a, b = _int_operands("gcd", x1, x2)
    return _gcd(a, b)


@api
def lcm(x1: Any, x2: Any) -> Tracer:
    """The least common multiple |x1 / gcd * x2| (0 if either is 0), integers only; it wraps
    around where it exceeds the dtype, as numpy's."""
    a, b = _int_operands("lcm", x1, x2)
    g = _gcd(a, b)
    zero = g == 0
    gs = np_api.where(zero, 1, g)
    return np_api.where(zero, 0, np_api.abs(lax.binary(nn.DivOp, a, gs) * b))
