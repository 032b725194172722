"""`arith` on numpy values: scalars and tensors alike, in the exact dtype.

Replaces xDSL's arith implementations, which compute one `IntegerAttr`/`FloatAttr` at a
time and lack divf, negf, casts and tensor operands. Integers are signless: an op reads its
operands as signed or unsigned as the op says (i1 true is -1 when signed, 1 when unsigned),
and results wrap to the width. `index` is 64 bits wide.

MLIR leaves some results undefined (division by zero, signed division overflow, shifts by
the bit width or more, out-of-range float-to-int conversion); those raise
`UndefinedBehaviorError` naming the op, rather than producing an arbitrary value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ShapedType,
)
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls
from xdsl.ir import Attribute, Operation

from irgrad.dialects.upstream import arith as upstream_arith
from irgrad.backends.interpreter import numerics
from irgrad.ir_numpy import from_attribute, numpy_dtype
from irgrad.backends.interpreter.errors import UndefinedBehaviorError, UnsupportedOpError
from irgrad.backends.interpreter.nn_creation import scalar_from_attr
from irgrad.backends.interpreter.values import numpy_impl

Fn = Callable[..., Any]


# ---------------------------------------------------------------------------------------------
# Reading values
# ---------------------------------------------------------------------------------------------


def element_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype of a scalar type or of a shaped type's elements (index -> int64)."""
    if isinstance(t, ShapedType):
        t = cast(Any, t).get_element_type()
    return numpy_dtype(t)


def operand(value: Any) -> Any:
    """A runtime value ready for numpy: index Python ints become np.int64."""
    return np.int64(value) if isinstance(value, int) else value


def signed(x: Any) -> Any:
    """The integer read as signed: i1 true becomes -1 (int8)."""
    if x.dtype == np.bool_:
        return -np.asarray(x).astype(np.int8)
    return x


def unsigned(x: Any) -> Any:
    """The integer read as unsigned (the same bits as a uintN)."""
    if x.dtype == np.bool_:
        return np.asarray(x).astype(np.uint8)
    return x.astype(np.dtype(f"uint{x.dtype.itemsize * 8}"))


def wrap(x: Any, dtype: np.dtype) -> Any:
    """An integer result truncated to the width of `dtype` (i1 keeps the low bit)."""
    if dtype == np.bool_:
        return (np.asarray(x) & 1).astype(np.bool_)
    return np.asarray(x).astype(dtype)


def bit_width(dtype: np.dtype) -> int:
    return 1 if dtype == np.bool_ else dtype.itemsize * 8


def undefined_if(condition: Any, op: Operation, what: str) -> None:
    if np.any(condition):
        raise UndefinedBehaviorError(f"{what} is undefined behaviour", op)


# ---------------------------------------------------------------------------------------------
# Integer binary ops
# ---------------------------------------------------------------------------------------------


def _divsi(op: Operation, a: Any, b: Any) -> Any:
    undefined_if(b == 0, op, "division by zero")
    info = np.iinfo(a.dtype)
    undefined_if((a == info.min) & (b == -1), op, "signed division overflow (INT_MIN / -1)")
    return numerics.trunc_divide(a, b)


def _remsi(op: Operation, a: Any, b: Any) -> Any:
    undefined_if(b == 0, op, "remainder by zero")
    return np.fmod(a, np.where(b == -1, 1, b).astype(b.dtype))  # INT_MIN % -1 is 0


def _floordivsi(op: Operation, a: Any, b: Any) -> Any:
    undefined_if(b == 0, op, "division by zero")
    info = np.iinfo(a.dtype)
    undefined_if((a == info.min) & (b == -1), op, "signed division overflow (INT_MIN / -1)")
    return np.floor_divide(a, b)


def _ceildiv(op: Operation, a: Any, b: Any) -> Any:
    undefined_if(b == 0, op, "division by zero")
    if a.dtype.kind == "i":
        info = np.iinfo(a.dtype)
        undefined_if((a == info.min) & (b == -1), op, "signed division overflow (INT_MIN / -1)")
    q = np.floor_divide(a, b)
    return q + (np.remainder(a, b) != 0).astype(q.dtype)


def _divui(op: Operation, a: Any, b: Any) -> Any:
    undefined_if(b == 0, op, "division by zero")
    return np.floor_divide(a, b)


def _remui(op: Operation, a: Any, b: Any) -> Any:
    undefined_if(b == 0, op, "remainder by zero")
    return np.remainder(a, b)


