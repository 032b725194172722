"""Rules for reductions: reduce_sum (broadcast back), reduce_max/reduce_min (ties share equally).

A max/min over tied positions sends each tied position an equal share of the cotangent (JAX's convention,
and the same 0.5/0.5 split `nn.maximum` makes for two). Ties are counted in the primal's element type, by
summing the converted i1 mask, and the share is a division by that count, never a mask product.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched
from irgrad.autodiff.builder import RuleBuilder, element_type, shape_of
from irgrad.autodiff.registry import Cotangents, Tangent, batch_rule, jvp_rule, vjp_rule
from irgrad.dialects import nn


def _axes(op: nn.ReduceOp) -> list[int]:
    return [int(a) for a in op.axes.get_values()]


def _broadcast_back(b: RuleBuilder, value: SSAValue, op: nn.ReduceOp) -> SSAValue:
    """`value`, shaped like the reduction's result, broadcast to the operand's shape."""
    shape = shape_of(op.operand)
    axes = _axes(op)
    if op.keepdims is not None:
        dims = list(range(len(shape)))
    else:
        dims = [d for d in range(len(shape)) if d not in axes]
    return b.broadcast(value, shape, dims)


@vjp_rule(nn.ReduceSumOp)
def _reduce_sum_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [_broadcast_back(b, ct, cast(nn.ReduceOp, op))]


@jvp_rule(nn.ReduceSumOp)
def _reduce_sum_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    reduce = cast(nn.ReduceOp, op)
    return b.reduce_sum(t, _axes(reduce), reduce.keepdims is not None)


def _ties(b: RuleBuilder, op: nn.ReduceOp) -> tuple[SSAValue, SSAValue]:
    """(mask of the positions equal to the extremum, number of them per output element)."""
    x = op.operand
    mask = b.compare("eq", x, _broadcast_back(b, op.result, op))
    count = b.reduce_sum(b.convert(mask, element_type(x)), _axes(op), op.keepdims is not None)
    return mask, count


@vjp_rule(nn.ReduceMaxOp, nn.ReduceMinOp)
def _reduce_extremum_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    reduce = cast(nn.ReduceOp, op)
    mask, count = _ties(b, reduce)
    share = b.div(ct, count)
    assert share is not None
    return [b.select(mask, _broadcast_back(b, share, reduce), None)]


@jvp_rule(nn.ReduceMaxOp, nn.ReduceMinOp)
def _reduce_extremum_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    reduce = cast(nn.ReduceOp, op)
    mask, count = _ties(b, reduce)
    tied = b.select(mask, t, None)
    assert tied is not None
    return b.div(b.reduce_sum(tied, _axes(reduce), reduce.keepdims is not None), count)


@batch_rule(nn.ReduceSumOp, nn.ReduceMaxOp, nn.ReduceMinOp)
def _reduce_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """The same reduction of each example: the axes shift by one past the batch dimension, which is kept."""
    reduce = cast(nn.ReduceOp, op)
    axes = [a + 1 for a in _axes(reduce)]
    return b.value(type(reduce)(args[0], axes, reduce.keepdims is not None)), True
