"""Rules for ops that move data: broadcast, reshape, transpose, slices, concatenate, pad, gather, scatter.

All are linear in their tensor operands, so each JVP applies the op to the tangent and each VJP is the
op's transpose (JAX's `deflinear`): broadcast <-> sum, slice <-> pad, gather <-> scatter_add. Integer
operands (indices, start positions) get no cotangent.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import DenseArrayBase, TensorType, i1
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.builder import RuleBuilder, shape_of
from irgrad.autodiff.registry import Cotangents, Tangent, jvp_rule, vjp_rule
from irgrad.dialects import nn

T = SSAValue | None


def _ints(values: DenseArrayBase) -> list[int]:
    return [int(v) for v in values.get_values()]


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


@vjp_rule(nn.ReshapeOp)
def _reshape_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.reshape(ct, shape_of(op.operands[0]))]


@jvp_rule(nn.ReshapeOp)
def _reshape_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.reshape(t, shape_of(op.results[0]))


@vjp_rule(nn.TransposeOp)
def _transpose_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    perm = _ints(cast(nn.TransposeOp, op).perm)
    inverse = [perm.index(d) for d in range(len(perm))]
    return [b.transpose(ct, inverse)]


@jvp_rule(nn.TransposeOp)
def _transpose_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return b.transpose(t, _ints(cast(nn.TransposeOp, op).perm))


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
