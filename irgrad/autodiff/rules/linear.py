"""Rules for contractions: matmul (2-D and batched), conv2d (any stride, padding, dilation), and the
window matrices of conv2d, im2col and col2im (linear maps, each the transpose of the other).

Both are bilinear (JAX's `defbilinear`): the JVP is op(tx, y) + op(x, ty) and each VJP is the op's
transpose in one argument, written with the same op family so the result stays differentiable.

conv2d, with xp the zero-padded input (Hp = H + top + bottom):
    y[n, o, i, j] = sum_{c, a, b} xp[n, c, i*sh + a*dh, j*sw + b*dw] * w[o, c, a, b]
- input cotangent: a full correlation of the cotangent, spread `stride` apart, with the kernel flipped
  spatially and its in/out channels swapped, at the original dilation; padding and cropping make it
  exactly H x W (rows of xp that no window reads get zero);
- weight cotangent: a correlation of the input (batch and channels swapped) with the cotangent as kernel,
  where the original dilation becomes the stride and the original stride becomes the dilation.

Batching (vmap) folds the batch into a dimension the op already has, so one large op does the work of B
small ones and no operand is broadcast to the batch: more rows (M) or columns (N) of one GEMM, more images
(N) or output channels (O) of one conv2d, more images of one im2col/col2im. Only a conv2d whose input and
kernel both differ per example (a per-example weight gradient) needs another form: its im2col and a batched
matmul, since nn.conv2d has no feature groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import DenseArrayBase
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched, move_axis
from irgrad.autodiff.builder import RuleBuilder, shape_of
from irgrad.autodiff.registry import Cotangents, Tangent, batch_rule, jvp_rule, vjp_rule
from irgrad.dialects import nn

T = SSAValue | None


def _ints(values: DenseArrayBase) -> list[int]:
    return [int(v) for v in values.get_values()]


# ---------------------------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(nn.MatmulOp)
def _matmul_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    x, y = op.operands
    return [
        b.matmul(ct, b.swap_last(y)) if b.needs(0) else None,
        b.matmul(b.swap_last(x), ct) if b.needs(1) else None,
    ]


@jvp_rule(nn.MatmulOp)
def _matmul_jvp(b: RuleBuilder, op: Operation, tx: T, ty: T) -> Tangent:
    x, y = op.operands
    return b.add(
        b.matmul(tx, y) if tx is not None else None,
        b.matmul(x, ty) if ty is not None else None,
    )


@batch_rule(nn.MatmulOp)
def _matmul_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """Three cases, none broadcasting an operand to the batch:
    - both batched: [B, ..., M, K] @ [B, ..., K, N] is a batched matmul (equal leading dimensions);
    - only the lhs: the B examples are more rows of one GEMM, [B*M, K] @ [K, N] (per-example gradients'
      forward pass: a batch of inputs times shared weights);
    - only the rhs: more columns, [M, K] @ [K, B*N].
    With leading (batch) dimensions of their own, the examples' dimension goes just before M (or N) first."""
    lhs, rhs = args
    size = b.size
    rank = len(shape_of(op.operands[0]))  # the unbatched rank
    *lead, m, k = shape_of(op.operands[0])
    n = shape_of(op.operands[1])[-1]
    if is_batched[0] and is_batched[1]:
        return b.matmul(lhs, rhs), True
    if is_batched[0]:
        rows = b.reshape(move_axis(b, lhs, 0, rank - 2), [*lead, size * m, k])  # [..., B*M, K]
        product = b.reshape(b.matmul(rows, rhs), [*lead, size, m, n])
        return move_axis(b, product, rank - 2, 0), True
    columns = b.reshape(move_axis(b, rhs, 0, rank - 1), [*lead, k, size * n])  # [..., K, B*N]
    product = b.reshape(b.matmul(lhs, columns), [*lead, m, size, n])
    return move_axis(b, product, rank - 1, 0), True


# ---------------------------------------------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------------------------------------------


def _geometry(op: nn.Conv2DOp) -> tuple[list[int], list[int], list[int]]:
    return _ints(op.stride), _ints(op.padding), _ints(op.dilation)


