"""`scf-split-reductions{lanes=8 block=1024}`: a float reduction loop in a fixed, blocked order.

Why: a reduction lowered to loops is one chain, `acc = acc + f(x[i])`, every addition waiting
for the previous one: slow, and inaccurate for long loops (a chain of n roundings), and LLVM
may not vectorize it without fast-math (`reassoc`), which irgrad only uses where the user
asks. Summing in another fixed order is not fast-math, it is a different, well-defined order:
blocks of `block` iterations, each reduced into `lanes` partial results, the lanes combined
pairwise, the remainder in order. The order depends only on `lanes` and `block`, so results
are reproducible (the interpreter runs the same order); chains are at most block / lanes +
n / block long instead of n; and the `lanes` independent chains are what LLVM's SLP vectorizer
turns into vector instructions. Max and min are exact in any order and skip the blocks.
Outside any `scf.parallel`, the blocks run in an `scf.parallel` (the same bits on one thread
or many); a body calling a math function first computes a block's values into a stack buffer.

Input: `scf.for` loops with constant bounds, step 1 and at least 2 * `lanes` iterations,
carrying exactly one float value whose only use in the body is one combiner op (`arith.addf`,
`mulf`, `maximumf`, `minimumf`) used only by the `scf.yield`. Anything else is left as it is.
Output: the blocked loop, the split loop, the pairwise combination, and a loop for the
remainder; the lanes start at the combiner's identity (-0.0 for addf).
Details: docs/design/cpu-pipeline.md, "irgrad/lowering/loops/scf_split_reductions.py".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgrad.diagnostics import PassError
from irgrad.lowering.ir_queries import enclosing

_IDENTITY = {
    arith.AddfOp: -0.0,
    arith.MulfOp: 1.0,
    arith.MaximumfOp: float("-inf"),
    arith.MinimumfOp: float("inf"),
}


def _constant_index(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _combiner(loop: scf.ForOp) -> Operation | None:
    """The op combining the loop's one carried float value, if the loop qualifies."""
    if len(loop.iter_args) != 1 or not isinstance(loop.iter_args[0].type, AnyFloat):
        return None
    body = loop.body.block
    acc = body.args[1]
    uses = list(acc.uses)
    if len(uses) != 1:
        return None
    op = uses[0].operation
    if type(op) not in _IDENTITY or op.parent_block() is not body:
        return None
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    result = op.results[0]
    if [u.operation for u in result.uses] != [yield_op] or yield_op.operands[0] is not result:
        return None
    return op


_VECTOR_FRIENDLY_MATH = frozenset({
    "math.absf", "math.absi", "math.copysign", "math.fma", "math.sqrt", "math.rsqrt",
    "math.floor", "math.ceil", "math.trunc", "math.round", "math.roundeven", "math.fpowi",
    "math.ctlz", "math.cttz", "math.ctpop",
})  # fmt: skip
"""Math ops LLVM makes instructions (or inline code) of, which its SLP vectorizer packs."""


def _calls_math_functions(loop: scf.ForOp) -> bool:
    """Whether the body calls a math function (exp, log, sin, pow, ...): a call LLVM's SLP
    vectorizer will not pack across the lanes (its cost model does not know libmvec)."""
    return any(
        op.dialect_name() == "math" and op.name not in _VECTOR_FRIENDLY_MATH
        for op in loop.body.walk()
    )


def _lane_loop(
    loop: scf.ForOp,
    lanes: int,
    lower: SSAValue,
    upper: SSAValue,
    step: SSAValue,
    inits: list[SSAValue],
    base: SSAValue | None = None,
) -> scf.ForOp:
    """The body cloned `lanes` times: lane j runs iteration (base +) i + j on its own partial
    result."""
    old = loop.body.block
    body = Block(arg_types=[IndexType()] + [old.args[1].type] * lanes)
    first: SSAValue = body.args[0]
    if base is not None:
        shifted = arith.AddiOp(base, first)
        body.add_op(shifted)
        first = shifted.result
    yielded: list[SSAValue] = []
    for j in range(lanes):
        offset = arith.ConstantOp(IntegerAttr(j, IndexType()))
        iv = arith.AddiOp(first, offset.result)
        body.add_ops([offset, iv])
        mapping: dict[SSAValue, SSAValue] = {old.args[0]: iv.result, old.args[1]: body.args[1 + j]}
        for op in old.ops:
            if isinstance(op, scf.YieldOp):
                yielded.append(mapping[op.operands[0]])
                break
            body.add_op(op.clone(value_mapper=mapping))
    body.add_op(scf.YieldOp(*yielded))
    return scf.ForOp(lower, upper, step, inits, Region(body))


