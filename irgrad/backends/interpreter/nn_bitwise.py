"""Bitwise `nn` ops: and, or, xor, shift_left, shift_right_logical.

Integers are two's complement, so the shifts work on the unsigned view of the same bits
(`int32` <-> `uint32`): a logical right shift of -1 by 28 is 15, as in `arith.shrui`. An
amount outside 0 .. width - 1 (negative included) gives 0, as the ops define; such amounts are
replaced before numpy sees them, since a C shift by them is undefined.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls

from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import nn

Shift = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _shift(x: Any, amount: Any, shift: Shift) -> np.ndarray:
    """`shift(bits, amount)` on the unsigned view of `x`; 0 where `amount` is out of range."""
    x, amount = np.asarray(x), np.asarray(amount)
    unsigned = np.dtype(f"uint{x.dtype.itemsize * 8}")
    width = x.dtype.itemsize * 8
    in_range = (amount >= 0) & (amount < width)
    # Out-of-range amounts are replaced by 0 before shifting, so numpy never sees them.
    safe = np.where(in_range, amount, 0).astype(unsigned)
    shifted = shift(x.view(unsigned), safe)
    return np.where(in_range, shifted, np.zeros((), unsigned)).astype(unsigned).view(x.dtype)


def shift_left(x: Any, amount: Any) -> np.ndarray:
    return _shift(x, amount, np.left_shift)


def shift_right_logical(x: Any, amount: Any) -> np.ndarray:
    return _shift(x, amount, np.right_shift)


class NNBitwiseFunctions(InterpreterFunctions):
    """The integer bitwise nn ops (i1 for and/or/xor, i32 and i64 for all)."""

    @numpy_impl(nn.AndOp)
    def run_and(self, interpreter: Interpreter, op: nn.AndOp, args: PythonValues):
        return (np.bitwise_and(*args),)

    @numpy_impl(nn.OrOp)
    def run_or(self, interpreter: Interpreter, op: nn.OrOp, args: PythonValues):
        return (np.bitwise_or(*args),)

    @numpy_impl(nn.XorOp)
    def run_xor(self, interpreter: Interpreter, op: nn.XorOp, args: PythonValues):
        return (np.bitwise_xor(*args),)

    @numpy_impl(nn.ShiftLeftOp)
    def run_shift_left(self, interpreter: Interpreter, op: nn.ShiftLeftOp, args: PythonValues):
        return (shift_left(*args),)

    @numpy_impl(nn.ShiftRightLogicalOp)
    def run_shift_right_logical(
        self, interpreter: Interpreter, op: nn.ShiftRightLogicalOp, args: PythonValues
    ):
        return (shift_right_logical(*args),)


register_impls(NNBitwiseFunctions)
