"""Numeric building blocks whose exact semantics numpy does not give directly.

Why one module: `nn`, `arith` and `math` share these rules, and an oracle must apply them the
same way everywhere. Each function works on numpy scalars and arrays alike.

- IEEE 754-2019 maximum/minimum: NaN propagates (as numpy) and -0 < +0 (numpy returns
  either zero), matching `arith.maximumf`, so a lowering compares bit for bit.
- Conversions round once: numpy/ml_dtypes convert f64 -> bf16 through f32, rounding twice;
  `cast_float` rounds f64 to f32 "to odd" first, which makes the second rounding exact.
- Low-precision floats (f16, bf16): transcendental functions and accumulations (sums,
  matmul, conv) compute in f32 and round the result once, as numpy does internally for f16.
- Integer division truncates; `nn.div` defines x / 0 = 0, `arith` division by zero is
  undefined behaviour and is reported by the arith implementations instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import math

import numpy as np

from irgrad.ir_numpy import BFLOAT16, LOW_PRECISION_DTYPES, is_float_dtype

Array = Any  # a numpy array or numpy scalar


def dtype_of(x: Array) -> np.dtype:
    return np.asarray(x).dtype if not isinstance(x, np.generic | np.ndarray) else x.dtype


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic on `dtype` is carried out in: f32 for f16/bf16, else itself."""
    return np.dtype(np.float32) if dtype in LOW_PRECISION_DTYPES else dtype


def via_compute_dtype(fn: Callable[..., Array], *xs: Array) -> Array:
    """`fn(*xs)` computed in the compute dtype of the first operand, rounded back once."""
    dtype = dtype_of(xs[0])
    wide = compute_dtype(dtype)
    if wide == dtype:
        return fn(*xs)
    return cast_float(fn(*(np.asarray(x).astype(wide) for x in xs)), dtype)


# ---------------------------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------------------------


def _f64_to_f32_round_to_odd(x: np.ndarray) -> np.ndarray:
    """Rounds f64 to f32 toward zero, setting the last bit when inexact ("round to odd").

    A value rounded to odd with at least two extra bits rounds correctly to any narrower
    format afterwards, so f64 -> (odd) f32 -> bf16 equals a direct correctly rounded f64 -> bf16.
    """
    y = x.astype(np.float32)
    back = y.astype(np.float64)
    inexact = np.isfinite(x) & (back != x)
    bits = y.view(np.uint32)
    # Sign-magnitude encoding: one less in the bit pattern is one ulp toward zero.
    bits = np.where(inexact & (np.abs(back) > np.abs(x)), bits - np.uint32(1), bits)
    bits = np.where(inexact, bits | np.uint32(1), bits).astype(np.uint32)
    return bits.view(np.float32)


def cast_float(x: Array, dtype: np.dtype) -> Array:
    """Converts to a float dtype with a single round-to-nearest-even."""
    x = np.asarray(x)
    if dtype == BFLOAT16 and x.dtype != BFLOAT16:
        if x.dtype == np.bool_:
            return x.astype(dtype)
        if x.dtype.kind in "iu":
            # Exact in f64 up to 2**53, far beyond bf16's 8 significant bits.
            x = x.astype(np.float64)
        if x.dtype == np.float64:
            x = _f64_to_f32_round_to_odd(x)
    return x.astype(dtype)


def float_to_int_saturating(x: Array, dtype: np.dtype) -> Array:
    """Float -> integer: truncate toward zero, saturate at the bounds, NaN -> 0 (fptosi.sat)."""
    info = np.iinfo(dtype)
    f = np.trunc(np.asarray(x).astype(np.float64))
    nan = np.isnan(f)
    low = f < float(info.min)  # info.min is a power of two: exact in f64
    high = f >= -float(info.min) if info.min < 0 else f >= float(info.max) + 1.0
    safe = np.where(nan | low | high, 0.0, f).astype(dtype)
    return np.where(high, info.max, np.where(low, info.min, safe)).astype(dtype)


def convert(x: Array, dtype: np.dtype) -> Array:
    """`nn.convert`: numpy `astype` with defined results for every input.

    To i1: `x != 0` (so NaN -> true). From i1: 0 or 1. Float -> float: one rounding to
    nearest even. Float -> int: `float_to_int_saturating`. Int -> int: two's complement
    wrap-around (truncation, or sign extension when widening). Complex -> real: the real part,
    converted as above; real -> complex: a zero imaginary part.
    """
    x = np.asarray(x)
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        if dtype == np.bool_:
            return x != 0
        x = x.real
    if np.dtype(dtype).kind == "c":
        return x.astype(dtype)
    if dtype == np.bool_:
        return x != 0
    if is_float_dtype(dtype):
        return cast_float(x, dtype)
    if is_float_dtype(x.dtype):
        return float_to_int_saturating(x, dtype)
    return x.astype(dtype)


# ---------------------------------------------------------------------------------------------
# Maximum and minimum
# ---------------------------------------------------------------------------------------------


def _fix_signed_zeros(result: Array, a: Array, b: Array, want_max: bool) -> Array:
    """Where both operands are zeros, max is +0 unless both are -0; min is -0 unless both +0."""
    both_zero = (a == 0) & (b == 0)
    if not np.any(both_zero):
        return result
    # (-0) + (-0) = -0 and every other sum of zeros is +0: exactly IEEE max of two zeros.
    zeros = (a + b) if want_max else -((-a) + (-b))
    return np.where(both_zero, zeros, result)


