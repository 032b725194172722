"""Rules for ops that move data: broadcast, reshape, transpose, slices, concatenate, pad, gather, scatter.

All are linear in their tensor operands, so each JVP applies the op to the tangent and each VJP is the
op's transpose (JAX's `deflinear`): broadcast <-> sum, slice <-> pad, gather <-> scatter_add. Integer
operands (indices, start positions) get no cotangent.

Batching (vmap): with only the data batched, each op applies to the [B, ...] tensor with its dimensions
shifted by one. Indices that differ per example (gather/scatter_add indices, dynamic start positions) are
folded into one gather or scatter_add on the batch flattened into the indexed axis: example b's index i
becomes b * n + i (after normalizing i as nn.gather does, so it cannot reach into another example). A
dynamic_slice at per-example starts is such a gather of each example's window; a dynamic_update_slice, a
gather that spreads the update over the dimension and a select of the window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import DenseArrayBase, IndexType, TensorType, i1, i64
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched, batched, materialize, move_axis
from irgrad.autodiff.builder import RuleBuilder, element_type, shape_of
from irgrad.autodiff.registry import Cotangents, Tangent, batch_rule, jvp_rule, vjp_rule
from irgrad.dialects import nn

T = SSAValue | None


def _ints(values: DenseArrayBase) -> list[int]:
    return [int(v) for v in values.get_values()]


# ---------------------------------------------------------------------------------------------------------------
# Batching helpers: indices that differ per example
# ---------------------------------------------------------------------------------------------------------------


def _iota(b: RuleBuilder, shape: Sequence[int], dim: int, elem) -> SSAValue:
    return b.value(nn.IotaOp(dim, TensorType(elem, list(shape))))


def _clamp(b: RuleBuilder, value: SSAValue, low: int, high: int) -> SSAValue:
    """`value` clamped to [low, max(high, low)], elementwise (integers)."""
    value = b.value(nn.MaximumOp(value, b.full(low, value.type)))
    return b.value(nn.MinimumOp(value, b.full(max(high, low), value.type)))


def _normalize_indices(b: RuleBuilder, indices: SSAValue, n: int) -> SSAValue:
    """nn.gather's index rule applied ahead of time: a negative index counts from the end once, then the
    index is clamped to [0, n - 1]."""
    zero = b.full(0, indices.type)
    wrapped = b.select(b.compare("lt", indices, zero), b.add(indices, b.full(n, indices.type)), indices)
    assert wrapped is not None
    return _clamp(b, wrapped, 0, n - 1)


def _flat_indices(b: BatchBuilder, indices: SSAValue, pre: Sequence[int], n: int, normalize: bool) -> SSAValue:
    """Per-example `indices` [B, *shape] into an operand [B, *pre, n, *rest], turned into indices into that
    operand reshaped to [B * P * n, *rest] (P = prod(pre)): in example b and row p of the `pre` dimensions,
    index i becomes (b * P + p) * n + i. The result is [B, *pre, *shape], so a gather of axis 0 with it gives
    [B, *pre, *shape, *rest], the batched result, with no transpose.

    Each index is normalized first (`normalize`), as nn.gather would do within its own example: a negative or
    out-of-range index must not reach a neighbour's row."""
    size = b.size
    rows = size * math.prod(pre)
    if rows * n > 2**31 - 1 and element_type(indices) != i64:
        indices = b.convert(indices, i64)
    if normalize:
        indices = _normalize_indices(b, indices, n)
    elem = element_type(indices)
    shape = shape_of(indices)[1:]
    out = [size, *pre, *shape]
    offsets = _iota(b, [rows], 0, elem)
    if n != 1:
        offsets = cast(SSAValue, b.mul(offsets, b.full(n, offsets.type)))
    offsets = b.broadcast(b.reshape(offsets, [size, *pre]), out, list(range(len(pre) + 1)))
    indices = b.broadcast(indices, out, [0, *range(len(pre) + 1, len(out))])
    return cast(SSAValue, b.add(indices, offsets))


