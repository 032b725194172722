"""`convert-scf-parallel-to-scf`: `scf.parallel` to a nest of serial `scf.for` loops.

Input invariant: `scf.parallel` loops (stage "loops"), with or without `scf.reduce`.
Output IR: one `scf.for` per dimension, outermost first, iterating in the order the
reference interpreter does; reductions become loop-carried values: each iteration combines
its `scf.reduce` operand into the accumulator with the reduction's region, starting from
the init values.

Serial on purpose, for now: the stage contract allows `scf.parallel` to become calls into a
small threading runtime instead, which is a later optimization (outer loop split across
cores), not a different semantics.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from irgrad.diagnostics import PassError
from irgrad.lowering.rewriting import apply_conversion


def check_has_dimensions(op: scf.ParallelOp) -> None:
    """A located error for an `scf.parallel` without loop dimensions, which xDSL's verifier
    accepts and MLIR's rejects (and which has no loop nest to become)."""
    if not op.lowerBound:
        raise PassError(
            "has no loop dimensions; an scf.parallel needs at least one (lower bound, upper "
            "bound, step) triple",
            op,
        )


class ParallelToForLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ParallelOp, rewriter: PatternRewriter):
        check_has_dimensions(op)
        body = op.body.block
        reduce_op = body.last_op
        assert isinstance(reduce_op, scf.ReduceOp)
        inits = list(op.initVals)
        acc_types = [v.type for v in inits]

        # Build the nest from the outside in; `accs` are the innermost body's accumulators.
        loops: list[scf.ForOp] = []
        ivs: list[SSAValue] = []
        accs: list[SSAValue] = inits
        point = InsertPoint.before(op)
        for lb, ub, step in zip(op.lowerBound, op.upperBound, op.step, strict=True):
            block = Block(arg_types=[lb.type, *acc_types])
            loop = scf.ForOp(lb, ub, step, accs, Region(block))
            rewriter.insert(loop, point)
            loops.append(loop)
            ivs.append(block.args[0])
            accs = list(block.args[1:])
            point = InsertPoint.at_end(block)

        innermost = loops[-1].body.block
        # Move the body in, the induction variables in place of the block arguments.
        rewriter.inline_block(body, InsertPoint.at_end(innermost), ivs)
        reduced = list(reduce_op.args)
        results: list[SSAValue] = []
        for region, acc, value in zip(reduce_op.reductions, accs, reduced, strict=True):
            combine = region.block
            terminator = combine.last_op
            assert isinstance(terminator, scf.ReduceReturnOp)
            combined = terminator.result
            rewriter.inline_block(combine, InsertPoint.before(reduce_op), [acc, value])
            results.append(combined)
            rewriter.erase(terminator)
        rewriter.replace(reduce_op, scf.YieldOp(*results))
        # Each outer loop yields what the loop nested in it computed.
        for outer, inner in zip(loops[:-1], loops[1:]):
            outer.body.block.add_op(scf.YieldOp(*inner.results))
        rewriter.replace(op, [], loops[0].results)


@dataclass(frozen=True)
class ConvertScfParallelToScfPass(ModulePass):
    """Lower scf.parallel to nested serial scf.for loops (reductions as iter_args).

    Input invariant: scf.parallel with scf.reduce. Output IR: scf.for nests; threading is a
    later optimization.
    """

    name = "convert-scf-parallel-to-scf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Outer loops first; a nested scf.parallel moves, unchanged, into the new loops.
        apply_conversion(op, [ParallelToForLowering()], dialect="scf")
