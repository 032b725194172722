"""Dtypes of the Python API and JAX's promotion rules.

irgrad's arrays hold bool, int32, int64, float16, bfloat16, float32 or float64. Binary
operations promote as JAX does (with 64-bit types enabled):

- bool < int32 < int64 < float16 / bfloat16 < float32 < float64; float16 with bfloat16 gives
  float32. An integer with a float gives that float; float32 with float64 gives float64.
- Python scalars are *weakly typed*: they take the array's dtype (`x_f16 * 2.0` stays f16,
  `x_i32 + 1` stays int32). A Python float with an integer or bool array gives float32, a
  Python int with a bool array gives int32.
- Defaults: Python floats are float32, Python ints int32 (as in JAX without x64).
- Reductions keep the input dtype (sum of bool gives int32, as in JAX).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute

from irgrad.tracing.errors import DTypeError

bool_ = np.dtype(np.bool_)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
float16 = np.dtype(np.float16)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)

SUPPORTED = (bool_, int32, int64, float16, bfloat16, float32, float64)
FLOATS = (float16, bfloat16, float32, float64)
INTS = (int32, int64)

_TO_ELEMENT: dict[np.dtype, Attribute] = {
    bool_: i1,
    int32: i32,
    int64: i64,
    float16: f16,
    bfloat16: bf16,
    float32: f32,
    float64: f64,
}

# The promotion lattice as ranks; f16/bf16 share a rank and join to f32.
_RANK = {bool_: 0, int32: 1, int64: 2, float16: 3, bfloat16: 3, float32: 4, float64: 5}


def canonical(dtype: Any) -> np.dtype:
    """Accepts numpy dtypes, their names ('float32', 'bfloat16') and Python types."""
    if dtype is float:
        return float32
    if dtype is int:
        return int32
    if dtype is bool:
        return bool_
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"not a dtype: {dtype!r}") from None
    if d not in _TO_ELEMENT:
        raise DTypeError(
            f"dtype {d} is not supported; irgrad arrays hold "
            + ", ".join(str(s) for s in SUPPORTED)
        )
    return d


def element_type(dtype: Any) -> Attribute:
    return _TO_ELEMENT[canonical(dtype)]


def from_element_type(t: Attribute) -> np.dtype:
    if isinstance(t, Float16Type):
        return float16
    if isinstance(t, BFloat16Type):
        return bfloat16
    if isinstance(t, Float32Type):
        return float32
    if isinstance(t, Float64Type):
        return float64
    if isinstance(t, IntegerType):
        return {1: bool_, 32: int32, 64: int64}[t.width.data]
    raise DTypeError(f"element type {t} has no irgrad dtype")


def is_float(dtype: np.dtype) -> bool:
    return dtype in FLOATS


def is_int(dtype: np.dtype) -> bool:
    return dtype in INTS


def array_dtype_of(value: np.ndarray) -> np.dtype:
    """The irgrad dtype of a user's numpy array; unsupported widths are an error, not a cast."""
    d = value.dtype
    if d.byteorder not in ("=", "|"):
        d = d.newbyteorder("=")  # byte order is a storage detail; the values are what count
    if d.kind == "f" and d.itemsize == 8:
        return float64
    if d in _TO_ELEMENT:
        return d
    if d.kind in "iu" and d.itemsize < 4:
        # Narrow integers widen exactly; this loses nothing.
        return int32
    raise DTypeError(
        f"numpy arrays of dtype {d} are not supported; use one of "
        + ", ".join(str(s) for s in SUPPORTED)
    )


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """The result dtype of a binary operation on two (strongly typed) operands."""
    if a == b:
        return a
    ra, rb = _RANK[a], _RANK[b]
    if ra == rb == 3:
        return float32  # float16 with bfloat16
    return a if ra > rb else b


def promote_weak(strong: np.dtype, scalar: bool | int | float) -> np.dtype:
    """The dtype of `array op scalar`: the scalar takes the array's dtype where it fits."""
    if isinstance(scalar, bool):
        return strong
    if isinstance(scalar, int):
        return int32 if strong == bool_ else strong
    return strong if is_float(strong) else float32


def scalar_dtype(scalar: bool | int | float) -> np.dtype:
    """The default dtype of a Python scalar used alone."""
    if isinstance(scalar, bool):
        return bool_
    if isinstance(scalar, int):
        return int32
    return float32
