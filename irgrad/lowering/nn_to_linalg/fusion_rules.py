"""The rules and the builder of one fusion, for `linalg-fuse-elementwise`.

Queries on generics (which producer may go into which consumer: docs/design/cpu-pipeline.md,
"irgrad/lowering/nn_to_linalg/linalg_fuse_elementwise.py") and `fuse_fill` / `fuse_generic`,
which build the generic that results from one fusion. The pass (linalg_fuse_elementwise.py)
and the chain driver (fusion_chain.py) apply them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    IndexType,
    IntegerAttr,
    ShapedType,
    TensorType,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

# Ops whose repetition at every point of a broadcast costs more than storing their result.
_EXPENSIVE_ARITH = frozenset(
    {
        "arith.divf",
        "arith.remf",
        "arith.divsi",
        "arith.divui",
        "arith.remsi",
        "arith.remui",
        "arith.floordivsi",
        "arith.ceildivsi",
        "arith.ceildivui",
    }
)
# Math ops that are a few instructions, unlike the transcendental functions.
_CHEAP_MATH = frozenset(
    {
        "math.absf",
        "math.absi",
        "math.copysign",
        "math.ceil",
        "math.floor",
        "math.round",
        "math.roundeven",
        "math.trunc",
        "math.fma",
    }
)


# ---------------------------------------------------------------------------------------------
# Queries on generics
# ---------------------------------------------------------------------------------------------


def indexing_maps(op: linalg.GenericOp) -> list[AffineMap]:
    return [m.data for m in op.indexing_maps]


def on_tensors(op: linalg.GenericOp) -> bool:
    return len(op.res) == len(op.outputs) and all(isinstance(v.type, TensorType) for v in op.outputs)


def all_parallel(op: linalg.GenericOp) -> bool:
    return all(str(t.data) == "parallel" for t in op.iterator_types)


def is_permutation(amap: AffineMap) -> bool:
    return (
        amap.num_symbols == 0
        and len(amap.results) == amap.num_dims
        and amap.is_projected_permutation()
    )


def body_ops(op: linalg.GenericOp) -> list[Operation]:
    """The ops of a generic's body, without its `linalg.yield`."""
    return list(op.body.block.ops)[:-1]


def is_data_movement(op: linalg.GenericOp) -> bool:
    """True when the body computes nothing: it yields input block arguments only."""
    block = op.body.block
    inputs = block.args[: len(op.inputs)]
    terminator = block.last_op
    return (
        len(block.ops) == 1
        and terminator is not None
        and all(v in inputs for v in terminator.operands)
    )


def is_cheap(
    op: linalg.GenericOp,
    limit: int,
    only_user: Callable[[linalg.GenericOp, linalg.GenericOp], bool] | None = None,
) -> bool:
    """A producer worth recomputing at every point of a broadcast (rule 6).

    Counts its body and the bodies of the producers that fusion will bring into it later
    (consumers fuse their producers one at a time, last op first), so a long chain of cheap
    ops cannot slip through a link at a time. `only_user(producer, consumer)` says whether
    fusion may bring a producer in (`sole_consumer`, unless fusion_chain.py knows better).
    """
    only_user = only_user or sole_consumer
    count = 0
    pending, seen = [op], {op}
    while pending:
        generic = pending.pop()
        for body_op in body_ops(generic):
            for inner in body_op.walk():
                if isinstance(inner, arith.ConstantOp):
                    continue
                count += 1
                if count > limit or _is_expensive(inner):
                    return False
        for value in generic.inputs:
            producer = value.owner
            if (
                isinstance(producer, linalg.GenericOp)
                and producer not in seen
                and only_user(producer, generic)
            ):
                seen.add(producer)
                pending.append(producer)
    return True


def sole_consumer(
    producer: linalg.GenericOp, consumer: linalg.GenericOp, ignored: Collection[Operation] = ()
) -> bool:
    """Rules 3 and 5 without the maps: `producer` can only be fused into `consumer` (uses
    by the ops in `ignored` do not count)."""
    return (
        len(producer.res) == 1
        and on_tensors(producer)
        and all_parallel(producer)
        and producer.parent_block() is consumer.parent_block()
        and all(use.operation is consumer or use.operation in ignored for use in producer.res[0].uses)
    )


