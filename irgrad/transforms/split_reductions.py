"""`scf-split-reductions{lanes=8}`: a float reduction loop as `lanes` interleaved partial results.

Why: a reduction lowered to loops is one chain, `acc = acc + f(x[i])`, every addition waiting
for the previous one (4 cycles each): a 4M-element sum ran at a fifth of numpy's speed, and
LLVM may not vectorize it without fast-math (`reassoc`), which irgrad only uses where the user
asks. Summing in a fixed other order is not fast-math, it is a different, well-defined order:
this pass rewrites the loop to keep `lanes` partial results, lane j taking iterations j, j +
lanes, j + 2 lanes, ...; the lanes are then combined pairwise ((l0 + l1) + (l2 + l3)) + ...,
and the iterations left over run last on the combined value. The order depends only on
`lanes`, never on the machine, so results are reproducible; and, like numpy's pairwise sums,
it is more accurate than one chain (each partial sum is `lanes` times shorter). The `lanes`
independent chains are what LLVM's SLP vectorizer turns into vector instructions.

Input: `scf.for` loops with constant bounds, step 1 and at least 2 * `lanes` iterations,
carrying exactly one float value whose only use in the body is one combiner op: `arith.addf`,
`arith.mulf` (new order: rounding changes, towards the exact result), `arith.maximumf`,
`arith.minimumf` (associative and commutative, NaN and signed zeros included: the result is
bit-identical), with the combiner's result used only by the `scf.yield`. Anything else is left
as it is (integer reductions: LLVM vectorizes those itself, exactly).
Output: the split loop (body cloned `lanes` times, iterations in their original order, so
stores and loads in the body happen in the same order as before), the pairwise combination,
and a loop for the remainder. The lanes start at the combiner's identity: -0.0 for addf
(x + -0.0 == x for every x, -0.0 included), 1.0 for mulf, -inf/+inf for maximumf/minimumf.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgrad.diagnostics import PassError

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


def _split(loop: scf.ForOp, combiner: Operation, lanes: int) -> bool:
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

    def index(value: int) -> SSAValue:
        return insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).results[0]

    identity = insert(arith.ConstantOp(FloatAttr(_IDENTITY[type(combiner)], float_type))).results[0]
    inits = [loop.iter_args[0]] + [identity] * (lanes - 1)

    # The split loop: lane j runs the body for iteration i + j on its own partial result.
    old = loop.body.block
    split_body = Block(arg_types=[IndexType()] + [float_type] * lanes)
    lane_step = index(lanes)
    yielded: list[SSAValue] = []
    for j in range(lanes):
        offset = arith.ConstantOp(IntegerAttr(j, IndexType()))
        iv = arith.AddiOp(split_body.args[0], offset.result)
        split_body.add_ops([offset, iv])
        mapping: dict[SSAValue, SSAValue] = {old.args[0]: iv.result, old.args[1]: split_body.args[1 + j]}
        for op in old.ops:
            if isinstance(op, scf.YieldOp):
                yielded.append(mapping[op.operands[0]])
                break
            split_body.add_op(op.clone(value_mapper=mapping))
    split_body.add_op(scf.YieldOp(*yielded))
    split_loop = insert(scf.ForOp(loop.lb, index(split_end), lane_step, inits, Region(split_body)))

    # Pairwise: ((l0 . l1) . (l2 . l3)) . ...
    partial = list(split_loop.results)
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


@dataclass(frozen=True)
class SplitReductionsPass(ModulePass):
    """Rewrite qualifying float reduction loops into `lanes` interleaved partial results."""

    name = "scf-split-reductions"

    lanes: int = 8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.lanes < 2 or self.lanes & (self.lanes - 1):
            raise PassError(f"scf-split-reductions: lanes must be a power of two >= 2, got {self.lanes}")
        loops = [inner for inner in op.walk() if isinstance(inner, scf.ForOp)]
        # Innermost first: a split loop's clones are new ops the walk above did not list.
        for loop in reversed(loops):
            combiner = _combiner(loop)
            if combiner is not None:
                _split(loop, combiner, self.lanes)
