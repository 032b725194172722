"""The scf regions of `shard-partition`: `scf.for`, `scf.while` and `scf.if` partitioned inside,
each into a new block of its own `Scope`, the values they carry given one sharding each by a
fixed point (see the comment on `RegionPartitioner`).

`RegionPartitioner` is a base of shard_partition.py's partitioner, which provides `walk`,
`get`, `define`, `_emit` and the state (`scope`, `local`, `sharding`, `alias`, `emitted`,
`grid`, `location`); this module holds no pass and imports nothing of shard_partition.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from xdsl.dialects import scf
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from irgrad.dialects import shard
from irgrad.transforms.shard import rules as shard_rules
from irgrad.transforms.shard.reshard import local_type


def is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType)


@dataclass
class Scope:
    """A block being built: the function's body or a region of an scf op.

    `defined`: the global values defined in it (its block arguments and op results);
    `cache`: the reshards of values made in this block (they dominate only this block and the
    regions nested in it); `hoist`: a value from outside the block is resharded in the
    enclosing block instead (a loop body: the collective then runs once, not once per
    iteration; not a branch of an scf.if, whose collectives run only when it is taken).
    """

    block: Block
    parent: Scope | None
    hoist: bool
    defined: set[SSAValue]
    cache: dict[tuple[SSAValue, shard.Sharding], SSAValue]


def _refines(finer: shard.Sharding, coarser: shard.Sharding) -> bool:
    """`finer` splits every dimension over `coarser`'s axes and maybe more after them (so going
    from `coarser` to `finer` is only slicing, no communication)."""
    return not finer.partial and not coarser.partial and all(
        f[: len(c)] == c for f, c in zip(finer.split, coarser.split, strict=True)
    )


def _common(a: shard.Sharding, b: shard.Sharding) -> shard.Sharding:
    """The splits `a` and `b` share: each dimension's longest common prefix of axes."""
    split = []
    for x, y in zip(a.split, b.split, strict=True):
        n = 0
        while n < min(len(x), len(y)) and x[n] == y[n]:
            n += 1
        split.append(x[:n])
    return shard.Sharding(tuple(split))


