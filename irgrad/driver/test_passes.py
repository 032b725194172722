"""Passes that exist only to test the tooling (as MLIR's `-test-*` passes do)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
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


@dataclass(frozen=True)
class TestMiscompilePass(ModulePass):
    """Rewrites nn.exp into nn.tanh: a deliberate miscompile for testing --verify-each=numeric.

    It keeps the IR valid and changes only the numbers, which is what the numeric check exists
    to catch.
    """

    name = "test-miscompile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_ExpToTanh()).rewrite_module(op)