def _gather_per_example(
    b: BatchBuilder, x: SSAValue, x_batched: bool, indices: SSAValue, axis: int, normalize: bool = True
) -> SSAValue:
    """`gather(x[b], indices[b], axis)` for every example b, batched: `indices` is [B, *shape], `x` batched or
    shared; `axis` counts in an example's dimensions.

    - shared x: one gather with all the examples' indices, [*pre, B, *shape, *rest], the batch moved to the front;
    - batched x: the batch flattened into the gathered axis with per-example offsets (`_flat_indices`).
    """
    if not x_batched:
        return move_axis(b, b.gather(x, indices, axis), axis, 0)
    shape = shape_of(x)[1:]
    pre, n, rest = shape[:axis], shape[axis], shape[axis + 1 :]
    flat = _flat_indices(b, indices, pre, n, normalize)
    return b.gather(b.reshape(x, [b.size * math.prod(pre) * n, *rest]), flat, 0)


# ---------------------------------------------------------------------------------------------------------------
# Broadcast, reshape, transpose
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.BroadcastInDimOp)
def _broadcast_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    bcast = cast(nn.BroadcastInDimOp, op)
    return [b.unbroadcast(ct, shape_of(bcast.operand), _ints(bcast.dims))]


@jvp_rule(nn.BroadcastInDimOp)
def _broadcast_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    bcast = cast(nn.BroadcastInDimOp, op)
    return b.broadcast(t, shape_of(bcast.result), _ints(bcast.dims))


@batch_rule(nn.BroadcastInDimOp)
def _broadcast_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """The batch dimension maps to the result's dimension 0; the others shift by one."""
    bcast = cast(nn.BroadcastInDimOp, op)
    dims = [0, *(d + 1 for d in _ints(bcast.dims))]
    return b.broadcast(args[0], [b.size, *shape_of(bcast.result)], dims), True


@vjp_rule(nn.ReshapeOp)
def _reshape_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.reshape(ct, shape_of(op.operands[0]))]


@jvp_rule(nn.ReshapeOp)
def _reshape_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.reshape(t, shape_of(op.results[0]))


@batch_rule(nn.ReshapeOp)
def _reshape_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """Row-major order keeps each example's elements together: reshape to [B, *result shape]."""
    return b.reshape(args[0], [b.size, *shape_of(op.results[0])]), True


@vjp_rule(nn.TransposeOp)
def _transpose_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    perm = _ints(cast(nn.TransposeOp, op).perm)
    inverse = [perm.index(d) for d in range(len(perm))]
    return [b.transpose(ct, inverse)]


@jvp_rule(nn.TransposeOp)
def _transpose_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.transpose(t, _ints(cast(nn.TransposeOp, op).perm))


@batch_rule(nn.TransposeOp)
def _transpose_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """The batch stays in front: perm [0, p0 + 1, p1 + 1, ...]."""
    perm = _ints(cast(nn.TransposeOp, op).perm)
    return b.transpose(args[0], [0, *(p + 1 for p in perm)]), True


# ---------------------------------------------------------------------------------------------------------------
# Static slices, concatenate, pad
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.SliceOp)
def _slice_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    """Scatter the cotangent back to the positions read, zeros elsewhere; any strides, negative included.

    A dimension with stride k < 0 reads start, start+k, ..., which is the stride-|k| slice from its lowest
    index, reversed: so reverse the cotangent there. Then spread the elements |k| apart (`b.dilate`) and pad
    to the operand's shape.
    """
    slice_op = cast(nn.SliceOp, op)
    shape = shape_of(slice_op.operand)
    start, stride = _ints(slice_op.start), _ints(slice_op.stride)
    lengths = shape_of(slice_op.result)
    if 0 in lengths:
        return [b.zeros_like(slice_op.operand)]
    ct = b.reverse(ct, [d for d, k in enumerate(stride) if k < 0])
    lowest = [s + (n - 1) * k if k < 0 else s for s, k, n in zip(start, stride, lengths)]
    steps = [abs(k) for k in stride]
    spread = b.dilate(ct, steps)
    high = [size - low - ((n - 1) * k + 1) for size, low, n, k in zip(shape, lowest, lengths, steps)]
    return [b.pad(spread, lowest, high)]


