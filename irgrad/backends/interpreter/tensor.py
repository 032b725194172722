"""`tensor` ops on numpy arrays (replacing xDSL's ShapedArray-based ones).

Out-of-bounds element accesses and slices are undefined behaviour in MLIR; they raise
`UndefinedBehaviorError` here. `tensor.empty` gives zeros (its contents are unspecified).
`tensor.pad` supports a padding region whose yielded value does not depend on the indices.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, TensorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Operation, SSAValue

from irgrad.backends.interpreter.arith import element_dtype
from irgrad.backends.interpreter.errors import UndefinedBehaviorError, UnsupportedOpError
from irgrad.dialects.upstream.tensor import GenerateOp
from irgrad.backends.interpreter.values import numpy_impl

# MLIR marks a dynamic entry of a static list with INT64_MIN; xDSL's shapes use -1.
_DYNAMIC = (DYNAMIC_INDEX, -(2**63))


def mixed(static: DenseArrayBase | Sequence[int], dynamic: Sequence[Any]) -> list[int]:
    """A static list whose dynamic entries are filled, in order, from runtime values."""
    values = static.get_values() if isinstance(static, DenseArrayBase) else static
    rest: Iterator[Any] = iter(dynamic)
    return [int(next(rest)) if v in _DYNAMIC else int(v) for v in cast(Sequence[int], values)]


def result_shape(t: Attribute, dynamic_sizes: Sequence[Any]) -> list[int]:
    return mixed(cast(TensorType, t).get_shape(), dynamic_sizes)


def slices(
    op: Operation, shape: Sequence[int], offsets: list[int], sizes: list[int], strides: list[int]
) -> tuple[slice, ...]:
    """The numpy index of an MLIR (offsets, sizes, strides) slice, checked to be in bounds."""
    index: list[slice] = []
    for d, (n, off, size, stride) in enumerate(zip(shape, offsets, sizes, strides)):
        if size == 0:
            index.append(slice(0, 0))
            continue
        last = off + (size - 1) * stride
        if not (0 <= off < n and 0 <= last < n):
            raise UndefinedBehaviorError(
                f"dimension {d}: slice offset {off}, size {size}, stride {stride} is out of "
                f"bounds for size {n}",
                op,
            )
        stop = off + size * stride
        index.append(slice(off, stop if stop >= 0 else None, stride))
    return tuple(index)


def slice_params(op: Any, args: Sequence[Any]) -> tuple[list[int], list[int], list[int]]:
    """offsets, sizes, strides of extract_slice/insert_slice, static and dynamic merged."""
    start = len(args) - len(op.offsets) - len(op.sizes) - len(op.strides)
    dynamic = list(args[start:])
    n_off, n_size = len(op.offsets), len(op.sizes)
    return (
        mixed(op.static_offsets, dynamic[:n_off]),
        mixed(op.static_sizes, dynamic[n_off : n_off + n_size]),
        mixed(op.static_strides, dynamic[n_off + n_size :]),
    )


def read_elements(op: Operation, x: np.ndarray, indices: Sequence[Any]) -> Any:
    """`x[indices]` for tensor.extract and memref.load. Inside a vectorized linalg body (a
    gather, say) the indices are arrays over the loop points: one element per point."""
    if any(isinstance(i, np.ndarray) and i.ndim > 0 for i in indices):
        grid = np.broadcast_arrays(*(np.asarray(i, dtype=np.int64) for i in indices))
        for d, (i, n) in enumerate(zip(grid, x.shape)):
            if np.any((i < 0) | (i >= n)):
                bad = int(i[(i < 0) | (i >= n)].flat[0])
                raise UndefinedBehaviorError(
                    f"index {bad} in dimension {d} is out of bounds for shape {list(x.shape)}", op
                )
        return x[tuple(grid)]
    return x[check_index(op, x.shape, indices)]


def check_index(op: Operation, shape: Sequence[int], indices: Sequence[Any]) -> tuple[int, ...]:
    index = tuple(int(i) for i in indices)
    if any(not 0 <= i < n for i, n in zip(index, shape)):
        raise UndefinedBehaviorError(
            f"index {list(index)} is out of bounds for shape {list(shape)}", op
        )
    return index


def collapsed_shape(shape: Sequence[int], reassociation: Any) -> list[int]:
    """collapse_shape's result shape: the product of each group of source dimensions."""
    groups = [[int(d.value.data) for d in group] for group in reassociation]
    return [math.prod(shape[d] for d in group) for group in groups]


def uses_arguments(region_args: Sequence[SSAValue]) -> bool:
    return any(arg.uses for arg in region_args)


