"""`ig.debug_nans` (irgrad/frontend/debugging.py, irgrad/backends/interpreter/nan_checks.py):
the first op that makes a NaN (or an infinity) from operands without one, in the forward or
the backward pass, named with its function and the user's source line."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import irgrad as ig

RNG = np.random.default_rng(0)


def _line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def loss(w, x):
    h = ig.tanh(x @ w)
    return ig.sum(ig.log(h + 0.5))  # NaN where h < -0.5


W = RNG.standard_normal((4, 3))
X = RNG.standard_normal((6, 4)) * 2


def test_a_clean_function_returns_its_value():
    safe = lambda w, x: ig.sum(ig.log(ig.tanh(x @ w) + 2.0))  # noqa: E731
    np.testing.assert_allclose(ig.debug_nans(safe)(W, X), np.sum(np.log(np.tanh(X @ W) + 2.0)), rtol=1e-12)
    gw = ig.debug_nans(ig.grad(safe))(W, X)
    np.testing.assert_allclose(gw, ig.grad(safe)(W, X), rtol=1e-12)


def test_the_forward_op_that_made_the_nan_is_named_and_located():
    with pytest.raises(ig.NaNError) as caught:
        ig.debug_nans(loss)(W, X)
    message = str(caught.value)
    assert f"test_debug_nans.py:{_line_of(loss, 'ig.log')}:" in message
    assert "'nn.log' made a NaN" in message and "in @loss:" in message
    assert "negative" in message  # the operand summary says why
    assert isinstance(caught.value, FloatingPointError)


def test_a_nan_made_in_the_backward_pass_names_the_derivative_function():
    @ig.custom_vjp
    def double(x):
        return x * 2.0

    def fwd(x):
        return double(x), x

    def bwd(x, g):
        return (g * ig.log(x),)  # NaN for x < 0: only in the backward pass

    double.defvjp(fwd, bwd)
    x = np.array([1.0, -2.0, 3.0])
    f = lambda v: ig.sum(double(v))  # noqa: E731
    assert ig.debug_nans(f)(x) == 4.0  # the forward is clean
    with pytest.raises(ig.NaNError, match=r"'nn.log' made a NaN \(1 of 3 elements\).* in @double\w*_bwd"):
        ig.debug_nans(ig.grad(f))(x)


def test_infinities_only_when_asked():
    f = lambda v: ig.sum(ig.exp(v * 100.0))  # noqa: E731
    v = np.array([0.5, 9.0])
    assert np.isinf(ig.debug_nans(f)(v))
    with pytest.raises(ig.NaNError, match=r"'nn.exp' made an infinity \(1 of 2 elements\)"):
        ig.debug_nans(f, infs=True)(v)


def test_a_nan_passed_in_is_not_blamed_on_an_op():
    out = ig.debug_nans(lambda v: ig.sum(v * 2.0))(np.array([1.0, np.nan]))
    assert np.isnan(out)


def test_a_nan_discarded_by_where_is_still_reported_where_it_was_made():
    """As jax_debug_nans does: the untaken branch's sqrt makes NaNs that `where` drops (the
    gradient is still right, by the strong zero), and the check stops there."""
    f = lambda v: ig.sum(ig.where(v > 0, ig.sqrt(v), 0.0))  # noqa: E731
    v = np.array([-1.0, 4.0])
    np.testing.assert_allclose(ig.grad(f)(v), [0.0, 0.25])
    with pytest.raises(ig.NaNError, match="'nn.sqrt' made a NaN"):
        ig.debug_nans(f)(v)