def conv2d_input_cotangent(
    b: RuleBuilder,
    ct: SSAValue,
    input_shape: Sequence[int],
    weight: SSAValue,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
) -> SSAValue:
    """d(loss)/d(input) of `conv2d(input, weight)` given the result cotangent `ct`."""
    n, c, *size = input_shape
    _, _, *kernel = shape_of(weight)
    spread = b.dilate(ct, [1, 1, *stride])  # ct[i] moves to row i * stride of the padded input
    flipped = b.reverse(b.transpose(weight, [1, 0, 2, 3]), [2, 3])  # [C, O, KH, KW], kernel flipped
    conv_padding: list[int] = []
    crop: list[int] = []
    for d in range(2):
        extent = dilation[d] * (kernel[d] - 1)  # a full correlation pads the dilated kernel's extent
        low, high = padding[2 * d], padding[2 * d + 1]
        spread_size = shape_of(spread)[2 + d]
        full_high = size[d] + low + high - spread_size  # >= extent: rows no window reads
        conv_padding += [max(0, extent - low), max(0, full_high - high)]
        crop.append(max(0, low - extent))  # when the input padding exceeds the kernel extent
    grad = b.conv2d(spread, flipped, (1, 1), conv_padding, dilation)
    return b.slice(grad, [0, 0, *crop], [n, c, crop[0] + size[0], crop[1] + size[1]])


def conv2d_weight_cotangent(
    b: RuleBuilder,
    ct: SSAValue,
    input: SSAValue,
    weight_shape: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
) -> SSAValue:
    """d(loss)/d(weight) of `conv2d(input, weight)` given the result cotangent `ct`."""
    o, c, *kernel = weight_shape
    _, _, *size = shape_of(input)
    _, _, *out = shape_of(ct)
    conv_padding = list(padding)
    for d in range(2):
        # Trailing rows of the padded input that no window reads: drop them from the padding if possible,
        # so the correlation yields exactly the kernel's size.
        unused = size[d] + padding[2 * d] + padding[2 * d + 1] - 1 - stride[d] * (out[d] - 1) - dilation[d] * (
            kernel[d] - 1
        )
        conv_padding[2 * d + 1] -= min(unused, padding[2 * d + 1])
    grad = b.conv2d(
        b.transpose(input, [1, 0, 2, 3]),  # [C, N, H, W]: batch becomes the channel being contracted
        b.transpose(ct, [1, 0, 2, 3]),  # [O, N, OH, OW]: the cotangent is the kernel
        dilation,
        conv_padding,
        stride,
    )
    grad = b.slice(grad, [0, 0, 0, 0], [c, o, *kernel])
    return b.transpose(grad, [1, 0, 2, 3])


@vjp_rule(nn.Conv2DOp)
def _conv2d_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    conv = cast(nn.Conv2DOp, op)
    stride, padding, dilation = _geometry(conv)
    ct_input = ct_weight = None
    if b.needs(0):
        ct_input = conv2d_input_cotangent(b, ct, shape_of(conv.input), conv.weight, stride, padding, dilation)
    if b.needs(1):
        ct_weight = conv2d_weight_cotangent(b, ct, conv.input, shape_of(conv.weight), stride, padding, dilation)
    return [ct_input, ct_weight]


@jvp_rule(nn.Conv2DOp)
def _conv2d_jvp(b: RuleBuilder, op: Operation, t_input: T, t_weight: T) -> Tangent:
    conv = cast(nn.Conv2DOp, op)
    stride, padding, dilation = _geometry(conv)
    return b.add(
        b.conv2d(t_input, conv.weight, stride, padding, dilation) if t_input is not None else None,
        b.conv2d(conv.input, t_weight, stride, padding, dilation) if t_weight is not None else None,
    )


