"""ig.i0 against numpy.i0 and ig.lax.bessel_i0e / bessel_i1e against scipy.special.i0e / i1e:
values on random and special inputs in float64 and float32 (eager, jit, vmap), dtypes as JAX,
and derivatives against the analytic ones and finite differences in float64."""

import numpy as np
import pytest
import scipy.special as sp

import irgrad as ig


def _inputs(dtype):
    rng = np.random.default_rng(2)
    special = [0.0, -0.0, 1e-300, -1e-30, 0.5, 2.0, -7.99, 8.0, -8.0, 8.0001, 30.0, -100.0, 700.0,
               1e5, -1e300, np.inf, -np.inf, np.nan, 5e-324]
    x = np.concatenate([special, rng.normal(scale=6.0, size=60), rng.uniform(-40, 40, size=40)])
    with np.errstate(over="ignore"):
        return x.astype(dtype)


TOL = {np.float64: 4e-15, np.float32: 2e-6}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, ours, want", [
    ("i0e", ig.lax.bessel_i0e, sp.i0e),
    ("i1e", ig.lax.bessel_i1e, sp.i1e),
])  # fmt: skip
def test_scaled_bessel_matches_scipy(dtype, name, ours, want):
    x = _inputs(dtype)
    expected = want(x.astype(np.float64))
    for got in (ours(x), ig.jit(ours)(x), ig.vmap(ours)(x)):
        got = np.asarray(got)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, expected, rtol=TOL[dtype], atol=0)
    odd = name == "i1e"
    np.testing.assert_array_equal(np.asarray(ours(-x[:80])), (-1 if odd else 1) * np.asarray(ours(x[:80])))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_i0_matches_numpy(dtype):
    x = _inputs(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        expected = np.i0(x.astype(np.float64))
    for got in (ig.i0(x), ig.jit(ig.i0)(x)):
        got = np.asarray(got)
        assert got.dtype == np.dtype(dtype)  # as jnp.i0 (numpy computes in float64)
        big = np.abs(expected) > np.finfo(dtype).max
        np.testing.assert_array_equal(got[big], np.inf)
        np.testing.assert_allclose(got[~big], expected[~big], rtol=TOL[dtype] * 4, atol=0)
    assert ig.i0(np.array([1, 2], np.int32)).dtype == np.float32
    assert float(ig.i0(np.float64(0.0))) == 1.0


def test_derivatives_match_the_analytic_ones_and_finite_differences():
    named = [0.0, -0.0, 1e-8, -3.0, 7.9, 8.1, -12.0, 25.0]
    x = np.concatenate([named, np.random.default_rng(3).normal(scale=5, size=20)])
    i0e, i1e = sp.i0e(x), sp.i1e(x)
    g0 = np.asarray(ig.grad(lambda v: ig.sum(ig.lax.bessel_i0e(v)))(x))
    g1 = np.asarray(ig.grad(lambda v: ig.sum(ig.lax.bessel_i1e(v)))(x))
    np.testing.assert_allclose(g0, i1e - np.sign(x) * i0e, rtol=1e-10, atol=1e-14)
    safe = np.where(x == 0, 1.0, x)
    want1 = np.where(x == 0, 0.5, i0e - i1e * (np.sign(x) + 1 / safe))
    np.testing.assert_allclose(g1, want1, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(g1[:2], 0.5, rtol=3e-16)  # the series at 0, 1/2 to an ulp
    gi0 = np.asarray(ig.jit(ig.grad(lambda v: ig.sum(ig.i0(v))))(x))
    np.testing.assert_allclose(gi0, sp.i1(x), rtol=1e-10, atol=1e-14)
    away = np.abs(x) > 1e-3
    h = 1e-6
    for f, g in ((sp.i0e, g0), (sp.i1e, g1), (sp.i0, gi0)):
        fd = (f(x + h) - f(x - h)) / (2 * h)
        np.testing.assert_allclose(g[away], fd[away], rtol=1e-7, atol=1e-9)
    gv = np.asarray(ig.vmap(ig.grad(ig.lax.bessel_i1e))(x))
    np.testing.assert_allclose(gv, want1, rtol=1e-10, atol=1e-14)
