"""`x[...]` on traced arrays: slices with any step, negative indices, None and Ellipsis, integer
index arrays, traced integer indices in loops, and the IndexErrors numpy raises too.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import assert_array, check_traced, randint, randn

X = randn(4, 5, 6, seed=1)

BASIC_INDICES = [
    (slice(1, 3), slice(None, None, 2), 2),
    (slice(1, 3), slice(None, None, 2), 2, slice(None, None, -1)),  # x[a:b, ::2, i, ::-1] on 4-D below
    (-1,),
    (-4, -5, -6),
    (slice(None, None, -1),),
    (slice(-1, None, -2), slice(-2, 0, -1)),
    (slice(3, 1, -1), Ellipsis, slice(None, -2)),
    (Ellipsis, 0),
    (Ellipsis,),
    (None, 1, None, slice(1, 4)),
    (slice(None), None, Ellipsis, None),
    (2, Ellipsis, None),
    (slice(10, 20),),  # out-of-range slices clamp, as in numpy
    (slice(-100, 100, 3),),
    (1, 2, 3),
    (slice(4, 1),),  # empty
]


@pytest.mark.parametrize("index", BASIC_INDICES, ids=repr)
def test_basic_indexing(index):
    x = X if len([i for i in index if i is not None and i is not Ellipsis]) <= 3 else randn(4, 5, 3, 6, seed=2)
    check_traced(lambda a: a[index], lambda a: a[index], x)


def test_single_int_and_slice_forms():
    check_traced(lambda a: a[1], lambda a: a[1], X)
    check_traced(lambda a: a[-2], lambda a: a[-2], X)
    check_traced(lambda a: a[1:3], lambda a: a[1:3], X)
    check_traced(lambda a: a[::-2, 1], lambda a: a[::-2, 1], X)
    check_traced(lambda a: a[np.int64(2), np.int32(-1)], lambda a: a[2, -1], X)
    check_traced(lambda a: a[None], lambda a: a[None], X)


def test_indexing_a_scalar_array():
    s = np.array(3.5, np.float32)
    check_traced(lambda a: a[None], lambda a: a[None], s)
    check_traced(lambda a: a[...], lambda a: a[...], s)


@pytest.mark.parametrize(
    "index",
    [
        np.array([2, 0, -1]),
        np.array([[1, 1], [0, 3]]),
        [3, -4],
    ],
    ids=repr,
)
def test_integer_array_index(index):
    check_traced(lambda a: a[index], lambda a: a[np.asarray(index)], X)
    check_traced(lambda a: a[1:3, index], lambda a: a[1:3, np.asarray(index)], X)
    check_traced(lambda a: a[..., index], lambda a: a[..., np.asarray(index)], X)


I2 = np.array([[0, 1], [2, 3]])

SEPARATED_ADVANCED_INDICES = [
    (I2, None, 1),
    (I2, Ellipsis, 1),
    (1, slice(None), I2),
    (None, 1, I2),
    (1, I2, slice(None)),
    (slice(None), 1, I2),
    (slice(None), I2, Ellipsis, 1),
    (slice(None), I2, 1, Ellipsis),
    (None, I2, slice(None), 2),
    (-1, slice(None, None, -1), I2[0]),
]


@pytest.mark.parametrize("index", SEPARATED_ADVANCED_INDICES, ids=repr)
def test_advanced_indices_separated_by_a_slice_go_first(index):
    """numpy's rule: an index array and ints separated by a slice, None or ... put the
    gathered dimensions first; adjacent ones keep their place."""
    check_traced(lambda a: a[index], lambda a: a[index], X)


X4 = randn(4, 5, 6, 4, seed=5)
R, C, Z = np.array([0, 3, -1]), np.array([[1], [2]]), np.array([2, -4, 3])

SEVERAL_INDEX_ARRAYS = [
    (R, R),
    (R, slice(None), Z),
    (slice(None), R, Z),
    (C, R),
    (slice(None), C, R, 1),
    (1, slice(None), C, R),
    (R, 2, Z),
    (Ellipsis, R, np.array([0, 2, 1])),
    (None, R, slice(None), Z),
    (R, slice(1, 4), Z, slice(None, None, -1)),
    (R, C, Z.reshape(1, 3)),
    ([0, 1], [2, 3], [4, 5], [3, 0]),
]


@pytest.mark.parametrize("index", SEVERAL_INDEX_ARRAYS, ids=repr)
def test_several_index_arrays_broadcast_together(index):
    """numpy's advanced indexing with several integer arrays: they broadcast together; the
    result's dimensions stand where the first array was, or first when separated."""
    check_traced(lambda a: a[index], lambda a: a[tuple(np.asarray(i) if isinstance(i, list) else i for i in index)], X4)