class RegionPartitioner:
    """The scf-region half of the partitioner (a base class; see the module docstring)."""

    scope: Scope
    local: dict[SSAValue, SSAValue]
    sharding: dict[SSAValue, shard.Sharding]
    alias: dict[SSAValue, SSAValue]
    emitted: list[Operation]

    # -- regions ----------------------------------------------------------------------------
    #
    # A region is partitioned like the function body, into a new block of its own scope
    # (Scope). The values an scf op carries from one iteration to the next (scf.for's and
    # scf.while's iter_args) or hands to its users (every scf op's results) get one sharding
    # each, found by a fixed point: start from the sharding of the initial value (its pending
    # reduction resolved), partition the body, and where the value the body yields is split
    # further than that (each dimension's axes extend the carried ones), carry that split
    # instead and partition again (the initial value is then only sliced, which costs no
    # communication). Splits only grow, so this ends after at most one round per grid axis and
    # carried value. Whatever still differs is resharded back to the carried sharding inside
    # the body, before the yield: a collective per iteration, but always correct.

    def _enter(self, hoist: bool) -> Scope:
        self.scope = Scope(Block(), self.scope, hoist, set(), {})
        return self.scope

    def _leave(self, scope: Scope) -> None:
        assert self.scope is scope and scope.parent is not None
        self.scope = scope.parent

    def _snapshot(self) -> tuple[int, dict, dict, dict, list[dict]]:
        caches: list[dict] = []
        s: Scope | None = self.scope
        while s is not None:
            caches.append(dict(s.cache))
            s = s.parent
        return len(self.emitted), dict(self.local), dict(self.sharding), dict(self.alias), caches

    def _rollback(self, snapshot: tuple[int, dict, dict, dict, list[dict]], trial: list[Scope]) -> None:
        """Undo a trial partition of the regions `trial`: the blocks are dropped, and what the
        trial hoisted into the enclosing blocks is removed."""
        n, self.local, self.sharding, self.alias, caches = snapshot
        for scope in trial:
            scope.block.drop_all_references()
        kept: set[Block] = set()
        s: Scope | None = self.scope
        for cache in caches:
            assert s is not None
            s.cache.clear()
            s.cache.update(cache)
            kept.add(s.block)
            s = s.parent
        for op in reversed(self.emitted[n:]):
            if op.parent_block() in kept:
                op.detach()
                op.drop_all_references()
        del self.emitted[n:]

    def _carried(self, value: SSAValue) -> shard.Sharding | None:
        return shard_rules.resolved(self.sharding[value]) if is_tensor(value) else None

    def _block_args(self, old: Block, new: Block, shardings: list[shard.Sharding | None]) -> None:
        for arg, s in zip(old.args, shardings, strict=True):
            t = local_type(cast(TensorType, arg.type), s, self.grid.shape) if s is not None else arg.type
            self.define(arg, new.insert_arg(t, len(new.args)), s)

    def _terminate(
        self, scope: Scope, terminator: Operation, shardings: list[shard.Sharding | None],
        make: type[Operation], leading: Sequence[SSAValue] = (),
    ) -> None:
        """End the region `scope` with `make(*leading, *values)`, the terminator's operands
        resharded to `shardings` (inside the region)."""
        saved, self.scope = self.scope, scope
        self.location = terminator.location
        try:
            first = len(terminator.operands) - len(shardings)
            values = [
                self.get(v, s) if s is not None else self.local[v]
                for v, s in zip(terminator.operands[first:], shardings, strict=True)
            ]
            self._emit(make(*leading, *values))
        finally:
            self.scope = saved

    def _fixed_point(self, start: list[shard.Sharding | None], trial: Callable[..., Any]) -> tuple[list[Any], Any]:
        """Run `trial(carried) -> (yielded shardings, state)` until no yielded sharding splits
        further than the carried one; returns the last carried shardings and trial's state."""
        carried = list(start)
        for _ in range(1 + sum(1 for c in carried if c is not None) * len(self.grid.shape)):
            snapshot = self._snapshot()
            yielded, scopes, state = trial(carried)
            finer = [
                y if c is not None and y is not None and _refines(y, c) else c
                for c, y in zip(carried, yielded, strict=True)
            ]
            if finer == carried:
                return carried, state
            self._rollback(snapshot, scopes)
            carried = finer
        raise AssertionError("the carried shardings of a loop did not converge")  # splits only grow

    def partition_for(self, op: scf.ForOp) -> None:
        """The body partitioned with its iter_args in their carried shardings (the fixed
        point), its yields resharded to them; the loop's results have them too."""
        bounds = [self.local[v] for v in (op.lb, op.ub, op.step)]
        body = op.body.block
        yield_op = body.last_op
        assert isinstance(yield_op, scf.YieldOp)
        location = op.location

        def trial(carried):
            scope = self._enter(hoist=True)
            try:
                self._block_args(body, scope.block, [None, *carried])
                self.walk(body)
            finally:
                self._leave(scope)
            return [self._carried(v) for v in yield_op.operands], [scope], scope

        carried, scope = self._fixed_point([self._carried(v) for v in op.iter_args], trial)
        self._terminate(scope, yield_op, carried, scf.YieldOp)
        self.location = location
        inits = [self.get(v, s) if s is not None else self.local[v] for v, s in zip(op.iter_args, carried)]
        new = self._emit(scf.ForOp(*bounds, inits, Region(scope.block)))
        for old, res, s in zip(op.results, new.results, carried):
            self.define(old, res, s)

    def partition_while(self, op: scf.WhileOp) -> None:
        """As scf.for: the "before" region (the condition) gets the carried shardings, the
        "after" region (the body) and the results the shardings of what the condition
        forwards, and the body's yields are resharded to the carried ones."""
        before, after = op.before_region.block, op.after_region.block
        condition, yield_op = before.last_op, after.last_op
        assert isinstance(condition, scf.ConditionOp) and isinstance(yield_op, scf.YieldOp)
        location = op.location

        def trial(carried):
            first = self._enter(hoist=True)
            try:
                self._block_args(before, first.block, carried)
                self.walk(before)
            finally:
                self._leave(first)
            # The body receives what the condition forwards, in the sharding it has.
            passed = [self._carried(v) for v in condition.args]
            second = self._enter(hoist=True)
            try:
                self._block_args(after, second.block, passed)
                self.walk(after)
            finally:
                self._leave(second)
            return [self._carried(v) for v in yield_op.operands], [first, second], (first, second, passed)

        carried, (first, second, passed) = self._fixed_point([self._carried(v) for v in op.arguments], trial)
        self._terminate(first, condition, passed, scf.ConditionOp, [self.local[condition.condition]])
        self._terminate(second, yield_op, carried, scf.YieldOp)
        self.location = location
        inits = [self.get(v, s) if s is not None else self.local[v] for v, s in zip(op.arguments, carried)]
        new = self._emit(
            scf.WhileOp(inits, [a.type for a in second.block.args], Region(first.block), Region(second.block))
        )
        for old, res, s in zip(op.results, new.results, passed):
            self.define(old, res, s)

    def partition_if(self, op: scf.IfOp) -> None:
        """Both branches are partitioned; each result takes one sharding both branches' values
        reach cheaply (the more split of the two where one extends the other: the other branch
        only slices; else the splits they share), and each branch reshards to it."""
        location = op.location
        branches: list[tuple[Scope, Block]] = []
        for region in (op.true_region, op.false_region):
            if not region.blocks:
                continue
            scope = self._enter(hoist=False)
            try:
                self.walk(region.block)
            finally:
                self._leave(scope)
            branches.append((scope, region.block))
        shardings: list[shard.Sharding | None] = []
        for i, r in enumerate(op.results):
            if not is_tensor(r):
                shardings.append(None)
                continue
            a, b = (self._carried(cast(scf.YieldOp, block.last_op).operands[i]) for _, block in branches)
            assert a is not None and b is not None
            shardings.append(b if _refines(b, a) else a if _refines(a, b) else _common(a, b))
        for scope, block in branches:
            self._terminate(scope, cast(Operation, block.last_op), shardings, scf.YieldOp)
        self.location = location
        regions = [Region(scope.block) for scope, _ in branches]
        types = [
            local_type(cast(TensorType, r.type), s, self.grid.shape) if s is not None else r.type
            for r, s in zip(op.results, shardings)
        ]
        new = self._emit(scf.IfOp(self.local[op.cond], types, regions[0], regions[1] if len(regions) > 1 else None))
        for old, res, s in zip(op.results, new.results, shardings):
            self.define(old, res, s)


__all__ = ["RegionPartitioner", "Scope", "is_tensor"]