def maximum(a: Array, b: Array) -> Array:
    """IEEE 754-2019 maximum (arith.maximumf): NaN propagates, -0 < +0; integers as numpy."""
    result = np.maximum(a, b)
    if is_float_dtype(dtype_of(result)):
        result = _fix_signed_zeros(result, a, b, want_max=True)
    return result


def minimum(a: Array, b: Array) -> Array:
    """IEEE 754-2019 minimum (arith.minimumf): NaN propagates, -0 < +0."""
    result = np.minimum(a, b)
    if is_float_dtype(dtype_of(result)):
        result = _fix_signed_zeros(result, a, b, want_max=False)
    return result


def maxnum(a: Array, b: Array) -> Array:
    """IEEE maxNum (arith.maxnumf): a NaN operand is ignored unless both are NaN."""
    return _fix_signed_zeros(np.fmax(a, b), a, b, want_max=True)


def minnum(a: Array, b: Array) -> Array:
    """IEEE minNum (arith.minnumf): a NaN operand is ignored unless both are NaN."""
    return _fix_signed_zeros(np.fmin(a, b), a, b, want_max=False)


def lowest(dtype: np.dtype) -> Any:
    """The identity of max: -inf for floats, the minimum integer, False for i1."""
    if is_float_dtype(dtype):
        return -np.inf
    if dtype == np.bool_:
        return False
    return np.iinfo(dtype).min


def highest(dtype: np.dtype) -> Any:
    """The identity of min: +inf for floats, the maximum integer, True for i1."""
    if is_float_dtype(dtype):
        return np.inf
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).max


def reduce_extremum(
    x: np.ndarray, axes: tuple[int, ...], keepdims: bool, want_max: bool
) -> np.ndarray:
    """max/min over `axes` with `maximum`/`minimum` semantics; empty axes give the identity."""
    dtype = x.dtype
    work = x.astype(np.float32) if dtype == BFLOAT16 else x
    ufunc = np.maximum if want_max else np.minimum
    initial = lowest(dtype) if want_max else highest(dtype)
    result = ufunc.reduce(work, axis=axes, keepdims=keepdims, initial=initial)
    if is_float_dtype(dtype):
        # IEEE: the max of zeros is +0 if any zero is +0; the min is -0 if any zero is -0.
        wanted_sign = not want_max
        has_wanted = np.logical_or.reduce(
            (work == 0) & (np.signbit(work) == wanted_sign), axis=axes, keepdims=keepdims
        )
        result = np.where((result == 0) & has_wanted, -0.0 if wanted_sign else 0.0, result)
    return np.asarray(result).astype(dtype)


# ---------------------------------------------------------------------------------------------
# Integer division
# ---------------------------------------------------------------------------------------------


def trunc_divide(a: Array, b: Array) -> Array:
    """Integer a / b truncated toward zero; callers handle b == 0 first.

    numpy's `//` floors; the quotient is one more where the remainder is nonzero and the
    signs differ. INT_MIN / -1 wraps to INT_MIN (numpy's result).
    """
    q = np.floor_divide(a, b)
    r = np.remainder(a, b)
    return q + ((r != 0) & ((a < 0) != (b < 0))).astype(dtype_of(q))


def nn_divide(a: Array, b: Array) -> Array:
    """`nn.div`: IEEE division on floats (numpy's on complex numbers); truncating division with
    x / 0 = 0 on integers."""
    dtype = dtype_of(a)
    if is_float_dtype(dtype) or dtype.kind == "c":
        return np.true_divide(a, b)
    zero = b == 0
    safe = np.where(zero, np.ones_like(b), b).astype(dtype)
    return np.where(zero, np.zeros_like(a), trunc_divide(a, safe)).astype(dtype)


# ---------------------------------------------------------------------------------------------
# Float helpers
# ---------------------------------------------------------------------------------------------


def make_complex(re: Array, im: Array) -> Array:
    """`nn.complex`: re + i*im, complex64 from f32 parts and complex128 from f64 (no rounding)."""
    out = np.empty(np.shape(re), np.complex64 if dtype_of(re) == np.float32 else np.complex128)
    out.real, out.imag = re, im
    return out


def sigmoid(x: Array) -> Array:
    """1 / (1 + e**-x), without the overflow of e**-x for very negative x."""
    positive = x >= 0
    z = np.exp(np.where(positive, -x, x))  # z <= 1 (or NaN)
    return np.where(positive, 1 / (1 + z), z / (1 + z))


def round_half_away(x: Array) -> Array:
    """math.round: to nearest, ties away from zero (np.round rounds ties to even)."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)  # `where` keeps -0.0


_erf_scalar = np.frompyfunc(math.erf, 1, 1)


def erf(x: Array) -> Array:
    """libm's erf (through Python's math.erf), elementwise in x's dtype: the reference the
    compiled code (libm, libdevice) is checked against. numpy has no erf of its own."""
    a = np.asarray(x)
    out = np.asarray(_erf_scalar(a.astype(np.float64)), dtype=np.float64)
    if a.ndim == 0:
        return a.dtype.type(out)
    return out.astype(a.dtype) if a.dtype != np.float64 else out
