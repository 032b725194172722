"""What the elementwise math modules share (rounding, exponents, float_parts, trigonometric,
hyperbolic, arithmetic): a float operand (integers and bools become float32, as in JAX), a
constant of an operand's shape, `stop_gradient` and the dtype's finfo.

`stop_gradient` is irgrad/numpy/custom_derivatives.py's, imported when first called.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.tracing import dtypes
from irgrad.numpy.support import lift, operands, require_float, result_dtype
from irgrad.tracing.tracer import Tracer, full


def _float(name: str, x: Any) -> Tracer:
    return require_float(name, lift(x))


def _const(t: Tracer, value: float) -> Tracer:
    return full(t.shape, value, t.dtype)


def _stop(x: Tracer) -> Tracer:
    from irgrad.numpy.custom_derivatives import stop_gradient

    return stop_gradient(x)


def _float_operands(name: str, x1: Any, x2: Any) -> list[Tracer]:
    d = result_dtype(x1, x2)
    if not dtypes.is_float(d):
        d = dtypes.float32
    return operands(name, x1, x2, dtype=d)[0]


def dtypes_finfo(d: np.dtype) -> Any:
    import ml_dtypes

    return ml_dtypes.finfo(d) if d == dtypes.bfloat16 else np.finfo(d)
