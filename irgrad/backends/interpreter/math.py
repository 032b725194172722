"""`math` on numpy values (scalars and tensors), replacing xDSL's per-element versions.

Float functions run in the value's dtype, except f16/bf16, which compute in f32 and round
once. `math.round` rounds ties away from zero, `math.roundeven` to even. `math.fma` is
computed in f64 for f16/bf16/f32 (one rounding from an exact product, so correctly rounded
but for rare double-rounding ties) and unfused as a * b + c for f64. `math.erf` is not
implemented: numpy has no vectorized erf.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import math
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls
from xdsl.ir import Operation

from irgrad.backends.interpreter import numerics
from irgrad.backends.interpreter.arith import bit_width, signed, undefined_if, unsigned, wrap
from irgrad.backends.interpreter.values import numpy_impl

Fn = Callable[..., Any]


def _rsqrt(x: Any) -> Any:
    return np.reciprocal(np.sqrt(x))


def _fma(a: Any, b: Any, c: Any) -> Any:
    dtype = numerics.dtype_of(a)
    if dtype == np.float64:
        return a * b + c
    wide = [np.asarray(v).astype(np.float64) for v in (a, b, c)]
    return numerics.cast_float(wide[0] * wide[1] + wide[2], dtype)


def _fpowi(a: Any, b: Any) -> Any:
    return numerics.via_compute_dtype(
        lambda x, n: np.power(x, np.asarray(signed(n)).astype(x.dtype)), a, b
    )


FLOAT_FUNCTIONS: dict[type[Operation], Fn] = {
    math.AbsFOp: np.abs,
    math.CeilOp: np.ceil,
    math.FloorOp: np.floor,
    math.TruncOp: np.trunc,
    math.RoundOp: numerics.round_half_away,
    math.RoundEvenOp: np.rint,
    math.ExpOp: np.exp,
    math.Exp2Op: np.exp2,
    math.ExpM1Op: np.expm1,
    math.LogOp: np.log,
    math.Log2Op: np.log2,
    math.Log10Op: np.log10,
    math.Log1pOp: np.log1p,
    math.SqrtOp: np.sqrt,
    math.RsqrtOp: _rsqrt,
    math.CbrtOp: np.cbrt,
    math.SinOp: np.sin,
    math.CosOp: np.cos,
    math.TanOp: np.tan,
    math.AsinOp: np.arcsin,
    math.AcosOp: np.arccos,
    math.AtanOp: np.arctan,
    math.SinhOp: np.sinh,
    math.CoshOp: np.cosh,
    math.TanhOp: np.tanh,
    math.ErfOp: numerics.erf,
    math.AsinhOp: np.arcsinh,
    math.AcoshOp: np.arccosh,
    math.AtanhOp: np.arctanh,
    math.Atan2Op: np.arctan2,
    math.PowFOp: np.power,
    math.CopySignOp: np.copysign,
}


def _bit_length(u: Any, width: int) -> Any:
    """Number of significant bits of unsigned `u`, one vectorized shift per bit."""
    length = np.zeros(np.shape(u), dtype=np.int64)
    v = np.asarray(u).copy()
    for _ in range(width):
        length += v != 0
        v >>= 1
    return length


def _ctlz(x: Any) -> Any:
    width = bit_width(x.dtype)
    return width - _bit_length(unsigned(x), width)


def _cttz(x: Any) -> Any:
    width = bit_width(x.dtype)
    u = unsigned(x)
    lowest_bit = u & (~u + np.asarray(1).astype(u.dtype))
    return np.where(u == 0, width, _bit_length(lowest_bit, width) - 1)


def _ctpop(x: Any) -> Any:
    return np.bitwise_count(unsigned(x))


INTEGER_FUNCTIONS: dict[type[Operation], Fn] = {
    math.AbsIOp: lambda x: np.abs(signed(x)),
    math.CountLeadingZerosOp: _ctlz,
    math.CountTrailingZerosOp: _cttz,
    math.CtPopOp: _ctpop,
}


def _ipowi(op: Operation, base: Any, exponent: Any) -> Any:
    """Integer power; a negative exponent gives 1 / base**-n truncated (0 unless |base| = 1)."""
    b, e = signed(base), signed(exponent)
    negative = e < 0
    undefined_if(negative & (b == 0), op, "zero to a negative power (division by zero)")
    positive = np.power(b, np.where(negative, 0, e).astype(e.dtype))
    odd = (e % 2) != 0
    reciprocal = np.where(b == 1, 1, np.where(b == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, reciprocal, positive)


def _float_impl(op_type: type[Operation], fn: Fn) -> Fn:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        return (numerics.via_compute_dtype(fn, *args),)

    return numpy_impl(op_type)(run)


def _integer_impl(op_type: type[Operation], fn: Fn) -> Fn:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        (x,) = args
        return (wrap(fn(x), x.dtype),)

    return numpy_impl(op_type)(run)


class MathFunctions(InterpreterFunctions):
    """math: the FLOAT_FUNCTIONS and INTEGER_FUNCTIONS tables, plus fma, fpowi and ipowi."""

    @numpy_impl(math.FmaOp)
    def run_fma(self, interpreter: Interpreter, op: math.FmaOp, args: PythonValues):
        return (_fma(*args),)

    @numpy_impl(math.FPowIOp)
    def run_fpowi(self, interpreter: Interpreter, op: math.FPowIOp, args: PythonValues):
        return (_fpowi(*args),)

    @numpy_impl(math.IPowIOp)
    def run_ipowi(self, interpreter: Interpreter, op: math.IPowIOp, args: PythonValues):
        base, exponent = args
        return (wrap(_ipowi(op, base, exponent), base.dtype),)


for _op_type, _fn in FLOAT_FUNCTIONS.items():
    setattr(MathFunctions, f"run_{_op_type.name[5:]}", _float_impl(_op_type, _fn))
for _op_type, _fn in INTEGER_FUNCTIONS.items():
    setattr(MathFunctions, f"run_{_op_type.name[5:]}", _integer_impl(_op_type, _fn))
register_impls(MathFunctions)
