"""`linalg-fuse-elementwise`: producer-consumer fusion of `linalg.generic`s on tensors.

MLIR's ElementwiseOpFusion for irgrad's stage "linalg": a generic that reads, as one of its
inputs, the result of an all-parallel generic (the producer) absorbs the producer's body, so a
chain of elementwise ops becomes one generic, hence one loop nest after bufferize and
linalg-to-loops, and the intermediate tensors disappear. The fused op computes every element
with the same scalar ops in the same order as the two ops did, so results are bit-identical.

The rules, in short: only `linalg.generic` consumers on tensors, through an input operand; a
fill of a constant is fused into every reader; a producer is a one-result all-parallel generic
whose output map is a permutation; pure data movement is fused into every consumer; a producer
that computes is fused only into its only user in the same block, and into a broadcasting read
only when it is cheap (`recompute-limit` ops, no transcendental op or division); every loop of
the fused op must stay bounded by some operand's map.

Cleanup: operands that are the same value read through the same map are merged, and inputs
whose block argument is unused are dropped. Producers, fills, their `tensor.empty`s and
constants left without uses are erased.
How one fusion works, and the rules in full: docs/design/cpu-pipeline.md,
"irgrad/lowering/nn_to_linalg/linalg_fuse_elementwise.py".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    ShapedType,
    TensorType,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irgrad.diagnostics import PassError
from irgrad.lowering.rewriting import walk_ops

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


def _maps(op: linalg.GenericOp) -> list[AffineMap]:
    return [m.data for m in op.indexing_maps]


def _on_tensors(op: linalg.GenericOp) -> bool:
    return len(op.res) == len(op.outputs) and all(isinstance(v.type, TensorType) for v in op.outputs)


def _all_parallel(op: linalg.GenericOp) -> bool:
    return all(str(t.data) == "parallel" for t in op.iterator_types)


def _is_permutation(amap: AffineMap) -> bool:
    return (
        amap.num_symbols == 0
        and len(amap.results) == amap.num_dims
        and amap.is_projected_permutation()
    )


def _body_ops(op: linalg.GenericOp) -> list[Operation]:
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


def is_cheap(op: linalg.GenericOp, limit: int) -> bool:
    """A producer worth recomputing at every point of a broadcast (rule 6).

    Counts its body and the bodies of the producers that fusion will bring into it later
    (consumers fuse their producers one at a time, last op first), so a long chain of cheap
    ops cannot slip through a link at a time.
    """
    count = 0
    pending, seen = [op], {op}
    while pending:
        generic = pending.pop()
        for body_op in _body_ops(generic):
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
                and _sole_consumer(producer, generic)
            ):
                seen.add(producer)
                pending.append(producer)
    return True


def _sole_consumer(producer: linalg.GenericOp, consumer: linalg.GenericOp) -> bool:
    """Rules 3 and 5 without the maps: `producer` can only be fused into `consumer`."""
    return (
        len(producer.res) == 1
        and _on_tensors(producer)
        and _all_parallel(producer)
        and producer.parent_block() is consumer.parent_block()
        and all(use.operation is consumer for use in producer.res[0].uses)
    )


def _is_expensive(op: Operation) -> bool:
    if op.name.startswith("math."):
        return op.name not in _CHEAP_MATH
    return op.name in _EXPENSIVE_ARITH


def recompute_factor(consumer: linalg.GenericOp, operand_map: AffineMap) -> int:
    """How many consumer points read each element the consumer reads through `operand_map`:
    the product of the extents of the consumer loops the map does not use."""
    unused = operand_map.unused_dims()
    if not unused:
        return 1
    ranges = loop_ranges(consumer)
    factor = 1
    for d in unused:
        factor *= ranges[d] if ranges[d] is not None else 2
    return factor


def loop_ranges(op: linalg.GenericOp) -> list[int | None]:
    """Each loop's extent, from an operand dimension indexed by that loop alone."""
    ranges: list[int | None] = [None] * len(op.iterator_types)
    for value, amap in zip((*op.inputs, *op.outputs), _maps(op)):
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


def _materializable(expr: AffineExpr) -> bool:
    """An index expression `_materialize` can build from arith ops on `index`."""
    if isinstance(expr, AffineDimExpr | AffineConstantExpr):
        return True
    if isinstance(expr, AffineBinaryOpExpr) and expr.kind in (
        AffineBinaryOpKind.Add,
        AffineBinaryOpKind.Mul,
    ):
        return _materializable(expr.lhs) and _materializable(expr.rhs)
    return False


