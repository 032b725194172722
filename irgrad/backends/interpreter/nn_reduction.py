"""`nn` reductions: reduce_sum, reduce_max, reduce_min.

f16/bf16 sums accumulate in f32 and round once (numpy would accumulate in the narrow type);
integer sums wrap in their own width (numpy would widen to int64). Max and min follow
`numerics.maximum`: NaN propagates, and an empty axis gives the identity (-inf, or the
type's minimum, for max).
"""

from __future__ import annotations

from typing import cast

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls

from irgrad.backends.interpreter import numerics
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import nn


def _axes(op: nn.ReduceOp) -> tuple[int, ...]:
    return cast(tuple[int, ...], op.axes.get_values())


@register_impls
class NNReductionFunctions(InterpreterFunctions):
    @numpy_impl(nn.ReduceSumOp)
    def run_reduce_sum(self, interpreter: Interpreter, op: nn.ReduceSumOp, args: PythonValues):
        (x,) = args
        keepdims = op.keepdims is not None
        wide = numerics.compute_dtype(x.dtype)
        total = np.sum(x.astype(wide, copy=False), axis=_axes(op), keepdims=keepdims, dtype=wide)
        return (numerics.cast_float(total, x.dtype) if wide != x.dtype else total,)

    @numpy_impl(nn.ReduceMaxOp)
    def run_reduce_max(self, interpreter: Interpreter, op: nn.ReduceMaxOp, args: PythonValues):
        (x,) = args
        return (numerics.reduce_extremum(x, _axes(op), op.keepdims is not None, want_max=True),)

    @numpy_impl(nn.ReduceMinOp)
    def run_reduce_min(self, interpreter: Interpreter, op: nn.ReduceMinOp, args: PythonValues):
        (x,) = args
        return (numerics.reduce_extremum(x, _axes(op), op.keepdims is not None, want_max=False),)
