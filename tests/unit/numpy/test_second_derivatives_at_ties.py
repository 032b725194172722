"""Second derivatives where a smooth function's formula has a |.| or max for stability:
exact at the tie (x = 0, or x == y), not sign(0)**2 = 0 (softplus, log_sigmoid, cosh,
logaddexp, logaddexp2, hypot). Checked against the closed forms, against central differences
of the first derivative in float64, eagerly and compiled for the CPU."""

from __future__ import annotations

import math

import numpy as np
import pytest

import irgrad as ig

CASES = [
    ("softplus", ig.softplus, lambda x: 1 / (4 * math.cosh(x / 2) ** 2)),
    ("log_sigmoid", ig.log_sigmoid, lambda x: -1 / (4 * math.cosh(x / 2) ** 2)),
    ("cosh", ig.cosh, math.cosh),
    ("logaddexp", lambda x: ig.logaddexp(x, 0.0), lambda x: 1 / (4 * math.cosh(x / 2) ** 2)),
    ("logaddexp_swapped", lambda x: ig.logaddexp(0.0, x), lambda x: 1 / (4 * math.cosh(x / 2) ** 2)),
    ("logaddexp2", lambda x: ig.logaddexp2(x, 0.0), lambda x: math.log(2) / (4 * math.cosh(x * math.log(2) / 2) ** 2)),
    ("hypot", lambda x: ig.hypot(x, 1.0), lambda x: 1 / (1 + x * x) ** 1.5),
    ("hypot_swapped", lambda x: ig.hypot(2.0, x), lambda x: 4 / (4 + x * x) ** 1.5),
]


@pytest.mark.parametrize("name, f, second", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("x", [0.0, -0.0, 1e-300, 0.7, -2.5])
def test_second_derivative_is_the_closed_form(name, f, second, x):
    g1, g2 = ig.grad(f), ig.grad(ig.grad(f))
    got = float(g2(np.float64(x)))
    assert got == pytest.approx(second(x), rel=1e-12, abs=1e-15)
    h = 1e-5
    numeric = (float(g1(np.float64(x + h))) - float(g1(np.float64(x - h)))) / (2 * h)
    assert got == pytest.approx(numeric, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("name, f, second", CASES, ids=[c[0] for c in CASES])
def test_compiled_second_derivative_at_zero(name, f, second, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    g2 = ig.jit(ig.vmap(ig.grad(ig.grad(f))), backend="cpu")
    xs = np.array([0.0, 0.5, -1.5])
    np.testing.assert_allclose(np.asarray(g2(xs)), [second(v) for v in xs], rtol=1e-12, atol=1e-15)


def test_hessian_of_a_sum_of_cosh_at_zero_is_the_identity():
    np.testing.assert_array_equal(np.asarray(ig.hessian(lambda x: ig.sum(ig.cosh(x)))(np.zeros(3))), np.eye(3))


def test_logaddexp_mixed_second_derivative_at_a_tie():
    """d^2/dx dy logaddexp(x, y) = -sigmoid'(x - y): -1/4 at x == y, from both orders."""
    h = ig.hessian(lambda v: ig.logaddexp(v[0], v[1]))(np.array([1.5, 1.5]))
    np.testing.assert_allclose(np.asarray(h), [[0.25, -0.25], [-0.25, 0.25]], rtol=1e-12)


@pytest.mark.parametrize("a, b, value", [(math.inf, math.inf, math.inf), (-math.inf, -math.inf, -math.inf),
                                         (math.inf, 1.0, math.inf), (-math.inf, 2.0, 2.0)])
def test_logaddexp_at_infinities_keeps_numpys_values(a, b, value):
    assert float(ig.logaddexp(np.float64(a), np.float64(b))) == value == np.logaddexp(a, b)
    assert float(ig.logaddexp2(np.float64(a), np.float64(b))) == np.logaddexp2(a, b)
