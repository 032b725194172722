"""Sharding rules: for each nn op, the shardings its operands need and the sharding of its result.

A rule sees the current sharding of each operand and answers `Plan(operands, result)`: the
sharding each operand is resharded to (the partitioner emits the collectives) and the sharding
the op's local result then has. The op itself is cloned unchanged on the local operands, so a
rule must only ever ask for layouts in which the global op, applied chunk by chunk, is the
op applied to the local chunks. Ops without a rule run replicated: every operand is
gathered and every device computes the whole result (correct for any op, just not parallel).

Partial sums pass through linear ops (neg, add and sub of partial sums, mul by a
non-partial factor, reduce_sum, transpose, reshape, broadcast) and are created by contractions
over a split dimension (matmul, reduce_sum); any other op resolves them first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast

from xdsl.dialects.builtin import TensorType
from xdsl.dialects.shard import ReductionKind
from xdsl.ir import Operation

from irgrad.dialects import nn
from irgrad.dialects.shard import Sharding


@dataclass(frozen=True)
class Plan:
    operands: tuple[Sharding, ...]
    result: Sharding


Rule = Callable[[Operation, Sequence[Sharding]], Plan]
RULES: dict[type[Operation], Rule] = {}


def rule(*op_types: type[Operation]) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for t in op_types:
            RULES[t] = fn
        return fn

    return register


def _shape(value) -> tuple[int, ...]:
    return tuple(cast(TensorType, value.type).get_shape())


def resolved(s: Sharding) -> Sharding:
    """`s` with its pending reduction done (the split kept)."""
    return Sharding(s.split)


def replicated_plan(op: Operation) -> Plan:
    operands = tuple(Sharding.replicated(len(_shape(v))) for v in op.operands)
    return Plan(operands, Sharding.replicated(len(_shape(op.results[0]))))


def _most_split(shardings: Sequence[Sharding]) -> Sharding:
    best = max(shardings, key=lambda s: sum(len(a) for a in s.split))
    return resolved(best)


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------

_LINEAR_UNARY = (nn.NegOp,)


@rule(nn.ElementwiseUnaryOp, nn.ConvertOp)
def _unary(op: Operation, s: Sequence[Sharding]) -> Plan:
    keep = s[0] if isinstance(op, _LINEAR_UNARY) and s[0].reduction == ReductionKind.SUM else resolved(s[0])
    return Plan((keep,), keep)


@rule(nn.ElementwiseBinaryOp, nn.CompareOp, nn.SelectOp)
def _elementwise(op: Operation, s: Sequence[Sharding]) -> Plan:
    partial = [x for x in s if x.partial]
    if partial and isinstance(op, (nn.AddOp, nn.SubOp)):
        # A sum of partial sums is a partial sum, if both are pending over the same axes.
        if len(partial) == 2 and s[0].partial == s[1].partial and s[0].reduction == s[1].reduction == ReductionKind.SUM:
            split = _most_split(s).split
            if not set(a for axes in split for a in axes) & set(s[0].partial):
                target = Sharding(split, s[0].partial)
                return Plan((target, target), target)
    if partial and isinstance(op, (nn.MulOp, nn.DivOp)) and len(partial) == 1:
        # x * y is linear in x: a partial x times a factor every device holds whole stays partial.
        i = s.index(partial[0])
        if (i == 0 or isinstance(op, nn.MulOp)) and partial[0].reduction == ReductionKind.SUM:
            split = _most_split(s).split
            if not set(a for axes in split for a in axes) & set(partial[0].partial):
                targets = [Sharding(split) for _ in s]
                targets[i] = Sharding(split, partial[0].partial)
                return Plan(tuple(targets), targets[i])
    target = _most_split(s)
    return Plan(tuple(target for _ in s), target)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------

_KINDS = {nn.ReduceSumOp: ReductionKind.SUM, nn.ReduceMaxOp: ReductionKind.MAX, nn.ReduceMinOp: ReductionKind.MIN}


@rule(nn.ReduceSumOp, nn.ReduceMaxOp, nn.ReduceMinOp)
def _reduce(op: Operation, s: Sequence[Sharding]) -> Plan:
    kind = _KINDS[type(op)]
    src = s[0]
    if src.partial and not (kind == ReductionKind.SUM and src.reduction == ReductionKind.SUM):
        src = resolved(src)
    axes = set(cast(nn.ReduceOp, op).axes.get_values())  # type: ignore[attr-defined]
    keepdims = cast(nn.ReduceOp, op).keepdims is not None
    new_partial = [a for d in sorted(axes) for a in src.split[d]]
    if new_partial and src.partial and kind != src.reduction:
        src = resolved(src)
    split = []
    for d, dim_axes in enumerate(src.split):
        if d in axes:
            if keepdims:
                split.append(())
        else:
            split.append(dim_axes)
    partial = tuple(sorted(set(src.partial) | set(new_partial)))
    return Plan((src,), Sharding(tuple(split), partial, kind if partial else ReductionKind.SUM))


# ---------------------------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------------------------


@rule(nn.BroadcastInDimOp)
def _broadcast(op: Operation, s: Sequence[Sharding]) -> Plan:
    b = cast(nn.BroadcastInDimOp, op)
    dims = b.dims.get_values()
    in_shape, out_shape = _shape(b.operand), _shape(b.result)
    split = [()] * len(out_shape)
    for i, d in enumerate(dims):
        if in_shape[i] == out_shape[d]:
            split[d] = s[0].split[i]
    # A size-1 dimension that broadcasts is never split (it cannot be divided).
    return Plan((s[0],), replace(s[0], split=tuple(split)))


@rule(nn.TransposeOp)
def _transpose(op: Operation, s: Sequence[Sharding]) -> Plan:
    perm = cast(nn.TransposeOp, op).perm.get_values()
    return Plan((s[0],), replace(s[0], split=tuple(s[0].split[p] for p in perm)))


def _reshape_dim(in_shape: Sequence[int], out_shape: Sequence[int], d: int, chunks: int) -> int | None:
    """The result dimension that dimension d's chunks stay contiguous chunks of, if any."""
    before = math.prod(in_shape[:d])
    for e in range(len(out_shape)):
        if math.prod(out_shape[:e]) != before:
            continue
        # Merged into e (e = d * following dims) or split from d (d = e * following dims).
        merged = any(math.prod(in_shape[d : d + k]) == out_shape[e] for k in range(1, len(in_shape) - d + 1))
        split = any(math.prod(out_shape[e : e + k]) == in_shape[d] for k in range(1, len(out_shape) - e + 1))
        if (merged and out_shape[e] >= in_shape[d]) or (split and out_shape[e] % chunks == 0):
            return e
    return None