def _materialize(expr: AffineExpr, ops: list[Operation]) -> SSAValue:
    """`expr` over the consumer's loop indices as `linalg.index` and arith ops, appended to
    `ops` (only the forms `_materializable` accepts)."""
    if isinstance(expr, AffineDimExpr):
        op: Operation = linalg.IndexOp(expr.position)
    elif isinstance(expr, AffineConstantExpr):
        op = arith.ConstantOp(IntegerAttr(expr.value, IndexType()))
    else:
        assert isinstance(expr, AffineBinaryOpExpr)
        lhs, rhs = _materialize(expr.lhs, ops), _materialize(expr.rhs, ops)
        op = arith.AddiOp(lhs, rhs) if expr.kind == AffineBinaryOpKind.Add else arith.MuliOp(lhs, rhs)
    ops.append(op)
    return op.results[0]


# ---------------------------------------------------------------------------------------------
# Building the fused generic
# ---------------------------------------------------------------------------------------------


@dataclass
class _Input:
    """An input of the op being built: its value, its map, and the block argument that reads
    it in the body it comes from (the consumer's or the producer's)."""

    value: SSAValue
    map: AffineMap
    source_arg: BlockArgument


def _select_inputs(
    inputs: Sequence[_Input], output_maps: Sequence[AffineMap], num_loops: int
) -> list[int] | None:
    """For each input, the index of the input that replaces it: itself when kept, the first
    twin (same value, same map) when merged, -1 when dropped as unused. None when a loop of
    the op would be unbounded even with every input (rule 7)."""
    if not loops_bounded([*(i.map for i in inputs), *output_maps], num_loops):
        return None
    target: list[int] = []
    for n, item in enumerate(inputs):
        twins = (k for k in range(n) if target[k] == k and _same_read(inputs[k], item))
        target.append(next(twins, n))
    for n in range(len(inputs)):
        if target[n] != n:
            continue
        group = [k for k in range(len(inputs)) if target[k] == n]
        if any(inputs[k].source_arg.uses for k in group):
            continue
        others = [inputs[k].map for k in range(len(inputs)) if target[k] == k and k != n]
        if loops_bounded([*others, *output_maps], num_loops):
            for k in group:
                target[k] = -1
    return target


def _same_read(a: _Input, b: _Input) -> bool:
    return a.value is b.value and a.map == b.map


