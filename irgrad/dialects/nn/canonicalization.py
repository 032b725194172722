"""Canonicalization patterns of `nn` shape ops, run by `canonicalize` (as MLIR's folders are).

Derived programs make chains that a human would not write: the vmap rule of im2col moves the batch
to the front with a transpose that the next matmul rule moves back; a reshape that splits a
dimension feeds one that merges it again; autodiff transposes a transposed operand. Each such op is
a copy once lowered, so they are folded at the nn level:

- `reshape` to the operand's own type is the operand; `reshape(reshape(x))` is one reshape of x;
- `transpose` by the identity permutation is the operand; `transpose(transpose(x))` is one
  transpose of x by the composed permutation (the identity again when they cancel);
- `broadcast_in_dim` to the operand's own type with dims in order is the operand.

The inner op stays if something else uses it (`dce` removes it otherwise). The package's
__init__ hands these to the ops' `RegisteredCanonicalization` trait with
`populate_canonicalization_patterns`, so the ops' modules never import this one.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irgrad.dialects.nn.data_movement import BroadcastInDimOp, ReshapeOp, TransposeOp


class FoldReshape(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        if op.result.type == op.operand.type:
            rewriter.replace(op, [], [op.operand])
            return
        inner = op.operand.owner
        if isinstance(inner, ReshapeOp):
            rewriter.replace(op, ReshapeOp(inner.operand, op.result.type.get_shape()))  # type: ignore[attr-defined]


class FoldTranspose(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        perm = [int(p) for p in op.perm.get_values()]
        if perm == list(range(len(perm))):
            rewriter.replace(op, [], [op.operand])
            return
        inner = op.operand.owner
        if isinstance(inner, TransposeOp):
            inner_perm = [int(p) for p in inner.perm.get_values()]
            composed = [inner_perm[p] for p in perm]
            if composed == list(range(len(composed))):
                rewriter.replace(op, [], [inner.operand])
            else:
                rewriter.replace(op, TransposeOp(inner.operand, composed))


class FoldBroadcast(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastInDimOp, rewriter: PatternRewriter) -> None:
        dims = [int(d) for d in op.dims.get_values()]
        if op.result.type == op.operand.type and dims == list(range(len(dims))):
            rewriter.replace(op, [], [op.operand])


def populate_canonicalization_patterns(
    table: dict[type[Operation], tuple[RewritePattern, ...]],
) -> None:
    """Enter each shape op's fold in `table` (base.CANONICALIZATION_PATTERNS)."""
    table[ReshapeOp] = (FoldReshape(),)
    table[TransposeOp] = (FoldTranspose(),)
    table[BroadcastInDimOp] = (FoldBroadcast(),)
