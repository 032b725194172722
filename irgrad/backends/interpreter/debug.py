"""`debug.print` on the reference interpreter: the operands (tensors or memrefs, both numpy
arrays here) formatted by irgrad/backends/debug_print.py."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls

from irgrad.backends import debug_print
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import debug


@register_impls
class DebugFunctions(InterpreterFunctions):
    @numpy_impl(debug.PrintOp)
    def run_print(self, interpreter: Interpreter, op: debug.PrintOp, args: PythonValues):
        values = [np.array(a, copy=True) for a in args]
        debug_print.emit(op.format.data, op.operand_names(), values)
        return ()
