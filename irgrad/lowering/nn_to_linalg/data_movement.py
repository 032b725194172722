"""`nn` ops that move data: broadcast_in_dim, reshape, transpose, slice, dynamic_slice,
dynamic_update_slice, concatenate, pad.

- `broadcast_in_dim` and `transpose` are generics whose input map does the work: a broadcast
  maps each operand dimension to its result dimension (a size-1 operand dimension that grows
  reads index 0), a transpose permutes;
- `slice` is a strided `tensor.extract_slice`, followed, where a stride is negative, by a
  generic reading those dimensions backwards (a negative coefficient in its map);
- `reshape` is a `tensor.collapse_shape` or `expand_shape` (or a collapse to 1-D then an
  expand);
- `dynamic_slice` and `dynamic_update_slice` clamp their start indices into range with
  `arith.maxsi`/`minsi` on `index`, then take a `tensor.extract_slice` / `insert_slice`;
- `concatenate` inserts each input into a `tensor.empty`; `pad` inserts the operand into a
  `linalg.fill` of the padding value (read with `tensor.extract`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects import tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr
from xdsl.pattern_rewriter import RewritePattern

from irgrad.dialects import nn
from irgrad.lowering.nn_to_linalg.common import (
    PARALLEL,
    Emitter,
    LoweringPattern,
    affine_map,
    clamp_index,
    dims,
    element_of,
    empty,
    filled,
    generic,
    identity_map,
    reshape,
    shape_of,
    to_index,
)


def _ints(attr: object) -> tuple[int, ...]:
    return cast(tuple[int, ...], attr.get_values())  # pyright: ignore[reportAttributeAccessIssue]


def result_shape(op: Operation) -> tuple[int, ...]:
    return tuple(cast(TensorType, op.results[0].type).get_shape())


def gather_through_map(
    b: Emitter, x: SSAValue, shape: Sequence[int], exprs: Sequence[AffineExpr | int]
) -> SSAValue:
    """A tensor of `shape` whose element at `d` is `x[exprs(d)]`: a generic copy through a map."""
    rank = len(shape)
    (result,) = generic(
        b,
        [x],
        [affine_map(rank, exprs)],
        [empty(b, shape, element_of(x))],
        [identity_map(rank)],
        [PARALLEL] * rank,
        lambda e, v, _out: [v],
    )
    return result


def insert(b: Emitter, source: SSAValue, dest: SSAValue, offsets: Sequence[SSAValue | int]) -> SSAValue:
    """`source` written into `dest` at `offsets` (unit strides)."""
    static = [o if isinstance(o, int) else DYNAMIC_INDEX for o in offsets]
    dynamic = [o for o in offsets if not isinstance(o, int)]
    sizes = shape_of(source)
    return b(
        tensor.InsertSliceOp.get(
            source, dest, sizes, static, [1] * len(sizes), offsets=dynamic, result_type=dest.type
        )
    )


def extract(b: Emitter, source: SSAValue, offsets: Sequence[SSAValue | int], sizes: Sequence[int]) -> SSAValue:
    """The slice of `source` at `offsets` with `sizes` (unit strides, rank kept)."""
    return b(
        tensor.ExtractSliceOp(
            source, list(offsets), list(sizes), [1] * len(sizes), TensorType(element_of(source), list(sizes))
        )
    )


class BroadcastInDimPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.BroadcastInDimOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.BroadcastInDimOp, op)
        source, shape, mapping = shape_of(op.operand), result_shape(op), _ints(op.dims)
        if source == shape and list(mapping) == list(range(len(shape))):
            return op.operand
        exprs: list[AffineExpr | int] = [
            0 if n == 1 and shape[d] != 1 else AffineExpr.dimension(d) for n, d in zip(source, mapping)
        ]
        return gather_through_map(b, op.operand, shape, exprs)


class ReshapePattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.ReshapeOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.ReshapeOp, op)
        return reshape(b, op.operand, result_shape(op))


class TransposePattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.TransposeOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.TransposeOp, op)
        perm = _ints(op.perm)
        if list(perm) == list(range(len(perm))):
            return op.operand
        # Result dimension i is operand dimension perm[i]: operand dimension j is read at d_i.
        inverse = [perm.index(j) for j in range(len(perm))]
        return gather_through_map(b, op.operand, result_shape(op), dims(inverse))


class SlicePattern(LoweringPattern):
    """A strided `tensor.extract_slice` of the elements read, then, where a stride is
    negative, a generic reading those dimensions backwards (`length - 1 - d`).

    One generic reading `start + stride * d` would be shorter, but where that map is a plain
    `d` (start 0, stride 1) on a dimension the slice shortens, linalg's shape inference
    rejects it; the extract_slice is also the form bufferization turns into a subview.
    """

    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.SliceOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.SliceOp, op)
        start, stride = _ints(op.start), _ints(op.stride)
        shape = result_shape(op)
        # Walking backwards reads the same elements as walking forwards from the last one.
        backwards = [k < 0 and n > 1 for k, n in zip(stride, shape)]
        offsets = [s + (n - 1) * k if k < 0 else s for s, k, n in zip(start, stride, shape)]
        steps = [abs(k) if n > 1 else 1 for k, n in zip(stride, shape)]
        x = op.operand
        if tuple(shape) != shape_of(x):
            x = b(
                tensor.ExtractSliceOp(
                    x, offsets, list(shape), steps, TensorType(element_of(x), list(shape))
                )
            )
        if not any(backwards):
            return x
        exprs: list[AffineExpr | int] = [
            d * -1 + (n - 1) if back else d
            for d, back, n in zip(dims(range(len(shape))), backwards, shape)
        ]
        return gather_through_map(b, x, shape, exprs)


def clamped_starts(b: Emitter, starts: Sequence[SSAValue], sizes: Sequence[int], shape: Sequence[int]) -> list[SSAValue | int]:
    """XLA's rule: each start clamped to `0 .. dim - size`; a dimension taken whole starts at 0."""
    return [
        0 if k == n else clamp_index(b, to_index(b, s), 0, n - k)
        for s, k, n in zip(starts, sizes, shape)
    ]


class DynamicSlicePattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.DynamicSliceOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.DynamicSliceOp, op)
        sizes, shape = _ints(op.sizes), shape_of(op.operand)
        if tuple(sizes) == shape:
            return op.operand
        offsets = clamped_starts(b, list(op.start_indices), sizes, shape)
        return extract(b, op.operand, offsets, sizes)


class DynamicUpdateSlicePattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.DynamicUpdateSliceOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.DynamicUpdateSliceOp, op)
        sizes, shape = shape_of(op.update), shape_of(op.operand)
        if 0 in sizes:
            return op.operand
        offsets = clamped_starts(b, list(op.start_indices), sizes, shape)
        return insert(b, op.update, op.operand, offsets)


class ConcatenatePattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.ConcatenateOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.ConcatenateOp, op)
        inputs = [v for v in op.inputs if 0 not in shape_of(v)]
        if len(inputs) == 1:
            return inputs[0]
        dim = op.dimension.value.data
        shape = result_shape(op)
        result = empty(b, shape, element_of(inputs[0]))
        offset = 0
        for value in inputs:
            offsets = [offset if d == dim else 0 for d in range(len(shape))]
            result = insert(b, value, result, offsets)
            offset += shape_of(value)[dim]
        return result


def pad_with(b: Emitter, x: SSAValue, value: SSAValue, low: Sequence[int], high: Sequence[int]) -> SSAValue:
    """`x` with `low[d]`/`high[d]` copies of the scalar `value` around each dimension."""
    if not any(low) and not any(high):
        return x
    shape = [n + lo + hi for n, lo, hi in zip(shape_of(x), low, high)]
    padded = filled(b, value, shape)
    return padded if 0 in shape_of(x) else insert(b, x, padded, list(low))


class PadPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.PadOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.PadOp, op)
        low, high = _ints(op.low), _ints(op.high)
        if not any(low) and not any(high):
            return op.operand
        value = b(tensor.ExtractOp(op.padding_value, [], element_of(op.operand)))
        return pad_with(b, op.operand, value, low, high)


def populate_data_movement_patterns(patterns: list[RewritePattern]) -> None:
    patterns.extend(
        [
            BroadcastInDimPattern(),
            ReshapePattern(),
            TransposePattern(),
            SlicePattern(),
            DynamicSlicePattern(),
            DynamicUpdateSlicePattern(),
            ConcatenatePattern(),
            PadPattern(),
        ]
    )
