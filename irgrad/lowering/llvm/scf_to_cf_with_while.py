"""`convert-scf-to-cf-with-while`: structured control flow to `cf` branches, `scf.while` too.

Input invariant: `scf.for`, `scf.if`, `scf.index_switch`, `scf.while` (no `scf.parallel`:
run convert-scf-parallel-to-scf first).
Output IR: `cf.br`, `cf.cond_br`, `cf.switch` between blocks of the enclosing function.

This is MLIR's `convert-scf-to-cf`. xDSL's pass of that name lowers for, if and
index_switch but not while; its patterns are reused here as they are, and irgrad adds
`scf.while`, so that one pass lowers all of scf in one walk (lowering a while in one pass and
the for around it in another would leave a multi-block region inside the remaining scf op,
which its verifier rejects). The name differs from xDSL's because irgrad never shadows an
xDSL pass.

`scf.while` follows MLIR's SCFToControlFlow: a branch to the `before` block, whose
`cf.cond_br` goes to the `do` block (which branches back) or to the code after the loop.
The block structure: docs/design/cpu-backend.md, "irgrad/lowering/llvm/scf_to_cf_with_while.py".
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import BlockInsertPoint, InsertPoint
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering, SwitchLowering

from irgrad.diagnostics import PassError
from irgrad.lowering.rewriting import apply_conversion


def _terminated_by(blocks: list[Block], op_type: type) -> list[Block]:
    return [block for block in blocks if isinstance(block.last_op, op_type)]


class WhileLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter):
        parent = op.parent_block()
        assert parent is not None
        continue_block = parent.split_before(op)
        for k, t in enumerate(op.result_types):
            rewriter.insert_block_argument(continue_block, k, t)

        before_entry = op.before_region.first_block
        after_entry = op.after_region.first_block
        assert before_entry is not None and after_entry is not None
        before_blocks = list(op.before_region.blocks)
        after_blocks = list(op.after_region.blocks)
        rewriter.inline_region(op.before_region, BlockInsertPoint.before(continue_block))
        rewriter.inline_region(op.after_region, BlockInsertPoint.before(continue_block))

        for block in _terminated_by(before_blocks, scf.ConditionOp):
            condition = block.last_op
            assert isinstance(condition, scf.ConditionOp)
            rewriter.replace(
                condition,
                cf.ConditionalBranchOp(
                    condition.condition,
                    after_entry,
                    condition.args,
                    continue_block,
                    condition.args,
                ),
            )
        for block in _terminated_by(after_blocks, scf.YieldOp):
            yield_op = block.last_op
            assert yield_op is not None
            rewriter.replace(yield_op, cf.BranchOp(before_entry, *yield_op.operands))

        rewriter.insert(cf.BranchOp(before_entry, *op.arguments), InsertPoint.at_end(parent))
        rewriter.replace(op, [], continue_block.args)


class ParallelRejection(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ParallelOp, rewriter: PatternRewriter):
        raise PassError(
            "must be lowered before convert-scf-to-cf-with-while; "
            "run convert-scf-parallel-to-scf first",
            op,
        )


@dataclass(frozen=True)
class ConvertScfToCfWithWhilePass(ModulePass):
    """Lower scf.for/if/index_switch (xDSL's patterns) and scf.while to cf branches.

    Input invariant: no scf.parallel. Output IR: cf branches between blocks.
    """

    name = "convert-scf-to-cf-with-while"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # One walk, parents first: lowering an op inlines its regions into the enclosing
        # block, where the nested scf ops are then found (no worklist, see apply_conversion).
        apply_conversion(
            op,
            [ParallelRejection(), WhileLowering(), SwitchLowering(), IfLowering(), ForLowering()],
            dialect="scf",
        )
