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

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, FlatSymbolRefAttr, FunctionType, ModuleOp, TensorType, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.traits import IsTerminator, SymbolTable
from xdsl.utils.exceptions import VerifyException

from irgrad.diagnostics import PassError, location_of
from irgrad.dialects import nn, shard
from irgrad.transforms.shard import rules as shard_rules
from irgrad.transforms.shard.region_partition import RegionPartitioner, Scope, is_tensor
from irgrad.transforms.shard.reshard import Resharder, local_type


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


class _Partitioner(RegionPartitioner):
    """Rewrites one function; see the module docstring for the rules."""

    def __init__(self, fn: func.FuncOp, grid: _Grid):
        self.fn = fn
        self.grid = grid
        self.block = Block()
        self.scope = Scope(self.block, None, False, set(), {})
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

    def _cached(self, scope: Scope, key: tuple[SSAValue, shard.Sharding]) -> SSAValue | None:
        """A reshard of `key` made in `scope` or a block enclosing it (so it dominates `scope`)."""
        s: Scope | None = scope
        while s is not None:
            if key in s.cache:
                return s.cache[key]
            s = s.parent
        return None

    def _home(self, value: SSAValue) -> Scope:
        """Where `value`'s reshards are emitted: the current block, or for a value defined
        outside a loop body, the block around the loop (hoisted: resharded once)."""
        scope = self.scope
        while value not in scope.defined and scope.hoist and scope.parent is not None:
            scope = scope.parent
        return scope

    def get(self, value: SSAValue, target: shard.Sharding) -> SSAValue:
        """The local value of global `value` in sharding `target` (collectives emitted once)."""
        if not is_tensor(value):
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
            if is_tensor(arg):
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
            # A result's collective (a pending sum's all-reduce) points at the user's line that
            # made the value, not at the return, which has no line of its own.
            owner = v.owner
            located = isinstance(owner, Operation) and location_of(owner.location) is not None
            self.location = owner.location if located else ret.location
            if is_tensor(v):
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
                if is_tensor(op.src):
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

    def plan(self, op: Operation) -> shard_rules.Plan:
        if isinstance(op, shard_rules.WITH_INDEX_OPERANDS):
            current = [self.sharding[v] if is_tensor(v) else shard.Sharding(()) for v in op.operands]
            return shard_rules.RULES[type(op)](op, current)
        tensors = all(is_tensor(v) for v in (*op.operands, *op.results))
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
                self.define(old, res, shard.Sharding.replicated(len(res.type.get_shape())) if is_tensor(res) else None)
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
        if not is_tensor(value):
            return self.local[value]
        return self.get(value, shard.Sharding.replicated(len(cast(TensorType, value.type).get_shape())))


_NO_PLAN = shard_rules.Plan((), shard.Sharding(()))


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