def test_several_traced_index_arrays_and_their_gradient():
    """`logits[arange(n), labels]`, the cross-entropy idiom, traced and differentiated: the
    gradient scatters back, summed where a pair repeats."""
    rows, cols = np.array([0, 0, 1, 3], np.int32), np.array([2, 2, 4, 0], np.int32)
    x = randn(4, 5, dtype=np.float64, seed=6)
    check_traced(lambda a, i, j: a[i, j], lambda a, i, j: a[i, j], x, rows, cols)
    g = ig.grad(lambda a: ig.sum(a[rows, cols] ** 2))(x)
    want = np.zeros_like(x)
    np.add.at(want, (rows, cols), 2 * x[rows, cols])
    np.testing.assert_allclose(g, want, rtol=1e-14)
    labels = np.array([3, 1, 4, 1], np.int32)
    loss = lambda a, y: -ig.mean(ig.log_softmax(a)[ig.arange(4), y])  # noqa: E731
    shifted = x - x.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(ig.jit(loss)(x, labels), -logp[np.arange(4), labels].mean(), rtol=1e-13)


def test_traced_scalar_and_index_array_separated():
    k = np.array(2, np.int32)
    check_traced(lambda a, k: a[k, :, I2], lambda a, k: a[2, :, I2], X, k)
    check_traced(lambda a, k: a[:, k, I2], lambda a, k: a[:, 2, I2], X, k)


def test_traced_integer_index_array():
    idx = randint(-4, 4, 2, 3, seed=3)
    check_traced(lambda a, i: a[i], lambda a, i: a[i], X, idx)
    check_traced(lambda a, i: a[:, i], lambda a, i: a[:, i % 5], X, randint(0, 5, 4, seed=4))


@pytest.mark.parametrize("i", [0, 2, 3, -1, -4])
def test_traced_scalar_index(i):
    idx = np.array(i, np.int32)
    check_traced(lambda a, k: a[k], lambda a, k: a[int(k)], X, idx)
    check_traced(lambda a, k: a[1:3, k], lambda a, k: a[1:3, int(k)], X, idx)
    check_traced(lambda a, k: a[k, ::-1, 2], lambda a, k: a[int(k), ::-1, 2], X, idx)


def test_traced_index_inside_fori_loop():
    xs = randn(5, 3, seed=5)

    def running_sum(xs):
        return ig.fori_loop(0, xs.shape[0], lambda i, acc: acc + xs[i], ig.zeros((3,)))

    check_traced(running_sum, lambda a: a.sum(axis=0), xs, rtol=1e-5)

    def reversed_rows(xs):
        def body(i, out):
            return ig.concatenate([out[1:], xs[-1 - i][None]], axis=0)

        return ig.fori_loop(0, 5, body, ig.zeros((5, 3)))

    check_traced(reversed_rows, lambda a: a[::-1], xs)


def test_traced_index_into_a_loop_carry():
    xs = randn(4, seed=6)

    def prefix_max(xs):
        def body(i, carry):
            best, out = carry
            best = ig.maximum(best, xs[i])
            return best, out + ig.where(ig.arange(4) == i, best, 0.0)

        return ig.fori_loop(0, 4, body, (xs[0], ig.zeros((4,))))[1]

    check_traced(prefix_max, np.maximum.accumulate, xs)


@pytest.mark.parametrize("index", [5, -6, (0, 7), (slice(None), slice(None), -7)], ids=repr)
def test_out_of_bounds_static_index_raises_index_error(index):
    with pytest.raises(IndexError, match="out of bounds"):
        ig.trace(lambda a: a[index], X)


def test_too_many_indices_raises_index_error():
    with pytest.raises(IndexError, match="too many indices"):
        ig.trace(lambda a: a[0, 0, 0, 0], X)


@pytest.mark.parametrize("mask", [np.array([True, False, True, False]), True, [True, False, True, False]],
                         ids=["array", "python-bool", "list"])
def test_boolean_mask_raises_index_error(mask):
    with pytest.raises(IndexError, match="boolean mask"):
        ig.trace(lambda a: a[mask], X)


def test_traced_boolean_mask_raises_index_error():
    with pytest.raises(IndexError, match="ig.where"):
        ig.trace(lambda a: a[a > 0], X)


def test_float_index_raises_index_error():
    with pytest.raises(IndexError):
        ig.trace(lambda a: a[1.0], X)


def test_slice_with_zero_step_raises():
    with pytest.raises(ValueError):
        ig.trace(lambda a: a[::0], X)


def test_indexing_result_dtype_is_kept():
    i = randint(0, 9, 3, 4, seed=7)
    assert_array(ig.trace(lambda a: a[1, ::-1], i)(i), i[1, ::-1], dtype=np.int32)
