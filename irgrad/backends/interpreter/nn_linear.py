"""`nn` contractions and windows: matmul, conv2d (NCHW/OIHW), max_pool2d.

Windows are strided views (no copies until the contraction), the contraction a BLAS
`tensordot`. f16/bf16 accumulate in f32 and round once; integer matmul wraps in its width.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls

from irgrad.backends.interpreter import numerics
from irgrad.backends.interpreter.nn_creation import result_shape
from irgrad.backends.interpreter.nn_data_movement import ints
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import nn


def pad_hw(x: np.ndarray, padding: Sequence[int], value: Any) -> np.ndarray:
    """NCHW `x` padded with `value`: padding is [top, bottom, left, right]."""
    top, bottom, left, right = padding
    n, c, h, w = x.shape
    out = np.full((n, c, h + top + bottom, w + left + right), value, dtype=x.dtype)
    out[:, :, top : top + h, left : left + w] = x
    return out


def windows(
    x: np.ndarray,
    out_hw: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
) -> np.ndarray:
    """A read-only view of shape (N, C, OH, OW, KH, KW): window (oh, ow) of padded input `x`."""
    sn, sc, sh, sw = x.strides
    return as_strided(
        x,
        shape=(*x.shape[:2], *out_hw, *kernel),
        strides=(sn, sc, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1]),
        writeable=False,
    )


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    out_hw: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
) -> np.ndarray:
    """Cross-correlation of NCHW `x` with OIHW `w`, zero padding, in the operands' dtype."""
    cols = windows(pad_hw(x, padding, 0), out_hw, w.shape[2:], stride, dilation)
    # (N, C, OH, OW, KH, KW) . (O, C, KH, KW) over C, KH, KW -> (N, OH, OW, O)
    out = np.tensordot(cols, w, axes=([1, 4, 5], [1, 2, 3]))
    return np.transpose(out, (0, 3, 1, 2))


def im2col(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int], padding: Sequence[int],
           dilation: Sequence[int], out_hw: Sequence[int]) -> np.ndarray:  # fmt: skip
    """`nn.im2col`: rows (c, kh, kw), columns (n, oh, ow) of the zero-padded windows."""
    n, c = x.shape[:2]
    view = windows(pad_hw(x, padding, 0), out_hw, kernel, stride, dilation)  # N, C, OH, OW, KH, KW
    return np.ascontiguousarray(view.transpose(1, 4, 5, 0, 2, 3)).reshape(
        c * kernel[0] * kernel[1], n * out_hw[0] * out_hw[1]
    )


def col2im(cols: np.ndarray, image: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
           padding: Sequence[int], dilation: Sequence[int], out_hw: Sequence[int]) -> np.ndarray:  # fmt: skip
    """`nn.col2im`: each window's entries added back where im2col read them, window offset
    (kh, kw) by window offset in row-major order (the order the compiled code adds in too),
    then the padding cut away."""
    n, c, h, w = image
    top, bottom, left, right = padding
    oh, ow = out_hw
    blocks = cols.reshape(c, kernel[0], kernel[1], n, oh, ow)
    padded = np.zeros((n, c, h + top + bottom, w + left + right), cols.dtype)
    for kh in range(kernel[0]):
        for kw in range(kernel[1]):
            rows = slice(kh * dilation[0], kh * dilation[0] + stride[0] * (oh - 1) + 1, stride[0])
            columns = slice(kw * dilation[1], kw * dilation[1] + stride[1] * (ow - 1) + 1, stride[1])
            padded[:, :, rows, columns] += blocks[:, kh, kw].transpose(1, 0, 2, 3)
    return np.ascontiguousarray(padded[:, :, top : top + h, left : left + w])


@register_impls
class NNLinearFunctions(InterpreterFunctions):
    @numpy_impl(nn.MatmulOp)
    def run_matmul(self, interpreter: Interpreter, op: nn.MatmulOp, args: PythonValues):
        a, b = args
        return (numerics.via_compute_dtype(np.matmul, a, b),)

    @numpy_impl(nn.Conv2DOp)
    def run_conv2d(self, interpreter: Interpreter, op: nn.Conv2DOp, args: PythonValues):
        x, w = args
        out_hw = result_shape(op)[2:]
        stride, padding, dilation = ints(op.stride), ints(op.padding), ints(op.dilation)

        def run(x: np.ndarray, w: np.ndarray) -> np.ndarray:
            return conv2d(x, w, out_hw, stride, padding, dilation)

        return (numerics.via_compute_dtype(run, x, w),)

    @numpy_impl(nn.MaxPool2DOp)
    def run_max_pool2d(self, interpreter: Interpreter, op: nn.MaxPool2DOp, args: PythonValues):
        (x,) = args
        out_hw = result_shape(op)[2:]
        kernel, stride, padding = ints(op.kernel), ints(op.stride), ints(op.padding)
        padded = pad_hw(x, padding, -np.inf)
        view = windows(padded, out_hw, kernel, stride, (1, 1))
        return (numerics.reduce_extremum(view, (4, 5), keepdims=False, want_max=True),)

    @numpy_impl(nn.Im2ColOp)
    def run_im2col(self, interpreter: Interpreter, op: nn.Im2ColOp, args: PythonValues):
        (x,) = args
        kernel, stride, padding, dilation = op.geometry()
        _, out_hw = nn.im2col_shape(x.shape, kernel, stride, padding, dilation)
        return (im2col(x, kernel, stride, padding, dilation, out_hw),)

    @numpy_impl(nn.Col2ImOp)
    def run_col2im(self, interpreter: Interpreter, op: nn.Col2ImOp, args: PythonValues):
        (cols,) = args
        image = result_shape(op)
        kernel, stride, padding, dilation = op.geometry()
        _, out_hw = nn.im2col_shape(image, kernel, stride, padding, dilation)

        def run(cols: np.ndarray) -> np.ndarray:
            return col2im(cols, image, kernel, stride, padding, dilation, out_hw)

        return (numerics.via_compute_dtype(run, cols),)