def _shift(fn: Fn, read: Fn) -> Fn:
    def run(op: Operation, a: Any, b: Any) -> Any:
        width = bit_width(a.dtype)
        undefined_if(unsigned(b) >= width, op, f"a shift by {width} bits or more (poison)")
        return fn(read(a), unsigned(b).astype(read(a).dtype))

    return run


def _plain(fn: Fn, read: Fn = signed) -> Fn:
    return lambda op, a, b: fn(read(a), read(b))


INTEGER_BINARY: dict[type[Operation], Fn] = {
    arith.AddiOp: _plain(np.add),
    arith.SubiOp: _plain(np.subtract),
    arith.MuliOp: _plain(np.multiply),
    arith.AndIOp: _plain(np.bitwise_and, unsigned),
    arith.OrIOp: _plain(np.bitwise_or, unsigned),
    arith.XOrIOp: _plain(np.bitwise_xor, unsigned),
    arith.MaxSIOp: _plain(np.maximum),
    arith.MinSIOp: _plain(np.minimum),
    arith.MaxUIOp: _plain(np.maximum, unsigned),
    arith.MinUIOp: _plain(np.minimum, unsigned),
    arith.DivSIOp: lambda op, a, b: _divsi(op, signed(a), signed(b)),
    arith.RemSIOp: lambda op, a, b: _remsi(op, signed(a), signed(b)),
    arith.FloorDivSIOp: lambda op, a, b: _floordivsi(op, signed(a), signed(b)),
    arith.CeilDivSIOp: lambda op, a, b: _ceildiv(op, signed(a), signed(b)),
    arith.DivUIOp: lambda op, a, b: _divui(op, unsigned(a), unsigned(b)),
    arith.RemUIOp: lambda op, a, b: _remui(op, unsigned(a), unsigned(b)),
    arith.CeilDivUIOp: lambda op, a, b: _ceildiv(op, unsigned(a), unsigned(b)),
    arith.ShLIOp: _shift(np.left_shift, unsigned),
    arith.ShRSIOp: _shift(np.right_shift, signed),
    arith.ShRUIOp: _shift(np.right_shift, unsigned),
}

FLOAT_BINARY: dict[type[Operation], Fn] = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.true_divide,
    upstream_arith.RemFOp: np.fmod,
    arith.MaximumfOp: numerics.maximum,
    arith.MinimumfOp: numerics.minimum,
    arith.MaxnumfOp: numerics.maxnum,
    arith.MinnumfOp: numerics.minnum,
}

CMPI: dict[int, tuple[Fn, Fn]] = {  # predicate -> (comparison, how operands are read)
    0: (np.equal, unsigned),
    1: (np.not_equal, unsigned),
    2: (np.less, signed),
    3: (np.less_equal, signed),
    4: (np.greater, signed),
    5: (np.greater_equal, signed),
    6: (np.less, unsigned),
    7: (np.less_equal, unsigned),
    8: (np.greater, unsigned),
    9: (np.greater_equal, unsigned),
}


def _cmpf(predicate: int, a: Any, b: Any) -> Any:
    ordered = ~(np.isnan(a) | np.isnan(b))
    match predicate:
        case 0:  # false
            return np.zeros_like(ordered)
        case 1:  # oeq
            return np.equal(a, b)
        case 2:  # ogt
            return np.greater(a, b)
        case 3:  # oge
            return np.greater_equal(a, b)
        case 4:  # olt
            return np.less(a, b)
        case 5:  # ole
            return np.less_equal(a, b)
        case 6:  # one
            return np.less(a, b) | np.greater(a, b)
        case 7:  # ord
            return ordered
        case 8:  # ueq
            return ~(np.less(a, b) | np.greater(a, b))
        case 9:  # ugt
            return ~np.less_equal(a, b)
        case 10:  # uge
            return ~np.less(a, b)
        case 11:  # ult
            return ~np.greater_equal(a, b)
        case 12:  # ule
            return ~np.greater(a, b)
        case 13:  # une
            return np.not_equal(a, b)
        case 14:  # uno
            return ~ordered
        case _:  # true
            return np.ones_like(ordered)


# ---------------------------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------------------------


def _float_to_int(op: Operation, x: Any, dtype: np.dtype, is_signed: bool) -> Any:
    """fptosi/fptoui: truncate toward zero; NaN or a result out of range is poison."""
    f = np.trunc(np.asarray(x).astype(np.float64))
    width = bit_width(dtype)
    low, high = (-(2.0 ** (width - 1)), 2.0 ** (width - 1)) if is_signed else (0.0, 2.0**width)
    out_of_range = np.isnan(f) | (f < low) | (f >= high)
    undefined_if(out_of_range, op, "a float out of the integer range (poison)")
    if dtype == np.bool_:
        return f != 0
    target = dtype if is_signed else np.dtype(f"uint{width}")
    return f.astype(target).astype(dtype)


