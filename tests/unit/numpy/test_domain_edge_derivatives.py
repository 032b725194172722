"""Derivatives outside a function's domain and at NaN are NaN, as JAX's (abs' is sign, and
sign(NaN) is NaN), while a strong zero (the unselected side of a `where`) stays 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

import irgrad as ig


@pytest.mark.parametrize("f", [ig.arcsin, ig.arccos], ids=["arcsin", "arccos"])
@pytest.mark.parametrize("x", [-2.0, 1.5, 3.0, math.nan])
def test_inverse_trig_gradients_outside_the_domain_are_nan(f, x):
    assert math.isnan(float(ig.grad(f)(np.float64(x))))


@pytest.mark.parametrize("f, want", [(ig.arcsin, lambda x: 1 / math.sqrt(1 - x * x)),
                                     (ig.arccos, lambda x: -1 / math.sqrt(1 - x * x))], ids=["arcsin", "arccos"])
@pytest.mark.parametrize("x", [-0.9, 0.0, 0.3])
def test_inverse_trig_gradients_inside_the_domain(f, want, x):
    assert float(ig.grad(f)(np.float64(x))) == pytest.approx(want(x), rel=1e-13)


def test_abs_gradient_is_sign_with_nan_at_nan():
    g = ig.vmap(ig.grad(ig.abs))(np.array([-3.0, -0.0, 0.0, 2.0, np.nan, np.inf]))
    np.testing.assert_array_equal(np.asarray(g), [-1.0, 0.0, 0.0, 1.0, np.nan, 1.0])


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_the_unselected_side_of_a_where_stays_a_strong_zero(backend, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    safe_abs = lambda x: ig.where(ig.isnan(x), 0.0, ig.abs(x))  # noqa: E731
    g = ig.jit(ig.vmap(ig.grad(safe_abs)), backend=backend)(np.array([np.nan, -2.0, 5.0]))
    np.testing.assert_array_equal(np.asarray(g), [0.0, -1.0, 1.0])
