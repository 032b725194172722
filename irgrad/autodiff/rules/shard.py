"""Rules for the `shard` dialect: the sharding annotation, and collectives of per-device programs.

`shard.shard %x to %s` is the identity on the global value that also constrains its layout. Its
transpose constrains the cotangent to the same layout (JAX's `with_sharding_constraint`), so the
partitioner sees the backward pass laid out as the forward one; its tangent likewise.

A collective is a linear map of the SPMD program viewed as a function of every device's local
input at once, so its JVP applies it to the tangent and its VJP is its transpose on the grid,
itself a collective over the same devices (the ZeRO / Megatron pairs):

    all_gather(axis)            <->  reduce_scatter(sum, axis)
    all_reduce(sum)             <->  all_reduce(sum)               (and average, self-adjoint too)
    all_to_all(split, concat)   <->  all_to_all(concat, split)

Not yet: all_slice's transpose (each device pads its cotangent into its own chunk of zeros, at an
offset computed from `shard.process_linear_index`; it is not written yet, and all_slice needs both
modes or neither), and reductions that are not linear (max, min, product, bitwise), which would
need the primal's argmax-style routing.
"""

from __future__ import annotations

from typing import cast

from xdsl.ir import Attribute, Operation, SSAValue

from irgrad.autodiff.builder import RuleBuilder
from irgrad.autodiff.errors import AutodiffError
from irgrad.autodiff.registry import (
    Cotangents,
    Tangent,
    jvp_rule,
    non_differentiable,
    not_supported_yet,
    vjp_rule,
)
from irgrad.dialects import shard

non_differentiable(shard.ShardingOp, shard.ProcessLinearIndexOp, shard.GridOp)

not_supported_yet(
    "the transpose of shard.all_slice (pad each device's cotangent into its own chunk of zeros, at "
    "an offset from shard.process_linear_index) has no rule yet; differentiate the global program "
    "before partitioning it instead",
    shard.AllSliceOp,
)

LINEAR = (shard.ReductionKind.SUM, shard.ReductionKind.AVERAGE)


# ---------------------------------------------------------------------------------------------------------------
# shard.shard
# ---------------------------------------------------------------------------------------------------------------


def _constrain(b: RuleBuilder, op: Operation, value: SSAValue) -> SSAValue:
    primal = cast(shard.ShardOp, op)
    return b.value(shard.ShardOp(value, primal.sharding, primal.annotate_for_users))


@vjp_rule(shard.ShardOp)
def _shard_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [_constrain(b, op, ct), None]


@jvp_rule(shard.ShardOp)
def _shard_jvp(b: RuleBuilder, op: Operation, t: SSAValue, t_sharding: SSAValue | None) -> Tangent:
    return _constrain(b, op, t)


# ---------------------------------------------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------------------------------------------


def _collective(
    b: RuleBuilder, like: Operation, op_type: type[Operation], x: SSAValue, result: Attribute, **props: Attribute
) -> SSAValue:
    """`op_type` on `x` over the same grid and devices as the primal collective `like`."""
    properties = {"grid": like.grid, "grid_axes": like.grid_axes, **props}  # type: ignore[attr-defined]
    return b.value(op_type.build(operands=[x], result_types=[result], properties=properties))


def _linear_kind(op: Operation, mode: str) -> shard.ReductionKind:
    kind = op.reduction.data  # type: ignore[attr-defined]
    if kind not in LINEAR:
        raise AutodiffError(
            f"not supported yet: {op.name} with reduction = {kind.value} inside a differentiated function "
            f"({mode}); only sum and average reductions are linear and have rules",
            op,
        )
    return kind


def _group(op: Operation) -> int:
    grid = shard.lookup_grid(op, op.grid)  # type: ignore[attr-defined]
    return shard.group_size(shard.grid_shape(grid), op.grid_axes.get_values())  # type: ignore[attr-defined]


def _same_op(b: RuleBuilder, op: Operation, t: SSAValue) -> SSAValue:
    """The primal collective applied to a tangent (every collective here is linear)."""
    return b.value(type(op).build(operands=[t], result_types=[op.results[0].type], properties=dict(op.properties)))


@vjp_rule(shard.AllReduceOp)
def _all_reduce_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    kind = _linear_kind(op, "reverse mode")
    return [_collective(b, op, shard.AllReduceOp, ct, ct.type, reduction=shard.ReductionKindAttr(kind))]


@vjp_rule(shard.AllGatherOp)
def _all_gather_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    gather = cast(shard.AllGatherOp, op)
    return [_collective(b, op, shard.ReduceScatterOp, ct, gather.input.type, scatter_axis=gather.gather_axis)]


@vjp_rule(shard.ReduceScatterOp)
def _reduce_scatter_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    scatter = cast(shard.ReduceScatterOp, op)
    kind = _linear_kind(op, "reverse mode")
    whole = _collective(b, op, shard.AllGatherOp, ct, scatter.input.type, gather_axis=scatter.scatter_axis)
    if kind == shard.ReductionKind.AVERAGE:
        whole = cast(SSAValue, b.scale(whole, 1.0 / _group(op)))
    return [whole]


@vjp_rule(shard.AllToAllOp)
def _all_to_all_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    a2a = cast(shard.AllToAllOp, op)
    swapped = {"split_axis": a2a.concat_axis, "concat_axis": a2a.split_axis}
    return [_collective(b, op, shard.AllToAllOp, ct, a2a.input.type, **swapped)]


@jvp_rule(shard.AllReduceOp, shard.ReduceScatterOp)
def _reduction_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    _linear_kind(op, "forward mode")
    return _same_op(b, op, t)


@jvp_rule(shard.AllGatherOp, shard.AllToAllOp)
def _movement_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    return _same_op(b, op, t)

