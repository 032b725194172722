"""The reference interpreter on nn.matmul, nn.conv2d and nn.max_pool2d.

conv2d and max_pool2d are checked against naive loops written here from the op definitions
(NCHW/OIHW, padding [top, bottom, left, right], dilation; pooling pads with -inf).
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from _interpreter_util import assert_same, run1, run_ops, run_text
from irgrad.dialects import nn

BF16 = np.dtype(ml_dtypes.bfloat16)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("a_shape, b_shape", [((4, 3), (3, 5)), ((2, 3, 4, 5), (2, 3, 5, 2)), ((3, 0), (0, 2)), ((0, 4), (4, 3))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul(a_shape, b_shape, dtype):
    g = rng(0)
    a = g.standard_normal(a_shape).astype(dtype)
    b = g.standard_normal(b_shape).astype(dtype)
    assert_same(run_ops(lambda x, y: nn.MatmulOp(x, y), a, b)[0], np.matmul(a, b))


@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=["f16", "bf16"])
def test_matmul_low_precision_accumulates_in_f32(dtype):
    g = rng(1)
    a = g.standard_normal((5, 64)).astype(dtype)
    b = g.standard_normal((64, 3)).astype(dtype)
    expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)
    assert_same(run_ops(lambda x, y: nn.MatmulOp(x, y), a, b)[0], expected)


def test_matmul_integers_wrap():
    a = np.full((1, 2), 2**30, np.int32)
    b = np.full((2, 1), 2, np.int32)
    assert_same(run_ops(lambda x, y: nn.MatmulOp(x, y), a, b)[0], np.array([[0]], np.int32))


def test_matmul_nan_propagates():
    a = np.array([[1.0, np.nan]], np.float32)
    b = np.array([[1.0], [0.0]], np.float32)
    assert np.isnan(run_ops(lambda x, y: nn.MatmulOp(x, y), a, b)[0]).all()


# ---------------------------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------------------------


def naive_conv2d(x, w, stride, padding, dilation):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    top, bottom, left, right = padding
    oh = (h + top + bottom - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + left + right - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    for b, f, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        total = 0.0
        for ch, p, q in itertools.product(range(c), range(kh), range(kw)):
            y = i * stride[0] + p * dilation[0] - top
            z = j * stride[1] + q * dilation[1] - left
            if 0 <= y < h and 0 <= z < wd:
                total += float(x[b, ch, y, z]) * float(w[f, ch, p, q])
        out[b, f, i, j] = total
    return out


CONV_CASES = [
    # x shape, w shape, stride, padding, dilation
    ((1, 1, 5, 5), (1, 1, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),
    ((2, 3, 7, 6), (4, 3, 3, 2), (2, 1), (1, 2, 0, 1), (1, 1)),
    ((1, 2, 9, 8), (3, 2, 3, 3), (1, 2), (2, 2, 2, 2), (2, 3)),
    ((2, 2, 6, 6), (2, 2, 2, 2), (3, 3), (1, 0, 0, 1), (2, 1)),
    ((0, 2, 4, 4), (3, 2, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((1, 0, 4, 4), (2, 0, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),
]


@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation", CONV_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_against_naive_loops(x_shape, w_shape, stride, padding, dilation, dtype):
    g = rng(2)
    x = g.standard_normal(x_shape).astype(dtype)
    w = g.standard_normal(w_shape).astype(dtype)
    y = run_ops(lambda a, b: nn.Conv2DOp(a, b, stride, padding, dilation), x, w)[0]
    expected = naive_conv2d(x, w, stride, padding, dilation)
    assert y.dtype == dtype and y.shape == expected.shape
    np.testing.assert_allclose(y, expected, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=["f16", "bf16"])
def test_conv2d_low_precision(dtype):
    g = rng(3)
    x = g.standard_normal((1, 3, 6, 6)).astype(dtype)
    w = g.standard_normal((2, 3, 3, 3)).astype(dtype)
    y = run_ops(lambda a, b: nn.Conv2DOp(a, b, (1, 1), (1, 1, 1, 1), (1, 1)), x, w)[0]
    expected = naive_conv2d(x, w, (1, 1), (1, 1, 1, 1), (1, 1))
    assert y.dtype == dtype
    np.testing.assert_allclose(y.astype(np.float64), expected, rtol=2e-2, atol=2e-2)


def test_conv2d_from_text():
    text = """
    func.func @main(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
      %y = nn.conv2d %x, %w stride = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
      func.return %y : tensor<1x1x2x2xf32>
    }
    """
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    w = np.ones((1, 1, 2, 2), np.float32)
    (y,) = run_text(text, x, w)
    assert_same(y, np.array([[[[10, 18], [42, 50]]]], np.float32))


# ---------------------------------------------------------------------------------------------
# max_pool2d
# ---------------------------------------------------------------------------------------------


def naive_max_pool(x, kernel, stride, padding):
    n, c, h, w = x.shape
    top, bottom, left, right = padding
    oh = (h + top + bottom - kernel[0]) // stride[0] + 1
    ow = (w + left + right - kernel[1]) // stride[1] + 1
    out = np.zeros((n, c, oh, ow), x.dtype)
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        best = -np.inf
        for p, q in itertools.product(range(kernel[0]), range(kernel[1])):
            y, z = i * stride[0] + p - top, j * stride[1] + q - left
            v = x[b, ch, y, z] if 0 <= y < h and 0 <= z < w else -np.inf
            best = v if np.isnan(v) or np.isnan(best) else max(best, v)
            if np.isnan(best):
                break
        out[b, ch, i, j] = best
    return out


@pytest.mark.parametrize("kernel, stride, padding", [
    ((2, 2), (2, 2), (0, 0, 0, 0)),
    ((3, 3), (1, 1), (1, 1, 1, 1)),
    ((3, 2), (2, 1), (2, 0, 1, 1)),
    ((2, 3), (3, 2), (1, 1, 0, 2)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_max_pool2d_against_naive_loops(kernel, stride, padding, dtype):
    x = rng(4).standard_normal((2, 3, 7, 6)).astype(dtype)
    y = run1(lambda a: nn.MaxPool2DOp(a, kernel, stride, padding), x)
    assert_same(y, naive_max_pool(x, kernel, stride, padding))


def test_max_pool2d_negative_inputs_and_nan():
    x = -np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 3, 3] = np.nan
    y = run1(lambda a: nn.MaxPool2DOp(a, (2, 2), (2, 2), (1, 1, 1, 1)), x)
    assert_same(y, naive_max_pool(x, (2, 2), (2, 2), (1, 1, 1, 1)))
    assert np.isnan(y[0, 0, 2, 2]) and y[0, 0, 0, 0] == -1.0


def test_max_pool2d_bf16():
    x = rng(5).standard_normal((1, 2, 4, 4)).astype(BF16)
    y = run1(lambda a: nn.MaxPool2DOp(a, (2, 2), None, (0, 0, 0, 0)), x)
    assert_same(y, naive_max_pool(x.astype(np.float32), (2, 2), (2, 2), (0, 0, 0, 0)).astype(BF16))


# ---------------------------------------------------------------------------------------------
# im2col / col2im
# ---------------------------------------------------------------------------------------------

WINDOWS = [
    # (input shape, kernel, stride, padding, dilation)
    ((2, 3, 6, 5), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((1, 2, 9, 8), (2, 3), (2, 1), (0, 2, 1, 0), (2, 1)),
]


def naive_im2col(x, kernel, stride, padding, dilation):
    """Entry (c, kh, kw), (n, oh, ow) read from the zero-padded input, by the op definition."""
    top, bottom, left, right = padding
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, c = x.shape[:2]
    oh = (xp.shape[2] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    cols = np.zeros((c, kernel[0], kernel[1], n, oh, ow), x.dtype)
    for ci, i, j, ni, a, b in itertools.product(range(c), range(kernel[0]), range(kernel[1]), range(n), range(oh), range(ow)):
        cols[ci, i, j, ni, a, b] = xp[ni, ci, a * stride[0] + i * dilation[0], b * stride[1] + j * dilation[1]]
    return cols.reshape(c * kernel[0] * kernel[1], n * oh * ow)


@pytest.mark.parametrize("case", range(len(WINDOWS)))
def test_im2col_is_the_window_matrix_and_col2im_its_transpose(case):
    shape, kernel, stride, padding, dilation = WINDOWS[case]
    g = rng(case)
    x = g.standard_normal(shape)
    (cols,) = run_ops(lambda v: nn.Im2ColOp(v, kernel, stride, padding, dilation), x)
    assert_same(cols, naive_im2col(x, kernel, stride, padding, dilation))
    # col2im is im2col's transpose: <im2col(x), c> == <x, col2im(c)> for every x and c.
    c = g.standard_normal(cols.shape)
    (back,) = run_ops(lambda v: nn.Col2ImOp(v, shape, kernel, stride, padding, dilation), c)
    np.testing.assert_allclose(np.sum(cols * c), np.sum(x * back), rtol=1e-12)
    # conv2d is the weight matrix times the window matrix.
    w = g.standard_normal((4, shape[1], *kernel))
    (conv,) = run_ops(lambda v, k: nn.Conv2DOp(v, k, stride, padding, dilation), x, w)
    via = (w.reshape(4, -1) @ cols).reshape(4, shape[0], *conv.shape[2:]).transpose(1, 0, 2, 3)
    np.testing.assert_allclose(via, conv, rtol=1e-12, atol=1e-12)