@register_impls
class TensorFunctions(InterpreterFunctions):
    @numpy_impl(tensor.EmptyOp)
    def run_empty(self, interpreter: Interpreter, op: tensor.EmptyOp, args: PythonValues):
        t = op.tensor.type
        return (np.zeros(result_shape(t, args), dtype=element_dtype(t)),)

    @numpy_impl(tensor.SplatOp)
    def run_splat(self, interpreter: Interpreter, op: tensor.SplatOp, args: PythonValues):
        value, *sizes = args
        t = op.result.type
        return (np.full(result_shape(t, sizes), value, dtype=element_dtype(t)),)

    @numpy_impl(tensor.FromElementsOp)
    def run_from_elements(
        self, interpreter: Interpreter, op: tensor.FromElementsOp, args: PythonValues
    ):
        t = cast(TensorType, op.result.type)
        values = np.array(args, dtype=element_dtype(t))
        return (values.reshape(t.get_shape()),)

    @numpy_impl(tensor.ExtractOp)
    def run_extract(self, interpreter: Interpreter, op: tensor.ExtractOp, args: PythonValues):
        x, *indices = args
        return (read_elements(op, x, indices),)

    @numpy_impl(tensor.InsertOp)
    def run_insert(self, interpreter: Interpreter, op: tensor.InsertOp, args: PythonValues):
        value, dest, *indices = args
        out = dest.copy()
        out[check_index(op, dest.shape, indices)] = value
        return (out,)

    @numpy_impl(tensor.DimOp)
    def run_dim(self, interpreter: Interpreter, op: tensor.DimOp, args: PythonValues):
        x, index = args
        if not 0 <= int(index) < x.ndim:
            raise UndefinedBehaviorError(f"dimension {int(index)} of a rank-{x.ndim} tensor", op)
        return (x.shape[int(index)],)

    @numpy_impl(tensor.CastOp)
    def run_cast(self, interpreter: Interpreter, op: tensor.CastOp, args: PythonValues):
        (x,) = args
        t = op.dest.type
        if isinstance(t, TensorType):
            expected = t.get_shape()
            if len(expected) != x.ndim or any(
                d != DYNAMIC_INDEX and d != n for d, n in zip(expected, x.shape)
            ):
                raise UndefinedBehaviorError(f"cast of a {list(x.shape)} tensor to {t}", op)
        return (x,)

    @numpy_impl(tensor.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: tensor.ReshapeOp, args: PythonValues):
        x, shape = args
        new_shape = [int(v) for v in shape]
        if math.prod(new_shape) != x.size:
            raise UndefinedBehaviorError(f"reshape of {list(x.shape)} to {new_shape}", op)
        return (x.reshape(new_shape),)

    @numpy_impl(tensor.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: Interpreter, op: tensor.CollapseShapeOp, args: PythonValues
    ):
        (x,) = args
        return (x.reshape(collapsed_shape(x.shape, op.reassociation)),)

    @numpy_impl(tensor.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: Interpreter, op: tensor.ExpandShapeOp, args: PythonValues
    ):
        x, *dynamic = args
        return (x.reshape(mixed(op.static_output_shape, dynamic)),)

    @numpy_impl(tensor.ExtractSliceOp)
    def run_extract_slice(
        self, interpreter: Interpreter, op: tensor.ExtractSliceOp, args: PythonValues
    ):
        x = args[0]
        offsets, sizes, strides = slice_params(op, args)
        piece = x[slices(op, x.shape, offsets, sizes, strides)]
        # A rank-reducing slice drops unit dimensions; the result type says which remain.
        return (piece.reshape(reduced_shape(sizes, cast(TensorType, op.result.type))),)

    @numpy_impl(tensor.InsertSliceOp)
    def run_insert_slice(
        self, interpreter: Interpreter, op: tensor.InsertSliceOp, args: PythonValues
    ):
        source, dest = args[0], args[1]
        offsets, sizes, strides = slice_params(op, args)
        out = dest.copy()
        out[slices(op, dest.shape, offsets, sizes, strides)] = source.reshape(sizes)
        return (out,)

    @numpy_impl(tensor.ConcatOp)
    def run_concat(self, interpreter: Interpreter, op: tensor.ConcatOp, args: PythonValues):
        return (np.concatenate(args, axis=op.dim.value.data),)

    @numpy_impl(tensor.PadOp)
    def run_pad(self, interpreter: Interpreter, op: tensor.PadOp, args: PythonValues):
        x = args[0]
        low = mixed(op.static_low, args[1 : 1 + len(op.low)])
        high = mixed(op.static_high, args[1 + len(op.low) :])
        body = op.region.block
        if uses_arguments(body.args):
            raise UnsupportedOpError(
                "with a padding value that depends on the indices is not supported", op
            )
        (value,) = interpreter.run_ssacfg_region(op.region, (0,) * len(body.args), "tensor.pad")
        shape = [lo + n + hi for lo, n, hi in zip(low, x.shape, high)]
        out = np.full(shape, value, dtype=x.dtype)
        # Negative padding crops: the source part that stays, and where it lands.
        source = tuple(
            slice(max(-lo, 0), n - max(-hi, 0)) for lo, n, hi in zip(low, x.shape, high)
        )
        target = tuple(
            slice(max(lo, 0), max(lo, 0) + max(s.stop - s.start, 0))
            for lo, s in zip(low, source)
        )
        out[target] = x[source]
        return (out,)

    @impl_terminator(tensor.YieldOp)
    def run_yield(self, interpreter: Interpreter, op: tensor.YieldOp, args: PythonValues):
        return ReturnedValues(args), ()

    @numpy_impl(GenerateOp)
    def run_generate(self, interpreter: Interpreter, op: GenerateOp, args: PythonValues):
        """The body once per element, in row-major order."""
        t = op.result.type
        assert isinstance(t, TensorType)
        out = np.empty(result_shape(t, args), dtype=element_dtype(t))
        for index in np.ndindex(*out.shape):
            (out[index],) = interpreter.run_ssacfg_region(op.body, tuple(np.int64(i) for i in index), op.name)
        return (out,)


def reduced_shape(sizes: Sequence[int], t: TensorType) -> list[int]:
    """The slice sizes without the unit dimensions a rank-reducing result type drops.

    Finds a subsequence of `sizes` matching the result shape (a dynamic size matches
    anything) whose skipped entries are all 1.
    """
    wanted = list(t.get_shape())

    def match(i: int, j: int) -> list[int] | None:
        if j == len(wanted):
            return [] if all(s == 1 for s in sizes[i:]) else None
        if len(sizes) - i < len(wanted) - j:
            return None
        if wanted[j] in (sizes[i], DYNAMIC_INDEX) and (rest := match(i + 1, j + 1)) is not None:
            return [sizes[i], *rest]
        return match(i + 1, j) if sizes[i] == 1 else None

    found = match(0, 0)
    return list(sizes) if found is None else found
