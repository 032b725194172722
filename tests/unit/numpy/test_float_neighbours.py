"""ig.nextafter and ig.spacing against numpy: exact values and signs on random floats, powers
of two, subnormals, zeros, infinities, NaN and max, in float64 and float32, eager, under jit
and vmap; their derivatives (1 in x1 and 0 in x2 for nextafter, 0 for spacing)."""

import numpy as np
import pytest

import irgrad as ig


def _specials(dtype):
    info = np.finfo(dtype)
    tiny, sub = float(info.smallest_normal), float(info.smallest_subnormal)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1024.0, -0.25, 3.0, sub, -sub, 2 * sub, 3 * sub,
              tiny, -tiny, 2 * tiny, tiny - sub, tiny / 2, float(info.max), -float(info.max),
              np.inf, -np.inf, np.nan, float(info.eps), 2.0 ** (info.maxexp - 1), 2.0 ** info.minexp]
    return np.array(values, dtype)


def _inputs(dtype):
    rng = np.random.default_rng(1)
    random = rng.normal(size=40) * 10.0 ** rng.integers(-30, 30, size=40)
    return np.concatenate([_specials(dtype), random.astype(dtype)])


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # NaN matches NaN
    shown = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[shown]), np.signbit(want[shown]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nextafter_matches_numpy_on_every_pair_of_special_values(dtype):
    s = _specials(dtype)
    x1, x2 = np.meshgrid(s, s, indexing="ij")
    with np.errstate(over="ignore"):
        want = np.nextafter(x1, x2)
    _same(ig.nextafter(x1, x2), want)
    _same(ig.jit(ig.nextafter)(x1, x2), want)
    _same(ig.vmap(ig.nextafter)(x1, x2), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nextafter_matches_numpy_on_random_values(dtype):
    x = _inputs(dtype)
    for target in (np.inf, -np.inf, 0.0, 1.0, -1.0):
        x2 = np.full_like(x, target)
        with np.errstate(over="ignore"):
            want = np.nextafter(x, x2)
        _same(ig.nextafter(x, x2), want)
        _same(ig.jit(ig.nextafter)(x, x2), want)
    _same(ig.nextafter(x, x[::-1]), np.nextafter(x, x[::-1]))


def test_nextafter_named_cases_and_promotion():
    assert float(ig.nextafter(np.float32(0.0), np.float32(-1.0))) == -np.float32(1e-45)
    assert float(ig.nextafter(np.float64(0.0), np.float64(-1.0))) == -np.finfo(np.float64).smallest_subnormal
    assert float(ig.nextafter(np.float64(np.inf), 0.0)) == np.finfo(np.float64).max
    assert float(ig.nextafter(np.float64(-np.inf), 0.0)) == -np.finfo(np.float64).max
    assert float(ig.nextafter(np.float64(1.0), np.float64(2.0))) == 1.0 + 2.0**-52
    assert np.signbit(ig.nextafter(np.float64(0.0), np.float64(-0.0)))  # x2 where x1 == x2
    out = ig.nextafter(np.array([1, 2], np.int32), 3)
    assert out.dtype == np.float32  # integers become float32, as JAX
    np.testing.assert_array_equal(out, np.nextafter(np.float32([1, 2]), np.float32(3)))
    mixed = ig.nextafter(np.float32([1.0]), np.float64([2.0]))
    assert mixed.dtype == np.float64


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_spacing_matches_numpy(dtype):
    x = _inputs(dtype)
    with np.errstate(over="ignore"):
        want = np.spacing(x)
    _same(ig.spacing(x), want)
    _same(ig.jit(ig.spacing)(x), want)
    _same(ig.vmap(ig.spacing)(x), want)
    assert float(ig.spacing(dtype(0.0))) == np.finfo(dtype).smallest_subnormal
    assert float(ig.spacing(dtype(-0.0))) == np.finfo(dtype).smallest_subnormal  # as numpy
    assert float(ig.spacing(dtype(-1.0))) == -np.finfo(dtype).eps


def test_derivatives():
    x1 = np.array([1.5, -2.0, 0.0, 1e-310, 3.0])
    x2 = np.array([2.0, 5.0, -1.0, 0.0, 3.0])
    g1, g2 = ig.grad(lambda a, b: ig.sum(ig.nextafter(a, b) * np.arange(1.0, 6.0)), argnums=(0, 1))(x1, x2)
    np.testing.assert_array_equal(g1, np.arange(1.0, 6.0))
    np.testing.assert_array_equal(g2, np.zeros(5))
    g = ig.jit(ig.grad(lambda a: ig.sum(ig.nextafter(a, 10.0) ** 2)))(x1)
    np.testing.assert_allclose(g, 2 * np.nextafter(x1, 10.0), rtol=1e-15)
    np.testing.assert_array_equal(ig.grad(lambda a: ig.sum(ig.spacing(a)))(x1), np.zeros(5))
    # away from the steps, finite differences of nextafter(x, inf) see slope 1
    x, h = np.array([0.3, -1.7, 12.0]), 1e-6
    fd = (np.asarray(ig.nextafter(x + h, np.inf)) - np.asarray(ig.nextafter(x - h, np.inf))) / (2 * h)
    np.testing.assert_allclose(fd, ig.grad(lambda a: ig.sum(ig.nextafter(a, np.inf)))(x), rtol=1e-8)
