"""Elementwise arithmetic with numpy's names beyond the `nn` ops: reciprocal positive fabs
cbrt fmod divmod heaviside fmax fmin.

Composites of `nn` ops, so autodiff, batching and every backend cover them; integer and bool
inputs to the float-only ones become float32, as in JAX. Accurate to a few ulp in float64
(tests/unit/numpy/test_numpy_math.py measures it against numpy). Derivatives decided here
(docs/autodiff.md, Contracts):
- fmod: 1 in x and -trunc(x / y) in y, away from the jumps; divmod: the quotient's is 0, the
  remainder's remainder's;
- heaviside: 0 in x1; in x2 the gradient flows where x1 == 0 only (a select);
- fmax, fmin: a tie splits the gradient 1/2 to each side (as maximum); where one operand is
  NaN the other takes all of it (both NaN: x1);
- fabs'(0) = 0; cbrt's derivative at 0 is infinite.
"""

from __future__ import annotations

from typing import Any

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, lift, operands, require_float, result_dtype
from irgrad.numpy.elementwise_support import _const, _float
from irgrad.numpy.float_parts import _signbit
from irgrad.numpy.numerics import isnan
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import DTypeError, user_site

__all__ = ["cbrt", "divmod", "fabs", "fmax", "fmin", "fmod", "heaviside", "positive", "reciprocal"]


@api
def reciprocal(x: Any) -> Tracer:
    """1 / x (integers become float32 first, as jnp.reciprocal; complex values divide as nn.div)."""
    t = require_float("reciprocal", lift(x), complex_ok=True)
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
def heaviside(x1: Any, x2: Any) -> Tracer:
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0, NaN where x1 is NaN (numpy's
    heaviside). The result is a float, as numpy's and JAX's: the promoted float dtype of
    both, integers giving float32."""
    d0 = result_dtype(x1, x2)
    if d0 == dtypes.bool_:
        raise DTypeError(f"heaviside: not defined on bool arrays{user_site()}")
    (a, b), d = operands("heaviside", x1, x2, dtype=d0 if dtypes.is_float(d0) else dtypes.float32)
    zero, one = full(a.shape, 0, d), full(a.shape, 1, d)
    out = np_api.where(a < 0, zero, np_api.where(a > 0, one, b))
    if dtypes.is_float(d):
        out = np_api.where(isnan(a), a, out)
    return out


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
def divmod(x1: Any, x2: Any) -> tuple[Tracer, Tracer]:  # noqa: A001 (numpy's name)
    """(floor_divide(x1, x2), remainder(x1, x2)), as jnp.divmod (each as documented there)."""
    (a, b), d = operands("divmod", x1, x2)
    if d == dtypes.bool_:
        raise DTypeError(f"divmod: not defined on bool arrays{user_site()}")
    return np_api.floor_divide(a, b), np_api.remainder(a, b)
