"""Resharding: the collectives, one mesh axis at a time, that turn one sharding into another.

One plan serves both users: `shard-partition` emits it as shard-dialect ops (`Resharder`)
and `ig.distributed`'s DTensor runs it eagerly on numpy (irgrad/distributed/dtensor.py).

Each step changes the placement of one mesh axis `a` and is one shard-dialect collective over
`grid_axes = [a]` (all_gather, all_reduce, reduce_scatter, all_slice, all_to_all) or, for
Replicate -> Partial, a local step.

Why one axis at a time, inside out: a collective over one axis concatenates (or splits) its
group's arrays in group order, which is the chunk order only for the innermost axis of a
dimension (split[d] is row-major over its axes). So axes leave a dimension from the inside out,
and join it only as the next axis of the target's list. An axis that cannot move directly is
gathered to Replicate first and sliced again later.

Order: the free steps first (all_slice makes later collectives smaller), then the direct
moves (reduce_scatter, all_to_all), then all_reduce of Partial axes the target replicates
(while the data is still small), then all_gathers, and Replicate -> Partial last. Every step
keeps what the target keeps, so the plan is finite and ends at the target.
The steps and their conditions: docs/design/distributed.md, "irgrad/transforms/shard/reshard.py".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import FlatSymbolRefAttr, IndexType, IntegerAttr, TensorType
from xdsl.dialects.shard import ReductionKind
from xdsl.ir import Operation, SSAValue

from irgrad.dialects import shard
from irgrad.dialects.shard import Sharding


@dataclass(frozen=True)
class Step:
    """One step of a plan: `kind` over mesh axis `mesh_axis`.

    `dim`: the tensor dimension gathered (all_gather), sliced (all_slice), scattered
    (reduce_scatter) or, for all_to_all, split; `concat_dim`: all_to_all's concatenation
    (the dimension the axis leaves). `reduction`: all_reduce / reduce_scatter / partial's kind.
    """

    kind: str  # all_gather | all_reduce | reduce_scatter | all_slice | all_to_all | partial
    mesh_axis: int
    dim: int | None = None
    concat_dim: int | None = None
    reduction: ReductionKind | None = None


def plan_redistribute(src: Sharding, dst: Sharding, mesh_shape: Sequence[int]) -> list[Step]:
    """The steps from sharding `src` to `dst` (same rank) on a mesh of `mesh_shape`."""
    if len(src.split) != len(dst.split):
        raise ValueError(f"cannot redistribute {src.describe()} to {dst.describe()}: ranks differ")
    rank = len(src.split)
    split = [list(axes) for axes in src.split]
    target = [list(axes) for axes in dst.split]
    partial = set(src.partial)
    # A Partial of another reduction is resolved first, and made again at the end.
    keep_partial = set(src.partial) & set(dst.partial) if src.reduction == dst.reduction else set()
    target_dim = {a: d for d, axes in enumerate(target) for a in axes}
    steps: list[Step] = []

    def prefix(d: int) -> int:
        n = 0
        while n < min(len(split[d]), len(target[d])) and split[d][n] == target[d][n]:
            n += 1
        return n

    def can_join(a: int) -> bool:
        """Axis `a` can be appended to its target dimension now."""
        d = target_dim.get(a)
        if d is None:
            return False
        n = len(split[d])
        return split[d] == target[d][:n] and n < len(target[d]) and target[d][n] == a

    def leaving() -> list[tuple[int, int]]:
        """(dim, axis): the innermost axis of each dimension that has axes to shed."""
        return [(d, split[d][-1]) for d in range(rank) if len(split[d]) > prefix(d)]

    def replicated(a: int) -> bool:
        return a not in partial and all(a not in axes for axes in split)

    while True:
        # 1. all_slice: free, and it shrinks whatever comes next.
        a = next((a for a in range(len(mesh_shape)) if replicated(a) and can_join(a)), None)
        if a is not None:
            split[target_dim[a]].append(a)
            steps.append(Step("all_slice", a, target_dim[a]))
            continue
        # 2. reduce_scatter: Partial straight to Shard.
        a = next((a for a in sorted(partial - keep_partial) if can_join(a)), None)
        if a is not None:
            partial.discard(a)
            split[target_dim[a]].append(a)
            steps.append(Step("reduce_scatter", a, target_dim[a], reduction=src.reduction))
            continue
        # 3. all_to_all: Shard(d) straight to Shard(e).
        move = next(((d, a) for d, a in leaving() if target_dim.get(a, d) != d and can_join(a)), None)
        if move is not None:
            d, a = move
            split[d].pop()
            split[target_dim[a]].append(a)
            steps.append(Step("all_to_all", a, target_dim[a], concat_dim=d))
            continue
        # 4. all_reduce of Partial axes the target does not shard.
        a = next((a for a in sorted(partial - keep_partial) if a not in target_dim), None)
        if a is not None:
            partial.discard(a)
            steps.append(Step("all_reduce", a, reduction=src.reduction))
            continue
        # 5. all_gather of an axis that has to leave its dimension.
        out = leaving()
        if out:
            d, a = out[0]
            split[d].pop()
            steps.append(Step("all_gather", a, d))
            continue
        # 6. all_reduce of a Partial axis whose Shard target is still blocked.
        a = next(iter(sorted(partial - keep_partial)), None)
        if a is not None:
            partial.discard(a)
            steps.append(Step("all_reduce", a, reduction=src.reduction))
            continue
        break
    assert split == target, (split, target)
    for a in sorted(set(dst.partial) - partial):
        partial.add(a)
        steps.append(Step("partial", a, reduction=dst.reduction))
    return steps


# ---------------------------------------------------------------------------------------------
# The plan as IR
# ---------------------------------------------------------------------------------------------

Emit = Callable[[Operation], Operation]


def local_type(t: TensorType, sharding: Sharding, grid: Sequence[int]) -> TensorType:
    return TensorType(t.get_element_type(), sharding.local_shape(t.get_shape(), grid))


def apply_step(s: Sharding, step: Step) -> Sharding:
    """The sharding after `step`."""
    split = [list(a) for a in s.split]
    partial = [a for a in s.partial if a != step.mesh_axis]
    reduction = s.reduction
    if step.kind == "all_gather":
        split[step.dim].remove(step.mesh_axis)  # type: ignore[index]
    elif step.kind in ("all_slice", "reduce_scatter"):
        split[step.dim].append(step.mesh_axis)  # type: ignore[index]
    elif step.kind == "all_to_all":
        split[step.concat_dim].remove(step.mesh_axis)  # type: ignore[index]
        split[step.dim].append(step.mesh_axis)  # type: ignore[index]
    elif step.kind == "partial":
        partial = sorted([*s.partial, step.mesh_axis])
        reduction = step.reduction or reduction
    if not partial:
        reduction = ReductionKind.SUM
    return Sharding(tuple(tuple(a) for a in split), tuple(partial), reduction)


_OPS: dict[str, tuple[type[Operation], str | None]] = {
    "all_gather": (shard.AllGatherOp, "gather_axis"),
    "all_slice": (shard.AllSliceOp, "slice_axis"),
    "reduce_scatter": (shard.ReduceScatterOp, "scatter_axis"),
    "all_to_all": (shard.AllToAllOp, "split_axis"),
    "all_reduce": (shard.AllReduceOp, None),
}


class Resharder:
    """Emits the plan's collectives through `emit`, on grid @`grid_name` of shape `grid`."""

    def __init__(self, grid_name: str, grid: Sequence[int], emit: Emit):
        self.grid_name = grid_name
        self.grid = tuple(grid)
        self.emit = emit

    def reshard(self, value: SSAValue, t: TensorType, src: Sharding, dst: Sharding) -> SSAValue:
        """`value` (the local part of a global `t` sharded as `src`) resharded as `dst`."""
        cur = src
        for step in plan_redistribute(src, dst, self.grid):
            if step.kind not in _OPS:
                raise NotImplementedError(f"a compiled redistribution cannot make a value {step.kind}")
            cls, axis_name = _OPS[step.kind]
            after = apply_step(cur, step)
            properties: dict[str, object] = {
                "grid": FlatSymbolRefAttr(self.grid_name),
                "grid_axes": shard.axes_attr([step.mesh_axis]),
            }
            if axis_name is not None:
                properties[axis_name] = IntegerAttr(step.dim, IndexType())
            if step.kind == "all_to_all":
                properties["concat_axis"] = IntegerAttr(step.concat_dim, IndexType())
            if step.kind in ("all_reduce", "reduce_scatter") and step.reduction is not None:
                properties["reduction"] = shard.ReductionKindAttr(step.reduction)
            op = self.emit(
                cls.create(operands=[value], result_types=[local_type(t, after, self.grid)], properties=properties)  # type: ignore[arg-type]
            )
            if value.name_hint:
                op.results[0].name_hint = value.name_hint
            value, cur = op.results[0], after
        assert (cur.split, cur.partial) == (dst.split, dst.partial), (cur, dst)
        return value