@batch_rule(nn.Conv2DOp)
def _conv2d_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """- batched input, shared kernel: the examples' images are more images, [B*N, C, H, W];
    - shared input, batched kernel: the examples' kernels are more output channels, [B*O, C, KH, KW];
    - both batched (a per-example weight gradient has this form: the input and the cotangent both differ
      per example): nn.conv2d has no feature groups, so through its im2col form, a batched matmul of each
      example's kernel [O, C*KH*KW] with its own columns [C*KH*KW, N*OH*OW]."""
    conv = cast(nn.Conv2DOp, op)
    stride, padding, dilation = _geometry(conv)
    x, w = args
    size = b.size
    n, c, h, width = shape_of(conv.input)
    o, _, kh, kw = shape_of(conv.weight)
    _, _, oh, ow = shape_of(conv.result)
    if is_batched[0] and not is_batched[1]:
        y = b.conv2d(b.reshape(x, [size * n, c, h, width]), w, stride, padding, dilation)
        return b.reshape(y, [size, n, o, oh, ow]), True
    if is_batched[1] and not is_batched[0]:
        y = b.conv2d(x, b.reshape(w, [size * o, c, kh, kw]), stride, padding, dilation)
        return move_axis(b, b.reshape(y, [n, size, o, oh, ow]), 1, 0), True
    window = c * kh * kw
    images = b.reshape(x, [size * n, c, h, width])
    columns = b.value(nn.Im2ColOp(images, [kh, kw], stride, padding, dilation))  # [C*KH*KW, (B, N, OH, OW)]
    columns = move_axis(b, b.reshape(columns, [window, size, n * oh * ow]), 1, 0)  # [B, C*KH*KW, N*OH*OW]
    kernels = b.reshape(w, [size, o, window])
    y = b.reshape(b.matmul(kernels, columns), [size, o, n, oh, ow])
    return move_axis(b, y, 2, 1), True


# ---------------------------------------------------------------------------------------------------------------
# im2col / col2im: linear, each the other's transpose
# ---------------------------------------------------------------------------------------------------------------


def _windows(op: Operation) -> tuple[list[int], list[int], list[int], list[int]]:
    return cast(nn.WindowsOp, op).geometry()


@vjp_rule(nn.Im2ColOp)
def _im2col_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.value(nn.Col2ImOp(ct, shape_of(op.operands[0]), *_windows(op)))]


@jvp_rule(nn.Im2ColOp)
def _im2col_jvp(b: RuleBuilder, op: Operation, t: T) -> Tangent:
    return b.value(nn.Im2ColOp(t, *_windows(op))) if t is not None else None


@vjp_rule(nn.Col2ImOp)
def _col2im_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    return [b.value(nn.Im2ColOp(ct, *_windows(op)))]


@jvp_rule(nn.Col2ImOp)
def _col2im_jvp(b: RuleBuilder, op: Operation, t: T) -> Tangent:
    return b.value(nn.Col2ImOp(t, shape_of(op.results[0]), *_windows(op))) if t is not None else None


@batch_rule(nn.Im2ColOp)
def _im2col_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """The examples' images are more images, [B*N, C, H, W]. Their columns come out ordered (b, n, oh, ow),
    so the batch is split off the column dimension and moved to the front: [B, C*KH*KW, N*OH*OW]."""
    (x,) = args
    n, c, h, w = shape_of(op.operands[0])
    rows, count = shape_of(op.results[0])
    columns = b.value(nn.Im2ColOp(b.reshape(x, [b.size * n, c, h, w]), *_windows(op)))
    return move_axis(b, b.reshape(columns, [rows, b.size, count]), 1, 0), True


@batch_rule(nn.Col2ImOp)
def _col2im_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """im2col's rule backwards: the batch joins the column dimension ahead of the images, (b, n, oh, ow),
    and the image of B*N images is split back into the examples."""
    (columns,) = args
    rows, count = shape_of(op.operands[0])
    n, c, h, w = shape_of(op.results[0])
    joined = b.reshape(move_axis(b, columns, 0, 1), [rows, b.size * count])
    image = b.value(nn.Col2ImOp(joined, [b.size * n, c, h, w], *_windows(op)))
    return b.reshape(image, [b.size, n, c, h, w]), True