class _FusedBuilder:
    """Turns the consumer's body, in place, into the body of the op being built.

    The consumer's block is reused, so a fusion costs the size of the producer's body, not
    the size of the fused chain. Arguments for the producer's kept inputs are inserted where
    the fused operand's argument is; the producer's ops go in front of the consumer's.
    """

    def __init__(
        self,
        consumer: linalg.GenericOp,
        inputs: list[_Input],
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
        output_maps = _output_maps(consumer)
        return linalg.GenericOp(
            [i.value for i in kept],
            list(consumer.outputs),
            Region(consumer.body.detach_block(self.block)),
            [AffineMapAttr(m) for m in (*(i.map for i in kept), *output_maps)],
            consumer.iterator_types,
            [r.type for r in consumer.res],
            consumer.doc,
            consumer.library_call,
        )


def _consumer_inputs(consumer: linalg.GenericOp) -> list[_Input]:
    maps = _maps(consumer)
    args = consumer.body.block.args
    return [_Input(v, maps[n], args[n]) for n, v in enumerate(consumer.inputs)]


def _output_maps(op: linalg.GenericOp) -> list[AffineMap]:
    return _maps(op)[len(op.inputs) :]


def fuse_fill(consumer: linalg.GenericOp, index: int, fill: linalg.FillOp) -> linalg.GenericOp | None:
    """Rule 2: the consumer with its input `index`, a fill of a constant, as that constant."""
    (value,) = fill.inputs
    if not isinstance(value.owner, arith.ConstantOp):
        return None
    if value.type != consumer.body.block.args[index].type:
        return None
    old_inputs = _consumer_inputs(consumer)
    inputs = [item for n, item in enumerate(old_inputs) if n != index]
    target = _select_inputs(inputs, _output_maps(consumer), len(consumer.iterator_types))
    if target is None:
        return None
    builder = _FusedBuilder(consumer, inputs, target, old_inputs[index].source_arg)
    constant = value.owner.clone()
    builder.insert([constant], [], move=True)
    return builder.finish(constant.result)


def fuse_generic(
    consumer: linalg.GenericOp, index: int, producer: linalg.GenericOp
) -> linalg.GenericOp | None:
    """The consumer with the producer of its input `index` fused in (rules 3 and 7); None when
    the maps do not allow it. The producer's body is moved when the consumer reads it through
    this operand only (the producer dies), cloned otherwise."""
    (producer_out_map,) = _output_maps(producer)
    if not _is_permutation(producer_out_map):
        return None
    inverse = producer_out_map.inverse_permutation()
    assert inverse is not None
    old_inputs = _consumer_inputs(consumer)
    operand_map = old_inputs[index].map
    # The producer's loop indices as functions of the consumer's.
    to_producer = inverse.compose(operand_map)
    p_body = _body_ops(producer)
    p_args = producer.body.block.args
    p_in = len(producer.inputs)
    has_index = any(isinstance(o, linalg.IndexOp) for op in p_body for o in op.walk())
    if has_index and not all(_materializable(e) for e in to_producer.results):
        return None

    # The producer's inputs take the place of the fused operand, as in MLIR.
    p_maps = _maps(producer)
    fused_in = [_Input(producer.inputs[j], p_maps[j].compose(to_producer), p_args[j]) for j in range(p_in)]
    if p_args[p_in].uses:
        # A body reading its own init reads the init tensor, at the same element.
        fused_in.append(_Input(producer.outputs[0], operand_map, p_args[p_in]))
    inputs = [*old_inputs[:index], *fused_in, *old_inputs[index + 1 :]]
    target = _select_inputs(inputs, _output_maps(consumer), len(consumer.iterator_types))
    if target is None:
        return None

    builder = _FusedBuilder(consumer, inputs, target, old_inputs[index].source_arg)
    move = producer.res[0].has_one_use()
    for op in p_body:
        if isinstance(op, linalg.IndexOp):
            index_ops: list[Operation] = []
            builder.mapper[op.result] = _materialize(to_producer.results[op.dim.value.data], index_ops)
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
    inputs = _consumer_inputs(consumer)
    target = _select_inputs(inputs, _output_maps(consumer), len(consumer.iterator_types))
    if target is None or target == list(range(len(inputs))):
        return None
    return _FusedBuilder(consumer, inputs, target).finish()


# ---------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------


def _erase_dead(op: Operation, erase: Callable[[Operation], None]) -> None:
    """Erase `op` if nothing uses it, then the producers of its operands that become dead
    (fills, `tensor.empty`s, constants, parallel generics)."""
    erasable = (linalg.GenericOp, linalg.FillOp, tensor.EmptyOp, arith.ConstantOp)
    if not isinstance(op, erasable) or any(r.uses for r in op.results):
        return
    operands = list(op.operands)
    erase(op)
    for value in operands:
        owner = value.owner
        if isinstance(owner, Operation):
            _erase_dead(owner, erase)


def fuse_step(op: linalg.GenericOp, recompute_limit: int) -> tuple[linalg.GenericOp, Operation | None] | None:
    """One rewrite of the generic `op`: its duplicate inputs merged, or else the first of its
    inputs' producers the rules allow fused in. Returns the op to put in `op`'s place and the
    fused producer (None after a merge), or None when nothing applies. `op`'s body is reused
    by the result, so `op` must be replaced by it."""
    if not _on_tensors(op):
        return None
    # Merged first, so that a producer read twice through one map is inlined once.
    if (smaller := deduplicate(op)) is not None:
        return smaller, None
    for index, operand in enumerate(op.inputs):
        producer = operand.owner
        fused: linalg.GenericOp | None = None
        if isinstance(producer, linalg.FillOp):
            fused = fuse_fill(op, index, producer)
        elif isinstance(producer, linalg.GenericOp) and may_fuse(op, index, producer, recompute_limit):
            fused = fuse_generic(op, index, producer)
        if fused is not None:
            return fused, producer
    return None


def may_fuse(consumer: linalg.GenericOp, index: int, producer: linalg.GenericOp, recompute_limit: int) -> bool:
    """Rules 3 to 6 (the map rules, 3 and 7, are checked while fusing)."""
    if len(producer.res) != 1 or not _on_tensors(producer) or not _all_parallel(producer):
        return False
    if is_data_movement(producer):
        return True
    if not _sole_consumer(producer, consumer):
        return False
    operand_map = _maps(consumer)[index]
    if recompute_factor(consumer, operand_map) > 1:
        return is_cheap(producer, recompute_limit)
    return True


def fuse_module(module: ModuleOp, recompute_limit: int) -> None:
    """Every generic of `module`, last first, fused until no rule applies to it.

    Consumers come before their producers (rule 6 counts on it), and a generic is offered
    again only when it changed, as its replacement. What a fusion erases is always a
    producer, earlier in the walk and not yet visited, so a fixed point is reached in one
    sweep: about one rule check per generic and fusion, where xDSL's greedy worklist
    re-offered every neighbour of each rewritten op (ten times as many checks)."""
    for op in reversed(walk_ops(module)):
        if not isinstance(op, linalg.GenericOp) or op.parent is None:
            continue
        while (step := fuse_step(op, recompute_limit)) is not None:
            fused, producer = step
            Rewriter.replace_op(op, fused)
            if producer is not None:
                _erase_dead(producer, Rewriter.erase_op)
            op = fused


def check_yields(module: ModuleOp) -> None:
    """A located error at a `linalg.yield` of a generic on tensors whose values do not match
    the outputs' element types (MLIR's verifier rejects it, xDSL's does not). Fusion puts the
    yielded value in place of the consumer's block argument, so a mismatch would surface as a
    type error in the consumer's body, far from its cause."""
    for op in module.walk():
        if not isinstance(op, linalg.GenericOp) or not _on_tensors(op):
            continue
        yield_op = op.body.block.last_op
        if not isinstance(yield_op, linalg.YieldOp):
            continue
        if len(yield_op.operands) != len(op.outputs):
            raise PassError(
                f"expected number of yield values ({len(yield_op.operands)}) to match the "
                f"number of outs operands of the enclosing linalg.generic ({len(op.outputs)})",
                yield_op,
            )
        for k, (value, out) in enumerate(zip(yield_op.operands, op.outputs), start=1):
            element = out.type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue]
            if value.type != element:
                raise PassError(
                    f"type of yield operand {k} ('{value.type}') doesn't match the element "
                    f"type of the enclosing linalg.generic op ('{element}')",
                    yield_op,
                )


