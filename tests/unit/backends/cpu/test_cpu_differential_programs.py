"""Whole programs on the CPU backend against the reference interpreter: the examples, their
gradient programs, a training step with Adam, and every gradient program of the autodiff
tests.

1. Programs traced from Python (`_differential.check_jit`: `ig.jit(fn, backend="interp")`
   against `ig.jit(fn, backend="cpu")`, inputs checked unchanged afterwards): the MLP of
   examples/mlp.py, the CNN of examples/cnn.py, the RNN of examples/rnn.py (`ig.fori_loop`),
   `irgrad.layers.LayerNorm`, an embedding with a gather loss, a `while_loop` whose trip count
   depends on the data, each forward and through `ig.value_and_grad`; a custom_vjp in a loop
   with a checkpointed block; `ig.random` and dropout; the MLP gradient in f16 and bf16 (one
   ulp); grad of grad, jvp, and whole training steps with `irgrad.optim.adam`, f32 and f64.
2. The gradient programs of the autodiff tests (test_autodiff_rules.py and
   test_autodiff_control_flow.py): for every case, `@f`, its `vjp` and its `jvp`; for the
   second-order set, `s`, `grad`, `hvp` (jvp of grad), `gg` (grad of grad) and `gj` (grad of
   jvp). They are float64, so 1e-12. Second order for every case costs about two minutes of
   LLVM; the default run takes a subset (`SECOND_ORDER`: pow, gather, scatter_add,
   dynamic_update_slice, several results, if, while, a for loop with an index tape, tensor
   element access), and IRGRAD_DIFFERENTIAL_FULL=1 takes them all (all pass as of this
   writing).

Results are compared relative to each result's largest magnitude (`normwise`): these are sums
and gradients whose elements the two backends accumulate in different orders.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.func import FuncOp

import irgrad as ig
import test_autodiff_control_flow as control_flow_cases
import test_autodiff_rules as rule_cases
from _autodiff_harness import Case, first_order_module, float_indices, make_inputs, random_like, second_order_module
from _differential import (
    Outcome,
    assert_same_results,
    assert_same_trees,
    check_jit,
    jit_both,
    lower_and_compile,
    merge,
    prefix_symbols,
)
from irgrad import layers, losses, optim
from irgrad.backends.interpreter import run_function

pytestmark = pytest.mark.usefixtures("no_disk_cache")


@pytest.fixture
def no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")


RNG = np.random.default_rng(11)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# The examples and their gradients
# ---------------------------------------------------------------------------------------------

MLP = layers.MLP([4, 16, 3])
CNN = layers.Sequential(
    [
        layers.Conv2d(1, 4, kernel_size=3, padding=1),
        layers.ReLU(),
        layers.MaxPool2d(2),
        layers.Flatten(),
        layers.Linear(4 * 4 * 4, 10),
    ]
)
NORM = layers.LayerNorm(6)
EMBED = layers.Embedding(10, 4)


def mlp_loss(params: Any, x: Any, labels: Any) -> Any:
    return losses.softmax_cross_entropy(MLP.apply(params, x), labels)


def cnn_loss(params: Any, images: Any, labels: Any) -> Any:
    return losses.softmax_cross_entropy(CNN.apply(params, images), labels)


def rnn_loss(params: Any, xs: Any, target: Any) -> Any:
    def step(i: Any, h: Any) -> Any:
        return ig.tanh(h @ params["w"] + xs[i] @ params["u"])

    h0 = ig.zeros((xs.shape[1], params["w"].shape[0]), xs.dtype)
    h = ig.fori_loop(0, xs.shape[0], step, h0)
    return ig.mean((h - target) ** 2)


def layer_norm_loss(params: Any, x: Any) -> Any:
    y = NORM.apply(params, x)
    return ig.sum(y**2 * ig.arange(6).astype(y.dtype))


def embedding_loss(params: Any, ids: Any, labels: Any) -> Any:
    h = EMBED.apply(params, ids).sum(axis=1)
    log_probs = ig.log_softmax(h, axis=-1)
    return -ig.mean(ig.take_along_axis(log_probs, labels[:, None], 1))


def halvings(x: Any) -> Any:
    """A while_loop whose trip count is data: halve until the largest |x| is below 1."""

    def cond(c: Any) -> Any:
        return ig.max(ig.abs(c[1])) >= 1.0

    def body(c: Any) -> Any:
        return (c[0] + 1, c[1] * 0.5 + ig.sin(c[1]) * 0.01)

    return ig.while_loop(cond, body, (0, x))


def while_loss(x: Any) -> Any:
    def cond(c: Any) -> Any:
        return c[0] < ig.sum(ig.abs(x))

    def body(c: Any) -> Any:
        return (c[0] + 1.0, c[1] * ig.cos(x) + x)

    return ig.sum(ig.while_loop(cond, body, (0.0, x))[1])


def clipped_sin() -> Any:
    """sin whose gradient is clipped to [-0.5, 0.5] by a custom_vjp rule."""

    @ig.custom_vjp
    def f(x: Any) -> Any:
        return ig.sin(x)

    def fwd(x: Any) -> Any:
        return ig.sin(x), (ig.cos(x),)

    def bwd(residuals: Any, g: Any) -> Any:
        return (ig.minimum(ig.maximum(g * residuals[0], -0.5), 0.5),)

    f.defvjp(fwd, bwd)
    return f


CLIPPED_SIN = clipped_sin()


def custom_and_checkpointed_loss(x: Any, w: Any) -> Any:
    """A custom_vjp inside a fori_loop, and a checkpointed block (recomputed in the reverse
    sweep)."""
    h = ig.fori_loop(0, 3, lambda i, h: CLIPPED_SIN(h) * w, x)
    block = ig.checkpoint(lambda a: ig.tanh(a @ a.T) @ a)
    return ig.sum(block(h[None, :] * w[:, None]) ** 2)


def random_program(key: Any, x: Any) -> Any:
    """threefry2x32 in IR: split, normal, uniform, bernoulli, and dropout's mask."""
    k1, k2 = ig.random.split(key)
    dropped = layers.Dropout(0.5).apply({}, x, key=k2, train=True)
    return ig.random.normal(k1, (3, 5)), ig.random.uniform(k2, (4,)), ig.random.bernoulli(k1, 0.3, (6,)), dropped


