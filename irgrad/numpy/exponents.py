"""Exponentials and logarithms with numpy's names beyond the `nn` ops: exp2 log2 log10
logaddexp logaddexp2 float_power.

Composites of `nn` ops, so autodiff, batching and every backend cover them; integer and bool
inputs become float32 (float_power alone computes in float64, as numpy's). Accurate to a few
ulp in float64 over the whole domain (tests/unit/numpy/test_numpy_math.py measures it against
numpy); log2/log10 are exact at the powers of their base. Derivatives decided here
(docs/autodiff.md, Contracts): logaddexp(x, x) and logaddexp2(x, x) give 1/2 to each side (the
tie branch is (x + y) / 2 + log 2, resp. + 1).
"""

from __future__ import annotations

import math
from typing import Any

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, lift, operands, require_float, result_dtype
from irgrad.numpy.elementwise_support import _const, _float, _float_operands, _stop
from irgrad.numpy.rounding import _round_half_even
from irgrad.tracing.tracer import Tracer

__all__ = ["exp2", "float_power", "log10", "log2", "logaddexp", "logaddexp2"]


@api
def exp2(x: Any) -> Tracer:
    """2**x, as `nn.pow(2, x)` (libm's pow: exact at integers, within an ulp elsewhere);
    complex: exp(x log 2)."""
    t = require_float("exp2", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):  # exp(z log 2), as lax.exp2
        return np_api.exp(t * math.log(2.0))
    return lax.binary(nn.PowOp, _const(t, 2.0), t)


def _log_base(name: str, x: Any, base: float) -> Tracer:
    """log(x) / log(base), made exact where x is an integer power of the base (numpy gives
    log2(8) == 3 exactly): the nearest integer k is taken where base**k == x, as a correction
    k - r that carries no gradient, so the derivative is still 1 / (x log(base))."""
    t = require_float(name, lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):  # the principal log over log(base), as jnp's
        return np_api.log(t) * (1.0 / math.log(base))
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
    """log(exp(x) + exp(y)) = max(x, y) + log1p(exp(-|x - y|)): no overflow. max and |x - y|
    are selects that take y's side at a tie, where the formula is y + log1p(exp(x - y))
    itself, so all derivatives there are exact (1/2 to each side, 1/4 for the second). Equal
    infinities (inf - inf would be NaN) give (x + y)/2 + log 2: the infinity, gradient 1/2
    to each side."""
    d = result_dtype(x, y)
    if not dtypes.is_float(d):
        d = dtypes.float32
    (a, b), _ = operands("logaddexp", x, y, dtype=d)
    same_infinity = (a == b) & (np_api.abs(a) == math.inf)
    diff = np_api.where(same_infinity, 0.0, a - b)
    larger, minus_abs = _max_and_minus_abs(a, b, diff)
    apart = larger + np_api.log1p(np_api.exp(minus_abs))
    return np_api.where(same_infinity, (a * 0.5 + b * 0.5) + math.log(2.0), apart)


def _max_and_minus_abs(a: Tracer, b: Tracer, diff: Tracer) -> tuple[Tracer, Tracer]:
    """max(a, b) and -|diff| (diff = a - b) as selects on a > b: at a tie b and diff itself,
    smooth there (logaddexp's and logaddexp2's second derivatives at a tie)."""
    greater = a > b
    return np_api.where(greater, a, b), np_api.where(greater, -diff, diff)


@api
def logaddexp2(x1: Any, x2: Any) -> Tracer:
    """log2(2**x1 + 2**x2) = max + log1p(2**-|x1 - x2|) / log(2) (numpy's formula); where
    x1 == x2 are infinities it is (x1 + x2)/2 + 1; the max and |x1 - x2| as in logaddexp, so
    the derivatives at a tie are exact."""
    a, b = _float_operands("logaddexp2", x1, x2)
    same_infinity = (a == b) & (np_api.abs(a) == math.inf)
    diff = np_api.where(same_infinity, 0.0, a - b)
    larger, minus_abs = _max_and_minus_abs(a, b, diff)
    tail = np_api.log1p(lax.binary(nn.PowOp, _const(a, 2.0), minus_abs)) * (1.0 / math.log(2.0))
    return np_api.where(same_infinity, (a * 0.5 + b * 0.5) + 1.0, larger + tail)


@api
def float_power(x1: Any, x2: Any) -> Tracer:
    """x1 ** x2 computed in float64, whatever the operands' dtypes, as numpy's float_power
    (the point of the function: integer, float16 and float32 operands get a float64 result;
    JAX instead promotes to the operands' float type). Negative bases with non-integer
    exponents give NaN."""
    (a, b), _ = operands("float_power", x1, x2, dtype=dtypes.float64)
    return lax.binary(nn.PowOp, a, b)
