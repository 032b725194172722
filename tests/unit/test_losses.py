"""`irgrad.losses` against numpy, eagerly and traced, in float32 and float64.

The stability cases use logits of magnitude 1000, where the textbook formulas overflow (exp(1000)
is inf in float64), and compare with values known in closed form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import irgrad as ig
from irgrad import losses

DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def eager_and_traced(fn: Callable[..., Any], *args: Any) -> list[np.ndarray]:
    """`fn(*args)` run eagerly on numpy arrays, and traced then run on the interpreter."""
    return [fn(*args), ig.trace(fn, *args)(*args)]


def check(fn: Callable[..., Any], args: tuple[Any, ...], expected: float, dtype: Any) -> None:
    for out in eager_and_traced(fn, *args):
        assert out.shape == () and out.dtype == dtype
        np.testing.assert_allclose(out, expected, **TOL[dtype])


def np_softmax_cross_entropy(logits: np.ndarray, labels: np.ndarray) -> float:
    m = logits.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(logits - m).sum(axis=-1, keepdims=True))
    log_probs = logits - lse
    return -np.take_along_axis(log_probs, labels[..., None], axis=-1).mean()


# ---------------------------------------------------------------------------------------------
# mse
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(7,), (5, 3), (2, 3, 4)])
def test_mse(shape, dtype) -> None:
    rng = np.random.default_rng(0)
    pred, target = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    check(losses.mse, (pred, target), ((pred - target) ** 2).mean(), dtype)


# ---------------------------------------------------------------------------------------------
# softmax_cross_entropy
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("scale", [1.0, 30.0, 1000.0])
@pytest.mark.parametrize("shape", [(6, 4), (3, 5, 7)])
def test_softmax_cross_entropy(shape, scale, dtype) -> None:
    rng = np.random.default_rng(1)
    logits = (rng.standard_normal(shape) * scale).astype(dtype)
    labels = rng.integers(0, shape[-1], shape[:-1]).astype(np.int32)
    expected = np_softmax_cross_entropy(logits.astype(np.float64), labels)
    check(losses.softmax_cross_entropy, (logits, labels), expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_softmax_cross_entropy_at_logits_1000_is_exact(dtype) -> None:
    # Row 0: the label holds all the mass, loss 0. Row 1: two classes tie at 1000, loss log 2.
    logits = np.array([[1000.0, 0.0, -1000.0], [0.0, 1000.0, 1000.0]], dtype)
    labels = np.array([0, 1], np.int64)
    check(losses.softmax_cross_entropy, (logits, labels), np.log(2) / 2, dtype)


def test_softmax_cross_entropy_rejects_float_labels_and_mismatched_shapes() -> None:
    logits = ig.ShapeDtype((4, 3))
    with pytest.raises(ig.DTypeError, match="labels must be integer class indices, got float32"):
        ig.trace(losses.softmax_cross_entropy, logits, ig.ShapeDtype((4,)))
    with pytest.raises(ig.ShapeError, match=r"logits \(4, 3\) must be labels' shape \(3,\) plus a class axis"):
        ig.trace(losses.softmax_cross_entropy, logits, ig.ShapeDtype((3,), ig.int32))


# ---------------------------------------------------------------------------------------------
# binary_cross_entropy_with_logits
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(8,), (4, 5)])
def test_binary_cross_entropy_with_logits_matches_the_textbook_formula(shape, dtype) -> None:
    rng = np.random.default_rng(2)
    logits = (rng.standard_normal(shape) * 3).astype(dtype)
    targets = rng.random(shape).astype(dtype)  # soft targets in [0, 1)
    targets.flat[:2] = [0.0, 1.0]
    x, t = logits.astype(np.float64), targets.astype(np.float64)
    sigmoid = 1 / (1 + np.exp(-x))
    expected = (-t * np.log(sigmoid) - (1 - t) * np.log(1 - sigmoid)).mean()
    check(losses.binary_cross_entropy_with_logits, (logits, targets), expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_binary_cross_entropy_with_logits_is_stable_at_1000(dtype) -> None:
    # Confident and right: loss 0; confident and wrong: loss |x| = 1000; x = 0: log 2.
    logits = np.array([1000.0, -1000.0, 1000.0, -1000.0, 0.0], dtype)
    targets = np.array([1.0, 0.0, 0.0, 1.0, 0.5], dtype)
    check(losses.binary_cross_entropy_with_logits, (logits, targets), (2000 + np.log(2)) / 5, dtype)


# ---------------------------------------------------------------------------------------------
# Gradients
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 100.0])
def test_loss_gradients_match_finite_differences(scale) -> None:
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((5, 4)) * scale
    labels = rng.integers(0, 4, 5).astype(np.int32)
    ig.check_grads(losses.softmax_cross_entropy, (logits, labels))
    ig.check_grads(losses.binary_cross_entropy_with_logits, (logits, rng.random((5, 4))))
    ig.check_grads(losses.mse, (logits, rng.standard_normal((5, 4))))


def test_softmax_cross_entropy_gradient_is_softmax_minus_one_hot() -> None:
    # d/dlogits mean(CE) = (softmax(logits) - one_hot(labels)) / N, finite at logits of 1000.
    logits = np.array([[1000.0, 0.0, -1000.0], [0.0, 1000.0, 1000.0]])
    labels = np.array([0, 1], np.int32)
    grad = ig.grad(losses.softmax_cross_entropy)(logits, labels)
    expected = (np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]]) - np.eye(3)[labels]) / 2
    np.testing.assert_allclose(grad, expected, atol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_cross_entropy_picks_what_take_along_axis_picks(dtype) -> None:
    """The select-and-sum label lookup equals take_along_axis bit for bit (the other terms are
    zeros), labels out of range included (wrapped, then clamped), and so does its gradient."""
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((3, 5, 6)).astype(dtype)
    labels = rng.integers(-8, 9, size=(3, 5))

    def by_gather(z, y):
        logp = ig.log_softmax(z, axis=-1)
        return ig.negative(ig.mean(ig.take_along_axis(logp, ig.expand_dims(y, -1), axis=-1)))

    for run in (lambda f: f, ig.jit):
        assert np.array_equal(run(losses.softmax_cross_entropy)(logits, labels), run(by_gather)(logits, labels))
    np.testing.assert_array_equal(
        ig.grad(losses.softmax_cross_entropy)(logits, labels), ig.grad(by_gather)(logits, labels)
    )