def inputs() -> dict[str, tuple[Any, ...]]:
    labels3 = np.array([0, 2, 1, 1, 0, 2, 2, 1], np.int32)
    rnn_params = {"w": f32(8, 8) * 0.3, "u": f32(3, 8) * 0.3}
    return {
        "mlp": (MLP.init(0), f32(8, 4), labels3),
        "cnn": (CNN.init(0), f32(4, 1, 8, 8), np.array([1, 9, 0, 3], np.int32)),
        "rnn": (rnn_params, f32(5, 2, 3), f32(2, 8)),
        "rnn_f64": (ig.tree_map(lambda a: a.astype(np.float64), rnn_params), f32(5, 2, 3).astype(np.float64), f32(2, 8).astype(np.float64)),
        "layer_norm": (NORM.init(0), f32(3, 6) * 3 + 1),
        "embedding": (EMBED.init(0), np.array([[1, 2, 2], [9, 0, 9], [3, 3, -1]], np.int32), np.array([0, 3, 1], np.int32)),
        "halvings": (f32(5) * 40,),
        "while": (f32(3),),
        "custom": (f32(3) * 2, f32(3)),
        "random": (ig.random.key(42), f32(4, 4)),
        "mlp_f16": ig.tree_map(lambda a: a.astype(np.float16) if a.dtype == np.float32 else a, (MLP.init(1), f32(8, 4), labels3)),
        "mlp_bf16": ig.tree_map(lambda a: a.astype(ml_dtypes.bfloat16) if a.dtype == np.float32 else a, (MLP.init(1), f32(8, 4), labels3)),
    }


