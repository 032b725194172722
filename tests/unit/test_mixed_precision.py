"""Mixed precision (irgrad/mixed_precision.py) and gradient clipping (irgrad/optim.py): float16
underflow rescued by loss scaling, overflow detected and the step skipped with the scale
halved, unscaling before clipping, the scale's update rule; eagerly and compiled."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from irgrad.mixed_precision import DynamicLossScale, all_finite, cast_tree, select_tree

RNG = np.random.default_rng(0)


def test_global_norm_widens_half_precision():
    """300 squared overflows float16 (max 65504): the norm is taken in float32."""
    tree = {"a": np.full(3, 300.0, np.float16), "b": RNG.standard_normal(5).astype(np.float32)}
    expected = np.sqrt(3 * 300.0**2 + np.sum(tree["b"].astype(np.float64) ** 2))
    got = ig.optim.global_norm(tree)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert ig.optim.global_norm([np.ones(2)]).dtype == np.float64


def test_clip_by_global_norm():
    grads = [RNG.standard_normal((3, 4)), RNG.standard_normal(5)]
    norm = np.sqrt(sum(np.sum(g**2) for g in grads))
    unchanged, n = ig.optim.clip_by_global_norm(grads, norm * 1.01)
    np.testing.assert_allclose(n, norm, rtol=1e-12)
    for g, u in zip(grads, unchanged):
        np.testing.assert_array_equal(u, g)
    clipped, _ = ig.jit(lambda t: ig.optim.clip_by_global_norm(t, 1.0))(grads)
    for g, c in zip(grads, clipped):
        np.testing.assert_allclose(c, g / norm, rtol=1e-12)  # same direction, length 1
    with np.errstate(invalid="ignore"):  # eagerly, inf * NaN is numpy's
        bad, _ = ig.optim.clip_by_global_norm([np.array([1.0, np.inf])], 1.0)
    assert not np.all(np.isfinite(bad))
    with pytest.raises(ValueError, match="max_norm must be positive"):
        ig.optim.clip_by_global_norm(grads, 0.0)


def test_all_finite_cast_and_select_trees():
    tree = {"w": np.ones((2, 2), np.float16), "n": np.arange(3, dtype=np.int32)}
    assert bool(all_finite(tree))
    assert not bool(all_finite({**tree, "x": np.array([0.0, np.nan], np.float32)}))
    assert not bool(ig.jit(all_finite)({"x": np.array([np.inf], np.float16)}))
    half = cast_tree(tree, ig.float16)
    assert half["w"].dtype == np.float16 and half["n"].dtype == np.int32
    assert cast_tree({"w": np.ones(2, np.float16)}, ig.float32)["w"].dtype == np.float32
    picked = select_tree(np.bool_(False), {"a": np.ones(2)}, {"a": np.zeros(2)})
    np.testing.assert_array_equal(picked["a"], np.zeros(2))


@pytest.mark.parametrize("compiled", [False, True])
def test_dynamic_scale_update_rule(compiled):
    scaler = DynamicLossScale(initial_scale=8.0, period=3, factor=2.0, min_scale=2.0)
    adjust = ig.jit(scaler.adjust) if compiled else scaler.adjust
    state = scaler.init()
    seen = []
    for finite in [True, True, True, True, False, False, False, True]:
        state = adjust(np.bool_(finite), state)
        seen.append((float(state["scale"]), int(state["good_steps"])))
    # three finite steps double it; a non-finite step halves it, never below min_scale
    assert seen == [(8, 1), (8, 2), (16, 0), (16, 1), (8, 0), (4, 0), (2, 0), (2, 1)]
    with pytest.raises(ValueError, match="DynamicLossScale: need"):
        DynamicLossScale(initial_scale=0.5, min_scale=1.0)


def _loss(w, x):
    """A loss whose gradient in w is x * 1e-4 (x ~ 1e-4: about 1e-8, below float16's
    smallest subnormal, 6e-8)."""
    return ig.sum(w * x) * 1e-4


def test_loss_scaling_rescues_gradients_that_underflow_in_float16():
    w = RNG.standard_normal(64).astype(np.float16)
    x = (1e-4 * (1 + RNG.random(64))).astype(np.float16)
    plain = ig.grad(_loss)(w, x)
    assert plain.dtype == np.float16 and not np.any(plain)  # all flushed to zero
    scaler = DynamicLossScale()
    state = scaler.init()
    scaled = ig.grad(lambda v: scaler.scale(_loss(v, x), state))(w)
    grads = scaler.unscale(scaled, state)
    assert grads.dtype == np.float32
    np.testing.assert_allclose(grads, x.astype(np.float64) * 1e-4, rtol=2e-3)


def test_training_step_skips_overflow_then_trains():
    """Gradients of size ~30 overflow float16 once scaled by 2**15: those steps are skipped
    (parameters and optimizer state unchanged) and the scale halves until the scaled
    gradients fit; then the step trains, with gradients unscaled before they are clipped."""
    opt = ig.optim.sgd(0.01)
    scaler = DynamicLossScale(period=1000)
    x = RNG.standard_normal((16, 8)).astype(np.float32) * 3
    y = RNG.standard_normal(16).astype(np.float32) * 30

    def loss_fn(params, x, y):
        pred = x @ params["w"] + params["b"]
        return ig.mean((pred - y) ** 2)

    def step(params, opt_state, scale_state, x, y):
        def scaled_loss(p):
            return scaler.scale(loss_fn(cast_tree(p, ig.float16), ig.astype(x, ig.float16), ig.astype(y, ig.float16)), scale_state)

        grads = scaler.unscale(ig.grad(scaled_loss)(params), scale_state)
        finite = all_finite(grads)
        grads, norm = ig.optim.clip_by_global_norm(grads, 100.0)
        new_params, new_state = opt.update(grads, opt_state, params)
        return (select_tree(finite, new_params, params), select_tree(finite, new_state, opt_state),
                scaler.adjust(finite, scale_state), finite, norm)  # fmt: skip

    params = {"w": np.zeros(8, np.float32), "b": np.zeros((), np.float32)}
    opt_state, scale_state = opt.init(params), scaler.init()
    compiled = ig.jit(step)
    skipped = 0
    for _ in range(14):
        before = params
        params, opt_state, scale_state, finite, norm = compiled(params, opt_state, scale_state, x, y)
        if not finite:
            skipped += 1
            np.testing.assert_array_equal(params["w"], before["w"])
            continue
        # The clipped step equals the float32 one clipped at the true (unscaled) norm.
        true_grads = ig.grad(loss_fn)(before, x, y)
        true_norm = np.sqrt(sum(np.sum(np.square(g, dtype=np.float64)) for g in true_grads.values()))
        np.testing.assert_allclose(norm, true_norm, rtol=1e-2)
        factor = min(1.0, 100.0 / true_norm)
        np.testing.assert_allclose(params["w"], before["w"] - 0.01 * factor * true_grads["w"], rtol=2e-2, atol=1e-4)
    assert 3 <= skipped <= 8  # the first steps, until the scaled gradients fit in float16
    assert float(scale_state["scale"]) == 2.0**15 / 2**skipped
