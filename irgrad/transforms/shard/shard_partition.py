"""`shard-partition`: a program on global tensors with sharding annotations becomes the program
each device runs (SPMD), in which every change of placement is a collective.

MLIR's pass of the same name and GSPMD do this; irgrad's is a single forward walk:
- An argument's sharding is that of the first `shard.shard` that uses it; an argument nothing
  constrains is replicated.
- `shard.shard %x to %s` makes the value `%s`'s sharding: the collectives that get there from
  `%x`'s are emitted in its place (shard_reshard.py).
- Every other op follows its sharding rule (rules.py): its operands are resharded to what the
  rule asks, and the op runs on the local parts. Ops without a rule run replicated.
- `scf.for`, `scf.while` and `scf.if` are partitioned inside, a carried value keeping one
  sharding for the whole loop (a fixed point); other ops with regions run replicated.
- Returned values with a pending reduction are all-reduced; their split is kept.

Output: the function with local tensor types, no `shard.sharding`/`shard.shard` left, the
collectives in place, and the attributes `shard.grid`, `shard.arg_split_axes` and
`shard.result_split_axes` (one split_axes list per argument and result) that say how to call it.

Input: autodiff requests already expanded (run `autodiff` first); calls are inlined first, and
only functions no other function calls are partitioned. Functions without shard ops are left alone.
Details: docs/design/distributed.md, "irgrad/transforms/shard/shard_partition.py".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, FlatSymbolRefAttr, FunctionType, ModuleOp, TensorType, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.traits import IsTerminator, SymbolTable
from xdsl.utils.exceptions import VerifyException

from irgrad.diagnostics import PassError
from irgrad.dialects import nn, shard
from irgrad.transforms.shard import rules as shard_rules
from irgrad.transforms.shard.reshard import Resharder, local_type


def _is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType)


def inline_calls(fn: func.FuncOp, module: ModuleOp) -> None:
    """Replace every `func.call` in `fn` by a copy of the callee's body (repeatedly, so calls
    in inlined bodies are inlined too). Callees must have one block."""
    for _ in range(64):
        calls = [op for op in fn.walk() if isinstance(op, func.CallOp)]
        if not calls:
            return
        for call in calls:
            callee = SymbolTable.lookup_symbol(module, call.callee)
            if not isinstance(callee, func.FuncOp) or len(callee.body.blocks) != 1:
                raise PassError(f"calls {call.callee}, which has no single-block body to inline", call)
            block = callee.body.clone().blocks[0]
            for arg, value in zip(block.args, call.operands, strict=True):
                arg.replace_all_uses_with(value)  # nested uses too
            ret = block.last_op
            assert isinstance(ret, func.ReturnOp)
            for op in list(block.ops):
                if op is ret:
                    break
                op.detach()
                call.parent_block().insert_op_before(op, call)  # type: ignore[union-attr]
            for old, new in zip(call.results, ret.operands):
                old.replace_all_uses_with(new)
            call.detach()
            call.erase()
    raise PassError("calls nest more than 64 deep (recursion?); cannot inline", fn)


@dataclass
class _Grid:
    name: str
    shape: tuple[int, ...]


@dataclass
class _Scope:
    """A block being built: the function's body or a region of an scf op.

    `defined`: the global values defined in it (its block arguments and op results);
    `cache`: the reshards of values made in this block (they dominate only this block and the
    regions nested in it); `hoist`: a value from outside the block is resharded in the
    enclosing block instead (a loop body: the collective then runs once, not once per
    iteration; not a branch of an scf.if, whose collectives run only when it is taken).
    """

    block: Block
    parent: _Scope | None
    hoist: bool
    defined: set[SSAValue]
    cache: dict[tuple[SSAValue, shard.Sharding], SSAValue]


class _Partitioner:
    """Rewrites one function; see the module docstring for the rules."""

    def __init__(self, fn: func.FuncOp, grid: _Grid):
        self.fn = fn
        self.grid = grid
        self.block = Block()
        self.scope = _Scope(self.block, None, False, set(), {})
        self.local: dict[SSAValue, SSAValue] = {}
        self.sharding: dict[SSAValue, shard.Sharding] = {}
        self.alias: dict[SSAValue, SSAValue] = {}  # shard.shard result -> its source
        self.emitted: list[Operation] = []  # every op emitted, in order (to undo a trial)
        self.location = fn.location
        self.resharder = Resharder(grid.name, grid.shape, self._emit)

    def _emit(self, op: Operation) -> Operation:
        if self.location is not None:
            op.location = self.location
        self.scope.block.add_op(op)
        self.emitted.append(op)
        return op

    # -- shardings ------------------------------------------------------------------------

    def annotation(self, op: shard.ShardOp) -> shard.Sharding:
        owner = op.sharding.owner
        if not isinstance(owner, shard.ShardingOp):
            raise PassError("takes its sharding from a value that is not a shard.sharding", op)
        if owner.grid.root_reference.data != self.grid.name:
            raise PassError(
                f"uses grid {owner.grid} but the function already uses @{self.grid.name}; "
                "one function runs on one grid",
                op,
            )
        if owner.static_halo_sizes.get_values() or owner.static_sharded_dims_offsets.get_values() or owner.operands:
            raise PassError("halo sizes and uneven shard offsets are not supported", owner)
        t = cast(TensorType, op.src.type)
        s = shard.pad_sharding(shard.sharding_of(owner), len(t.get_shape()))
        try:
            shard.check_sharding(op, s, t, self.grid.shape, f"@{self.grid.name}")
        except VerifyException as err:
            raise PassError(str(err).removeprefix(f"'{op.name}' op "), op) from err
        return s

    def _cached(self, scope: _Scope, key: tuple[SSAValue, shard.Sharding]) -> SSAValue | None:
        """A reshard of `key` made in `scope` or a block enclosing it (so it dominates `scope`)."""
        s: _Scope | None = scope
        while s is not None:
            if key in s.cache:
                return s.cache[key]
            s = s.parent
        return None

    def _home(self, value: SSAValue) -> _Scope:
        """Where `value`'s reshards are emitted: the current block, or for a value defined
        outside a loop body, the block around the loop (hoisted: resharded once)."""
        scope = self.scope
        while value not in scope.defined and scope.hoist and scope.parent is not None:
            scope = scope.parent
        return scope

    def get(self, value: SSAValue, target: shard.Sharding) -> SSAValue:
        """The local value of global `value` in sharding `target` (collectives emitted once)."""
        if not _is_tensor(value):
            return self.local[value]
        current = self.sharding[value]
        if current == target:
            return self.local[value]
        key = (value, target)
        home = self._home(value)
        found = self._cached(home, key)
        if found is not None:
            return found
        # A constrained value is its source's value: reuse the source where it already has
        # the wanted layout (an all_gather for one user must not cost another user a slice).
        source = value
        while found is None and source in self.alias:
            source = self.alias[source]
            if self.sharding[source] == target:
                found = self.local[source]
            else:
                found = self._cached(home, (source, target))
        if found is None:
            saved, self.scope = self.scope, home
            try:
                found = self._slice_at_source(value, current, target)
                if found is None:
                    found = self.resharder.reshard(
                        self.local[value], cast(TensorType, value.type), current, target
                    )
            finally:
                self.scope = saved
        home.cache[key] = found
        return found

    def _slice_at_source(self, value: SSAValue, current: shard.Sharding, target: shard.Sharding) -> SSAValue | None:
        """An `nn.full`, `nn.broadcast_in_dim` or elementwise op of such values that is wanted
        split further (a change that is only slicing) is made split where it is made: each device fills, broadcasts or
        computes only its chunk, instead of the whole tensor it would then slice (the seeds,
        masks and broadcast biases of a data-parallel gradient). The whole-tensor op, if
        nothing else uses it, is dead code afterwards."""
        op = value.owner
        only_slices = not current.partial and not target.partial and all(
            want[: len(have)] == have for have, want in zip(current.split, target.split)
        )
        if not only_slices or not isinstance(op, _SLICEABLE_AT_SOURCE):
            return None
        t = cast(TensorType, value.type)
        operands: list[SSAValue] = []
        if isinstance(op, _ELEMENTWISE):
            # The chunk of an elementwise op is the op of its operands' chunks.
            if any(cast(TensorType, v.type).get_shape() != t.get_shape() for v in op.operands):
                return None
            operands = [self.get(v, target) for v in op.operands]
        elif isinstance(op, nn.BroadcastInDimOp):
            in_t = cast(TensorType, op.operand.type)
            in_shape, out_shape = in_t.get_shape(), t.get_shape()
            dims = op.dims.get_values()
            split = [()] * len(in_shape)
            for i, d in enumerate(dims):
                if in_shape[i] == out_shape[d]:
                    split[i] = target.split[d]
            operands = [self.get(op.operand, shard.Sharding(tuple(split)))]
        new = type(op).create(
            operands=operands,
            result_types=[local_type(t, target, self.grid.shape)],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        self._emit(new)
        new.results[0].name_hint = value.name_hint
        return new.results[0]

    def define(self, old: SSAValue, new: SSAValue, sharding: shard.Sharding | None) -> None:
        self.local[old] = new
        self.scope.defined.add(old)
        if sharding is not None:
            self.sharding[old] = sharding
        if old.name_hint and not new.name_hint:
            new.name_hint = old.name_hint

    # -- the walk -------------------------------------------------------------------------

    def run(self) -> tuple[list[shard.Sharding], list[shard.Sharding]]:
        old_block = self.fn.body.blocks[0]
        arg_shardings = []
        for arg in old_block.args:
            s = None
            if _is_tensor(arg):
                users = [u.operation for u in arg.uses if isinstance(u.operation, shard.ShardOp) and u.index == 0]
                users.sort(key=lambda o: old_block.get_operation_index(o) if o.parent_block() is old_block else 1 << 30)
                rank = len(cast(TensorType, arg.type).get_shape())
                s = self.annotation(users[0]) if users else shard.Sharding.replicated(rank)
                arg_shardings.append(s)
                new_type = local_type(cast(TensorType, arg.type), s, self.grid.shape)
            else:
                arg_shardings.append(shard.Sharding(()))
                new_type = arg.type
            new_arg = self.block.insert_arg(new_type, len(self.block.args))
            self.define(arg, new_arg, s)

        ret = old_block.last_op
        assert isinstance(ret, func.ReturnOp)
        self.walk(old_block)
        self.location = ret.location
        result_shardings: list[shard.Sharding] = []
        values = []
        for v in ret.operands:
            if _is_tensor(v):
                s = shard_rules.resolved(self.sharding[v])
                values.append(self.get(v, s))
                result_shardings.append(s)
            else:
                values.append(self.local[v])
                result_shardings.append(shard.Sharding(()))
        self._emit(func.ReturnOp(*values))
        return arg_shardings, result_shardings

    def walk(self, old_block: Block) -> None:
        """Partition the ops of `old_block` but its terminator into the current block."""
        for op in old_block.ops:
            if op is old_block.last_op and op.has_trait(IsTerminator):
                return
            self.location = op.location
            if isinstance(op, shard.ShardingOp):
                continue
            if isinstance(op, shard.ShardOp):
                s = self.annotation(op)
                self.define(op.result, self.get(op.src, s), s)
                if _is_tensor(op.src):
                    self.alias[op.result] = op.src
            elif op.name.startswith("autodiff."):
                raise PassError("is an autodiff request; run the autodiff pass before shard-partition", op)
            elif isinstance(op, shard.COLLECTIVES) or isinstance(op, shard.ProcessLinearIndexOp):
                raise PassError("is already a per-device op; shard-partition expects a global program", op)
            elif isinstance(op, scf.ForOp):
                self.partition_for(op)
            elif isinstance(op, scf.WhileOp):
                self.partition_while(op)
            elif isinstance(op, scf.IfOp):
                self.partition_if(op)
            else:
                self.partition_op(op)

    # -- regions ----------------------------------------------------------------------------
    #
    # A region is partitioned like the function body, into a new block of its own scope
    # (_Scope). The values an scf op carries from one iteration to the next (scf.for's and
    # scf.while's iter_args) or hands to its users (every scf op's results) get one sharding
    # each, found by a fixed point: start from the sharding of the initial value (its pending
    # reduction resolved), partition the body, and where the value the body yields is split
    # further than that (each dimension's axes extend the carried ones), carry that split
    # instead and partition again (the initial value is then only sliced, which costs no
    # communication). Splits only grow, so this ends after at most one round per grid axis and
    # carried value. Whatever still differs is resharded back to the carried sharding inside
    # the body, before the yield: a collective per iteration, but always correct.

    def _enter(self, hoist: bool) -> _Scope:
        self.scope = _Scope(Block(), self.scope, hoist, set(), {})
        return self.scope

    def _leave(self, scope: _Scope) -> None:
        assert self.scope is scope and scope.parent is not None
        self.scope = scope.parent

    def _snapshot(self) -> tuple[int, dict, dict, dict, list[dict]]:
        caches: list[dict] = []
        s: _Scope | None = self.scope
        while s is not None:
            caches.append(dict(s.cache))
            s = s.parent
        return len(self.emitted), dict(self.local), dict(self.sharding), dict(self.alias), caches

    def _rollback(self, snapshot: tuple[int, dict, dict, dict, list[dict]], trial: list[_Scope]) -> None:
        """Undo a trial partition of the regions `trial`: the blocks are dropped, and what the
        trial hoisted into the enclosing blocks is removed."""
        n, self.local, self.sharding, self.alias, caches = snapshot
        for scope in trial:
            scope.block.drop_all_references()
        kept: set[Block] = set()
        s: _Scope | None = self.scope
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
        return shard_rules.resolved(self.sharding[value]) if _is_tensor(value) else None

    def _block_args(self, old: Block, new: Block, shardings: list[shard.Sharding | None]) -> None:
        for arg, s in zip(old.args, shardings, strict=True):
            t = local_type(cast(TensorType, arg.type), s, self.grid.shape) if s is not None else arg.type
            self.define(arg, new.insert_arg(t, len(new.args)), s)

    def _terminate(
        self, scope: _Scope, terminator: Operation, shardings: list[shard.Sharding | None],
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
        branches: list[tuple[_Scope, Block]] = []
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
            if not _is_tensor(r):
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


    def plan(self, op: Operation) -> shard_rules.Plan:
        if isinstance(op, shard_rules.WITH_INDEX_OPERANDS):
            current = [self.sharding[v] if _is_tensor(v) else shard.Sharding(()) for v in op.operands]
            return shard_rules.RULES[type(op)](op, current)
        tensors = all(_is_tensor(v) for v in (*op.operands, *op.results))
        if len(op.results) > 1:
            return _NO_PLAN  # several results (nn.lu): the replicated clone keeps them all
        if op.regions or not tensors or len(op.results) != 1 or not op.operands:
            return shard_rules.replicated_plan(op) if tensors and op.results else _NO_PLAN
        current = [self.sharding[v] for v in op.operands]
        if isinstance(op, nn.ReshapeOp):
            return shard_rules.plan_reshape(op, current, self.grid.shape)
        for cls in type(op).__mro__:
            rule = shard_rules.RULES.get(cls)  # type: ignore[arg-type]
            if rule is not None:
                return rule(op, current)
        return shard_rules.replicated_plan(op)

    def partition_op(self, op: Operation) -> None:
        plan = self.plan(op)
        if plan is _NO_PLAN:
            # Scalars, index arithmetic, ops with regions other than scf.for/while/if:
            # everything they read is made replicated, so each device computes the same thing
            # the global program does.
            operands = [self._replicated(v) for v in op.operands]
            captured = {
                v: self._replicated(v)
                for inner in op.walk()
                if inner is not op
                for v in inner.operands
                if v in self.local
            }
            new = op.clone(value_mapper=captured)
            for i, v in enumerate(operands):
                new.operands[i] = v
            self._emit(new)
            for old, res in zip(op.results, new.results):
                self.define(old, res, shard.Sharding.replicated(len(res.type.get_shape())) if _is_tensor(res) else None)
            return
        operands = [self.get(v, s) for v, s in zip(op.operands, plan.operands)]
        t = cast(TensorType, op.results[0].type)
        result_type = local_type(t, plan.result, self.grid.shape)
        properties = dict(op.properties)
        if isinstance(op, nn.DynamicSliceOp):  # the one rule op whose properties hold a size
            properties["sizes"] = DenseArrayBase.from_list(i64, result_type.get_shape())
        new = type(op).create(
            operands=operands,
            result_types=[result_type],
            properties=properties,
            attributes=dict(op.attributes),
        )
        self._emit(new)
        self.define(op.results[0], new.results[0], plan.result)

    def _replicated(self, value: SSAValue) -> SSAValue:
        if not _is_tensor(value):
            return self.local[value]
        return self.get(value, shard.Sharding.replicated(len(cast(TensorType, value.type).get_shape())))


_NO_PLAN = shard_rules.Plan((), shard.Sharding(()))


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
_ELEMENTWISE = (nn.ElementwiseUnaryOp, nn.ElementwiseBinaryOp, nn.CompareOp, nn.SelectOp, nn.ConvertOp)
_SLICEABLE_AT_SOURCE = (nn.FullOp, nn.BroadcastInDimOp, *_ELEMENTWISE)


def _grid_of(fn: func.FuncOp, module: ModuleOp) -> _Grid | None:
    """The one grid the function's sharding ops name, or None when it has none."""
    grids = {op.grid.root_reference.data: op for op in fn.walk() if isinstance(op, shard.ShardingOp)}
    if not grids:
        return None
    name, first = next(iter(grids.items()))
    if len(grids) > 1:
        others = ", ".join(f"@{g}" for g in grids)
        raise PassError(f"uses several grids ({others}); one function runs on one grid", first)
    grid = SymbolTable.lookup_symbol(module, name)
    if not isinstance(grid, shard.GridOp):
        raise PassError(f"refers to grid @{name}, which is not a shard.grid of the module", first)
    return _Grid(name, shard.grid_shape(grid))


