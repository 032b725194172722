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


# ---------------------------------------------------------------------------------------------
# Ops that leave some dimensions alone: a split there carries through
# ---------------------------------------------------------------------------------------------


def _only(split: Sequence[tuple[int, ...]], keep: set[int]) -> tuple[tuple[int, ...], ...]:
    return tuple(axes if d in keep else () for d, axes in enumerate(split))


@rule(nn.SliceOp)
def _slice(op: Operation, s: Sequence[Sharding]) -> Plan:
    """A dimension taken whole (start 0, full limit, stride 1) keeps its split; slicing is linear,
    so a partial sum stays partial."""
    sl = cast(nn.SliceOp, op)
    shape = _shape(sl.operand)
    start, limit, stride = sl.start.get_values(), sl.limit.get_values(), sl.stride.get_values()
    keep = {d for d in range(len(shape)) if (start[d], limit[d], stride[d]) == (0, shape[d], 1)}
    src = replace(s[0], split=_only(s[0].split, keep))
    return Plan((src,), src)


@rule(nn.PadOp)
def _pad(op: Operation, s: Sequence[Sharding]) -> Plan:
    """A dimension with no padding keeps its split. (A partial sum is resolved: every device would
    add the padding value.)"""
    pad = cast(nn.PadOp, op)
    low, high = pad.low.get_values(), pad.high.get_values()
    keep = {d for d in range(len(low)) if low[d] == 0 and high[d] == 0}
    src = Sharding(_only(s[0].split, keep))
    return Plan((src, Sharding.replicated(len(_shape(pad.padding_value)))), src)


@rule(nn.ConcatenateOp)
def _concatenate(op: Operation, s: Sequence[Sharding]) -> Plan:
    """Every dimension but the joined one keeps the first operand's split."""
    dim = cast(nn.ConcatenateOp, op).dimension.value.data
    split = tuple(() if d == dim else axes for d, axes in enumerate(s[0].split))
    target = Sharding(split)
    return Plan(tuple(target for _ in s), target)


@rule(nn.Conv2DOp)
def _conv2d(op: Operation, s: Sequence[Sharding]) -> Plan:
    """A convolution is a matmul over channels, image by image: images (N) split from the input,
    output channels (O) from the kernel, a split input channel (C) gives a partial sum (as the
    weight gradient of a data-parallel step, whose "channels" are the images). Spatial dimensions
    are gathered: windows would need halos."""
    x, k = resolved(s[0]), resolved(s[1])
    n, o = x.split[0], k.split[0]
    c = x.split[1] or k.split[1]
    if set(c) & set(n):
        c = ()
    if set(o) & (set(n) | set(c)):
        o = ()
    x_t = Sharding((n, c, (), ()))
    k_t = Sharding((o, c, (), ()))
    return Plan((x_t, k_t), Sharding((n, o, (), ()), tuple(sorted(c))))


@rule(nn.MaxPool2DOp)
def _max_pool2d(op: Operation, s: Sequence[Sharding]) -> Plan:
    """Windows stay inside one image and channel: N and C splits carry, H and W are gathered."""
    x = resolved(s[0])
    src = Sharding((x.split[0], x.split[1], (), ()))
    return Plan((src,), src)


@rule(nn.GatherOp)
def _gather(op: Operation, s: Sequence[Sharding]) -> Plan:
    """`take(x, idx, axis)`: x's dimensions other than `axis` keep their splits, and so do the index
    dimensions that replace it (each device gathers its own rows at its own indices); the gathered
    axis is made whole. Linear in x, so a partial x stays partial."""
    g = cast(nn.GatherOp, op)
    axis = g.axis.value.data
    x, idx = s[0], resolved(s[1])
    x_split = tuple(() if d == axis else axes for d, axes in enumerate(x.split))
    used = {a for axes in x_split for a in axes} | set(x.partial)
    idx_split = tuple(axes if not set(axes) & used else () for axes in idx.split)
    x_t = replace(x, split=x_split)
    idx_t = Sharding(idx_split)
    result = (*x_split[:axis], *idx_split, *x_split[axis + 1 :])
    return Plan((x_t, idx_t), replace(x, split=result))