PROGRAMS: dict[str, tuple[Callable[..., Any], str]] = {
    # name: (function, key of its inputs)
    "mlp": (mlp_loss, "mlp"),
    "mlp_value_and_grad": (ig.value_and_grad(mlp_loss), "mlp"),
    "cnn": (cnn_loss, "cnn"),
    "cnn_value_and_grad": (ig.value_and_grad(cnn_loss), "cnn"),
    "rnn": (rnn_loss, "rnn"),
    "rnn_value_and_grad": (ig.value_and_grad(rnn_loss), "rnn"),
    "rnn_value_and_grad_f64": (ig.value_and_grad(rnn_loss), "rnn_f64"),
    "layer_norm": (lambda p, x: NORM.apply(p, x), "layer_norm"),
    "layer_norm_value_and_grad": (ig.value_and_grad(layer_norm_loss, argnums=(0, 1)), "layer_norm"),
    "embedding_value_and_grad": (ig.value_and_grad(embedding_loss), "embedding"),
    "while_data_dependent": (halvings, "halvings"),
    "while_value_and_grad": (ig.value_and_grad(while_loss), "while"),
    "custom_vjp_and_checkpoint_value_and_grad": (ig.value_and_grad(custom_and_checkpointed_loss, argnums=(0, 1)), "custom"),
    "random_and_dropout": (random_program, "random"),
    "mlp_value_and_grad_f16": (ig.value_and_grad(mlp_loss), "mlp_f16"),
    "mlp_value_and_grad_bf16": (ig.value_and_grad(mlp_loss), "mlp_bf16"),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_example_program(name: str) -> None:
    fn, key = PROGRAMS[name]
    check_jit(fn, *inputs()[key], what=name)


def test_while_trip_count_really_depends_on_the_data() -> None:
    small, large = np.full(3, 3.0, np.float32), np.full(3, 300.0, np.float32)
    (n_small, _), (n_large, _) = [ig.jit(halvings, backend="cpu")(x) for x in (small, large)]
    assert (int(n_small), int(n_large)) == (2, 9)


def test_grad_of_grad_and_jvp() -> None:
    def small(x: Any) -> Any:
        return ig.sum(ig.tanh(x) * ig.sin(x) + x**3 / 3.0)

    x64 = RNG.standard_normal(5)
    check_jit(ig.grad(lambda x: ig.sum(ig.grad(small)(x) ** 2)), x64, what="grad of grad")
    hessian_diagonal = ig.grad(lambda x: ig.sum(ig.grad(small)(x)))
    expected, got = jit_both(hessian_diagonal, x64)
    assert_same_results([expected], [got], what="grad of grad (elementwise)")

    def tangent(x: Any, v: Any) -> Any:
        return ig.jvp(lambda a: ig.tanh(a @ a.T) * ig.exp(-a[:, :1]), (x,), (v,))

    check_jit(tangent, f32(3, 4), f32(3, 4), what="jvp")
    check_jit(tangent, RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)), what="jvp f64")
    check_jit(
        lambda p, x, y, v: ig.jvp(lambda q: mlp_loss(q, x, y), (p,), (v,)),
        *inputs()["mlp"][:1], *inputs()["mlp"][1:], ig.tree_map(np.ones_like, inputs()["mlp"][0]),
        what="jvp of the MLP loss",
    )


OPTIMIZER = optim.adam(1e-2)


def train_step(params: Any, state: Any, x: Any, labels: Any) -> Any:
    loss, grads = ig.value_and_grad(mlp_loss)(params, x, labels)
    params, state = OPTIMIZER.update(grads, state, params)
    return params, state, loss


def cnn_train_step(params: Any, state: Any, x: Any, labels: Any) -> Any:
    loss, grads = ig.value_and_grad(cnn_loss)(params, x, labels)
    params, state = OPTIMIZER.update(grads, state, params)
    return params, state, loss


@pytest.mark.parametrize(("step", "key"), [(train_step, "mlp"), (cnn_train_step, "cnn")], ids=["mlp", "cnn"])
def test_training_step_with_adam(step: Callable[..., Any], key: str) -> None:
    """Three steps on the CPU; each step from the CPU's state must equal the interpreter's step
    from that same state (the step counter, bias corrections and moments included)."""
    params, x, labels = inputs()[key]
    state = OPTIMIZER.init(params)
    interp = ig.jit(step, backend="interp")
    cpu = ig.jit(step, backend="cpu")
    for k in range(3):
        with np.errstate(all="ignore"):
            expected = interp(params, state, x, labels)
        got = cpu(params, state, x, labels)
        assert_same_trees(expected, got, what=f"{key} step {k}")
        params, state, _ = got


# ---------------------------------------------------------------------------------------------
# The gradient programs of the autodiff tests
# ---------------------------------------------------------------------------------------------

