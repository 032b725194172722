"""`convert-cf-to-llvm`: unstructured control flow to `llvm.br` / `llvm.cond_br`.

Input invariant: `cf.br`, `cf.cond_br`, `cf.switch` (the output of convert-scf-to-cf).
Output IR: `llvm.br`, `llvm.cond_br`; a `cf.switch` becomes a chain of `llvm.icmp eq` and
`llvm.cond_br` (xDSL's llvm dialect has no switch; LLVM turns the chain back into a jump
table when that pays). The arguments of every non-entry block get their llvm types (the
entry blocks belong to convert-func-to-llvm); uses see the old types through unrealized
casts. `cf.assert %ok, "msg"` becomes `llvm.cond_br %ok` to the rest of its block or to a
cold block that calls `irgrad_assert_failed(msg)` (the message a NUL-terminated constant
global) and is unreachable after it: the CPU runtime (irgrad/backends/cpu/guard.py) makes
the compiled call raise `RuntimeCheckError` with the message (it aborts the process only
outside a guarded call). With `lower_asserts=false` (convert-gpu-to-nvvm: a GPU kernel
has no such runtime) `cf.assert` is an error.
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
from irgrad.lowering.llvm.builder import LLVMBuilder, branch, cond_branch
from irgrad.lowering.llvm.casts import convert_block_arguments
from irgrad.lowering.llvm.checks import check_no_ops_left
from irgrad.lowering.llvm.symbols import StringGlobals
from irgrad.lowering.llvm.type_conversion import PTR
from irgrad.lowering.rewriting import apply_conversion

PASS = "convert-cf-to-llvm"


class BranchLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        rewriter.replace(op, branch(op.successor, b.operands(op.arguments)))


class CondBranchLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        then_args, else_args = b.operands(op.then_arguments), b.operands(op.else_arguments)
        rewriter.replace(op, cond_branch(op.cond, op.then_block, then_args, op.else_block, else_args))


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


ASSERT_FAILED_SYMBOL = "irgrad_assert_failed"
"""`void irgrad_assert_failed(const char *message)`, defined by the CPU runtime; it does not
return."""
MESSAGE_PREFIX = "_irgrad_assert_message"


class AssertLowering(RewritePattern):
    """`cf.assert` -> `llvm.cond_br` to the rest of the block, or to a block calling
    `irgrad_assert_failed(message)` (one constant global per distinct message)."""

    def __init__(self, module: ModuleOp, lower: bool = True) -> None:
        self.messages = StringGlobals(module, MESSAGE_PREFIX)
        self.lower = lower

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.AssertOp, rewriter: PatternRewriter):
        if not self.lower:
            raise PassError(
                f"is not supported here: {PASS}{{lower_asserts=false}} does not lower asserts "
                "(GPU kernels have no runtime to report a failed assert)",
                op,
            )
        block = op.parent_block()
        region = block.parent_region() if block is not None else None
        assert block is not None and region is not None
        ok = LLVMBuilder(rewriter, op).operand(op.arg)
        name = self.messages.name(op.msg.data.encode("utf-8"))
        rest = block.split_before(op)
        failed = Block()
        region.add_block(failed)
        b = LLVMBuilder(rewriter, InsertPoint.at_end(failed))
        b.call(ASSERT_FAILED_SYMBOL, [b.insert(llvm.AddressOfOp(name, PTR))], None)
        b.insert(llvm.UnreachableOp())
        rewriter.insert(llvm.CondBrOp(ok, rest, [], failed, []), InsertPoint.at_end(block))
        rewriter.erase(op)


def convert_successor_signatures(module: ModuleOp, rewriter: PatternRewriter) -> None:
    """Give every non-entry block's arguments their llvm types."""
    for op in module.walk():
        for region in op.regions:
            for block in list(region.blocks)[1:]:
                convert_block_arguments(rewriter, block)


@dataclass(frozen=True)
class ConvertCfToLLVMPass(ModulePass):
    """Lower cf.br/cond_br/switch to llvm branches and convert block argument types.

    Input invariant: cf control flow. Output IR: llvm.br/llvm.cond_br; cf.assert becomes a
    branch to a call of the runtime's `irgrad_assert_failed` (an error if `lower_asserts`
    is false).
    """

    name = "convert-cf-to-llvm"

    lower_asserts: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_successor_signatures(op, PatternRewriter(InsertPoint.at_start(op.body.block)))
        asserts = AssertLowering(op, self.lower_asserts)
        apply_conversion(op, [BranchLowering(), CondBranchLowering(), SwitchLowering(), asserts], dialect="cf")
        check_no_ops_left(op, "cf", self.name)
