"""`irgrad.optim` against the published update rules written in numpy, and whole training steps.

Each optimizer runs three steps with a different gradient each step, eagerly on numpy arrays and
as one traced `update` program on the interpreter, in float32 and float64. The oracles are the
papers' formulas: Adam is Kingma & Ba's Algorithm 1, AdamW decouples the decay (Loshchilov &
Hutter), SGD follows torch.optim.SGD. The last tests trace forward + loss + gradient + update
into one program.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import irgrad as ig
from irgrad import layers, losses, optim

DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=2e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}
STEPS = 3


def tree_allclose(actual: Any, expected: Any, **tol: Any) -> None:
    a_leaves, a_tree = ig.tree_flatten(actual)
    e_leaves, e_tree = ig.tree_flatten(expected)
    assert a_tree == e_tree
    for a, e in zip(a_leaves, e_leaves):
        assert np.asarray(a).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(a, e, **tol)


def problem(dtype: Any) -> tuple[dict[str, np.ndarray], list[dict[str, np.ndarray]]]:
    """Params and one gradient per step (different each step, some entries zero)."""
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((3, 2)).astype(dtype), "b": rng.standard_normal(2).astype(dtype)}
    grads = [ig.tree_map(lambda p: rng.standard_normal(p.shape).astype(dtype), params) for _ in range(STEPS)]
    grads[1]["b"][0] = 0.0
    return params, grads


def run_eager_and_traced(opt: optim.Optimizer, params: Any, grads: list[Any]) -> list[list[Any]]:
    """The params after each step, [eager, traced]; the traced update is one program, reused."""
    runs = []
    for traced in (False, True):
        p, state = params, opt.init(params)
        update = ig.trace(opt.update, grads[0], state, p) if traced else opt.update
        history = []
        for g in grads:
            p, state = update(g, state, p)
            history.append(p)
        assert int(state["step"]) == len(grads)
        runs.append(history)
    return runs


def check_against(oracle_history: list[Any], opt: optim.Optimizer, params: Any, grads: list[Any], dtype: Any) -> None:
    for history in run_eager_and_traced(opt, params, grads):
        for actual, expected in zip(history, oracle_history):
            tree_allclose(actual, expected, **TOL[dtype])


# ---------------------------------------------------------------------------------------------
# SGD
# ---------------------------------------------------------------------------------------------


def np_sgd(params, grads, lr, momentum=0.0, weight_decay=0.0):
    """torch.optim.SGD (dampening 0, no Nesterov): buf = momentum * buf + (g + wd * p)."""
    history, p = [], dict(params)
    buf = {k: np.zeros_like(v) for k, v in p.items()}
    for g in grads:
        for k in p:
            d = g[k] + weight_decay * p[k]
            if momentum:
                buf[k] = momentum * buf[k] + d
                d = buf[k]
            p[k] = p[k] - lr * d
        history.append(dict(p))
    return history


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(
    "momentum, weight_decay", [(0.0, 0.0), (0.9, 0.0), (0.0, 0.1), (0.9, 0.05)], ids=["plain", "momentum", "wd", "both"]
)
def test_sgd(momentum, weight_decay, dtype) -> None:
    params, grads = problem(dtype)
    expected = np_sgd(params, grads, 0.1, momentum, weight_decay)
    check_against(expected, optim.sgd(0.1, momentum=momentum, weight_decay=weight_decay), params, grads, dtype)


def test_sgd_state_holds_velocity_only_with_momentum() -> None:
    params, _ = problem(np.float32)
    state = optim.sgd(0.1).init(params)
    assert set(state) == {"step"}
    state = optim.sgd(0.1, momentum=0.9).init(params)
    assert set(state) == {"step", "velocity"}
    tree_allclose(state["velocity"], ig.tree_map(np.zeros_like, params))


# ---------------------------------------------------------------------------------------------
# Adam and AdamW
# ---------------------------------------------------------------------------------------------


def np_adam(params, grads, lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0):
    """Kingma & Ba, Algorithm 1; with weight_decay, AdamW's decoupled p -= lr * wd * p."""
    history, p = [], dict(params)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(v) for k, v in p.items()}
    for t, g in enumerate(grads, start=1):
        for k in p:
            m[k] = b1 * m[k] + (1 - b1) * g[k]
            v[k] = b2 * v[k] + (1 - b2) * g[k] ** 2
            m_hat = m[k] / (1 - b1**t)
            v_hat = v[k] / (1 - b2**t)
            p[k] = p[k] - lr * m_hat / (np.sqrt(v_hat) + eps) - lr * weight_decay * p[k]
        history.append(dict(p))
    return history


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(
    "hyper", [dict(lr=1e-3), dict(lr=0.05, b1=0.8, b2=0.99, eps=1e-6)], ids=["defaults", "custom"]
)
def test_adam_first_three_steps_follow_algorithm_1(hyper, dtype) -> None:
    params, grads = problem(dtype)
    check_against(np_adam(params, grads, **hyper), optim.adam(**hyper), params, grads, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("weight_decay", [0.01, 0.3])
def test_adamw_decouples_weight_decay(weight_decay, dtype) -> None:
    params, grads = problem(dtype)
    expected = np_adam(params, grads, 0.01, weight_decay=weight_decay)
    check_against(expected, optim.adamw(0.01, weight_decay=weight_decay), params, grads, dtype)


def test_adamw_with_zero_gradient_only_decays() -> None:
    # Decoupled: m = v = 0 gives no Adam step, so p shrinks by exactly (1 - lr * wd). Adam with an
    # L2 term in the gradient would instead take a full-size normalized step.
    params, _ = problem(np.float64)
    zero = ig.tree_map(np.zeros_like, params)
    opt = optim.adamw(0.1, weight_decay=0.5)
    new, _ = opt.update(zero, opt.init(params), params)
    tree_allclose(new, ig.tree_map(lambda p: p * (1 - 0.1 * 0.5), params), rtol=1e-15)


def test_adam_state_and_dtypes_per_leaf() -> None:
    # A float32 and a float64 leaf in one tree: each keeps its dtype and its own exact step.
    params = {"a": np.ones(3, np.float32), "b": np.ones((2, 2), np.float64)}
    grads = {"a": np.full(3, 0.5, np.float32), "b": np.full((2, 2), -2.0, np.float64)}
    opt = optim.adam(0.1)
    state = opt.init(params)
    assert set(state) == {"step", "m", "v"}
    assert state["step"].shape == () and state["step"].dtype == np.int32
    tree_allclose(state["m"], ig.tree_map(np.zeros_like, params))
    new, state = opt.update(grads, state, params)
    # The first Adam step moves every coordinate by lr * sign(g) (up to eps).
    tree_allclose(new, {"a": np.full(3, 0.9, np.float32), "b": np.full((2, 2), 1.1)}, rtol=1e-6)


def test_optimizers_are_pure() -> None:
    params, grads = problem(np.float32)
    opt = optim.adam(1e-2)
    state = opt.init(params)
    first = opt.update(grads[0], state, params)
    again = opt.update(grads[0], state, params)
    tree_allclose(first, again, rtol=0, atol=0)
    assert int(state["step"]) == 0


# ---------------------------------------------------------------------------------------------
# A whole training step in one program
# ---------------------------------------------------------------------------------------------

ALLOWED_DIALECTS = {"func", "nn", "scf", "tensor", "arith", "autodiff"}


def dialects_of(program: ig.Program) -> set[str]:
    return {op.name.split(".")[0] for op in program.module.walk() if op is not program.module}


def np_mlp_mse_grads(p, x, y):
    """Loss and hand-derived gradients of mse(MLP([.., .., ..], ReLU)(x), y)."""
    h_pre = x @ p["0"]["w"] + p["0"]["b"]
    h = np.maximum(h_pre, 0)
    out = h @ p["1"]["w"] + p["1"]["b"]
    d_out = 2 * (out - y) / out.size
    dh = (d_out @ p["1"]["w"].T) * (h_pre > 0)
    grads = {
        "0": {"w": x.T @ dh, "b": dh.sum(0)},
        "1": {"w": h.T @ d_out, "b": d_out.sum(0)},
    }
    return ((out - y) ** 2).mean(), grads


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_training_step_with_handwritten_gradient_is_one_program(dtype) -> None:
    model = layers.MLP([4, 8, 3])
    opt = optim.sgd(0.1, momentum=0.9, weight_decay=1e-3)

    def train_step(params, state, x, y):
        w0, b0, w1 = params["0"]["w"], params["0"]["b"], params["1"]["w"]
        out = model.apply(params, x)
        loss = losses.mse(out, y)
        # Backpropagation by hand, with ig functions, inside the same trace.
        h_pre = ig.add(ig.matmul(x, w0), b0)
        h = ig.relu(h_pre)
        d_out = ig.multiply(ig.subtract(out, y), 2.0 / (out.shape[0] * out.shape[1]))
        dh = ig.where(ig.greater(h_pre, 0.0), ig.matmul(d_out, ig.transpose(w1)), 0.0)
        grads = {
            "0": {"w": ig.matmul(ig.transpose(x), dh), "b": ig.sum(dh, axis=0)},
            "1": {"w": ig.matmul(ig.transpose(h), d_out), "b": ig.sum(d_out, axis=0)},
        }
        params, state = opt.update(grads, state, params)
        return params, state, loss

    rng = np.random.default_rng(0)
    params = model.init(0, dtype)
    state = opt.init(params)
    x = rng.standard_normal((5, 4)).astype(dtype)
    y = rng.standard_normal((5, 3)).astype(dtype)
    program = ig.trace(train_step, params, state, x, y)
    assert dialects_of(program) <= ALLOWED_DIALECTS
    assert "autodiff." not in str(program)

    expected_p, velocity = params, ig.tree_map(np.zeros_like, params)
    for step in range(1, 3):
        params, state, loss = program(params, state, x, y)
        expected_loss, g = np_mlp_mse_grads(expected_p, x, y)
        g = ig.tree_map(lambda g, p: g + 1e-3 * p, g, expected_p)
        velocity = ig.tree_map(lambda v, g: 0.9 * v + g, velocity, g)
        expected_p = ig.tree_map(lambda p, v: p - 0.1 * v, expected_p, velocity)
        np.testing.assert_allclose(loss, expected_loss, **TOL[dtype])
        tree_allclose(params, expected_p, **TOL[dtype])
        tree_allclose(state["velocity"], velocity, **TOL[dtype])
        assert int(state["step"]) == step


def _grad_train_step(model: layers.Layer, opt: optim.Optimizer):
    def loss_fn(params, x, labels):
        return losses.softmax_cross_entropy(model.apply(params, x), labels)

    def train_step(params, state, x, labels):
        loss, grads = ig.value_and_grad(loss_fn)(params, x, labels)
        params, state = opt.update(grads, state, params)
        return params, state, loss

    return train_step


def _grad_step_problem(dtype):
    model = layers.MLP([6, 16, 4])
    opt = optim.adam(1e-2)
    rng = np.random.default_rng(1)
    params = model.init(1, dtype)
    x = rng.standard_normal((8, 6)).astype(dtype)
    labels = rng.integers(0, 4, 8).astype(np.int32)
    return model, opt, params, x, labels


def test_training_step_with_ig_grad_traces_to_one_program() -> None:
    model, opt, params, x, labels = _grad_step_problem(np.float32)
    program = ig.trace(_grad_train_step(model, opt), params, opt.init(params), x, labels)
    assert dialects_of(program) <= ALLOWED_DIALECTS
    text = str(program)
    assert "autodiff.value_and_grad @loss_fn" in text
    assert text.count("func.func") == 2  # the step and the differentiated loss
    out_avals = program.out_avals
    assert [a.shape for a in out_avals[:4]] == [(16,), (6, 16), (4,), (16, 4)]
    assert out_avals[-1].shape == ()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_training_step_with_ig_grad_runs_and_matches_numpy(dtype) -> None:
    model, opt, params, x, labels = _grad_step_problem(dtype)
    program = ig.trace(_grad_train_step(model, opt), params, opt.init(params), x, labels)
    new_params, state, loss = program(params, opt.init(params), x, labels)

    # numpy: forward, softmax cross-entropy and its gradient by hand, then Adam's first step.
    p = params
    h_pre = x @ p["0"]["w"] + p["0"]["b"]
    h = np.maximum(h_pre, 0)
    logits = h @ p["1"]["w"] + p["1"]["b"]
    e = np.exp(logits - logits.max(-1, keepdims=True))
    probs = e / e.sum(-1, keepdims=True)
    onehot = np.eye(4, dtype=dtype)[labels]
    d_logits = (probs - onehot) / len(labels)
    dh = (d_logits @ p["1"]["w"].T) * (h_pre > 0)
    grads = {"0": {"w": x.T @ dh, "b": dh.sum(0)}, "1": {"w": h.T @ d_logits, "b": d_logits.sum(0)}}
    expected = np_adam_tree(params, grads, 1e-2)
    np.testing.assert_allclose(loss, -np.log(probs[np.arange(8), labels]).mean(), **TOL[dtype])
    tree_allclose(new_params, expected, **TOL[dtype])
    assert int(state["step"]) == 1


def np_adam_tree(params, grads, lr):
    flat_p, tree = ig.tree_flatten(params)
    flat_g, _ = ig.tree_flatten(grads)
    names = [str(i) for i in range(len(flat_p))]
    (new,) = np_adam(dict(zip(names, flat_p)), [dict(zip(names, flat_g))], lr)
    return ig.tree_unflatten(tree, [new[n] for n in names])


@pytest.mark.parametrize("opt", [optim.sgd(0.5, momentum=0.9), optim.adam(0.05), optim.adamw(0.05)], ids=["sgd-momentum", "adam", "adamw"])
def test_traced_training_loop_fits_a_small_problem(opt: optim.Optimizer) -> None:
    model = layers.MLP([4, 16, 3])
    rng = np.random.default_rng(2)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    labels = np.argmax(x[:, :3], axis=1).astype(np.int32)  # a learnable rule
    params = model.init(0)
    state = opt.init(params)
    step = ig.trace(_grad_train_step(model, opt), params, state, x, labels)
    history = []
    for _ in range(40):
        params, state, loss = step(params, state, x, labels)
        history.append(float(loss))
    assert history[-1] < 0.25 * history[0]
