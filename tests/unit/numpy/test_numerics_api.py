"""clip, isfinite/isnan/isinf, all/any, argmax/argmin, var/std (irgrad/numpy/numerics.py):
against numpy on random inputs with NaN, infinities and ties, eagerly and compiled; their
derivative contracts (clip's bounds, no gradient through predicates and indices) against
float64 finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig

RNG = np.random.default_rng(0)


def special(shape: tuple[int, ...], dtype=np.float32) -> np.ndarray:
    """Random normals with NaN, +-inf and repeated values sprinkled in."""
    x = RNG.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    picks = RNG.choice(flat.size, size=min(6, flat.size), replace=False)
    for i, v in zip(picks, [np.nan, np.inf, -np.inf, 1.0, 1.0, np.nan]):
        flat[i] = v
    return x


def both(fn, *args):
    """fn eagerly and under ig.jit (CPU), which must agree: exactly, except for the rounding
    of float sums, which the CPU adds in a blocked order."""
    eager, jitted = np.asarray(fn(*args)), np.asarray(ig.jit(fn)(*args))
    if eager.dtype.kind == "f":
        np.testing.assert_allclose(jitted, eager, rtol=1e-12 if eager.dtype == np.float64 else 1e-6)
    else:
        np.testing.assert_array_equal(jitted, eager)
    return eager


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_predicates_match_numpy(dtype):
    x = special((5, 7), dtype)
    for ours, theirs in ((ig.isfinite, np.isfinite), (ig.isnan, np.isnan), (ig.isinf, np.isinf)):
        got = both(ours, x)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, theirs(x))


def test_predicates_of_integers_and_bools():
    for x in (np.arange(6, dtype=np.int32), np.array([True, False])):
        np.testing.assert_array_equal(ig.isfinite(x), np.ones(x.shape, bool))
        np.testing.assert_array_equal(ig.isnan(x), np.zeros(x.shape, bool))
        np.testing.assert_array_equal(ig.isinf(x), np.zeros(x.shape, bool))


@pytest.mark.parametrize(("low", "high"), [(-0.5, 0.5), (None, 0.0), (0.0, None), (1.0, -1.0)])
def test_clip_matches_numpy(low, high):
    x = special((4, 9))
    np.testing.assert_array_equal(both(lambda v: ig.clip(v, low, high), x), np.clip(x, low, high))


def test_clip_with_array_bounds_broadcasts():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    low = RNG.standard_normal(4).astype(np.float32) - 1
    high = low + 1
    np.testing.assert_array_equal(both(ig.clip, x, low, high), np.clip(x, low, high))


def test_clip_gradient_contract():
    """1 inside, 0 outside, 0.5 at a bound exactly (the other half goes to the bound), as
    jnp.clip: maximum then minimum, whose ties split the cotangent."""
    x = np.array([-2.0, -1.0, 0.3, 1.0, 2.0])
    np.testing.assert_array_equal(ig.grad(lambda v: ig.sum(ig.clip(v, -1.0, 1.0)))(x), [0, 0.5, 1, 0.5, 0])
    g_low, g_high = ig.grad(lambda lo, hi: ig.sum(ig.clip(x, lo, hi)), argnums=(0, 1))(-1.0, 1.0)
    assert (g_low, g_high) == (1.5, 1.5)  # x=-2 all, x=-1 half; x=2 all, x=1 half


def test_clip_gradients_match_finite_differences_away_from_the_bounds():
    x = RNG.standard_normal((4, 5))
    x[np.abs(np.abs(x) - 0.8) < 0.05] = 0.0  # keep 1e-6 steps away from the kinks
    low, high = np.full(5, -0.8), np.full(5, 0.8)
    ig.check_grads(lambda v, lo, hi: ig.clip(v, lo, hi) ** 2, (x, low, high), order=2)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin_match_numpy(axis, keepdims):
    x = special((6, 8))
    x[2] = np.arange(8, dtype=np.float32)  # a row without NaN
    for ours, theirs in ((ig.argmax, np.argmax), (ig.argmin, np.argmin)):
        got = both(lambda v: ours(v, axis=axis, keepdims=keepdims), x)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, theirs(x, axis=axis, keepdims=keepdims))


def test_argmax_takes_the_first_of_ties_and_of_nans():
    x = np.array([[1, 3, 3, 0], [np.nan, 2, np.nan, 9], [5, 5, 5, 5]], np.float32)
    np.testing.assert_array_equal(ig.argmax(x, axis=1), [1, 0, 0])
    np.testing.assert_array_equal(ig.argmin(x, axis=1), [3, 0, 0])
    ints = RNG.integers(-3, 3, (5, 6)).astype(np.int32)
    np.testing.assert_array_equal(ig.argmax(ints, axis=0), np.argmax(ints, axis=0))


def test_all_any_match_numpy():
    x = RNG.integers(0, 2, (4, 5, 3)).astype(bool)
    x[1] = True
    for axis in (None, 0, (0, 2), -1):
        np.testing.assert_array_equal(both(lambda v: ig.all(v, axis=axis), x), np.all(x, axis=axis))
        np.testing.assert_array_equal(both(lambda v: ig.any(v, axis=axis), x), np.any(x, axis=axis))
    floats = special((3, 4))
    np.testing.assert_array_equal(ig.any(floats, axis=1, keepdims=True), np.any(floats, axis=1, keepdims=True))
    empty = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(ig.all(empty, axis=0), np.all(empty, axis=0))
    np.testing.assert_array_equal(ig.any(empty), np.any(empty))


@pytest.mark.parametrize("ddof", [0, 1])
def test_var_std_match_numpy(ddof):
    x = RNG.standard_normal((4, 6, 5))
    for axis in (None, 1, (0, 2)):
        np.testing.assert_allclose(both(lambda v: ig.var(v, axis=axis, ddof=ddof), x), np.var(x, axis=axis, ddof=ddof), rtol=1e-12)
        np.testing.assert_allclose(both(lambda v: ig.std(v, axis=axis, ddof=ddof, keepdims=True), x),
                                   np.std(x, axis=axis, ddof=ddof, keepdims=True), rtol=1e-12)  # fmt: skip
    assert ig.var(np.arange(5, dtype=np.int32)).dtype == np.float32  # integers become float32
    with np.errstate(divide="ignore", invalid="ignore"):
        assert np.isinf(ig.var(np.arange(3.0), ddof=3)) and np.isnan(ig.var(np.ones(3), ddof=3))


def test_var_std_gradients_match_finite_differences():
    x = RNG.standard_normal((3, 5))
    ig.check_grads(lambda v: ig.var(v, axis=1, ddof=1), (x,), order=2)
    ig.check_grads(lambda v: ig.std(v, axis=0), (x,), order=2)


def test_std_of_a_constant_has_a_zero_gradient_not_nan():
    np.testing.assert_array_equal(ig.grad(lambda v: ig.std(v))(np.ones(4)), np.zeros(4))
    assert ig.std(np.ones(4)) == 0.0
    with np.errstate(invalid="ignore"):
        for v in (np.array([1.0, np.nan]), np.array([0.0, np.inf]), np.array([np.inf, np.inf])):
            np.testing.assert_array_equal(ig.std(v), np.std(v))  # NaN, as numpy


def test_no_gradient_flows_through_predicates_and_indices():
    """Their results are bool or int: a loss that uses them to select or index is
    differentiated through the selected values only."""
    x = RNG.standard_normal(6)
    x[2] = 4.0

    def loss(v):
        finite = ig.where(ig.isfinite(v), v, 0.0)
        return ig.sum(finite**2) + ig.take(v, ig.argmax(v)) * 3.0

    expected = 2 * x
    expected[2] += 3.0
    np.testing.assert_allclose(ig.grad(loss)(x), expected, rtol=1e-12)


def test_errors_name_the_function():
    with pytest.raises(ValueError, match="clip: at least one of min and max"):
        ig.clip(np.ones(3))
    with pytest.raises(ig.ShapeError, match="argmax: attempt to get argmax of an empty sequence"):
        ig.argmax(np.zeros((2, 0)), axis=1)
    with pytest.raises(ig.ShapeError, match="argmin: axis must be an int or None"):
        ig.argmin(np.zeros((2, 3)), axis=(0, 1))
    with pytest.raises(ig.ShapeError, match="argmax"):
        ig.argmax(np.zeros((2, 3)), axis=2)