def _split(loop: scf.ForOp, combiner: Operation, lanes: int, block: int) -> bool:
    lb, ub, step = (_constant_index(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step != 1 or ub - lb < 2 * lanes:
        return False
    float_type = loop.iter_args[0].type
    split_end = lb + (ub - lb) // lanes * lanes
    rewriter = Rewriter()
    before = InsertPoint.before(loop)

    def insert(op: Operation) -> Operation:
        rewriter.insert_op(op, before)
        return op

    constants: dict[int, SSAValue] = {}

    def index(value: int) -> SSAValue:
        if value not in constants:
            constants[value] = insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).results[0]
        return constants[value]

    identity = insert(arith.ConstantOp(FloatAttr(_IDENTITY[type(combiner)], float_type))).results[0]
    partial: list[SSAValue] = [loop.iter_args[0]] + [identity] * (lanes - 1)
    start = lb
    exact = isinstance(combiner, arith.MaximumfOp | arith.MinimumfOp)  # no order to improve
    if block and ub - lb >= block and (not exact or _calls_math_functions(loop)):
        start = lb + (ub - lb) // block * block
        partial = _blocked(loop, combiner, partial, identity, lanes, block, start, insert, index)

    if start < split_end:
        lower = loop.lb if start == lb else index(start)
        partial = list(insert(_lane_loop(loop, lanes, lower, index(split_end), index(lanes), partial)).results)

    # Pairwise: ((l0 . l1) . (l2 . l3)) . ...
    while len(partial) > 1:
        paired = [insert(type(combiner)(a, b)).results[0] for a, b in zip(partial[::2], partial[1::2])]
        partial = paired + (partial[-1:] if len(partial) % 2 else [])

    # The remainder loop continues from the combined value (the original loop, re-bounded).
    if split_end == ub:
        loop.results[0].replace_all_uses_with(partial[0])
        rewriter.erase_op(loop)
    else:
        loop.operands[0] = index(split_end)
        loop.operands[3] = partial[0]
    return True


def _blocked(
    loop: scf.ForOp,
    combiner: Operation,
    lanes_in: list[SSAValue],
    identity: SSAValue,
    lanes: int,
    block: int,
    end: int,
    insert: Any,
    index: Any,
) -> list[SSAValue]:
    """The running lanes after iterations [lb, end), two levels: each block of `block`
    iterations is reduced into `lanes` partial results of its own, starting from the
    identity (`_block_lanes`), which are then combined into the running lanes, block after
    block (lane l: running_l . block_l).

    A loop outside any `scf.parallel` computes its blocks in an `scf.parallel` (into a heap
    buffer of blocks x lanes values) and combines them after it, in block order: the same
    order, so the same bits, whether or not convert-scf-parallel-to-threads gives the blocks
    to several threads. Inside a parallel loop (a row of a row-wise sum: the rows are the
    parallelism) the blocks run in an `scf.for` carrying the running lanes."""
    float_type = loop.iter_args[0].type
    lb = _constant_index(loop.lb)
    assert lb is not None
    blocks = (end - lb) // block
    size = index(block)
    if blocks >= 2 and enclosing(loop, scf.ParallelOp) is None:
        zero, one, lane_step = index(0), index(1), index(lanes)
        buffer = insert(memref.AllocOp.get(float_type, shape=[blocks * lanes], alignment=64)).results[0]
        body = Block(arg_types=[IndexType()])
        offset = arith.MuliOp(body.args[0], size)
        base = arith.AddiOp(loop.lb, offset.result)
        body.add_ops([offset, base])
        block_lanes = _block_lanes(loop, combiner, identity, lanes, block, base.result, body, index)
        first = arith.MuliOp(body.args[0], lane_step)
        body.add_op(first)
        for lane, value in enumerate(block_lanes):
            at = arith.AddiOp(first.result, index(lane))
            body.add_ops([at, memref.StoreOp.get(value, buffer, [at.result])])
        body.add_op(scf.ReduceOp())
        insert(scf.ParallelOp([zero], [index(blocks)], [one], Region(body)))
        # In block order: running_l = running_l . buffer[b * lanes + l].
        combine_loop = insert(
            _lanes_from_buffer(buffer, combiner, lanes_in, index(blocks), one, index, scale=lane_step)
        )
        insert(memref.DeallocOp.get(buffer))
        return list(combine_loop.results)

    outer = Block(arg_types=[IndexType()] + [float_type] * lanes)
    block_lanes = _block_lanes(loop, combiner, identity, lanes, block, outer.args[0], outer, index)
    running = [type(combiner)(r, b) for r, b in zip(outer.args[1:], block_lanes)]
    outer.add_ops(running)
    outer.add_op(scf.YieldOp(*[op.results[0] for op in running]))
    blocked = insert(scf.ForOp(loop.lb, index(end), size, lanes_in, Region(outer)))
    return list(blocked.results)


def _block_lanes(
    loop: scf.ForOp,
    combiner: Operation,
    identity: SSAValue,
    lanes: int,
    block: int,
    base: SSAValue,
    into: Block,
    index: Any,
) -> list[SSAValue]:
    """Ops appended to `into` reducing iterations base .. base + block into `lanes` partial
    results from the identity (lane j: iterations base + j, base + j + lanes, ...).

    A body that calls a math function first computes the block's values with an elementwise
    loop into a stack buffer (a plain loop LLVM vectorizes, math calls included), and the
    lanes then take them from the buffer, in the same order."""
    old = loop.body.block
    acc = old.args[1]
    float_type = acc.type
    size, lane_step, zero = index(block), index(lanes), index(0)
    inits = [identity] * lanes
    if not _calls_math_functions(loop):
        lane_loop = _lane_loop(loop, lanes, zero, size, lane_step, inits, base=base)
        into.add_op(lane_loop)
        return list(lane_loop.results)
    value = combiner.operands[1] if combiner.operands[0] is acc else combiner.operands[0]
    alloca = memref.AllocaOp.get(float_type, shape=[block], alignment=64)
    into.add_op(alloca)
    buffer = alloca.results[0]
    # Elementwise: buffer[j] = value(base + j).
    elementwise = Block(arg_types=[IndexType()])
    iv = arith.AddiOp(base, elementwise.args[0])
    elementwise.add_op(iv)
    mapping: dict[SSAValue, SSAValue] = {old.args[0]: iv.result}
    for op in old.ops:
        if isinstance(op, scf.YieldOp):
            break
        if op is not combiner:
            elementwise.add_op(op.clone(value_mapper=mapping))
    elementwise.add_op(memref.StoreOp.get(mapping.get(value, value), buffer, [elementwise.args[0]]))
    elementwise.add_op(scf.YieldOp())
    into.add_op(scf.ForOp(zero, size, index(1), [], Region(elementwise)))
    # The block's lanes: lane l . buffer[j + l], j = 0, lanes, 2 lanes, ...
    block_loop = _lanes_from_buffer(buffer, combiner, inits, size, lane_step, index)
    into.add_op(block_loop)
    return list(block_loop.results)


def _lanes_from_buffer(
    buffer: SSAValue,
    combiner: Operation,
    inits: list[SSAValue],
    upper: SSAValue,
    step: SSAValue,
    index: Any,
    scale: SSAValue | None = None,
) -> scf.ForOp:
    """`for j = 0 to upper step step`: lane l = lane l . buffer[j * scale + l] (scale 1 when
    None), the lanes carried from `inits`."""
    body = Block(arg_types=[IndexType()] + [v.type for v in inits])
    first: SSAValue = body.args[0]
    if scale is not None:
        scaled = arith.MuliOp(first, scale)
        body.add_op(scaled)
        first = scaled.result
    combined: list[SSAValue] = []
    for lane in range(len(inits)):
        position = arith.AddiOp(first, index(lane))
        load = memref.LoadOp.get(buffer, [position.result])
        reduced = type(combiner)(body.args[1 + lane], load.results[0])
        body.add_ops([position, load, reduced])
        combined.append(reduced.results[0])
    body.add_op(scf.YieldOp(*combined))
    return scf.ForOp(index(0), upper, step, list(inits), Region(body))


COMBINER_IDENTITY = _IDENTITY
"""The identity of each combiner a reduction loop may have (shared with gpu_split_reductions)."""
reduction_combiner = _combiner
constant_index = _constant_index
"""The value of an `arith.constant` index, or None (shared with gpu_split_reductions)."""
"""The op combining a reduction loop's one carried float value, or None (shared with
gpu_split_reductions)."""


@dataclass(frozen=True)
class SplitReductionsPass(ModulePass):
    """Evaluate float reduction loops in a fixed blocked order of `lanes` interleaved partial results (vectorizable, threadable, reproducible)."""

    name = "scf-split-reductions"

    lanes: int = 8

    block: int = 1024
    """Iterations per block (0: no blocks); max/min loops are blocked only for math calls."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.lanes < 2 or self.lanes & (self.lanes - 1):
            raise PassError(f"scf-split-reductions: lanes must be a power of two >= 2, got {self.lanes}")
        if self.block < 0 or self.block % self.lanes:
            raise PassError(
                f"scf-split-reductions: block must be 0 or a multiple of lanes ({self.lanes}), got {self.block}"
            )
        loops = [inner for inner in op.walk() if isinstance(inner, scf.ForOp)]
        # Innermost first: a split loop's clones are new ops the walk above did not list.
        for loop in reversed(loops):
            combiner = _combiner(loop)
            if combiner is not None:
                _split(loop, combiner, self.lanes, self.block)