def _is_expensive(op: Operation) -> bool:
    if op.name.startswith("math."):
        return op.name not in _CHEAP_MATH
    return op.name in _EXPENSIVE_ARITH


def recompute_factor(
    consumer: linalg.GenericOp, operand_map: AffineMap, ranges: Sequence[int | None] | None = None
) -> int:
    """How many consumer points read each element the consumer reads through `operand_map`:
    the product of the extents of the consumer loops the map does not use (`ranges`, the
    consumer's `loop_ranges`, when the caller has them)."""
    unused = operand_map.unused_dims()
    if not unused:
        return 1
    if ranges is None:
        ranges = loop_ranges(consumer)
    factor = 1
    for d in unused:
        factor *= ranges[d] if ranges[d] is not None else 2
    return factor


def loop_ranges(op: linalg.GenericOp) -> list[int | None]:
    """Each loop's extent, from an operand dimension indexed by that loop alone."""
    ranges: list[int | None] = [None] * len(op.iterator_types)
    for value, amap in zip((*op.inputs, *op.outputs), indexing_maps(op)):
        if not isinstance(value.type, ShapedType):
            continue
        shape = value.type.get_shape()
        for dim, expr in enumerate(amap.results):
            if isinstance(expr, AffineDimExpr) and ranges[expr.position] is None:
                ranges[expr.position] = shape[dim]
    return ranges


def loops_bounded(maps: Sequence[AffineMap], num_loops: int) -> bool:
    """Rule 7: every loop appears alone as a result of some map."""
    covered = {e.position for m in maps for e in m.results if isinstance(e, AffineDimExpr)}
    return covered >= set(range(num_loops))


def materializable(expr: AffineExpr) -> bool:
    """An index expression `materialize` can build from arith ops on `index`."""
    if isinstance(expr, AffineDimExpr | AffineConstantExpr):
        return True
    if isinstance(expr, AffineBinaryOpExpr) and expr.kind in (
        AffineBinaryOpKind.Add,
        AffineBinaryOpKind.Mul,
    ):
        return materializable(expr.lhs) and materializable(expr.rhs)
    return False


def materialize(expr: AffineExpr, ops: list[Operation]) -> SSAValue:
    """`expr` over the consumer's loop indices as `linalg.index` and arith ops, appended to
    `ops` (only the forms `materializable` accepts)."""
    if isinstance(expr, AffineDimExpr):
        op: Operation = linalg.IndexOp(expr.position)
    elif isinstance(expr, AffineConstantExpr):
        op = arith.ConstantOp(IntegerAttr(expr.value, IndexType()))
    else:
        assert isinstance(expr, AffineBinaryOpExpr)
        lhs, rhs = materialize(expr.lhs, ops), materialize(expr.rhs, ops)
        op = arith.AddiOp(lhs, rhs) if expr.kind == AffineBinaryOpKind.Add else arith.MuliOp(lhs, rhs)
    ops.append(op)
    return op.results[0]


# ---------------------------------------------------------------------------------------------
# Building the fused generic
# ---------------------------------------------------------------------------------------------


@dataclass
class FusedInput:
    """An input of the op being built: its value, its map, and the block argument that reads
    it in the body it comes from (the consumer's or the producer's)."""

    value: SSAValue
    map: AffineMap
    source_arg: BlockArgument


def select_inputs(
    inputs: Sequence[FusedInput], output_maps: Sequence[AffineMap], num_loops: int
) -> list[int] | None:
    """For each input, the index of the input that replaces it: itself when kept, the first
    twin (same value, same map) when merged, -1 when dropped as unused. None when a loop of
    the op would be unbounded even with every input (rule 7)."""
    if not loops_bounded([*(i.map for i in inputs), *output_maps], num_loops):
        return None
    # One pass with a table of first reads, and a count per loop of the maps bounding it
    # (rule 7 for a drop), so a consumer of k inputs costs k, not k * k.
    first: dict[tuple[SSAValue, AffineMap], int] = {}
    target = [first.setdefault((item.value, item.map), n) for n, item in enumerate(inputs)]
    groups: dict[int, list[int]] = {}
    for n, rep in enumerate(target):
        groups.setdefault(rep, []).append(n)
    bounded_by = [0] * num_loops
    loops_of: dict[int, set[int]] = {}
    for n, amap in [*((n, inputs[n].map) for n in groups), *((-1, m) for m in output_maps)]:
        loops = {e.position for e in amap.results if isinstance(e, AffineDimExpr) and e.position < num_loops}
        loops_of[n] = loops
        for d in loops:
            bounded_by[d] += 1
    for n, group in groups.items():  # in order of first appearance
        if any(inputs[k].source_arg.uses for k in group):
            continue
        # Every loop was bounded before; dropping n leaves those it alone bounded unbounded.
        if all(bounded_by[d] >= 2 for d in loops_of[n]):
            for d in loops_of[n]:
                bounded_by[d] -= 1
            for k in group:
                target[k] = -1
    return target


