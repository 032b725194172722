"""Shape functions (`ig.reshape`, `transpose`, `concatenate`, `pad`, `take`, ...) and network
functions (`ig.softmax`, `logsumexp`, `one_hot`, `conv2d`, `max_pool2d`) against numpy, eager
and traced.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import check, check_traced, randint, randn

# ---------------------------------------------------------------------------------------------
# Shape functions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(6, 4), (-1,), (2, -1, 3), (24,), (4, 3, 2), (1, 24, 1), -1])
def test_reshape(shape):
    x = randn(2, 3, 4, seed=1)
    check(lambda a: ig.reshape(a, shape), lambda a: np.reshape(a, shape), x, dtype=np.float32)


def test_reshape_method_forms():
    x = randn(2, 6, seed=2)
    check_traced(lambda a: a.reshape(3, 4), lambda a: a.reshape(3, 4), x)
    check_traced(lambda a: a.reshape((4, -1)), lambda a: a.reshape((4, -1)), x)
    check_traced(lambda a: a.reshape(-1), lambda a: a.reshape(-1), x)
    check_traced(lambda a: a.flatten(), lambda a: a.flatten(), x)


@pytest.mark.parametrize("axes", [None, (0, 1, 2), (2, 0, 1), (1, 0, 2), (-1, 0, 1)])
def test_transpose(axes):
    x = randn(2, 3, 4, seed=3)
    check(lambda a: ig.transpose(a, axes), lambda a: np.transpose(a, axes), x, dtype=np.float32)


@pytest.mark.parametrize("a1, a2", [(0, 2), (-1, 0), (1, 1), (-2, -1)])
def test_swapaxes(a1, a2):
    x = randn(2, 3, 4, seed=4)
    check(lambda a: ig.swapaxes(a, a1, a2), lambda a: np.swapaxes(a, a1, a2), x, dtype=np.float32)
    check_traced(lambda a: a.swapaxes(a1, a2), lambda a: np.swapaxes(a, a1, a2), x)


@pytest.mark.parametrize(
    "src, dst", [((3,), (2, 3)), ((1, 3), (4, 3)), ((2, 1), (2, 5)), ((), (2, 2)), ((3, 1), (2, 3, 4)), ((2, 3), (2, 3))]
)
def test_broadcast_to(src, dst):
    x = randn(*src, seed=5)
    check(lambda a: ig.broadcast_to(a, dst), lambda a: np.broadcast_to(a, dst), x, dtype=np.float32)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3, (0, 2), (0, -1), (1, 3)])
def test_expand_dims(axis):
    x = randn(2, 3, seed=6)
    check(lambda a: ig.expand_dims(a, axis), lambda a: np.expand_dims(a, axis), x, dtype=np.float32)


@pytest.mark.parametrize("axis", [None, 0, 2, -1, (0, 3), (-4, -1)])
def test_squeeze(axis):
    x = randn(1, 3, 1, 1, seed=7)
    check(lambda a: ig.squeeze(a, axis), lambda a: np.squeeze(a, axis), x, dtype=np.float32)


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_concatenate(axis):
    shapes = {0: [(1, 3), (2, 3), (3, 3)], 1: [(2, 1), (2, 2), (2, 3)]}[axis % 2]
    xs = [randn(*s, seed=10 + i) for i, s in enumerate(shapes)]
    check(lambda a, b, c: ig.concatenate([a, b, c], axis=axis), lambda a, b, c: np.concatenate([a, b, c], axis=axis),
          *xs, dtype=np.float32)


def test_concatenate_promotes():
    a = randn(2, seed=13)
    b = randint(0, 5, 3, seed=14)
    check(lambda u, v: ig.concatenate([u, v]), lambda u, v: np.concatenate([u, v.astype(np.float32)]), a, b,
          dtype=np.float32)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack(axis):
    xs = [randn(2, 3, seed=15 + i) for i in range(3)]
    check(lambda a, b, c: ig.stack([a, b, c], axis=axis), lambda a, b, c: np.stack([a, b, c], axis=axis), *xs,
          dtype=np.float32)


@pytest.mark.parametrize(
    "pad_width, value",
    [(1, 0), ((1, 2), 0), (((0, 1), (2, 0)), -1.5), (((1, 1), (0, 0)), 2), (0, 0)],
)
def test_pad(pad_width, value):
    x = randn(2, 3, seed=18)
    check(lambda a: ig.pad(a, pad_width, constant_values=value),
          lambda a: np.pad(a, pad_width, constant_values=value), x, dtype=np.float32)


def test_pad_int():
    x = randint(0, 9, 3, seed=19)
    check(lambda a: ig.pad(a, (2, 1), constant_values=7), lambda a: np.pad(a, (2, 1), constant_values=7), x,
          dtype=np.int32)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take(axis):
    x = randn(3, 4, seed=20)
    n = x.size if axis is None else x.shape[axis]
    idx = randint(-n, n, 2, 3, seed=21)
    check(lambda a, i: ig.take(a, i, axis=axis), lambda a, i: np.take(a, i, axis=axis), x, idx, dtype=np.float32)


def test_take_with_constant_indices():
    x = randn(5, 2, seed=22)
    check(lambda a: ig.take(a, np.array([4, 0, -1, 2]), axis=0), lambda a: np.take(a, [4, 0, -1, 2], axis=0), x,
          dtype=np.float32)
    check(lambda a: ig.take(a, [1, 1, 0], axis=1), lambda a: np.take(a, [1, 1, 0], axis=1), x, dtype=np.float32)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_along_axis(axis):
    x = randn(2, 3, 4, seed=23)
    n = x.shape[axis]
    shape = list(x.shape)
    shape[axis] = 5
    idx = randint(-n, n, *shape, seed=24)  # negative indices included
    check(lambda a, i: ig.take_along_axis(a, i, axis), lambda a, i: np.take_along_axis(a, i, axis), x, idx,
          dtype=np.float32)


def test_take_along_axis_broadcasts_indices():
    # The usual argmax / label gather: indices of size 1 along the other axes.
    x = randn(4, 5, seed=25)
    idx = randint(0, 5, 4, 1, seed=26)
    check(lambda a, i: ig.take_along_axis(a, i, axis=1), lambda a, i: np.take_along_axis(a, i, axis=1), x, idx,
          dtype=np.float32)
    idx0 = randint(-4, 4, 2, 1, seed=27)
    check(lambda a, i: ig.take_along_axis(a, i, axis=0), lambda a, i: np.take_along_axis(a, i, axis=0), x,
          np.broadcast_to(idx0, (2, 5)).copy(), dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# softmax family
# ---------------------------------------------------------------------------------------------


def _np_logsumexp(x, axis=None, keepdims=False):
    x = np.asarray(x, np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _np_softmax(x, axis=-1):
    return np.exp(np.asarray(x, np.float64) - _np_logsumexp(x, axis=axis, keepdims=True))


def _np_log_softmax(x, axis=-1):
    return np.asarray(x, np.float64) - _np_logsumexp(x, axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, 1, (0, 1)])
def test_softmax_log_softmax(axis):
    x = randn(3, 4, seed=28) * 3
    check(lambda a: ig.softmax(a, axis=axis), lambda a: _np_softmax(a, axis).astype(np.float32), x,
          dtype=np.float32, rtol=1e-5)
    check(lambda a: ig.log_softmax(a, axis=axis), lambda a: _np_log_softmax(a, axis).astype(np.float32), x,
          dtype=np.float32, rtol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp(axis, keepdims):
    x = randn(3, 4, seed=29) * 3
    check(lambda a: ig.logsumexp(a, axis=axis, keepdims=keepdims),
          lambda a: _np_logsumexp(a, axis, keepdims).astype(np.float32), x, dtype=np.float32, rtol=1e-5)


def test_softmax_family_is_stable_for_large_and_infinite_inputs():
    x = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, 0.0, 1.0], [-np.inf, -np.inf, 3.0], [1e4, -1e4, 0.0]],
                 dtype=np.float32)
    check(lambda a: ig.logsumexp(a, axis=-1), lambda a: _np_logsumexp(a, -1).astype(np.float32), x,
          dtype=np.float32, rtol=1e-6)
    check(lambda a: ig.softmax(a), lambda a: _np_softmax(a).astype(np.float32), x, dtype=np.float32)
    check(lambda a: ig.log_softmax(a), lambda a: _np_log_softmax(a).astype(np.float32), x, dtype=np.float32)
    big = np.full((2, 3), 1000.0, np.float32)
    check(ig.logsumexp, np.float32(1000.0 + np.log(6.0)), big, dtype=np.float32)


def test_logsumexp_of_all_minus_inf_row_is_minus_inf():
    x = np.array([[-np.inf, -np.inf], [0.0, 0.0]], dtype=np.float32)
    check(lambda a: ig.logsumexp(a, axis=1), np.array([-np.inf, np.log(2.0)], np.float32), x, dtype=np.float32)


def test_softmax_of_ints_is_float32():
    x = randint(0, 4, 2, 3, seed=30)
    check(ig.softmax, lambda a: _np_softmax(a).astype(np.float32), x, dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# one_hot, conv2d, max_pool2d
# ---------------------------------------------------------------------------------------------


def test_one_hot():
    labels = randint(0, 4, 2, 3, seed=31)
    check(lambda l: ig.one_hot(l, 4), lambda l: np.eye(4, dtype=np.float32)[l], labels, dtype=np.float32)
    check(lambda l: ig.one_hot(l, 5, dtype=ig.int32), lambda l: np.eye(5, dtype=np.int32)[l], labels, dtype=np.int32)


def test_one_hot_out_of_range_gives_zeros():
    labels = np.array([0, 3, -1, 2], dtype=np.int32)
    want = np.array([[1, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 1]], np.float32)
    check(lambda l: ig.one_hot(l, 3), want, labels, dtype=np.float32)


def _np_conv2d(x, w, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1)):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    top, bottom, left, right = padding
    xp = np.zeros((n, c, h + top + bottom, wd + left + right), np.float64)
    xp[:, :, top : top + h, left : left + wd] = x
    oh = (xp.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    for b in range(n):
        for k in range(o):
            for i in range(oh):
                for j in range(ow):
                    total = 0.0
                    for ci in range(c):
                        for p in range(kh):
                            for q in range(kw):
                                total += xp[b, ci, i * stride[0] + p * dilation[0], j * stride[1] + q * dilation[1]] * w[k, ci, p, q]
                    out[b, k, i, j] = total
    return out


@pytest.mark.parametrize(
    "stride, padding, dilation, np_args",
    [
        (1, 0, 1, ((1, 1), (0, 0, 0, 0), (1, 1))),
        (2, 1, 1, ((2, 2), (1, 1, 1, 1), (1, 1))),
        ((1, 2), (2, 0), 1, ((1, 2), (2, 2, 0, 0), (1, 1))),
        (1, 1, 2, ((1, 1), (1, 1, 1, 1), (2, 2))),
        (2, ((0, 1), (1, 2)), (2, 1), ((2, 2), (0, 1, 1, 2), (2, 1))),
    ],
)
def test_conv2d(stride, padding, dilation, np_args):
    x = randn(2, 3, 6, 5, seed=32)
    w = randn(4, 3, 3, 2, seed=33)
    want = _np_conv2d(x, w, *np_args).astype(np.float32)
    check(lambda a, b: ig.conv2d(a, b, stride=stride, padding=padding, dilation=dilation), want, x, w,
          dtype=np.float32, rtol=1e-5, atol=1e-5)


def _np_max_pool2d(x, k, s, padding):
    top, bottom, left, right = padding
    n, c, h, w = x.shape
    xp = np.full((n, c, h + top + bottom, w + left + right), -np.inf, x.dtype)
    xp[:, :, top : top + h, left : left + w] = x
    oh = (xp.shape[2] - k[0]) // s[0] + 1
    ow = (xp.shape[3] - k[1]) // s[1] + 1
    out = np.empty((n, c, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = xp[:, :, i * s[0] : i * s[0] + k[0], j * s[1] : j * s[1] + k[1]].max(axis=(2, 3))
    return out


@pytest.mark.parametrize(
    "kernel, stride, padding, np_args",
    [
        (2, None, 0, ((2, 2), (2, 2), (0, 0, 0, 0))),
        (3, 1, 1, ((3, 3), (1, 1), (1, 1, 1, 1))),
        ((2, 3), (1, 2), 0, ((2, 3), (1, 2), (0, 0, 0, 0))),
        (2, 2, (1, 0), ((2, 2), (2, 2), (1, 1, 0, 0))),
    ],
)
def test_max_pool2d(kernel, stride, padding, np_args):
    x = randn(2, 3, 6, 7, seed=34)
    check(lambda a: ig.max_pool2d(a, kernel, stride=stride, padding=padding), _np_max_pool2d(x, *np_args), x,
          dtype=np.float32)


def test_max_pool2d_of_negative_inputs_ignores_padding():
    # Padding counts as -inf, not 0: an all-negative input keeps its negative maxima.
    x = -np.abs(randn(1, 1, 4, 4, seed=35)) - 1
    check(lambda a: ig.max_pool2d(a, 2, stride=2, padding=1), _np_max_pool2d(x, (2, 2), (2, 2), (1, 1, 1, 1)), x,
          dtype=np.float32)


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_take_modes_clip_fill_and_wrap(backend, monkeypatch):
    """None (irgrad's default: negatives from the end, then clamped), clip (numpy's and JAX's:
    negatives to 0), fill (JAX's default: NaN, the lowest int, True) and wrap."""
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    x, idx = np.arange(5.0), np.array([7, -1, -6, 2, -5])
    for mode, want in [(None, [4.0, 4.0, 0.0, 2.0, 0.0]), ("clip", [4.0, 0.0, 0.0, 2.0, 0.0]),
                       ("fill", [np.nan, 4.0, np.nan, 2.0, 0.0]), ("wrap", [2.0, 4.0, 4.0, 2.0, 0.0])]:
        got = ig.jit(lambda a, i, mode=mode: ig.take(a, i, mode=mode), backend=backend)(x, idx)
        np.testing.assert_array_equal(np.asarray(got), want)
    ints = ig.take(np.arange(6, dtype=np.int32).reshape(2, 3), np.array([[0, 5]]), axis=1, mode="fill")
    np.testing.assert_array_equal(np.asarray(ints), [[[0, np.iinfo(np.int32).min]], [[3, np.iinfo(np.int32).min]]])
    assert np.asarray(ig.take(x, np.array([9]), mode="fill", fill_value=-3.0)).tolist() == [-3.0]
    with pytest.raises(ValueError, match="mode must be 'clip', 'fill' or 'wrap'"):
        ig.take(x, np.array([1]), mode="raise")


def test_take_fill_gradient_is_zero_for_filled_positions():
    g = ig.grad(lambda v: ig.sum(ig.take(v, np.array([1, 9, 1, -7]), mode="fill", fill_value=0.0)))(np.arange(5.0))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 2.0, 0.0, 0.0, 0.0])
