"""`nn` ops that create tensors: constant, full, iota."""

from __future__ import annotations

from typing import cast

import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls

from irgrad.ir_numpy import from_attribute, is_float_dtype, numpy_dtype
from irgrad.backends.interpreter.numerics import cast_float
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import nn


def result_dtype(op: nn.NNOperation) -> np.dtype:
    return numpy_dtype(cast(TensorType, op.results[0].type).get_element_type())


def result_shape(op: nn.NNOperation) -> tuple[int, ...]:
    return tuple(cast(TensorType, op.results[0].type).get_shape())


def scalar_from_attr(attr: FloatAttr | IntegerAttr, dtype: np.dtype) -> np.generic:
    """The numpy scalar an IntegerAttr/FloatAttr denotes in `dtype` (integers wrap to width)."""
    if is_float_dtype(dtype):
        return cast_float(np.float64(attr.value.data), dtype)[()]
    value = int(attr.value.data)
    if dtype == np.bool_:
        return np.bool_(value & 1)
    bits = dtype.itemsize * 8
    value &= (1 << bits) - 1
    return np.array(value, dtype=f"uint{bits}").astype(dtype)[()]


@register_impls
class NNCreationFunctions(InterpreterFunctions):
    @numpy_impl(nn.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: nn.ConstantOp, args: PythonValues):
        return (from_attribute(op.value),)

    @numpy_impl(nn.FullOp)
    def run_full(self, interpreter: Interpreter, op: nn.FullOp, args: PythonValues):
        dtype = result_dtype(op)
        value = scalar_from_attr(cast(FloatAttr | IntegerAttr, op.value), dtype)
        return (np.full(result_shape(op), value, dtype=dtype),)

    @numpy_impl(nn.IotaOp)
    def run_iota(self, interpreter: Interpreter, op: nn.IotaOp, args: PythonValues):
        shape = result_shape(op)
        dim = op.dimension.value.data
        counts = np.arange(shape[dim], dtype=np.int64)
        counts = counts.reshape([n if d == dim else 1 for d, n in enumerate(shape)])
        dtype = result_dtype(op)
        values = cast_float(counts, dtype) if is_float_dtype(dtype) else counts.astype(dtype)
        return (np.broadcast_to(values, shape),)
