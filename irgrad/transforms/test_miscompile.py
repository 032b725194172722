"""Passes that exist only to test the tooling (as MLIR's `-test-*` passes do)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irgrad.dialects import nn


class _ExpToTanh(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ExpOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, nn.TanhOp(op.operand))


class _FAddToFSub(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: llvm.FAddOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, llvm.FSubOp(op.lhs, op.rhs))


@dataclass(frozen=True)
class TestMiscompilePass(ModulePass):
    """Rewrites nn.exp into nn.tanh, and llvm.fadd into llvm.fsub (a miscompile of stage-llvm
    code, checked by compiling it): deliberate miscompiles for testing --verify-each=numeric.

    It keeps the IR valid and changes only the numbers, which is what the numeric check exists
    to catch.
    """

    name = "test-miscompile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_ExpToTanh()).rewrite_module(op)
        PatternRewriteWalker(_FAddToFSub()).rewrite_module(op)
