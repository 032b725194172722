"""`nn` ops that move data without arithmetic (except scatter_add's accumulation).

broadcast_in_dim, reshape, transpose, slice, dynamic_slice, dynamic_update_slice,
concatenate, pad, gather, scatter_add. Results may be numpy views of their operands (values
are immutable); ops that write (dynamic_update_slice, pad, scatter_add) write into a copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls

from irgrad.backends.interpreter import numerics
from irgrad.backends.interpreter.nn_creation import result_shape
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import nn


def ints(attr: DenseArrayBase) -> tuple[int, ...]:
    return cast(tuple[int, ...], attr.get_values())


def strided_slice(start: int, limit: int, stride: int) -> slice:
    """The Python slice for nn.slice's (start, limit, stride) on one dimension.

    nn.slice never wraps indices (limit -1 with a negative stride means "through index 0"),
    while a Python slice would read -1 as the last index; so the stop is computed from the
    last index actually read.
    """
    length = nn.slice_length(start, limit, stride)
    if length == 0:
        return slice(0, 0)
    stop = start + length * stride
    return slice(start, stop if stop >= 0 else None, stride)


def clamped_starts(starts: Sequence[Any], sizes: Sequence[int], shape: Sequence[int]) -> list[int]:
    """XLA's rule: each start index is clamped to [0, dim - size] so the window stays inside."""
    return [min(max(int(s), 0), n - k) for s, k, n in zip(starts, sizes, shape)]


def normalized_indices(indices: np.ndarray, size: int) -> np.ndarray:
    """gather/scatter indices: a negative index counts from the end once, then clamp to range."""
    idx = indices.astype(np.int64)
    idx = np.where(idx < 0, idx + size, idx)
    return np.clip(idx, 0, max(size - 1, 0))


@register_impls
class NNDataMovementFunctions(InterpreterFunctions):
    @numpy_impl(nn.BroadcastInDimOp)
    def run_broadcast_in_dim(
        self, interpreter: Interpreter, op: nn.BroadcastInDimOp, args: PythonValues
    ):
        (x,) = args
        dims = ints(op.dims)
        shape = result_shape(op)
        order = sorted(range(len(dims)), key=lambda i: dims[i])
        aligned = np.transpose(x, order)
        expanded = [1] * len(shape)
        for i, operand_dim in enumerate(order):
            expanded[dims[operand_dim]] = aligned.shape[i]
        return (np.broadcast_to(aligned.reshape(expanded), shape),)

    @numpy_impl(nn.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: nn.ReshapeOp, args: PythonValues):
        (x,) = args
        return (np.reshape(x, result_shape(op)),)

    @numpy_impl(nn.TransposeOp)
    def run_transpose(self, interpreter: Interpreter, op: nn.TransposeOp, args: PythonValues):
        (x,) = args
        return (np.transpose(x, ints(op.perm)),)

    @numpy_impl(nn.SliceOp)
    def run_slice(self, interpreter: Interpreter, op: nn.SliceOp, args: PythonValues):
        (x,) = args
        index = tuple(
            strided_slice(s, l, k)
            for s, l, k in zip(ints(op.start), ints(op.limit), ints(op.stride))
        )
        return (x[index],)

    @numpy_impl(nn.DynamicSliceOp)
    def run_dynamic_slice(
        self, interpreter: Interpreter, op: nn.DynamicSliceOp, args: PythonValues
    ):
        x, *starts = args
        sizes = ints(op.sizes)
        begin = clamped_starts(starts, sizes, x.shape)
        return (x[tuple(slice(b, b + k) for b, k in zip(begin, sizes))],)

    @numpy_impl(nn.DynamicUpdateSliceOp)
    def run_dynamic_update_slice(
        self, interpreter: Interpreter, op: nn.DynamicUpdateSliceOp, args: PythonValues
    ):
        x, update, *starts = args
        begin = clamped_starts(starts, update.shape, x.shape)
        out = x.copy()
        out[tuple(slice(b, b + k) for b, k in zip(begin, update.shape))] = update
        return (out,)

    @numpy_impl(nn.ConcatenateOp)
    def run_concatenate(self, interpreter: Interpreter, op: nn.ConcatenateOp, args: PythonValues):
        return (np.concatenate(args, axis=op.dimension.value.data),)

    @numpy_impl(nn.PadOp)
    def run_pad(self, interpreter: Interpreter, op: nn.PadOp, args: PythonValues):
        x, padding_value = args
        out = np.full(result_shape(op), padding_value, dtype=x.dtype)
        interior = tuple(slice(lo, lo + n) for lo, n in zip(ints(op.low), x.shape))
        out[interior] = x
        return (out,)

    @numpy_impl(nn.GatherOp)
    def run_gather(self, interpreter: Interpreter, op: nn.GatherOp, args: PythonValues):
        x, indices = args
        axis = op.axis.value.data
        return (np.take(x, normalized_indices(indices, x.shape[axis]), axis=axis),)

    @numpy_impl(nn.ScatterAddOp)
    def run_scatter_add(self, interpreter: Interpreter, op: nn.ScatterAddOp, args: PythonValues):
        x, indices, updates = args
        axis = op.axis.value.data
        idx = normalized_indices(indices, x.shape[axis])
        # Accumulate in f32 for f16/bf16, so repeated indices round once.
        wide = numerics.compute_dtype(x.dtype)
        out = x.astype(wide)  # a copy: np.add.at writes in place
        # Bring the scattered axis (in out) and the index dimensions (in updates) to the front.
        target = np.moveaxis(out, axis, 0)
        source = np.moveaxis(
            updates.astype(wide, copy=False),
            list(range(axis, axis + idx.ndim)),
            list(range(idx.ndim)),
        )
        np.add.at(target, idx, source)
        return (numerics.cast_float(out, x.dtype) if wide != x.dtype else out,)