AUTODIFF_CASES: dict[str, Case] = {
    **{f"rules:{c.name}": c for c in rule_cases.CASES},
    **{f"control_flow:{c.name}": c for c in control_flow_cases.CASES},
}
SECOND_ORDER = [
    "rules:math_powf",
    "rules:gather",
    "rules:scatter_add",
    "rules:dynamic_update_slice",
    "rules:two_results",
    "control_flow:if_else",
    "control_flow:while_data_dependent",
    "control_flow:for_index_carry_used_as_index",
    "control_flow:tensor_element_access_second_order",
]
FULL = os.environ.get("IRGRAD_DIFFERENTIAL_FULL") == "1"
BATCH = {1: 4, 2: 1}
"""Cases per module, by order: LLVM's O3 takes superlinear time on one module of many
second-order programs (13 of them: 23 s merged, 14 s one by one)."""


def _programs(name: str, order: int) -> tuple[Any, list[tuple[str, list[Any]]]]:
    """The module of a case at `order` and its calls (function name, arguments): inputs as
    the autodiff harness draws them, cotangents u and directions v, w random."""
    case = AUTODIFF_CASES[name]
    rng = np.random.default_rng(sorted(AUTODIFF_CASES).index(name))
    first, _ = first_order_module(case)
    x = make_inputs(case, rng)
    wrt = float_indices(case)
    y = run_function(first, "f", x)
    u = random_like(y, rng)
    v = random_like([x[i] for i in wrt], rng)
    w = random_like([x[i] for i in wrt], rng)
    if order == 1:
        return first, [("f", x), ("vjp", [*x, *u]), ("jvp", [*x, *v])]
    calls = [("s", [*x, *u]), ("grad", [*x, *u]), ("hvp", [*x, *u, *v]), ("gg", [*x, *u, *w]), ("gj", [*x, *v, *u])]
    return second_order_module(case), calls


def _batches(order: int) -> list[list[str]]:
    names = list(AUTODIFF_CASES)
    if order == 2:
        names = [n for n in names if AUTODIFF_CASES[n].order2 and (FULL or n in SECOND_ORDER)]
    size = BATCH[order]
    return [names[k : k + size] for k in range(0, len(names), size)]


@functools.cache
def _batch_outcomes(order: int, index: int) -> dict[str, dict[str, Outcome]]:
    """{case: {function: Outcome}} for one batch: interpreted case by case, compiled together
    (each case alone if the batch fails)."""
    names = _batches(order)[index]
    programs = {n: _programs(n, order) for n in names}
    outcomes: dict[str, dict[str, Outcome]] = {}
    for n, (module, calls) in programs.items():
        outcomes[n] = {}
        for fname, args in calls:
            with np.errstate(all="ignore"):
                outcomes[n][fname] = Outcome(expected=tuple(run_function(module, fname, list(args))))
    prefixes = {n: f"c{k}_" for k, n in enumerate(names)}
    compiled: dict[str, tuple[Any, str]] = {}
    try:
        shared = lower_and_compile(merge([prefix_symbols(m, prefixes[n]) for n, (m, _) in programs.items()]))
        compiled = {n: (shared, prefixes[n]) for n in names}
    except Exception:
        for n, (module, _) in programs.items():
            try:
                compiled[n] = (lower_and_compile(module), "")
            except Exception as err:
                for o in outcomes[n].values():
                    o.error, o.compiled_alone = err, True
    for n, (module, calls) in programs.items():
        if n not in compiled:
            continue
        compiled_module, prefix = compiled[n]
        functions = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}
        for fname, args in calls:
            ft = functions[fname].function_type
            try:
                fn = compiled_module.function(prefix + fname, list(ft.inputs.data), list(ft.outputs.data))
                outcomes[n][fname].got = fn(*args)
            except Exception as err:
                outcomes[n][fname].error = err
    return outcomes


def _autodiff_ids(order: int) -> list[tuple[int, str]]:
    return [(k, n) for k, batch in enumerate(_batches(order)) for n in batch]


def _check_case(order: int, index: int, name: str) -> None:
    failures = []
    for fname, outcome in _batch_outcomes(order, index)[name].items():
        try:
            expected, got = outcome.results()
            assert_same_results(expected, got, normwise=True, what=f"{name} @{fname}")
        except AssertionError as err:
            failures.append(str(err))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(("index", "name"), _autodiff_ids(1), ids=[n for _, n in _autodiff_ids(1)])
def test_first_order_gradient_program(index: int, name: str) -> None:
    _check_case(1, index, name)


@pytest.mark.parametrize(("index", "name"), _autodiff_ids(2), ids=[n for _, n in _autodiff_ids(2)])
def test_second_order_gradient_program(index: int, name: str) -> None:
    _check_case(2, index, name)
