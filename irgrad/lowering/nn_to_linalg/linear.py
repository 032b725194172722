"""`nn.matmul` and `nn.conv2d`: contractions into a zero-filled accumulator.

- A 2-D matmul in f32, f64, i32 or i64 is `linalg.matmul`; batched matmul is a generic with
  loops `(b..., m, n, k)` (xDSL has no `linalg.batch_matmul`).
- `conv2d` (NCHW input, OIHW weight) zero-pads the input when its padding is not zero (a
  `linalg.fill` and a `tensor.insert_slice`), then is a generic with seven loops
  `(n, o, oh, ow, c, kh, kw)`, the last three reductions, reading the input at
  `(n, c, oh * stride_h + kh * dilation_h, ow * stride_w + kw * dilation_w)`.
  A large f32/f64 conv2d (at least IM2COL_MIN_FLOPS, with a window tensor of at most
  IM2COL_MAX_ELEMENTS) is an im2col instead, so that it becomes one GEMM over all images
  (convert-linalg-to-blas); the windows are columns, or rows when the kernel is wider than
  the output (a weight gradient). The reduction runs over (c, kh, kw) in the same order as
  the seven-loop form, so the loop nests compute the same bits.
- f16 and bf16 accumulate in f32 (the body extends each operand with `arith.extf`) and round
  once at the end, as the interpreter does; so their matmuls are generics too, except a large
  2-D one (WIDEN_MIN_FLOPS), whose operands are widened to f32 once for an f32 `linalg.matmul`
  (a GEMM after convert-linalg-to-blas) whose result is rounded: the same products and sums.
Details: docs/design/cpu-pipeline.md, "irgrad/lowering/nn_to_linalg/linear.py".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr
from xdsl.pattern_rewriter import RewritePattern

from irgrad.dialects import nn
from irgrad.dialects.nn import is_float
from irgrad.lowering.nn_to_linalg.common import (
    PARALLEL,
    REDUCTION,
    Emitter,
    LoweringPattern,
    affine_map,
    collapse,
    compute_type,
    constant,
    convert_float_tensor,
    dims,
    element_of,
    empty,
    expand,
    extend,
    filled_constant,
    generic,
    tensor_type,
)
from irgrad.lowering.nn_to_linalg.data_movement import gather_through_map, pad_with


def multiply_accumulate(acc_t: Attribute):
    """The body `acc + a * b`, with `a` and `b` extended to the accumulator type first."""
    mul, add = (arith.MulfOp, arith.AddfOp) if is_float(acc_t) else (arith.MuliOp, arith.AddiOp)

    def body(e: Emitter, a: SSAValue, b: SSAValue, acc: SSAValue) -> list[SSAValue]:
        return [e(add(acc, e(mul(extend(e, a, acc_t), extend(e, b, acc_t)))))]

    return body


WIDEN_MIN_FLOPS = 1 << 15
"""A 2-D f16/bf16 matmul of at least this many flops is widened to an f32 linalg.matmul."""


def _flops(op: nn.MatmulOp) -> int:
    m, k = cast(TensorType, op.lhs.type).get_shape()[-2:]
    n = cast(TensorType, op.rhs.type).get_shape()[-1]
    return 2 * m * n * k


class MatmulPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.MatmulOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.MatmulOp, op)
        t = element_of(op.lhs)
        acc_t = compute_type(t)
        shape = cast(TensorType, op.result.type).get_shape()
        init = filled_constant(b, 0, shape, acc_t)
        if len(shape) == 2 and acc_t == t:
            return b(linalg.MatmulOp([op.lhs, op.rhs], [init]))
        if len(shape) == 2 and is_float(t) and _flops(op) >= WIDEN_MIN_FLOPS:
            # f16/bf16: widen both operands once, multiply in f32 (a BLAS GEMM once
            # convert-linalg-to-blas runs), round once: the same products and f32 sums.
            lhs, rhs = (convert_float_tensor(b, v, acc_t) for v in (op.lhs, op.rhs))
            return convert_float_tensor(b, b(linalg.MatmulOp([lhs, rhs], [init])), t)
        # Loops: batch dimensions, then m, n, k.
        batch = len(shape) - 2
        loops = batch + 3
        bs = dims(range(batch))
        m, n, k = dims([batch, batch + 1, batch + 2])
        (result,) = generic(
            b,
            [op.lhs, op.rhs],
            [affine_map(loops, [*bs, m, k]), affine_map(loops, [*bs, k, n])],
            [init],
            [affine_map(loops, [*bs, m, n])],
            [PARALLEL] * (batch + 2) + [REDUCTION],
            multiply_accumulate(acc_t),
        )
        return convert_float_tensor(b, result, t) if acc_t != t else result


IM2COL_MIN_FLOPS = 1 << 20
"""Smaller convolutions stay one generic: a GEMM call would not pay for the window copy."""
IM2COL_MAX_ELEMENTS = 1 << 26
"""Largest window tensor (256 MiB of f32) an im2col may materialize."""


def im2col_columns(
    b: Emitter, x: SSAValue, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
    out_hw: Sequence[int], t: Attribute, *, windows_as_rows: bool = False,
) -> SSAValue:  # fmt: skip
    """The windows of padded `x` as `(C*KH*KW, N*OH*OW)`: a copy generic into
    `cols[c, kh, kw, n, oh, ow]` (loops in that order), collapsed; with `windows_as_rows`,
    `(N*OH*OW, C*KH*KW)` from `rows[n, oh, ow, c, kh, kw]` instead."""
    n_, c_, _, _ = tensor_type(x).get_shape()
    (kh_, kw_), (oh_, ow_) = kernel, out_hw
    if windows_as_rows:
        n, oh, ow, c, kh, kw = dims(range(6))  # loops in the order of the layout
        layout, sizes = [n, oh, ow, c, kh, kw], [n_, oh_, ow_, c_, kh_, kw_]
        matrix = [n_ * oh_ * ow_, c_ * kh_ * kw_]
    else:
        c, kh, kw, n, oh, ow = dims(range(6))
        layout, sizes = [c, kh, kw, n, oh, ow], [c_, kh_, kw_, n_, oh_, ow_]
        matrix = [c_ * kh_ * kw_, n_ * oh_ * ow_]
    (windows,) = generic(
        b,
        [x],
        [affine_map(6, [n, c, oh * stride[0] + kh * dilation[0], ow * stride[1] + kw * dilation[1]])],
        [empty(b, sizes, t)],
        [affine_map(6, layout)],
        [PARALLEL] * 6,
        lambda e, v, _out: [v],
    )
    return collapse(b, windows, matrix, [[0, 1, 2], [3, 4, 5]])


def im2col_conv(
    b: Emitter, x: SSAValue, weight: SSAValue, out_shape: Sequence[int],
    stride: Sequence[int], dilation: Sequence[int], t: Attribute,
) -> SSAValue | None:  # fmt: skip
    """conv2d of padded `x` as im2col + one matmul (module doc), or None when too small or too
    big for it. A kernel wider than the output takes the windows as rows:
    rows @ weight^T, `(N*OH*OW, O)`, transposed back to NCHW."""
    n_, c_, _, _ = tensor_type(x).get_shape()
    o_, _, kh_, kw_ = tensor_type(weight).get_shape()
    oh_, ow_ = out_shape[2], out_shape[3]
    ckk, columns_n = c_ * kh_ * kw_, n_ * oh_ * ow_
    if 2 * o_ * columns_n * ckk < IM2COL_MIN_FLOPS or ckk * columns_n > IM2COL_MAX_ELEMENTS:
        return None
    rows_first = kw_ > ow_
    windows = im2col_columns(b, x, (kh_, kw_), stride, dilation, (oh_, ow_), t, windows_as_rows=rows_first)
    matrix = collapse(b, weight, [o_, ckk], [[0], [1, 2, 3]])
    d0, d1, d2, d3 = dims(range(4))
    if rows_first:
        matrix_t = gather_through_map(b, matrix, [ckk, o_], [d1, d0])
        product = b(linalg.MatmulOp([windows, matrix_t], [filled_constant(b, 0.0, [columns_n, o_], t)]))
        by_pixel = expand(b, product, [n_, oh_, ow_, o_], [[0, 1, 2], [3]])
        return gather_through_map(b, by_pixel, [n_, o_, oh_, ow_], [d0, d2, d3, d1])
    product = b(linalg.MatmulOp([matrix, windows], [filled_constant(b, 0.0, [o_, columns_n], t)]))
    by_image = expand(b, product, [o_, n_, oh_, ow_], [[0], [1, 2, 3]])
    return gather_through_map(b, by_image, [n_, o_, oh_, ow_], [d1, d0, d2, d3])


class Conv2DPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.Conv2DOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.Conv2DOp, op)
        t = element_of(op.input)
        acc_t = compute_type(t)
        stride = cast(tuple[int, ...], op.stride.get_values())
        top, bottom, left, right = cast(tuple[int, ...], op.padding.get_values())
        dilation = cast(tuple[int, ...], op.dilation.get_values())
        x = op.input
        if any((top, bottom, left, right)):
            x = pad_with(b, x, constant(b, 0.0, t), [0, 0, top, left], [0, 0, bottom, right])
        shape = cast(TensorType, op.result.type).get_shape()
        if acc_t == t:
            lowered = im2col_conv(b, x, op.weight, shape, stride, dilation, t)
            if lowered is not None:
                return lowered
        init = filled_constant(b, 0.0, shape, acc_t)
        n, o, oh, ow, c, kh, kw = dims(range(7))
        row: AffineExpr = oh * stride[0] + kh * dilation[0]
        col: AffineExpr = ow * stride[1] + kw * dilation[1]
        (result,) = generic(
            b,
            [x, op.weight],
            [affine_map(7, [n, c, row, col]), affine_map(7, [o, c, kh, kw])],
            [init],
            [affine_map(7, [n, o, oh, ow])],
            [PARALLEL] * 4 + [REDUCTION] * 3,
            multiply_accumulate(acc_t),
        )
        return convert_float_tensor(b, result, t) if acc_t != t else result


class Im2ColPattern(LoweringPattern):
    """`nn.im2col`: the zero padding (a fill and an insert_slice), then `im2col_columns`."""

    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.Im2ColOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.Im2ColOp, op)
        t = element_of(op.input)
        kernel, stride, padding, dilation = op.geometry()
        top, bottom, left, right = padding
        x = pad_with(b, op.input, constant(b, 0.0, t), [0, 0, top, left], [0, 0, bottom, right])
        _, out_hw = nn.im2col_shape(tensor_type(op.input).get_shape(), kernel, stride, padding, dilation)
        return im2col_columns(b, x, kernel, stride, dilation, out_hw, t)


class Col2ImPattern(LoweringPattern):
    """`nn.col2im`: a zero padded image, then for each window offset (kh, kw) in row-major
    order the strided window of the image it covers (`tensor.extract_slice`, strides = the
    conv's) plus that offset's block of columns (a generic), inserted back; last the padding
    cut away. The
    additions happen in the interpreter's order, so the bits agree; f16/bf16 add in f32
    and round once."""

    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.Col2ImOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.Col2ImOp, op)
        t = element_of(op.input)
        acc_t = compute_type(t)
        kernel, stride, padding, dilation = op.geometry()
        image = list(tensor_type(op.result).get_shape())
        n_, c_, h_, w_ = image
        top, bottom, left, right = padding
        _, (oh_, ow_) = nn.im2col_shape(image, kernel, stride, padding, dilation)
        cols = convert_float_tensor(b, op.input, acc_t) if acc_t != t else op.input
        blocks = expand(b, cols, [c_, kernel[0], kernel[1], n_, oh_, ow_], [[0, 1, 2], [3, 4, 5]])
        acc = filled_constant(b, 0.0, [n_, c_, h_ + top + bottom, w_ + left + right], acc_t)
        n, c, oh, ow = dims(range(4))
        sizes, strides = [n_, c_, oh_, ow_], [1, 1, stride[0], stride[1]]
        window_t = TensorType(acc_t, sizes)
        for kh in range(kernel[0]):
            for kw in range(kernel[1]):
                offsets = [0, 0, kh * dilation[0], kw * dilation[1]]
                window = b(tensor.ExtractSliceOp(acc, offsets, sizes, strides, window_t))
                (summed,) = generic(
                    b,
                    [window, blocks],
                    [affine_map(4, [n, c, oh, ow]), affine_map(4, [c, kh, kw, n, oh, ow])],
                    [empty(b, sizes, acc_t)],
                    [affine_map(4, [n, c, oh, ow])],
                    [PARALLEL] * 4,
                    _accumulate,
                )
                acc = b(tensor.InsertSliceOp.get(summed, acc, sizes, offsets, strides, result_type=acc.type))
        if any(padding):
            acc = b(tensor.ExtractSliceOp(acc, [0, 0, top, left], image, [1, 1, 1, 1], TensorType(acc_t, image)))
        return convert_float_tensor(b, acc, t) if acc_t != t else acc


def _accumulate(e: Emitter, partial: SSAValue, v: SSAValue, _out: SSAValue) -> list[SSAValue]:
    return [e(arith.AddfOp(partial, v))]


def populate_linear_patterns(patterns: list[RewritePattern]) -> None:
    patterns.extend([MatmulPattern(), Conv2DPattern(), Im2ColPattern(), Col2ImPattern()])