class FusedBuilder:
    """Turns the consumer's body, in place, into the body of the op being built.

    The consumer's block is reused, so a fusion costs the size of the producer's body, not
    the size of the fused chain. Arguments for the producer's kept inputs are inserted where
    the fused operand's argument is; the producer's ops go in front of the consumer's.
    """

    def __init__(
        self,
        consumer: linalg.GenericOp,
        inputs: list[FusedInput],
        target: list[int],
        fused_arg: BlockArgument | None = None,
    ):
        self.consumer = consumer
        self.block = consumer.body.block
        self.inputs = inputs
        self.target = target
        self.fused_arg = fused_arg
        first = self.block.first_op
        assert first is not None
        self.front = first
        # The argument of each kept input, new ones for those the consumer's body lacks.
        arg_of: dict[int, BlockArgument] = {}
        position = fused_arg.index if fused_arg is not None else 0
        for n, item in enumerate(inputs):
            if target[n] != n:
                continue
            if item.source_arg.block is self.block:
                arg_of[n] = item.source_arg
            else:
                arg_of[n] = self.block.insert_arg(item.source_arg.type, position)
                position += 1
        self.arg_of = arg_of
        self.mapper: dict[SSAValue, SSAValue] = {}
        for n, item in enumerate(inputs):
            if target[n] >= 0 and item.source_arg.block is not self.block:
                self.mapper[item.source_arg] = arg_of[target[n]]

    def insert(self, ops: Sequence[Operation], sources: Sequence[SSAValue], move: bool) -> None:
        """Insert `ops` in front of the consumer's, moved (their body dies) or cloned, with the
        values in `sources` (the block arguments and index values of their body) read through
        the mapper."""
        if not move:
            for op in ops:
                self.block.insert_op_before(op.clone(self.mapper), self.front)
            return
        for value in sources:
            if value in self.mapper:
                value.replace_all_uses_with(self.mapper[value])
        for op in ops:
            if op.parent is not None:
                op.detach()
            self.block.insert_op_before(op, self.front)

    def finish(self, replacement: SSAValue | None = None) -> linalg.GenericOp:
        """The new generic; `replacement` takes the place of the fused operand's argument."""
        if self.fused_arg is not None:
            assert replacement is not None
            self.fused_arg.replace_all_uses_with(replacement)
            self.block.erase_arg(self.fused_arg)
        for n, item in enumerate(self.inputs):
            if item.source_arg.block is not self.block or self.target[n] == n:
                continue
            if self.target[n] >= 0:
                item.source_arg.replace_all_uses_with(self.arg_of[self.target[n]])
            self.block.erase_arg(item.source_arg)
        consumer = self.consumer
        kept = [item for n, item in enumerate(self.inputs) if self.target[n] == n]
        outs_maps = output_maps(consumer)
        return linalg.GenericOp(
            [i.value for i in kept],
            list(consumer.outputs),
            Region(consumer.body.detach_block(self.block)),
            [AffineMapAttr(m) for m in (*(i.map for i in kept), *outs_maps)],
            consumer.iterator_types,
            [r.type for r in consumer.res],
            consumer.doc,
            consumer.library_call,
        )


def consumer_inputs(consumer: linalg.GenericOp) -> list[FusedInput]:
    maps = indexing_maps(consumer)
    args = consumer.body.block.args
    return [FusedInput(v, maps[n], args[n]) for n, v in enumerate(consumer.inputs)]


def output_maps(op: linalg.GenericOp) -> list[AffineMap]:
    return indexing_maps(op)[len(op.inputs) :]