@jvp_rule(nn.SliceOp)
def _slice_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    slice_op = cast(nn.SliceOp, op)
    return b.value(nn.SliceOp(t, _ints(slice_op.start), _ints(slice_op.limit), _ints(slice_op.stride)))


@batch_rule(nn.SliceOp)
def _slice_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """All of the batch dimension, the same slice of the others."""
    slice_op = cast(nn.SliceOp, op)
    start, limit, stride = _ints(slice_op.start), _ints(slice_op.limit), _ints(slice_op.stride)
    return b.slice(args[0], [0, *start], [b.size, *limit], [1, *stride]), True


@vjp_rule(nn.ConcatenateOp)
def _concatenate_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    dim = cast(nn.ConcatenateOp, op).dimension.value.data
    shape = shape_of(ct)
    cts: list[SSAValue | None] = []
    offset = 0
    for index, operand in enumerate(op.operands):
        size = shape_of(operand)[dim]
        if b.needs(index):
            start = [offset if d == dim else 0 for d in range(len(shape))]
            limit = [offset + size if d == dim else n for d, n in enumerate(shape)]
            cts.append(b.slice(ct, start, limit))
        else:
            cts.append(None)
        offset += size
    return cts


@jvp_rule(nn.ConcatenateOp)
def _concatenate_jvp(b: RuleBuilder, op: Operation, *tangents: T) -> Tangent:
    dim = cast(nn.ConcatenateOp, op).dimension.value.data
    parts = [t if t is not None else b.zeros_like(x) for t, x in zip(tangents, op.operands)]
    return b.concatenate(parts, dim)


@batch_rule(nn.ConcatenateOp)
def _concatenate_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """Shared inputs are broadcast to the batch (each example contains them), then one concatenate."""
    dim = cast(nn.ConcatenateOp, op).dimension.value.data
    return b.concatenate(materialize(b, args, is_batched), dim + 1), True


@vjp_rule(nn.PadOp)
def _pad_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    """The operand gets the interior slice; the padding value gets the sum over the padded positions."""
    pad = cast(nn.PadOp, op)
    shape = shape_of(pad.operand)
    low, high = _ints(pad.low), _ints(pad.high)
    ct_operand = ct_value = None
    if b.needs(0):
        ct_operand = b.slice(ct, low, [lo + n for lo, n in zip(low, shape)])
    if b.needs(1) and not shape:
        ct_value = b.zeros_like(pad.padding_value)  # a rank-0 operand has nothing to pad
    elif b.needs(1):
        interior = b.zeros(TensorType(i1, shape))
        padded = b.value(nn.PadOp(interior, b.full(1, TensorType(i1, [])), low, high))
        on_padding = b.select(padded, ct, None)
        assert on_padding is not None
        ct_value = b.reduce_sum(on_padding, list(range(len(shape))))
    return [ct_operand, ct_value]


@jvp_rule(nn.PadOp)
def _pad_jvp(b: RuleBuilder, op: Operation, t_operand: T, t_value: T) -> Tangent:
    pad = cast(nn.PadOp, op)
    operand = t_operand if t_operand is not None else b.zeros_like(pad.operand)
    value = t_value if t_value is not None else b.zeros_like(pad.padding_value)
    return b.value(nn.PadOp(operand, value, _ints(pad.low), _ints(pad.high)))


@batch_rule(nn.PadOp)
def _pad_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """A shared padding value: one pad of the batched operand (none in the batch dimension).

    A per-example padding value (a rank-0 tensor, so [B] batched) cannot be nn.pad's scalar: pad with zeros,
    then select each example's value outside the interior (a mask made by padding `true` with `false`)."""
    pad = cast(nn.PadOp, op)
    x, value = args
    low, high = _ints(pad.low), _ints(pad.high)
    size = b.size
    if not is_batched[1]:
        return b.value(nn.PadOp(x, value, [0, *low], [0, *high])), True
    if not any(low) and not any(high):
        return (x if is_batched[0] else batched(b, x, size)), True
    zero = b.zeros(TensorType(element_type(x), []))
    if is_batched[0]:
        padded = b.value(nn.PadOp(x, zero, [0, *low], [0, *high]))
    else:
        padded = batched(b, b.value(nn.PadOp(x, zero, low, high)), size)
    shape = [size, *shape_of(pad.result)]
    interior = b.value(
        nn.PadOp(b.full(1, TensorType(i1, shape_of(pad.operand))), b.full(0, TensorType(i1, [])), low, high)
    )
    mask = b.broadcast(interior, shape, list(range(1, len(shape))))
    fill = b.broadcast(value, shape, [0])
    return cast(SSAValue, b.select(mask, padded, fill)), True


