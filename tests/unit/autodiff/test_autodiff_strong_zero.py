"""The strong zero (0 * inf = 0 in adjoints) must not change derivatives where everything is
finite: a second reverse sweep through a rule's `ct * factor` at a point where the first
cotangent is exactly 0 (the minimum of a square) once gave 1 for d(ct * factor)/d(ct) instead
of `factor`, so grad(grad(f)) was silently wrong there (6 for (3t)^2 at 0, not 18)."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig

POINT = 0.3
UNARY = {
    "mul": lambda t: 3.0 * t,
    "exp": ig.exp,
    "log": lambda t: ig.log(t + 2.0),
    "sin": ig.sin,
    "cos": ig.cos,
    "tanh": ig.tanh,
    "sigmoid": ig.sigmoid,
    "sqrt": lambda t: ig.sqrt(t + 2.0),
    "rsqrt": lambda t: ig.rsqrt(t + 2.0),
    "div": lambda t: 1.0 / (t + 2.0),
    "pow": lambda t: (t + 2.0) ** 2.5,
    "erf": ig.erf,
    "log1p": ig.log1p,
    "softplus": ig.softplus,
    "gelu": ig.gelu,
}


@pytest.mark.parametrize("name", list(UNARY))
def test_grad_of_grad_where_the_first_cotangent_is_zero(name: str) -> None:
    """h(t) = (g(t) - g(p))^2 has h''(p) = 2 g'(p)^2, and its first cotangent into g is 0 at p."""
    g = UNARY[name]
    p = np.float64(POINT)
    g_at_p = float(g(p))
    slope = float(ig.grad(g)(p))
    h = lambda t: (g(t) - g_at_p) ** 2  # noqa: E731
    want = 2 * slope**2
    for second in (ig.grad(ig.grad(h)), ig.jit(ig.grad(ig.grad(h))), ig.jacfwd(ig.jacfwd(h)), ig.jacrev(ig.jacfwd(h))):
        np.testing.assert_allclose(second(p), want, rtol=1e-12, err_msg=name)


def test_the_strong_zero_still_holds() -> None:
    """What the guard is for: the untaken branch's inf/NaN derivative times a zero cotangent
    stays 0 (the double-where case), at first and second order."""
    x = np.array([0.0, -1.0, 4.0])
    f = lambda v: ig.sum(ig.where(v > 0, ig.sqrt(ig.abs(v)), 0.0))  # noqa: E731
    np.testing.assert_array_equal(ig.grad(f)(x), [0.0, 0.0, 0.25])
    h = ig.hessian(f)(x)
    assert np.all(np.isfinite(h))
    np.testing.assert_allclose(h[2, 2], -0.25 / 4 / 2, rtol=1e-14)