@rule(nn.ScatterAddOp)
def _scatter_add(op: Operation, s: Sequence[Sharding]) -> Plan:
    """x + the updates added at `indices` along `axis`: x's other dimensions keep their splits and
    the updates follow them; the indices, and the updates' index dimensions, are whole."""
    sc = cast(nn.ScatterAddOp, op)
    axis = sc.axis.value.data
    x, u = resolved(s[0]), resolved(s[2])
    idx_rank = len(_shape(sc.indices))
    x_split = tuple(() if d == axis else axes for d, axes in enumerate(x.split))
    # The updates' own split, seen as x's (their index dimensions stand for x's axis): the more
    # split of the two wins, so a zero-filled x takes the updates' layout, not the reverse.
    from_updates = tuple(
        () if d == axis else (u.split[d] if d < axis else u.split[d - 1 + idx_rank]) for d in range(len(x_split))
    )
    if sum(map(len, from_updates)) > sum(map(len, x_split)):
        x_split = from_updates
    updates = (*x_split[:axis], *([()] * idx_rank), *x_split[axis + 1 :])
    target = Sharding(x_split)
    return Plan((target, Sharding.replicated(idx_rank), Sharding(tuple(updates))), target)


@rule(nn.DynamicSliceOp)
def _dynamic_slice(op: Operation, s: Sequence[Sharding]) -> Plan:
    """A dimension the window spans whole keeps its split (its start can only be 0); the others
    are gathered, since where the window falls is known only at run time. Linear: a partial
    operand stays partial. The start indices are scalars every device holds."""
    ds = cast(nn.DynamicSliceOp, op)
    shape, sizes = _shape(ds.operand), ds.sizes.get_values()
    keep = {d for d in range(len(shape)) if sizes[d] == shape[d]}
    src = replace(s[0], split=_only(s[0].split, keep))
    return Plan((src, *s[1:]), src)


@rule(nn.DynamicUpdateSliceOp)
def _dynamic_update_slice(op: Operation, s: Sequence[Sharding]) -> Plan:
    """A dimension the update covers whole keeps the operand's split, and the update is split
    the same way there; the others are gathered."""
    du = cast(nn.DynamicUpdateSliceOp, op)
    shape, update = _shape(du.operand), _shape(du.update)
    keep = {d for d in range(len(shape)) if update[d] == shape[d]}
    target = Sharding(_only(resolved(s[0]).split, keep))
    return Plan((target, target, *s[2:]), target)


# ---------------------------------------------------------------------------------------------
# Dense linear algebra (the last two dimensions are the matrices, the leading ones a batch)
# ---------------------------------------------------------------------------------------------


@rule(nn.CholeskyOp)
def _cholesky(op: Operation, s: Sequence[Sharding]) -> Plan:
    """Each matrix is factored on its own: batch splits carry, the matrix dimensions are made
    whole. (nn.lu, nn.eigh, nn.svd and nn.qr have several results and run replicated: the
    partitioner plans one result.)"""
    x = resolved(s[0])
    target = Sharding((*x.split[:-2], (), ()))
    return Plan((target,), target)


@rule(nn.TriangularSolveOp)
def _triangular_solve(op: Operation, s: Sequence[Sharding]) -> Plan:
    """X = A^{-1} B matrix by matrix, and column by column of B: a batch dimension split in either
    operand is split in both (the first one's split where both are), B's columns keep their split
    (so does X); A's matrix dimensions and B's rows are made whole."""
    a, b = resolved(s[0]), resolved(s[1])
    used: set[int] = set()
    batch: list[tuple[int, ...]] = []
    for axes_a, axes_b in zip(a.split[:-2], b.split[:-2]):
        axes = axes_a or axes_b
        if set(axes) & used:
            axes = ()
        used |= set(axes)
        batch.append(axes)
    columns = b.split[-1] if not set(b.split[-1]) & used else ()
    a_t = Sharding((*batch, (), ()))
    b_t = Sharding((*batch, (), columns))
    return Plan((a_t, b_t), b_t)


WITH_INDEX_OPERANDS = (nn.DynamicSliceOp, nn.DynamicUpdateSliceOp)
"""Ops whose rule also sees scalar operands (start indices): their shardings are empty."""