# ---------------------------------------------------------------------------------------------------------------
# Dynamic slices (start indices are SSA values; both ops clamp them the same way, so they stay adjoint)
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.DynamicSliceOp)
def _dynamic_slice_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    ds = cast(nn.DynamicSliceOp, op)
    starts = list(ds.start_indices)
    return [b.dynamic_update_slice(b.zeros_like(ds.operand), ct, starts), *[None] * len(starts)]


@jvp_rule(nn.DynamicSliceOp)
def _dynamic_slice_jvp(b: RuleBuilder, op: Operation, t: SSAValue, *index_tangents: T) -> Tangent:
    ds = cast(nn.DynamicSliceOp, op)
    return b.dynamic_slice(t, list(ds.start_indices), _ints(ds.sizes))


def _window_start(b: BatchBuilder, start: SSAValue, n: int, k: int) -> SSAValue:
    """Per-example start positions [B] of a window of k in a dimension of n, clamped as the dynamic slices
    clamp them: to [0, n - k]."""
    return _clamp(b, start, 0, n - k)


def _window(b: BatchBuilder, start: SSAValue, n: int, k: int) -> SSAValue:
    """The positions [B, k] each example's window reads: s_b, s_b + 1, ..., s_b + k - 1 (s_b clamped)."""
    start = b.broadcast(_window_start(b, start, n, k), [b.size, k], [0])
    if k == 1:
        return start
    return cast(SSAValue, b.add(start, _iota(b, [b.size, k], 1, element_type(start))))


@batch_rule(nn.DynamicSliceOp)
def _dynamic_slice_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]
) -> Batched:
    """Shared start positions: one dynamic_slice of the batched operand, from 0 in the batch dimension.

    Per-example start positions (`x[i]` under vmap; a batched start is a batched scalar [B]): first a
    dynamic_slice of the dimensions whose start is shared (on the operand as it is, so before any broadcast),
    then each dimension whose start differs becomes a gather of the window s_b, s_b + 1, ..., s_b + k - 1 with
    s_b clamped as dynamic_slice clamps it. A start in a dimension the window fills is always 0, so it is
    ignored there; if that leaves nothing per-example, the result is shared."""
    ds = cast(nn.DynamicSliceOp, op)
    return batch_dynamic_slice(
        b, args[0], is_batched[0], list(args[1:]), list(is_batched[1:]), shape_of(ds.operand), _ints(ds.sizes)
    )


def batch_dynamic_slice(
    b: BatchBuilder,
    x: SSAValue,
    x_batched: bool,
    starts: Sequence[SSAValue],
    start_batched: Sequence[bool],
    shape: Sequence[int],
    sizes: Sequence[int],
) -> Batched:
    """The batched `dynamic_slice(x, starts, sizes)` of an operand of (per-example) `shape`: the rule above,
    also used by tensor.extract at a per-example position (rules/tensor.py)."""
    starts = list(starts)
    if not any(start_batched):
        return b.dynamic_slice(x, [b.full(0, IndexType()), *starts], [b.size, *sizes]), True
    varying = [d for d, bt in enumerate(start_batched) if bt and sizes[d] < shape[d]]
    shared_sizes = [n if bt else k for n, k, bt in zip(shape, sizes, start_batched)]
    value = x
    if shared_sizes != list(shape):
        zero = b.full(0, IndexType())
        shared_starts = [zero if bt else s for s, bt in zip(starts, start_batched)]
        lead_starts, lead_sizes = ([zero], [b.size]) if x_batched else ([], [])
        value = b.dynamic_slice(x, [*lead_starts, *shared_starts], [*lead_sizes, *shared_sizes])
    value_batched = x_batched
    for d in varying:
        positions = _window(b, starts[d], shape[d], sizes[d])
        value = _gather_per_example(b, value, value_batched, positions, d, normalize=False)
        value_batched = True
    return value, value_batched


