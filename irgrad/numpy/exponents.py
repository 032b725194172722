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
from irgrad.numpy.support import api, operands, result_dtype
from irgrad.numpy.elementwise_support import _const, _float, _float_operands, _stop
from irgrad.numpy.rounding import _round_half_even
from irgrad.tracing.tracer import Tracer

__all__ = ["exp2", "float_power", "log10", "log2", "logaddexp", "logaddexp2"]


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
    return np_api.where(same, (a * 0.5 + b * 0.5) + math.log(2.0), apart)


@api
def logaddexp2(x1: Any, x2: Any) -> Tracer:
    """log2(2**x1 + 2**x2) = max + log1p(2**-|x1 - x2|) / log(2) (numpy's formula); where
    x1 == x2 it is (x1 + x2)/2 + 1, so the gradient there is 1/2 to each side."""
    a, b = _float_operands("logaddexp2", x1, x2)
    same = a == b
    diff = np_api.where(same, 0.0, a - b)
    tail = np_api.log1p(lax.binary(nn.PowOp, _const(a, 2.0), -np_api.abs(diff))) * (1.0 / math.log(2.0))
    return np_api.where(same, (a * 0.5 + b * 0.5) + 1.0, np_api.maximum(a, b) + tail)


@api
def float_power(x1: Any, x2: Any) -> Tracer:
    """x1 ** x2 computed in float64, whatever the operands' dtypes, as numpy's float_power
    (the point of the function: integer, float16 and float32 operands get a float64 result;
    JAX instead promotes to the operands' float type). Negative bases with non-integer
    exponents give NaN."""
    (a, b), _ = operands("float_power", x1, x2, dtype=dtypes.float64)
    return lax.binary(nn.PowOp, a, b)
