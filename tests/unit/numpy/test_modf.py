"""ig.modf against numpy.modf: values and signs (zeros, infinities, NaN, subnormals), eager
and under jit, and its derivatives (1 for the fraction, 0 for the integral part)."""

import numpy as np
import pytest

import irgrad as ig


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_modf_matches_numpy_with_signs(dtype):
    special = [2.5, -2.5, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -1e-30, 1e30]
    x = np.concatenate([np.array(special), np.random.default_rng(0).normal(scale=50, size=40)]).astype(dtype)
    want_fraction, want_whole = np.modf(x)
    for fraction, whole in (ig.modf(x), ig.jit(ig.modf)(x)):
        assert fraction.dtype == whole.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(fraction, want_fraction)
        np.testing.assert_array_equal(whole, want_whole)
        np.testing.assert_array_equal(np.signbit(fraction), np.signbit(want_fraction))
        np.testing.assert_array_equal(np.signbit(whole), np.signbit(want_whole))


def test_modf_derivatives_and_integers():
    x = np.array([1.5, -2.25, 7.75])
    g = ig.grad(lambda x: ig.sum(3.0 * ig.modf(x)[0] + ig.modf(x)[1]))(x)
    np.testing.assert_array_equal(g, [3.0, 3.0, 3.0])
    fraction, whole = ig.modf(np.array([3, -4], np.int32))
    assert fraction.dtype == np.float32  # integers become float32, as jnp.modf
    np.testing.assert_array_equal(whole, [3.0, -4.0])