def fuse_fill(consumer: linalg.GenericOp, index: int, fill: linalg.FillOp) -> linalg.GenericOp | None:
    """Rule 2: the consumer with its input `index`, a fill of a constant, as that constant."""
    (value,) = fill.inputs
    if not isinstance(value.owner, arith.ConstantOp):
        return None
    if value.type != consumer.body.block.args[index].type:
        return None
    old_inputs = consumer_inputs(consumer)
    inputs = [item for n, item in enumerate(old_inputs) if n != index]
    target = select_inputs(inputs, output_maps(consumer), len(consumer.iterator_types))
    if target is None:
        return None
    builder = FusedBuilder(consumer, inputs, target, old_inputs[index].source_arg)
    constant = value.owner.clone()
    builder.insert([constant], [], move=True)
    return builder.finish(constant.result)


def fuse_generic(
    consumer: linalg.GenericOp, index: int, producer: linalg.GenericOp
) -> linalg.GenericOp | None:
    """The consumer with the producer of its input `index` fused in (rules 3 and 7); None when
    the maps do not allow it. The producer's body is moved when the consumer reads it through
    this operand only (the producer dies), cloned otherwise."""
    (producer_out_map,) = output_maps(producer)
    if not is_permutation(producer_out_map):
        return None
    inverse = producer_out_map.inverse_permutation()
    assert inverse is not None
    old_inputs = consumer_inputs(consumer)
    operand_map = old_inputs[index].map
    # The producer's loop indices as functions of the consumer's.
    to_producer = inverse.compose(operand_map)
    p_body = body_ops(producer)
    p_args = producer.body.block.args
    p_in = len(producer.inputs)
    has_index = any(isinstance(o, linalg.IndexOp) for op in p_body for o in op.walk())
    if has_index and not all(materializable(e) for e in to_producer.results):
        return None

    # The producer's inputs take the place of the fused operand, as in MLIR.
    p_maps = indexing_maps(producer)
    fused_in = [FusedInput(producer.inputs[j], p_maps[j].compose(to_producer), p_args[j]) for j in range(p_in)]
    if p_args[p_in].uses:
        # A body reading its own init reads the init tensor, at the same element.
        fused_in.append(FusedInput(producer.outputs[0], operand_map, p_args[p_in]))
    inputs = [*old_inputs[:index], *fused_in, *old_inputs[index + 1 :]]
    target = select_inputs(inputs, output_maps(consumer), len(consumer.iterator_types))
    if target is None:
        return None

    builder = FusedBuilder(consumer, inputs, target, old_inputs[index].source_arg)
    move = producer.res[0].has_one_use()
    for op in p_body:
        if isinstance(op, linalg.IndexOp):
            index_ops: list[Operation] = []
            builder.mapper[op.result] = materialize(to_producer.results[op.dim.value.data], index_ops)
            builder.insert(index_ops, [], move=True)
    sources = [*p_args, *(op.result for op in p_body if isinstance(op, linalg.IndexOp))]
    builder.insert([op for op in p_body if not isinstance(op, linalg.IndexOp)], sources, move)
    p_yield = producer.body.block.last_op
    assert p_yield is not None
    # Read after a move, which rewrote the yield's operand if it was a block argument.
    yielded = p_yield.operands[0]
    return builder.finish(builder.mapper.get(yielded, yielded))


def deduplicate(consumer: linalg.GenericOp) -> linalg.GenericOp | None:
    """The generic with duplicate inputs merged and unused ones dropped; None if none is."""
    inputs = consumer_inputs(consumer)
    target = select_inputs(inputs, output_maps(consumer), len(consumer.iterator_types))
    if target is None or target == list(range(len(inputs))):
        return None
    return FusedBuilder(consumer, inputs, target).finish()


def may_fuse(
    consumer: linalg.GenericOp,
    index: int,
    producer: linalg.GenericOp,
    recompute_limit: int,
    max_body_ops: int | None = None,
) -> bool:
    """Rules 3 to 6 and 8 (the map rules, 3 and 7, are checked while fusing)."""
    if len(producer.res) != 1 or not on_tensors(producer) or not all_parallel(producer):
        return False
    if is_data_movement(producer):
        return True
    if not sole_consumer(producer, consumer):
        return False
    if max_body_ops is not None and len(body_ops(consumer)) + len(body_ops(producer)) > max_body_ops:
        return False
    operand_map = indexing_maps(consumer)[index]
    if recompute_factor(consumer, operand_map) > 1:
        return is_cheap(producer, recompute_limit)
    return True
