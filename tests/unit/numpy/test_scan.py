"""ig.scan (JAX's lax.scan): results against a Python loop, both directions, pytrees, lengths 0, 1
and many; derivatives against central finite differences in float64; a linear-size tape; errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import irgrad as ig
from irgrad.tracing.errors import DTypeError, ShapeError

rng = np.random.default_rng(3)
W = rng.standard_normal((4, 4)) * 0.5
H0 = rng.standard_normal(4)


def rnn(w, h0, xs, reverse=False):
    def step(h, x):
        h = ig.tanh(h @ w + x)
        return h, ig.sum(h * h)

    return ig.scan(step, h0, xs, reverse=reverse)


def rnn_np(w, h0, xs, reverse=False):
    h, ys = h0, [0.0] * len(xs)
    for i in (reversed(range(len(xs))) if reverse else range(len(xs))):
        h = np.tanh(h @ w + xs[i])
        ys[i] = (h * h).sum()
    return h, np.array(ys)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("steps", [0, 1, 2, 9])
def test_matches_a_python_loop(steps: int, reverse: bool) -> None:
    xs = rng.standard_normal((steps, 4))
    h, ys = rnn(W, H0, xs, reverse)
    h_ref, ys_ref = rnn_np(W, H0, xs, reverse)
    assert ys.shape == (steps,)
    np.testing.assert_allclose(h, h_ref, rtol=1e-14)
    np.testing.assert_allclose(ys, ys_ref.reshape(steps), rtol=1e-14)


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_compiled(backend: str) -> None:
    xs = rng.standard_normal((7, 4))
    h, ys = ig.jit(rnn, backend=backend)(W, H0, xs)
    h_ref, ys_ref = rnn_np(W, H0, xs)
    np.testing.assert_allclose(h, h_ref, rtol=1e-13)
    np.testing.assert_allclose(ys, ys_ref, rtol=1e-13)


def test_pytrees_none_ys_and_length() -> None:
    xs = {"a": rng.standard_normal((5, 2)), "b": np.arange(5)}

    def step(carry, x):
        total, count = carry
        return (total + x["a"] * x["b"], count + 1), None

    (total, count), ys = ig.scan(step, (np.zeros(2), np.int64(0)), xs)
    assert ys is None
    np.testing.assert_allclose(total, (xs["a"] * xs["b"][:, None]).sum(0), rtol=1e-14)
    assert int(count) == 5
    carry, ys = ig.scan(lambda c, _: (c + 1.0, (c * 2.0, c > 1.0)), 0.0, None, length=4)
    assert float(carry) == 4.0
    np.testing.assert_array_equal(ys[0], [0.0, 2.0, 4.0, 6.0])
    np.testing.assert_array_equal(ys[1], [False, False, True, True])


@pytest.mark.parametrize("reverse", [False, True])
def test_gradient_matches_finite_differences(reverse: bool) -> None:
    xs = rng.standard_normal((6, 4))

    def loss(w, h0, xs):
        h, ys = rnn(w, h0, xs, reverse)
        return ig.sum(ys * ys) + ig.sum(h)

    def loss_np(w, h0, xs):
        h, ys = rnn_np(w, h0, xs, reverse)
        return (ys * ys).sum() + h.sum()

    grads = ig.grad(loss, argnums=(0, 1, 2))(W, H0, xs)
    compiled = ig.jit(ig.grad(loss, argnums=(0, 1, 2)))(W, H0, xs)
    args = [W, H0, xs]
    eps = 1e-6
    for i, g in enumerate(grads):
        np.testing.assert_allclose(compiled[i], g, rtol=1e-12, atol=1e-13)
        for _ in range(2):
            d = rng.standard_normal(args[i].shape)
            plus = list(args)
            minus = list(args)
            plus[i] = args[i] + eps * d
            minus[i] = args[i] - eps * d
            numeric = (loss_np(*plus) - loss_np(*minus)) / (2 * eps)
            np.testing.assert_allclose(np.sum(g * d), numeric, rtol=1e-6)


def test_forward_mode_and_second_order() -> None:
    xs = rng.standard_normal((5, 4))
    d = rng.standard_normal(W.shape)

    def loss(w):
        return ig.sum(rnn(w, H0, xs)[1])

    _, tangent = ig.jvp(loss, (W,), (d,))
    np.testing.assert_allclose(tangent, np.sum(ig.grad(loss)(W) * d), rtol=1e-12)
    # Hessian-vector product, forward over reverse, against differences of the gradient.
    _, hvp = ig.jvp(ig.grad(loss), (W,), (d,))
    eps = 1e-6
    numeric = (np.asarray(ig.grad(loss)(W + eps * d)) - np.asarray(ig.grad(loss)(W - eps * d))) / (2 * eps)
    np.testing.assert_allclose(hvp, numeric, rtol=1e-6, atol=1e-8)


def test_vmap_of_scan() -> None:
    xs = rng.standard_normal((3, 5, 4))  # batch of 3 sequences
    h, ys = ig.vmap(lambda x: rnn(W, H0, x))(xs)
    for b in range(3):
        h_ref, ys_ref = rnn_np(W, H0, xs[b])
        np.testing.assert_allclose(h[b], h_ref, rtol=1e-14)
        np.testing.assert_allclose(ys[b], ys_ref, rtol=1e-14)


def test_tape_is_one_row_per_step() -> None:
    """The reverse sweep tapes the carry (100 x 8), never the stacked results (100 x 100 x 8)."""
    xs, w = rng.standard_normal((100, 8)), rng.standard_normal((8, 8))

    def loss(w):
        c, ys = ig.scan(lambda h, x: (ig.tanh(h @ w + x), h * 2.0), np.zeros(8), xs)
        return ig.sum(ys) + ig.sum(c)

    text = ig.jit(ig.grad(loss)).lower(w).as_text("autodiff")
    shapes = set(re.findall(r"tensor<100x[0-9x]*f64>", text))
    assert shapes == {"tensor<100x8xf64>"}


def test_errors_name_the_problem() -> None:
    with pytest.raises(ShapeError, match="scan: xs leaves and length disagree"):
        ig.scan(lambda c, x: (c, x), 0.0, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="length must be given"):
        ig.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(ShapeError, match="scan: f's carry output 0 has shape"):
        ig.scan(lambda c, x: (c * x, None), np.ones(1), np.ones((2, 3)))
    with pytest.raises(DTypeError, match="expected float64"):
        ig.scan(lambda c, x: (np.int64(1) + c.astype(np.int64), None), np.ones(2), np.ones((2, 2)))
    with pytest.raises(TypeError, match="must return a pair"):
        ig.scan(lambda c, x: c, 0.0, np.ones(2))