def _cast(op: Operation, x: Any, dtype: np.dtype) -> Any:
    """The casts, by op; `x` already is a numpy value and `dtype` the result element dtype."""
    match op:
        case arith.ExtSIOp() | arith.IndexCastOp():
            return wrap(signed(x).astype(np.int64), dtype)
        case arith.ExtUIOp() | upstream_arith.IndexCastUIOp():
            return wrap(unsigned(x).astype(np.uint64), dtype)
        case arith.TruncIOp():
            return wrap(x, dtype)
        case arith.SIToFPOp():
            return numerics.cast_float(signed(x), dtype)
        case arith.UIToFPOp():
            return numerics.cast_float(unsigned(x), dtype)
        case arith.FPToSIOp():
            return _float_to_int(op, x, dtype, is_signed=True)
        case arith.FPToUIOp():
            return _float_to_int(op, x, dtype, is_signed=False)
        case arith.ExtFOp() | arith.TruncFOp():
            return numerics.cast_float(x, dtype)
        case arith.BitcastOp():
            return np.asarray(x).view(dtype)
        case _:
            raise UnsupportedOpError("is not a cast the interpreter knows", op)


CASTS = (
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
    arith.IndexCastOp,
    upstream_arith.IndexCastUIOp,
    arith.SIToFPOp,
    arith.UIToFPOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
    arith.ExtFOp,
    arith.TruncFOp,
    arith.BitcastOp,
)


# ---------------------------------------------------------------------------------------------
# Implementations
# ---------------------------------------------------------------------------------------------


def _integer_impl(op_type: type[Operation], fn: Fn) -> Fn:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        a, b = (operand(v) for v in args)
        return (wrap(fn(op, a, b), element_dtype(op.results[0].type)),)

    return numpy_impl(op_type)(run)


def _float_impl(op_type: type[Operation], fn: Fn) -> Fn:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        return (fn(*args),)

    return numpy_impl(op_type)(run)


def _cast_impl(op_type: type[Operation]) -> Fn:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        return (_cast(op, operand(args[0]), element_dtype(op.results[0].type)),)

    return numpy_impl(op_type)(run)


class ArithFunctions(InterpreterFunctions):
    """arith: the tables above, plus constant, cmpi, cmpf, select and negf."""

    @numpy_impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues):
        value = op.value
        if isinstance(value, DenseIntOrFPElementsAttr):
            return (from_attribute(value),)
        if isinstance(op.result.type, IndexType) and isinstance(value, IntegerAttr):
            return (int(value.value.data),)
        if isinstance(value, IntegerAttr | FloatAttr):
            return (scalar_from_attr(value, numpy_dtype(op.result.type)),)
        raise UnsupportedOpError(f"constant {value} is not supported by the interpreter", op)

    @numpy_impl(arith.CmpiOp)
    def run_cmpi(self, interpreter: Interpreter, op: arith.CmpiOp, args: PythonValues):
        compare, read = CMPI[op.predicate.value.data]
        a, b = (read(operand(v)) for v in args)
        return (compare(a, b),)

    @numpy_impl(arith.CmpfOp)
    def run_cmpf(self, interpreter: Interpreter, op: arith.CmpfOp, args: PythonValues):
        return (_cmpf(op.predicate.value.data, *args),)

    @numpy_impl(arith.SelectOp)
    def run_select(self, interpreter: Interpreter, op: arith.SelectOp, args: PythonValues):
        cond, on_true, on_false = args
        if np.ndim(cond) == 0:
            # A scalar condition picks a whole value, shaped or not.
            return (on_true if cond else on_false,)
        return (np.where(cond, on_true, on_false),)

    @numpy_impl(arith.NegfOp)
    def run_negf(self, interpreter: Interpreter, op: arith.NegfOp, args: PythonValues):
        return (np.negative(args[0]),)


for _op_type, _fn in INTEGER_BINARY.items():
    setattr(ArithFunctions, f"run_{_op_type.name[6:]}", _integer_impl(_op_type, _fn))
for _op_type, _fn in FLOAT_BINARY.items():
    setattr(ArithFunctions, f"run_{_op_type.name[6:]}", _float_impl(_op_type, _fn))
for _op_type in CASTS:
    setattr(ArithFunctions, f"run_{_op_type.name[6:]}", _cast_impl(_op_type))
register_impls(ArithFunctions)