@dataclass(frozen=True)
class LinalgFuseElementwisePass(ModulePass):
    """Fuse elementwise linalg.generic producers into their consumers, on tensors.

    Input invariant: stage "linalg" of docs/design/cpu-pipeline.md (the output of
    convert-nn-to-linalg): linalg ops on tensors in destination-passing style, static shapes.

    Output IR: stage "linalg" still, with fewer ops: each chain of all-parallel generics (and
    the broadcasts, transposes and constant fills at its inputs) is one `linalg.generic`, which
    may also be a reduction that absorbed its elementwise producers. The fusion rules are in
    the module docstring; in short, a producer that computes is fused into its only user, pure
    data movement and constant fills into every user, nothing with a reduction iterator is
    fused into another op, and work is repeated at the points of a broadcast only when it is
    cheap (at most `recompute-limit` ops, no transcendental function, no division). Bodies
    hold the same scalar ops in the same order per element, so results are bit-identical.
    Dead producers are erased; duplicate inputs (same value, same map) are merged. Run
    `canonicalize,cse` afterwards to share the constants the bodies repeat.
    """

    name = "linalg-fuse-elementwise"

    recompute_limit: int = 8
    """Most ops a producer may have to be recomputed at each point of a broadcast."""

    def __post_init__(self) -> None:
        if self.recompute_limit < 0:  # a ValueError: irgrad-opt reports it as a bad option
            raise ValueError(f"recompute_limit must be at least 0, got {self.recompute_limit}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_yields(op)
        fuse_module(op, self.recompute_limit)


__all__ = [
    "LinalgFuseElementwisePass",
    "deduplicate",
    "fuse_fill",
    "fuse_generic",
    "fuse_module",
    "fuse_step",
    "is_cheap",
    "is_data_movement",
    "may_fuse",
]
