"""All the fusions into one consumer, for `linalg-fuse-elementwise`, built once.

The pass fuses a consumer's producers one at a time, and a fusion written as a rewrite builds
a new generic with every input of the consumer and checks every input again: for a consumer
that gathers k inputs along a chain of n producers (a gradient reading each saved activation)
that is n * k work. `ChainFusion` makes the same fusions in the same order on the consumer's
body block and a table of its inputs, and builds the generic once at the end. Producers that
a fusion kills stay in place, marked dead (their uses do not count), until then. An input
that a rule refused is not checked again until its producer loses its last other user;
inputs refused for a reason that may change each fusion (rule 6's cost) are checked every
time. Only for consumers whose outputs bound every loop: rule 7 then never refuses a fusion
and never keeps an unused input, so nothing else needs looking at again; the pass rebuilds
the others fusion by fusion (fuse_step).
"""

from __future__ import annotations

from collections import Counter

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import AffineMapAttr, DenseArrayBase, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.rewriter import Rewriter

from irgrad.lowering.nn_to_linalg.fusion_rules import (
    FusedInput,
    all_parallel,
    body_ops,
    consumer_inputs,
    indexing_maps,
    is_cheap,
    is_permutation,
    loop_ranges,
    loops_bounded,
    materializable,
    materialize,
    on_tensors,
    output_maps,
    recompute_factor,
    select_inputs,
    sole_consumer,
)

_ERASABLE = (linalg.GenericOp, linalg.FillOp, tensor.EmptyOp, arith.ConstantOp)
_FOREVER = None
"""A refusal that nothing can change (the producer's kind, its maps)."""
_MANY = 8
"""Live uses counted exactly up to this many: a value every generic uses (the one
`tensor.empty` cse leaves) is not walked in full for each consumer."""


class _Producer:
    """What the rules ask of a producer generic, read once: xDSL's `op.inputs` and
    `op.outputs` decode the operand segment sizes at every read, and a producer is looked
    at by `_may_fuse` (often more than once) and then by `_fuse_generic`. Valid while the
    producer is unchanged: a chain fusion rewrites only the consumer's block, and a
    producer whose body it moves is dead, never looked at again."""

    __slots__ = ("inputs", "outputs", "maps", "result", "body", "fusable", "inverse", "has_index",
                 "data_movement")

    def __init__(self, op: linalg.GenericOp):
        self.inputs, self.outputs = _inputs_and_outputs(op)
        results = op.results
        self.maps = indexing_maps(op)
        self.result = results[0] if len(results) == 1 else None
        block = op.body.block
        self.body = body_ops(op)
        # on_tensors and all_parallel with one result: rule 3's kind of producer.
        self.fusable = (
            self.result is not None
            and len(self.outputs) == 1
            and isinstance(self.outputs[0].type, TensorType)
            and all_parallel(op)
        )
        self.inverse: AffineMap | None = None
        self.has_index = False
        self.data_movement = False
        if self.fusable:
            (out_map,) = self.maps[len(self.inputs) :]
            if is_permutation(out_map):
                self.inverse = out_map.inverse_permutation()
                assert self.inverse is not None
            self.has_index = any(
                isinstance(o, linalg.IndexOp)
                for body_op in self.body
                for o in (body_op.walk() if body_op.regions else (body_op,))
            )
            # is_data_movement: the body is its terminator, which yields input arguments.
            terminator = block.last_op
            if not self.body and terminator is not None:
                input_args = block.args[: len(self.inputs)]
                self.data_movement = all(v in input_args for v in terminator.operands)


def _inputs_and_outputs(op: linalg.GenericOp) -> tuple[tuple[SSAValue, ...], tuple[SSAValue, ...]]:
    """`(op.inputs, op.outputs)` from one read of the operand segment sizes (each of the two
    descriptors decodes them again)."""
    sizes = op.properties.get("operandSegmentSizes")
    if not isinstance(sizes, DenseArrayBase):
        return tuple(op.inputs), tuple(op.outputs)
    num_inputs, num_outputs = sizes.get_values()
    operands = tuple(op.operands)
    return operands[:num_inputs], operands[num_inputs : num_inputs + num_outputs]


def _move_arg(arg: BlockArgument, position: int) -> None:
    """Move the block argument `arg` to `position` (xDSL has insert and erase only)."""
    block = arg.block
    args = list(block.args)
    del args[arg.index]
    args.insert(position, arg)
    for k in range(min(position, arg.index), max(position, arg.index) + 1):
        args[k].index = k
    block._args = tuple(args)  # pyright: ignore[reportPrivateUsage]