def partition_function(fn: func.FuncOp, module: ModuleOp) -> bool:
    """Partition `fn` in place; False when it has no sharding ops (left alone)."""
    if len(fn.body.blocks) != 1:
        return False
    inline_calls(fn, module)
    grid = _grid_of(fn, module)
    if grid is None:
        return False
    partitioner = _Partitioner(fn, grid)
    args, results = partitioner.run()
    old = fn.body.blocks[0]
    fn.body.detach_block(old)
    fn.body.add_block(partitioner.block)
    old.erase(safe_erase=False)
    # Values made only to be resharded (a global broadcast sliced at its source) and
    # pending reductions nothing returns are dead now.
    region_dce(fn.body)
    fn.function_type = FunctionType.from_lists(
        [a.type for a in partitioner.block.args],
        [v.type for v in cast(func.ReturnOp, partitioner.block.last_op).operands],
    )
    fn.attributes["shard.grid"] = FlatSymbolRefAttr(grid.name)
    fn.attributes["shard.arg_split_axes"] = ArrayAttr([shard.axes_array_attr(s.split) for s in args])
    fn.attributes["shard.result_split_axes"] = ArrayAttr([shard.axes_array_attr(s.split) for s in results])
    return True


@dataclass(frozen=True)
class ShardPartitionPass(ModulePass):
    """Partition functions with sharding annotations into per-device (SPMD) programs with collectives."""

    name = "shard-partition"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [f for f in op.ops if isinstance(f, func.FuncOp)]
        called = {c.callee.root_reference.data for f in functions for c in f.walk() if isinstance(c, func.CallOp)}
        # Callees are inlined into their callers and partitioned there, in their context.
        for fn in functions:
            if fn.sym_name.data not in called:
                partition_function(fn, op)


__all__ = ["ShardPartitionPass", "inline_calls", "partition_function"]
