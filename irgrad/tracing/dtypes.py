"""Dtypes of the Python API and JAX's promotion rules.

irgrad's arrays hold bool, int32, int64, float16, bfloat16, float32, float64, complex64 or
complex128. Binary operations promote as JAX does (with 64-bit types enabled):

- bool < int32 < int64 < float16 / bfloat16 < float32 < float64 < complex; float16 with
  bfloat16 gives float32. An integer with a float gives that float; float32 with float64 gives
  float64; a float with a complex gives the complex type wide enough for both (float64 with
  complex64 is complex128).
- Python scalars are *weakly typed*: they take the array's dtype (`x_f16 * 2.0` stays f16,
  `x_i32 + 1` stays int32). A Python float with an integer or bool array gives float32, a
  Python int with a bool array gives int32.
- Defaults: Python floats are float32, Python ints int32, Python complex numbers complex64 (as
  in JAX without x64).
- Reductions keep the input dtype (sum of bool gives int32, as in JAX).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    ComplexType,
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
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

SUPPORTED = (bool_, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
FLOATS = (float16, bfloat16, float32, float64)
INTS = (int32, int64)
COMPLEXES = (complex64, complex128)

_TO_ELEMENT: dict[np.dtype, Attribute] = {
    bool_: i1,
    int32: i32,
    int64: i64,
    float16: f16,
    bfloat16: bf16,
    float32: f32,
    float64: f64,
    complex64: ComplexType(f32),
    complex128: ComplexType(f64),
}

# The promotion lattice as ranks; f16/bf16 share a rank and join to f32.
_RANK = {bool_: 0, int32: 1, int64: 2, float16: 3, bfloat16: 3, float32: 4, float64: 5, complex64: 6, complex128: 7}


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
    if t == _TO_ELEMENT[complex64]:
        return complex64
    if t == _TO_ELEMENT[complex128]:
        return complex128
    raise DTypeError(f"element type {t} has no irgrad dtype")


def is_float(dtype: np.dtype) -> bool:
    return dtype in FLOATS


def is_int(dtype: np.dtype) -> bool:
    return dtype in INTS


def is_complex(dtype: np.dtype) -> bool:
    return dtype in COMPLEXES


def is_inexact(dtype: np.dtype) -> bool:
    """A float or complex dtype: what JAX differentiates."""
    return dtype in FLOATS or dtype in COMPLEXES


def complex_of(dtype: np.dtype) -> np.dtype:
    """The complex dtype holding `dtype`'s values exactly: complex128 for float64 (and
    complex128), complex64 for every other dtype (JAX's rule for `x + 1j`)."""
    return complex128 if dtype in (float64, complex128) else complex64


def real_of(dtype: np.dtype) -> np.dtype:
    """The dtype of a complex dtype's real and imaginary parts; other dtypes unchanged."""
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


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
    if is_complex(a) or is_complex(b):
        # The complex type wide enough for both: float64 with complex64 is complex128.
        return complex128 if float64 in (a, b) or complex128 in (a, b) else complex64
    return a if ra > rb else b


def promote_weak(strong: np.dtype, scalar: bool | int | float | complex) -> np.dtype:
    """The dtype of `array op scalar`: the scalar takes the array's dtype where it fits."""
    if isinstance(scalar, bool):
        return strong
    if isinstance(scalar, int):
        return int32 if strong == bool_ else strong
    if isinstance(scalar, complex):
        return complex_of(strong)
    return strong if is_inexact(strong) else float32


def scalar_dtype(scalar: bool | int | float | complex) -> np.dtype:
    """The default dtype of a Python scalar used alone."""
    if isinstance(scalar, bool):
        return bool_
    if isinstance(scalar, int):
        return int32
    if isinstance(scalar, complex):
        return complex64
    return float32


def default_width(dtype: np.dtype) -> np.dtype:
    """A kind's default dtype (float32, complex64, int32), where a weakly typed value lands."""
    if is_float(dtype):
        return float32
    if is_complex(dtype):
        return complex64
    return int32 if dtype in INTS else dtype


def full_width(scalar: int | float | complex) -> np.dtype:
    """The dtype a Python scalar jit argument is traced at, weakly typed: exact (int64, float64, complex128)."""
    return int64 if isinstance(scalar, int) else float64 if isinstance(scalar, float) else complex128


def as_argument(x: Any, dtype: np.dtype) -> np.ndarray:
    """`x` as a program's argument of `dtype`: Python scalars and narrow integer arrays (int8,
    uint16, ...) take the argument's dtype, as they did when traced; other mismatches are the
    interpreter's to report."""
    array = np.asarray(x)
    if array.dtype == dtype:
        return array
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return array.astype(dtype)
    try:
        traced_as = array_dtype_of(array)
    except TypeError:
        return array
    return array.astype(dtype) if traced_as == dtype else array


def complex_as_pairs(x: np.ndarray) -> np.ndarray:
    """A complex array as nn-expand-complex's (re, im) pairs (a trailing axis of 2): a view."""
    if x.dtype.kind != "c":
        return x
    # Through a trailing axis of 1: numpy views a 0-d array only at its own itemsize.
    column = np.ascontiguousarray(x.reshape((*x.shape, 1)))
    return column.view(x.real.dtype).reshape((*x.shape, 2))


def pairs_as_complex(r: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """(re, im) pairs back as the complex array of `dtype` and `shape` they stand for."""
    if not is_complex(dtype) or r.dtype.kind == "c":
        return r
    return np.ascontiguousarray(r).view(dtype).reshape(shape)