class ChainFusion:
    """The fusions into one consumer generic, on its block, with one generic built at the end."""

    @staticmethod
    def applies(op: linalg.GenericOp) -> bool:
        """On tensors, outputs bounding every loop, and no duplicate or unused input."""
        if not on_tensors(op) or not loops_bounded(output_maps(op), len(op.iterator_types)):
            return False
        inputs = consumer_inputs(op)
        return select_inputs(inputs, output_maps(op), len(op.iterator_types)) == list(range(len(inputs)))

    def __init__(self, op: linalg.GenericOp, recompute_limit: int, max_body_ops: int | None = None):
        self.op = op
        self.limit = recompute_limit
        self.max_body_ops = max_body_ops
        self.block = op.body.block
        self.body_size = len(body_ops(op))
        self.parent_block = op.parent_block()
        self.ranges = loop_ranges(op)
        self.num_inputs = len(op.inputs)
        self.value_of: dict[BlockArgument, SSAValue] = {}
        self.map_of: dict[BlockArgument, AffineMap] = {}
        self.read_by: dict[tuple[SSAValue, AffineMap], BlockArgument] = {}
        self.count: Counter[SSAValue] = Counter()
        for item in consumer_inputs(op):
            self._add(item.source_arg, item.value, item.map)
        self.dead: set[Operation] = {op}
        self.killed: list[Operation] = []
        self.live: dict[SSAValue, int] = {}
        self.at_least: set[SSAValue] = set()  # counts in `live` that are lower bounds
        self.refused: dict[BlockArgument, SSAValue | None] = {}
        self.refused_on: dict[SSAValue, list[BlockArgument]] = {}
        self.recheck: set[BlockArgument] = set()
        self.producers: dict[Operation, _Producer] = {}
        self.start = 0
        self.fused = False

    # -- the table of inputs ---------------------------------------------------------------

    def _add(self, arg: BlockArgument, value: SSAValue, amap: AffineMap) -> None:
        self.value_of[arg] = value
        self.map_of[arg] = amap
        self.read_by[(value, amap)] = arg
        self.count[value] += 1

    def _remove(self, arg: BlockArgument) -> None:
        value, amap = self.value_of.pop(arg), self.map_of.pop(arg)
        del self.read_by[(value, amap)]
        self.count[value] -= 1
        self.refused.pop(arg, None)
        self.recheck.discard(arg)

    def _live_uses(self, value: SSAValue) -> int:
        """How many uses of `value` the rewriting pass would see, besides the consumer's:
        counted once, then kept up to date as ops die (`_kill`) or are cloned in."""
        count = self.live.get(value)
        return self._count(value) if count is None else count

    def _count(self, value: SSAValue) -> int:
        count = 0
        self.at_least.discard(value)
        for use in value.uses:
            if use.operation not in self.dead:
                count += 1
                if count > _MANY:
                    self.at_least.add(value)
                    break
        self.live[value] = count
        return count

    def _kill(self, op: Operation) -> None:
        """`op` erased, as the rewriting pass would have: its uses stop counting, and the
        inputs refused because their producer had another user are looked at again."""
        self.killed.append(op)
        for inner in op.walk():
            self.dead.add(inner)
            for value in inner.operands:
                if value not in self.live:
                    continue
                self.live[value] -= 1
                if value in self.at_least and self.live[value] <= _MANY:
                    self._count(value)
                if self.live[value]:
                    continue
                for arg in self.refused_on.pop(value, ()):
                    if arg in self.value_of and self.refused.get(arg) is value:
                        del self.refused[arg]
                        self.start = min(self.start, arg.index)

    def _erase_dead(self, op: Operation) -> None:
        if not isinstance(op, _ERASABLE) or op in self.dead:
            return
        if any(self.count[r] or self._live_uses(r) for r in op.results):
            return
        operands = list(op.operands)
        self._kill(op)
        for value in operands:
            if isinstance(value.owner, Operation):
                self._erase_dead(value.owner)

    # -- which input next ---------------------------------------------------------------------

    def _producer(self, op: linalg.GenericOp) -> _Producer:
        facts = self.producers.get(op)
        if facts is None:
            facts = self.producers[op] = _Producer(op)
        return facts

    def _refuse(self, arg: BlockArgument, used: SSAValue | None) -> None:
        """Skip `arg` until `used` (its producer's result) has no other user; for good if None."""
        self.refused[arg] = used
        if used is not None:
            self.refused_on.setdefault(used, []).append(arg)

    def _may_fuse(self, arg: BlockArgument) -> bool:
        """fuse_step's rules for the input `arg`, its refusal recorded."""
        producer = self.value_of[arg].owner
        if isinstance(producer, linalg.FillOp):
            (value,) = producer.inputs
            if isinstance(value.owner, arith.ConstantOp) and value.type == arg.type:
                return True
            self._refuse(arg, _FOREVER)
            return False
        if not isinstance(producer, linalg.GenericOp):
            self._refuse(arg, _FOREVER)
            return False
        facts = self._producer(producer)
        if not facts.fusable:
            self._refuse(arg, _FOREVER)
            return False
        if not self._maps_allow(arg, facts):
            self._refuse(arg, _FOREVER)
            return False
        if facts.data_movement:
            return True
        if producer.parent_block() is not self.parent_block:
            self._refuse(arg, _FOREVER)
            return False
        assert facts.result is not None
        if self._live_uses(facts.result):
            self._refuse(arg, facts.result)
            return False
        if self.max_body_ops is not None and self.body_size + len(facts.body) > self.max_body_ops:
            self._refuse(arg, _FOREVER)  # bodies only grow
            return False
        if recompute_factor(self.op, self.map_of[arg], self.ranges) > 1 and not is_cheap(
            producer, self.limit, self._only_user
        ):
            self.recheck.add(arg)
            return False
        self.recheck.discard(arg)
        return True

    def _only_user(self, producer: linalg.GenericOp, consumer: linalg.GenericOp) -> bool:
        """sole_consumer as the rewriting pass sees it: uses by dead ops gone, and the
        consumer's reads of the table's inputs as real uses."""
        return sole_consumer(producer, consumer, self.dead) and not self.count[producer.res[0]]

    def _maps_allow(self, arg: BlockArgument, facts: _Producer) -> bool:
        """fuse_generic's map rules (3; 7 always holds here)."""
        if facts.inverse is None:
            return False
        if not facts.has_index:
            return True
        to_producer = facts.inverse.compose(self.map_of[arg])
        return all(materializable(e) for e in to_producer.results)

    def _next(self) -> BlockArgument | None:
        """The first input whose producer may be fused in, as fuse_step would pick it."""
        args = self.block.args
        early = sorted(a.index for a in self.recheck if a.index < self.start)
        for index in [*early, *range(self.start, self.num_inputs)]:
            arg = args[index]
            if arg in self.refused:
                continue
            if self._may_fuse(arg):
                return arg
        self.start = self.num_inputs
        return None

    # -- one fusion ---------------------------------------------------------------------------

    def run(self) -> None:
        """Every fusion the rules allow, then the one generic that results."""
        while (arg := self._next()) is not None:
            self.fused = True
            producer = self.value_of[arg].owner
            self.start = arg.index
            if isinstance(producer, linalg.FillOp):
                self._fuse_fill(arg, producer)
            else:
                assert isinstance(producer, linalg.GenericOp)
                self._fuse_generic(arg, producer)
            self._erase_dead(producer)
        if self.fused:
            self._build()

    def _fuse_fill(self, arg: BlockArgument, fill: linalg.FillOp) -> None:
        """fuse_fill: the constant cloned in front of the body, in place of the argument."""
        (value,) = fill.inputs
        assert isinstance(value.owner, arith.ConstantOp)
        constant = value.owner.clone()
        front = self.block.first_op
        assert front is not None
        self.block.insert_op_before(constant, front)
        self.body_size += 1
        self._replace_arg(arg, constant.result)

    def _replace_arg(self, arg: BlockArgument, replacement: SSAValue) -> None:
        self._remove(arg)
        self.num_inputs -= 1
        arg.replace_all_uses_with(replacement)
        self.block.erase_arg(arg)

    def _fuse_generic(self, arg: BlockArgument, producer: linalg.GenericOp) -> None:
        """fuse_generic and its builder, on the block: the producer's inputs in the place of
        the fused one (merged with a read of the same value through the same map, dropped when
        unused), its body in front of the consumer's."""
        index = arg.index
        operand_map = self.map_of[arg]
        facts = self._producer(producer)
        inverse = facts.inverse
        assert inverse is not None and facts.result is not None
        to_producer = inverse.compose(operand_map)
        p_body = facts.body
        p_args = producer.body.block.args
        p_inputs = facts.inputs
        p_in = len(p_inputs)
        p_maps = facts.maps
        fused_in = [FusedInput(p_inputs[j], p_maps[j].compose(to_producer), p_args[j]) for j in range(p_in)]
        if p_args[p_in].uses:
            fused_in.append(FusedInput(facts.outputs[0], operand_map, p_args[p_in]))
        result = facts.result
        move = self.count[result] == 1 and not self._live_uses(result)
        self._remove(arg)  # the fused operand leaves the table (its argument goes last)

        # Which argument each new input reads through: an earlier twin's, or a new one.
        mapper: dict[SSAValue, SSAValue] = {}
        groups: list[tuple[FusedInput, list[FusedInput], BlockArgument | None]] = []
        new_reads: dict[tuple[SSAValue, AffineMap], int] = {}
        for item in fused_in:
            key = (item.value, item.map)
            twin = self.read_by.get(key)
            if twin is not None and twin.index < index:
                mapper[item.source_arg] = twin
            elif key in new_reads:
                groups[new_reads[key]][1].append(item)
            else:
                new_reads[key] = len(groups)
                groups.append((item, [item], twin))  # a later twin merges into it
        position = index
        merged: list[tuple[BlockArgument, BlockArgument]] = []
        for first, group, later in groups:
            if later is None and not any(i.source_arg.uses for i in group):
                continue  # unused: dropped (outputs bound every loop)
            if later is not None and later.name_hint is None and later.type == first.source_arg.type:
                # The rewrite gives the later twin's uses to a new argument here; moving the
                # twin here prints the same and costs no walk over its uses.
                _move_arg(later, position)
                new_arg = later
            else:
                new_arg = self.block.insert_arg(first.source_arg.type, position)
                if later is not None:
                    self._remove(later)
                    self.num_inputs -= 1
                    merged.append((later, new_arg))
                self._add(new_arg, first.value, first.map)
                self.num_inputs += 1
            position += 1
            for item in group:
                mapper[item.source_arg] = new_arg

        front = self.block.first_op
        assert front is not None
        for op in p_body:
            if isinstance(op, linalg.IndexOp):
                index_ops: list[Operation] = []
                mapper[op.result] = materialize(to_producer.results[op.dim.value.data], index_ops)
                for index_op in index_ops:
                    self.block.insert_op_before(index_op, front)
                self.body_size += len(index_ops)
        ops = [op for op in p_body if not isinstance(op, linalg.IndexOp)]
        self.body_size += len(ops)
        if move:
            sources = [*p_args, *(op.result for op in p_body if isinstance(op, linalg.IndexOp))]
            for value in sources:
                if value in mapper:
                    value.replace_all_uses_with(mapper[value])
            for op in ops:
                if op.parent is not None:
                    op.detach()
                self.block.insert_op_before(op, front)
        else:
            for op in ops:
                clone = op.clone(mapper)
                self.block.insert_op_before(clone, front)
                for inner in clone.walk():
                    for value in inner.operands:
                        if value in self.live:
                            self.live[value] += 1
        p_yield = producer.body.block.last_op
        assert p_yield is not None
        yielded = p_yield.operands[0]
        replacement = mapper.get(yielded, yielded)
        self.live.pop(replacement, None)  # it takes the argument's uses: counted again if asked
        self.at_least.discard(replacement)
        self.num_inputs -= 1
        arg.replace_all_uses_with(replacement)
        self.block.erase_arg(arg)
        for old, new in merged:
            old.replace_all_uses_with(new)
            self.block.erase_arg(old)

    def _build(self) -> None:
        """The generic of the table's inputs and the block, in the consumer's place; the dead
        producers erased."""
        op = self.op
        args = self.block.args[: self.num_inputs]
        values = [self.value_of[a] for a in args]
        maps = [self.map_of[a] for a in args]
        fused = linalg.GenericOp(
            values,
            list(op.outputs),
            Region(op.body.detach_block(self.block)),
            [AffineMapAttr(m) for m in (*maps, *output_maps(op))],
            op.iterator_types,
            [r.type for r in op.res],
            op.doc,
            op.library_call,
        )
        Rewriter.replace_op(op, fused)
        for dead in self.killed:
            Rewriter.erase_op(dead)


__all__ = ["ChainFusion"]
