"""numpy.pad's modes (JAX's testPad tables: every mode over shapes, widths and dtypes) against
numpy itself, eager and under jit, and their gradients: the copy modes add the cotangents of
every copy back to the element copied, checked against float64 finite differences."""

import itertools

import numpy as np
import pytest

import irgrad as ig

MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean", "linear_ramp"]
SHAPES = [(3,), (2, 3), (3, 1, 2)]
WIDTHS = [0, 2, (1, 3), "per-axis"]


def _width(shape, kind, seed):
    if kind == "per-axis":
        return tuple(tuple(int(w) for w in pair) for pair in np.random.default_rng(seed).integers(0, 5, size=(len(shape), 2)))
    return kind


@pytest.mark.parametrize("mode, shape, width, dtype", list(itertools.product(MODES, SHAPES, WIDTHS, [np.float64, np.int32])), ids=repr)
def test_pad_matches_numpy(mode, shape, width, dtype):
    x = (np.random.default_rng(1).normal(size=shape) * 4).astype(dtype)
    pad_width = _width(shape, width, len(shape))
    kwargs = {"end_values": (-2, 3)} if mode == "linear_ramp" else {}
    want = np.pad(x, pad_width, mode=mode, **kwargs)
    got = ig.pad(x, pad_width, mode=mode, **kwargs)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(ig.jit(lambda x: ig.pad(x, pad_width, mode=mode, **kwargs))(x), want, rtol=1e-14)


@pytest.mark.parametrize("mode", MODES)
def test_pad_gradients_match_finite_differences(mode):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4))
    weights = rng.normal(size=np.pad(x, ((2, 1), (3, 2)), mode="constant").shape)
    kwargs = {"end_values": (0.5, -1.0)} if mode == "linear_ramp" else {}
    f = lambda x: np.sum(np.pad(x, ((2, 1), (3, 2)), mode=mode, **kwargs) * weights)
    g = ig.grad(lambda x: ig.sum(ig.pad(x, ((2, 1), (3, 2)), mode=mode, **kwargs) * weights))(x)
    eps, numeric = 1e-6, np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        numeric[i] = (f(x + d) - f(x - d)) / (2 * eps)
    np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-8)


def test_pad_errors_name_the_mode():
    with pytest.raises(ValueError, match="mode 'bogus' is not one of"):
        ig.pad(np.ones(3), 1, mode="bogus")
    with pytest.raises(ig.ShapeError, match="can't extend empty axis 0 using mode 'edge'"):
        ig.pad(np.ones((0, 2)), 1, mode="edge")
    with pytest.raises(NotImplementedError, match="reflect_type='odd'"):
        ig.pad(np.ones(3), 1, mode="reflect", reflect_type="odd")
