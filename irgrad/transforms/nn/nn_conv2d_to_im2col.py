"""`nn-conv2d-to-im2col`: a large conv2d as `nn.im2col` + `nn.matmul`, at the nn level.

Why at the nn level, before autodiff: the convolution's derivatives then come from matmul's
and im2col's own rules, and they reuse the forward's window matrix instead of building two
more. With `cols = im2col(x)` (C*KH*KW x N*OH*OW) and `W` the weight as O x C*KH*KW:

    y        = transpose(reshape(W @ cols, [O, N, OH, OW]), [1, 0, 2, 3])
    d/dW     = dY @ cols^T            (one GEMM, cols passed with the transpose flag)
    d/dx     = col2im(W^T @ dY)       (one GEMM, then the windows added back)

where the conv-based rules (autodiff/rules/linear.py) would convolve the cotangent with the
flipped kernel (a second im2col, 2x wider) and convolve the input with the cotangent (a
third). Timings: docs/status.md (benchmarks/conv.py).

Which convolutions: float32/float64 ones the im2col lowering would take anyway
(nn_to_linalg/linear.py: at least IM2COL_MIN_FLOPS, a window matrix of at most
IM2COL_MAX_ELEMENTS), except those whose kernel is wider than their output (KW > OW), which
the lowering takes with the windows as rows. The rest stay `nn.conv2d`.

Input and output: nn IR (any stage before convert-nn-to-linalg). The results are the same up
to the GEMM's summation order, as for the im2col lowering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, Float64Type, ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irgrad.dialects import nn
from irgrad.lowering.nn_to_linalg.linear import IM2COL_MAX_ELEMENTS, IM2COL_MIN_FLOPS


def decomposes(op: nn.Conv2DOp) -> bool:
    """Whether `op` is a conv2d this pass rewrites (module doc)."""
    x, w = cast(TensorType, op.input.type), cast(TensorType, op.weight.type)
    if not isinstance(x.get_element_type(), Float32Type | Float64Type):
        return False
    o, c, kh, kw = w.get_shape()
    n, _, oh, ow = cast(TensorType, op.result.type).get_shape()
    rows, columns = c * kh * kw, n * oh * ow
    return 2 * o * rows * columns >= IM2COL_MIN_FLOPS and rows * columns <= IM2COL_MAX_ELEMENTS and kw <= ow


class Conv2DToIm2Col(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.Conv2DOp, rewriter: PatternRewriter) -> None:
        if not decomposes(op):
            return
        o, _, kh, kw = cast(TensorType, op.weight.type).get_shape()
        n, _, oh, ow = cast(TensorType, op.result.type).get_shape()
        stride, padding, dilation = (
            list(cast(tuple[int, ...], a.get_values())) for a in (op.stride, op.padding, op.dilation)
        )
        cols = nn.Im2ColOp(op.input, [kh, kw], stride, padding, dilation)
        rows = cast(TensorType, cols.result.type).get_shape()[0]
        matrix = nn.ReshapeOp(op.weight, [o, rows])
        product = nn.MatmulOp(matrix.result, cols.result)
        by_image = nn.ReshapeOp(product.result, [o, n, oh, ow])
        result = nn.TransposeOp(by_image.result, [1, 0, 2, 3])
        base = op.result.name_hint or "conv"
        for value, suffix in ((cols.result, "cols"), (matrix.result, "kernel"), (product.result, "product"),
                              (by_image.result, "by_channel")):  # fmt: skip
            value.name_hint = f"{base}_{suffix}"
        result.result.name_hint = op.result.name_hint
        rewriter.replace(op, [cols, matrix, product, by_image, result], [result.result])


@dataclass(frozen=True)
class Conv2DToIm2ColPass(ModulePass):
    """Rewrite large conv2ds as im2col + matmul (module doc)."""

    name = "nn-conv2d-to-im2col"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([Conv2DToIm2Col()]), apply_recursively=False).rewrite_module(op)


__all__ = ["Conv2DToIm2ColPass", "decomposes"]
