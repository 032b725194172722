"""`index` dialect ops (irgrad/dialects/index.py) on the interpreter's index values.

An index value is a Python int (or an int64 array inside a vectorized region); the ops
compute on 64 bits, as arith's index arithmetic does, and share arith's implementations:
operands read as signed or unsigned as the op's name says, results wrap. Division by zero,
signed division overflow (INT_MIN / -1) and shifts by 64 or more raise
`UndefinedBehaviorError`, as for arith.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls
from xdsl.ir import Operation

from irgrad.backends.interpreter import arith as arith_impl
from irgrad.backends.interpreter.arith import (
    CMPI,
    element_dtype,
    operand,
    signed,
    unsigned,
    wrap,
)
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import index

Fn = arith_impl.Fn

INTEGER_BINARY: dict[type[Operation], Fn] = {
    index.AddOp: arith_impl._plain(np.add),
    index.SubOp: arith_impl._plain(np.subtract),
    index.MulOp: arith_impl._plain(np.multiply),
    index.AndOp: arith_impl._plain(np.bitwise_and, unsigned),
    index.OrOp: arith_impl._plain(np.bitwise_or, unsigned),
    index.XOrOp: arith_impl._plain(np.bitwise_xor, unsigned),
    index.MaxSOp: arith_impl._plain(np.maximum),
    index.MinSOp: arith_impl._plain(np.minimum),
    index.MaxUOp: arith_impl._plain(np.maximum, unsigned),
    index.MinUOp: arith_impl._plain(np.minimum, unsigned),
    index.DivSOp: lambda op, a, b: arith_impl._divsi(op, a, b),
    index.RemSOp: lambda op, a, b: arith_impl._remsi(op, a, b),
    index.FloorDivSOp: lambda op, a, b: arith_impl._floordivsi(op, a, b),
    index.CeilDivSOp: lambda op, a, b: arith_impl._ceildiv(op, a, b),
    index.DivUOp: lambda op, a, b: arith_impl._divui(op, unsigned(a), unsigned(b)),
    index.RemUOp: lambda op, a, b: arith_impl._remui(op, unsigned(a), unsigned(b)),
    index.CeilDivUOp: lambda op, a, b: arith_impl._ceildiv(op, unsigned(a), unsigned(b)),
    index.ShlOp: arith_impl._shift(np.left_shift, unsigned),
    index.ShrSOp: arith_impl._shift(np.right_shift, signed),
    index.ShrUOp: arith_impl._shift(np.right_shift, unsigned),
}

PREDICATES = list(index.IndexCmpPredicate)


def _binary_impl(op_type: type[Operation], fn: Fn) -> Fn:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        a, b = (operand(v) for v in args)
        return (wrap(fn(op, a, b), np.dtype(np.int64)),)

    return numpy_impl(op_type)(run)


class IndexFunctions(InterpreterFunctions):
    """index: the table above, plus cmp, the constants, the casts and sizeof."""

    @numpy_impl(index.CmpOp)
    def run_cmp(self, interpreter: Interpreter, op: index.CmpOp, args: PythonValues):
        compare, read = CMPI[PREDICATES.index(op.pred.data)]
        a, b = (read(operand(v)) for v in args)
        return (compare(a, b),)

    @numpy_impl(index.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: index.ConstantOp, args: PythonValues):
        value = int(op.value.value.data)
        return (((value + 2**63) % 2**64) - 2**63,)  # wrapped to 64 bits

    @numpy_impl(index.BoolConstantOp)
    def run_bool_constant(
        self, interpreter: Interpreter, op: index.BoolConstantOp, args: PythonValues
    ):
        return (np.bool_(bool(op.value.value.data)),)

    @numpy_impl(index.SizeOfOp)
    def run_sizeof(self, interpreter: Interpreter, op: index.SizeOfOp, args: PythonValues):
        return (index.INDEX_BITWIDTH,)

    @numpy_impl(index.CastSOp)
    def run_casts(self, interpreter: Interpreter, op: index.CastSOp, args: PythonValues):
        x = operand(args[0])
        return (wrap(signed(x).astype(np.int64), element_dtype(op.output.type)),)

    @numpy_impl(index.CastUOp)
    def run_castu(self, interpreter: Interpreter, op: index.CastUOp, args: PythonValues):
        x = operand(args[0])
        return (wrap(unsigned(x).astype(np.uint64), element_dtype(op.output.type)),)


for _op_type, _fn in INTEGER_BINARY.items():
    setattr(IndexFunctions, f"run_{_op_type.name[6:]}", _binary_impl(_op_type, _fn))
register_impls(IndexFunctions)