@vjp_rule(nn.DynamicUpdateSliceOp)
def _dynamic_update_slice_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    """The operand gets the cotangent with the window zeroed; the update gets the window."""
    dus = cast(nn.DynamicUpdateSliceOp, op)
    starts = list(dus.start_indices)
    ct_operand = b.dynamic_update_slice(ct, b.zeros_like(dus.update), starts) if b.needs(0) else None
    ct_update = b.dynamic_slice(ct, starts, shape_of(dus.update)) if b.needs(1) else None
    return [ct_operand, ct_update, *[None] * len(starts)]


@jvp_rule(nn.DynamicUpdateSliceOp)
def _dynamic_update_slice_jvp(b: RuleBuilder, op: Operation, t_operand: T, t_update: T, *index_tangents: T) -> Tangent:
    dus = cast(nn.DynamicUpdateSliceOp, op)
    operand = t_operand if t_operand is not None else b.zeros_like(dus.operand)
    update = t_update if t_update is not None else b.zeros_like(dus.update)
    return b.dynamic_update_slice(operand, update, list(dus.start_indices))


@batch_rule(nn.DynamicUpdateSliceOp)
def _dynamic_update_slice_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]
) -> Batched:
    """Shared start positions: one dynamic_update_slice of the batched operand and update (a shared one
    broadcast), from 0 in the batch dimension.

    Per-example start positions: nothing scatters by overwriting, so in each dimension d whose start s_b
    differs, the update is spread over the whole dimension by a gather (position j reads update j - s_b) and
    a mask keeps the positions s_b <= j < s_b + k; the masked update replaces the operand there (a select), in
    the window of the dimensions whose start is shared (a dynamic_slice, then a dynamic_update_slice back)."""
    dus = cast(nn.DynamicUpdateSliceOp, op)
    return batch_dynamic_update_slice(
        b, (args[0], is_batched[0]), (args[1], is_batched[1]), list(args[2:]), list(is_batched[2:]),
        shape_of(dus.operand), shape_of(dus.update),
    )


def batch_dynamic_update_slice(
    b: BatchBuilder,
    operand: Batched,
    new: Batched,
    starts: Sequence[SSAValue],
    start_batched: Sequence[bool],
    shape: Sequence[int],
    update_shape: Sequence[int],
) -> Batched:
    """The batched `dynamic_update_slice(operand, new, starts)` with (per-example) shapes `shape` and
    `update_shape`: the rule above, also used by tensor.insert at a per-example position (rules/tensor.py)."""
    (x, x_batched), (update, update_batched) = operand, new
    starts, start_batched = list(starts), list(start_batched)
    shape, update_shape = list(shape), list(update_shape)
    size = b.size
    varying = [d for d, bt in enumerate(start_batched) if bt and update_shape[d] < shape[d]]

    def shared_starts() -> list[SSAValue]:
        """The batch's start (0), then the shared starts; 0 where the start is per-example but the window
        fills the dimension."""
        zero = b.full(0, IndexType())
        return [zero, *(zero if bt else s for s, bt in zip(starts, start_batched))]

    if not varying:
        if not x_batched and not update_batched:  # per-example starts that clamp to 0 everywhere
            return b.dynamic_update_slice(x, update, shared_starts()[1:]), False
        x, update = materialize(b, [x, update], [x_batched, update_batched])
        return b.dynamic_update_slice(x, update, shared_starts()), True
    window = [n if d in varying else k for d, (n, k) in enumerate(zip(shape, update_shape))]
    placed, placed_batched = update, update_batched
    inside: SSAValue | None = None
    for d in varying:
        n, k = shape[d], update_shape[d]
        start = _window_start(b, starts[d], n, k)
        positions = _iota(b, [size, n], 1, element_type(start))
        offset = cast(SSAValue, b.sub(positions, b.broadcast(start, [size, n], [0])))  # j - s_b
        placed = _gather_per_example(b, placed, placed_batched, _clamp(b, offset, 0, k - 1), d, normalize=False)
        placed_batched = True
        covered = b.value(
            nn.AndOp(b.compare("ge", offset, b.full(0, offset.type)), b.compare("lt", offset, b.full(k, offset.type)))
        )
        covered = b.broadcast(covered, [size, *window], [0, d + 1])
        inside = covered if inside is None else b.value(nn.AndOp(inside, covered))
    assert inside is not None
    target = x if x_batched else batched(b, x, size)
    if window == list(shape):
        return cast(SSAValue, b.select(inside, placed, target)), True
    lead = shared_starts()
    current = b.dynamic_slice(target, lead, [size, *window])
    return b.dynamic_update_slice(target, cast(SSAValue, b.select(inside, placed, current)), lead), True