def plan_reshape(op: Operation, s: Sequence[Sharding], grid: Sequence[int]) -> Plan:
    in_shape, out_shape = _shape(op.operands[0]), _shape(op.results[0])
    keep = list(s[0].split)
    split = [()] * len(out_shape)
    for d, axes in enumerate(s[0].split):
        if not axes:
            continue
        chunks = math.prod(grid[a] for a in axes)
        e = _reshape_dim(in_shape, out_shape, d, chunks)
        if e is None or split[e]:
            keep[d] = ()
        else:
            split[e] = axes
    src = replace(s[0], split=tuple(keep))
    return Plan((src,), replace(src, split=tuple(split)))


# ---------------------------------------------------------------------------------------------
# Contractions
# ---------------------------------------------------------------------------------------------


@rule(nn.MatmulOp)
def _matmul(op: Operation, s: Sequence[Sharding]) -> Plan:
    a, b = s
    # A bilinear op stays partial in one partial operand; two partial operands: resolve one.
    if a.partial and b.partial:
        b = resolved(b)
    partial_in = a.partial or b.partial
    reduction = a.reduction if a.partial else b.reduction
    if partial_in and reduction != ReductionKind.SUM:
        a, b, partial_in = resolved(a), resolved(b), ()
    rank = len(a.split)
    batch = a.split[: rank - 2]
    m, k_a = a.split[rank - 2], a.split[rank - 1]
    k_b, n = b.split[rank - 2], b.split[rank - 1]
    k = k_a or k_b
    used = {x for axes in (*batch, m, k) for x in axes} | set(partial_in)
    if set(n) & used:
        n = ()
    if set(k) & ({x for axes in (*batch, m) for x in axes} | set(partial_in)):
        k = ()
    if set(m) & set(partial_in):
        m = ()
    a_t = Sharding((*batch, m, k), a.partial, a.reduction)
    b_t = Sharding((*batch, k, n), b.partial, b.reduction)
    partial = tuple(sorted(set(k) | set(partial_in)))
    return Plan((a_t, b_t), Sharding((*batch, m, n), partial))
