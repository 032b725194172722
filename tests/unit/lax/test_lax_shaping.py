"""lax.slice, rev, pad, dot_general, sort and sort_key_val with lax's signatures: the cases of
JAX's tests/lax_test.py (testPad, testPadAgainstNumpy, testDotGeneralContractAndBatch,
testSortKeyVal, testSort with num_keys), against numpy references (as JAX's lax_reference), and
their gradients against float64 finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from irgrad import lax

PAD_CASES = [
    ((0, 2), [(1, 2, 1), (0, 1, 0)]),
    ((2, 3), [(1, 2, 1), (0, 1, 0)]),
    ((2,), [(1, 2, 0)]),
    ((1, 2), [(1, 2, 0), (3, 4, 0)]),
    ((1, 2), [(0, 0, 0), (0, 0, 0)]),
    ((2,), [(1, 2, 3)]),
    ((3, 2), [(1, 2, 1), (3, 4, 2)]),
    ((2,), [(-1, 2, 0)]),
    ((4, 2), [(-1, -2, 0), (1, 2, 0)]),
    ((4, 2), [(-1, 2, 0), (1, 2, 2)]),
    ((5,), [(-1, -2, 2)]),
    ((4, 2), [(-1, -2, 1), (1, 2, 2)]),
    ((2, 3), [(1, 1, 0), (2, 2, 0)]),
    ((2, 3), [(0, 0, 0), (-1, -1, 0)]),
    ((2, 3), [(0, 0, 0), (-2, -2, 4)]),
    ((2, 3), [(0, 0, 0), (-2, -3, 1)]),
]


def _pad_reference(x: np.ndarray, value: float, config) -> np.ndarray:
    """lax_reference.pad: dilate by `interior`, pad the positive edges, cut the negative ones."""
    for axis, (_, _, interior) in enumerate(config):
        n = x.shape[axis]
        if interior and n > 1:
            shape = list(x.shape)
            shape[axis] = n + (n - 1) * interior
            out = np.full(shape, value, x.dtype)
            index = [slice(None)] * x.ndim
            index[axis] = slice(None, None, interior + 1)
            out[tuple(index)] = x
            x = out
    x = np.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi, _ in config], constant_values=value)
    index = tuple(slice(-min(lo, 0), x.shape[a] + min(hi, 0)) for a, (lo, hi, _) in enumerate(config))
    return x[index]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shape, config", PAD_CASES, ids=repr)
def test_pad_matches_the_reference(shape, config, dtype):
    x = (np.random.default_rng(0).normal(size=shape) * 5).astype(dtype)
    want = _pad_reference(x, -7, config)
    got = lax.pad(x, dtype(-7), config)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ig.jit(lambda x: lax.pad(x, dtype(-7), config))(x), want)


def test_pad_gradient_reaches_the_operand_and_the_padding_value():
    x = np.random.default_rng(1).normal(size=(3, 2))
    config = [(1, -1, 2), (-1, 2, 1)]
    weights = np.random.default_rng(2).normal(size=_pad_reference(x, 0.0, config).shape)
    gx, gv = ig.grad(lambda x, v: ig.sum(lax.pad(x, v, config) * weights), argnums=(0, 1))(x, 0.5)
    mask = _pad_reference(np.ones_like(x), 0.0, config)
    # The operand's cotangent: the weights at the places its elements landed.
    landed = _pad_reference(np.arange(1.0, x.size + 1).reshape(x.shape), 0.0, config)
    want_gx = np.zeros(x.size)
    for k in range(1, x.size + 1):
        want_gx[k - 1] = weights[landed == k].sum()
    np.testing.assert_allclose(gx, want_gx.reshape(x.shape), rtol=1e-12)
    np.testing.assert_allclose(gv, weights[mask == 0].sum(), rtol=1e-6)


@pytest.mark.parametrize("bad, message", [
    ([(1, 1, 0)], "one \\(low, high, interior\\) per axis"),
    ([(0, 0, -1), (0, 0, 0)], "interior padding -1 of axis 0 is negative"),
    ([(-5, 0, 0), (0, 0, 0)], "removes more than the axis holds"),
])
def test_pad_rejects_bad_configs(bad, message):
    with pytest.raises(ig.ShapeError, match=message):
        lax.pad(np.ones((2, 3)), 0.0, bad)


def test_slice_and_rev():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 3)), x[0:2, 1:3, 0:4:3])
    np.testing.assert_array_equal(lax.slice(x, (1, 0, 1), (2, 3, 3)), x[1:2, 0:3, 1:3])
    np.testing.assert_array_equal(lax.rev(x, (0, 2)), x[::-1, :, ::-1])
    np.testing.assert_array_equal(lax.rev(x, ()), x)
    with pytest.raises(ig.ShapeError, match="do not fit a dimension of size 3"):
        lax.slice(x, (0, 2, 0), (2, 4, 4))
    with pytest.raises(ig.ShapeError, match="not distinct axes"):
        lax.rev(x, (0, 0))
    g = ig.grad(lambda x: ig.sum(lax.slice(lax.rev(x, (1,)), (0, 0, 1), (2, 2, 4), (1, 1, 2)) ** 2))(x)
    want = np.zeros_like(x)
    want[:, ::-1][:, 0:2, 1:4:2] = 2 * x[:, ::-1][:, 0:2, 1:4:2]
    np.testing.assert_allclose(g, want)


DOT_GENERAL_CASES = [  # JAX's testDotGeneralContractAndBatch and testDotGeneralContractOnly
    ((3, 3, 2), (3, 2, 4), (([2], [1]), ([0], [0]))),
    ((3, 3, 2), (2, 3, 4), (([2], [0]), ([0], [1]))),
    ((3, 4, 2, 4), (3, 4, 3, 2), (([2], [3]), ([0, 1], [0, 1]))),
    ((2, 3), (3,), (([1], [0]), ([], []))),
    ((4, 3), (3, 6, 5, 4), (([1, 0], [0, 3]), ([], []))),
    ((2, 3, 4), (4, 3), (([], []), ([], []))),
]


@pytest.mark.parametrize("lhs_shape, rhs_shape, numbers", DOT_GENERAL_CASES, ids=repr)
def test_dot_general_matches_numpy(lhs_shape, rhs_shape, numbers):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=lhs_shape), rng.normal(size=rhs_shape)
    (lc, rc), (lb, rb) = numbers
    # lax_reference.dot_general: batch axes first, then lhs's free axes, then rhs's.
    a_free = [i for i in range(a.ndim) if i not in lc and i not in lb]
    b_free = [i for i in range(b.ndim) if i not in rc and i not in rb]
    at = np.transpose(a, [*lb, *a_free, *lc])
    bt = np.transpose(b, [*rb, *rc, *b_free])
    nb, nc = len(lb), len(lc)
    at = at.reshape(at.shape[: nb] + (int(np.prod(at.shape[nb : at.ndim - nc])), int(np.prod(at.shape[at.ndim - nc :]))))
    bt = bt.reshape(bt.shape[: nb] + (int(np.prod(bt.shape[nb : nb + nc])), int(np.prod(bt.shape[nb + nc :]))))
    want = np.matmul(at, bt).reshape(
        tuple(a.shape[i] for i in lb) + tuple(a.shape[i] for i in a_free) + tuple(b.shape[i] for i in b_free)
    )
    got = lax.dot_general(a, b, numbers)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert lax.dot_general(a.astype(np.float32), b.astype(np.float32), numbers,
                           preferred_element_type=np.float64).dtype == np.float64  # fmt: skip
    ga = ig.grad(lambda a: ig.sum(ig.sin(lax.dot_general(a, b, numbers))))(a)
    eps, numeric = 1e-6, np.zeros_like(a)
    for i in np.ndindex(*a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        f = lambda a: np.sum(np.sin(np.asarray(lax.dot_general(a, b, numbers))))
        numeric[i] = (f(a + d) - f(a - d)) / (2 * eps)
    np.testing.assert_allclose(ga, numeric, rtol=1e-6, atol=1e-8)


def test_dot_general_rejects_mismatched_dimensions():
    with pytest.raises(ig.ShapeError, match="lhs axis 1 and rhs axis 0 do not pair up"):
        lax.dot_general(np.ones((2, 3)), np.ones((4, 2)), (([1], [0]), ([], [])))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort_key_val_and_several_keys(axis):
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 3, size=(4, 5))
    second = rng.integers(0, 3, size=(4, 5))
    values = rng.normal(size=(4, 5))
    order = np.argsort(keys, axis=axis, kind="stable")
    k, v = lax.sort_key_val(keys, values, dimension=axis)
    np.testing.assert_array_equal(k, np.take_along_axis(keys, order, axis))
    np.testing.assert_array_equal(v, np.take_along_axis(values, order, axis))
    # num_keys=2: lexicographic on (keys, second), as np.lexsort (last key primary there).
    lex = np.stack([np.lexsort((s, kk)) for kk, s in zip(np.moveaxis(keys, axis, 0).T, np.moveaxis(second, axis, 0).T)])
    sorted_values = lax.sort((keys, second, values), dimension=axis, num_keys=2)[2]
    want = np.moveaxis(np.stack([vv[o] for vv, o in zip(np.moveaxis(values, axis, 0).T, lex)]).T, 0, axis)
    np.testing.assert_array_equal(sorted_values, want)


def test_sort_puts_nans_last_and_its_gradient_is_the_inverse_permutation():
    x = np.array([3.0, np.nan, -1.0, 2.0])
    np.testing.assert_array_equal(lax.sort(x), [-1.0, 2.0, 3.0, np.nan])
    y = np.array([0.3, -2.0, 1.5, 0.1])
    g = ig.grad(lambda y: ig.sum(lax.sort(y) * np.arange(1.0, 5.0)))(y)
    np.testing.assert_allclose(g, [3.0, 1.0, 4.0, 2.0])
    with pytest.raises(ValueError, match="num_keys=3"):
        lax.sort((y, y), num_keys=3)
