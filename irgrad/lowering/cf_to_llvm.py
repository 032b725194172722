"""`convert-cf-to-llvm`: unstructured control flow to `llvm.br` / `llvm.cond_br`.

Input invariant: `cf.br`, `cf.cond_br`, `cf.switch` (the output of convert-scf-to-cf).
Output IR: `llvm.br`, `llvm.cond_br`; a `cf.switch` becomes a chain of `llvm.icmp eq` and
`llvm.cond_br` (xDSL's llvm dialect has no switch; LLVM turns the chain back into a jump
table when that pays). The arguments of every non-entry block get their llvm types (the
entry blocks belong to convert-func-to-llvm); uses see the old types through unrealized
casts. `cf.assert` is outside the contract (it would abort the process) and is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import BlockInsertPoint, InsertPoint

from irgrad.diagnostics import PassError
from irgrad.lowering.llvm_common import (
    apply_conversion,
    LLVMBuilder,
    check_no_ops_left,
    convert_block_arguments,
)

PASS = "convert-cf-to-llvm"


class BranchLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        rewriter.replace(op, llvm.BrOp(op.successor, *b.operands(op.arguments)))


class CondBranchLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        rewriter.replace(
            op,
            llvm.CondBrOp(
                op.cond,
                op.then_block,
                b.operands(op.then_arguments),
                op.else_block,
                b.operands(op.else_arguments),
            ),
        )


class SwitchLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.SwitchOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        flag = b.operand(op.flag)
        values = op.case_values.get_values() if op.case_values else ()
        cases = list(zip(values, op.case_blocks, op.case_operand, strict=True))
        default_args = b.operands(op.default_operands)
        if not cases:
            rewriter.replace(op, llvm.BrOp(op.default_block, *default_args))
            return
        block = op.parent_block()
        assert block is not None
        region = block.parent_region()
        assert region is not None
        current = b
        anchor: Block = block
        for k, (value, dest, operands) in enumerate(cases):
            is_last = k == len(cases) - 1
            matched = current.icmp("eq", flag, current.const_int(value, flag.type))
            args = current.operands(operands)
            if is_last:
                current.insert(llvm.CondBrOp(matched, dest, args, op.default_block, default_args))
                break
            following = rewriter.create_block(BlockInsertPoint.after(anchor))
            current.insert(llvm.CondBrOp(matched, dest, args, following, []))
            anchor = following
            current = LLVMBuilder(rewriter, InsertPoint.at_end(following))
        rewriter.erase(op)


class AssertLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.AssertOp, rewriter: PatternRewriter):
        raise PassError(
            f"is outside the stage contract: {PASS} does not lower asserts "
            "(a failed assert would abort the process)",
            op,
        )


def convert_successor_signatures(module: ModuleOp, rewriter: PatternRewriter) -> None:
    """Give every non-entry block's arguments their llvm types."""
    for op in module.walk():
        for region in op.regions:
            for block in list(region.blocks)[1:]:
                convert_block_arguments(rewriter, block)


@dataclass(frozen=True)
class ConvertCfToLLVMPass(ModulePass):
    """Lower cf.br/cond_br/switch to llvm branches and convert block argument types.

    Input invariant: cf control flow. Output IR: llvm.br/llvm.cond_br; cf.assert is an error.
    """

    name = "convert-cf-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_successor_signatures(op, PatternRewriter(InsertPoint.at_start(op.body.block)))
        apply_conversion(
            op, [BranchLowering(), CondBranchLowering(), SwitchLowering(), AssertLowering()]
        )
        check_no_ops_left(op, "cf", self.name)
