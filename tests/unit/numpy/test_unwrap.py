"""ig.unwrap against numpy.unwrap (and jnp.unwrap's dtypes): random phase signals on several
axes in float64 and float32, discont and period, integer inputs and periods, exact jumps of
period / 2, eager, under jit and vmap; the derivative is 1 along the chain (finite
differences away from jumps)."""

import numpy as np
import pytest

import irgrad as ig


def _wrapped(dtype, shape=(3, 50), seed=5):
    phase = np.cumsum(np.random.default_rng(seed).normal(scale=2.0, size=shape), axis=-1)
    return np.angle(np.exp(1j * phase)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [-1, 0])
def test_unwrap_matches_numpy(dtype, axis):
    p = _wrapped(dtype)
    want = np.unwrap(p, axis=axis)
    rtol = 1e-6 if dtype == np.float32 else 1e-13  # the running sum is a scan: another order
    for got in (ig.unwrap(p, axis=axis), ig.jit(lambda v: ig.unwrap(v, axis=axis))(p)):
        assert np.asarray(got).dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    assert np.max(np.abs(np.diff(want, axis=axis))) <= np.pi + 1e-5
    np.testing.assert_allclose(ig.vmap(ig.unwrap)(p), np.unwrap(p), rtol=rtol, atol=rtol)


def test_unwrap_discont_period_and_edges():
    p = _wrapped(np.float64, (60,), seed=6)
    np.testing.assert_allclose(ig.unwrap(p, discont=4.0), np.unwrap(p, discont=4.0), rtol=1e-13, atol=1e-13)
    deg = np.rad2deg(p) % 360
    np.testing.assert_allclose(ig.unwrap(deg, period=360), np.unwrap(deg, period=360), rtol=1e-13, atol=1e-11)
    exact = np.array([0.0, np.pi, 0.0, -np.pi, 0.0, 3 * np.pi])
    np.testing.assert_array_equal(ig.unwrap(exact), np.unwrap(exact))
    ints = np.array([0, 5, 10, 3, 9, 1])
    for period in (6, 7):
        got = ig.unwrap(ints, period=period)
        assert np.asarray(got).dtype == np.int64
        np.testing.assert_array_equal(got, np.unwrap(ints, period=period))
    got = ig.unwrap(ints.astype(np.int32))
    assert np.asarray(got).dtype == np.float32  # int with a float period: float32, as JAX
    np.testing.assert_allclose(got, np.unwrap(ints), rtol=1e-6)
    np.testing.assert_array_equal(ig.unwrap(np.zeros((2, 0))), np.zeros((2, 0)))
    np.testing.assert_array_equal(ig.unwrap(np.array([2.5])), [2.5])


def test_unwrap_derivative_is_one_along_the_chain():
    p = _wrapped(np.float64, (30,), seed=7)
    w = np.random.default_rng(8).normal(size=30)
    g = np.asarray(ig.grad(lambda v: ig.sum(ig.unwrap(v) * w))(p))
    np.testing.assert_allclose(g, w, rtol=1e-15)
    h = 1e-7
    fd = np.array([(np.sum(np.unwrap(p + h * e) * w) - np.sum(np.unwrap(p - h * e) * w)) / (2 * h) for e in np.eye(30)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
    gj = ig.jit(ig.grad(lambda v: ig.sum(ig.unwrap(v) ** 2)))(p)
    np.testing.assert_allclose(gj, 2 * np.unwrap(p), rtol=1e-12)