# ---------------------------------------------------------------------------------------------------------------
# Gather and scatter_add (each other's transpose; repeated indices accumulate)
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.GatherOp)
def _gather_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    gather = cast(nn.GatherOp, op)
    axis = gather.axis.value.data
    return [b.scatter_add(b.zeros_like(gather.operand), gather.indices, ct, axis), None]


@jvp_rule(nn.GatherOp)
def _gather_jvp(b: RuleBuilder, op: Operation, t: SSAValue, t_indices: T) -> Tangent:
    gather = cast(nn.GatherOp, op)
    return b.gather(t, gather.indices, gather.axis.value.data)


@batch_rule(nn.GatherOp)
def _gather_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """- operand batched, shared indices: gather the operand's axis + 1;
    - shared operand, per-example indices: one gather with all the indices, the batch moved to the front;
    - both batched (`take_along_axis` of a per-example label in a cross-entropy): the batch flattened into the
      gathered axis, each example's indices normalized and offset into its own rows (`_flat_indices`)."""
    gather = cast(nn.GatherOp, op)
    axis = gather.axis.value.data
    x, indices = args
    if not is_batched[1]:
        return b.gather(x, indices, axis + 1), True
    return _gather_per_example(b, x, is_batched[0], indices, axis), True


@vjp_rule(nn.ScatterAddOp)
def _scatter_add_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    scatter = cast(nn.ScatterAddOp, op)
    ct_updates = b.gather(ct, scatter.indices, scatter.axis.value.data) if b.needs(2) else None
    return [ct, None, ct_updates]


@jvp_rule(nn.ScatterAddOp)
def _scatter_add_jvp(b: RuleBuilder, op: Operation, t_operand: T, t_indices: T, t_updates: T) -> Tangent:
    scatter = cast(nn.ScatterAddOp, op)
    operand = t_operand if t_operand is not None else b.zeros_like(scatter.operand)
    updates = t_updates if t_updates is not None else b.zeros_like(scatter.updates)
    return b.scatter_add(operand, scatter.indices, updates, scatter.axis.value.data)


@batch_rule(nn.ScatterAddOp)
def _scatter_add_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """The operand and the updates are batched alike (a shared one broadcast: every example adds into, or
    adds, it). Shared indices: one scatter_add into the axis + 1. Per-example indices: into the operand with the
    batch flattened into the axis, each example's indices normalized and offset into its own rows, as gather's
    rule does (the updates have the right shape for it as they are)."""
    scatter = cast(nn.ScatterAddOp, op)
    axis = scatter.axis.value.data
    x, indices, updates = args
    x, updates = materialize(b, [x, updates], [is_batched[0], is_batched[2]])
    if not is_batched[1]:
        return b.scatter_add(x, indices, updates, axis + 1), True
    shape = shape_of(scatter.operand)
    pre, n, rest = shape[:axis], shape[axis], shape[axis + 1 :]
    flat = _flat_indices(b, indices, pre, n, normalize=True)
    rows = b.reshape(x, [b.size * math.prod(pre) * n, *rest])
    return b.reshape(b.scatter_add(rows, flat, updates, 0), [b.size, *shape]), True
