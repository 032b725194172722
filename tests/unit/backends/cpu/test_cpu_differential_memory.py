"""A compiled training step called 10^5 times: the process's memory stays flat.

Every buffer the generated code allocates must be freed on every path (bufferize's
deallocation, loops and branches included), and the runtime must not keep per-call objects
alive. The step is the MLP step of examples/mlp.py (forward, IR-level backward, Adam update)
through `ig.jit(...).lower(...).compile()`; the resident set size (/proc/self/statm) after
warming up is compared with the one after 10^5 more calls (about 5 s). Programs with
`fori_loop`, `while_loop` and `cond` (buffers freed inside loop bodies and branches) take
2 * 10^4 calls each. benchmarks/memory_flat.py runs the same with larger counts and prints
the figures.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import irgrad as ig
from _differential import rss_bytes
from irgrad import layers, losses, optim

pytestmark = pytest.mark.usefixtures("no_disk_cache")

SLACK = 5 * 2**20
"""Bytes the RSS may grow by after warming up (allocator noise; a leak of one 64-byte buffer
per call would be 6 MiB over 10^5 calls)."""


@pytest.fixture
def no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")


MODEL = layers.MLP([4, 8, 3])
OPTIMIZER = optim.adam(1e-2)


def loss_fn(params: Any, x: Any, labels: Any) -> Any:
    return losses.softmax_cross_entropy(MODEL.apply(params, x), labels)


def train_step(params: Any, state: Any, x: Any, labels: Any) -> Any:
    loss, grads = ig.value_and_grad(loss_fn)(params, x, labels)
    params, state = OPTIMIZER.update(grads, state, params)
    return params, state, loss


def growth(step: Callable[..., Any], args: tuple[Any, ...], calls: int, carry: bool) -> int:
    """RSS growth over `calls` calls after 2000 warm-up calls; with `carry`, each call's first
    two results are the next call's first two arguments (a training loop)."""

    def run(n: int) -> tuple[Any, ...]:
        nonlocal args
        for _ in range(n):
            out = step(*args)
            if carry:
                args = (out[0], out[1], *args[2:])
        return args

    run(2000)
    gc.collect()
    before = rss_bytes()
    run(calls)
    gc.collect()
    return rss_bytes() - before


def test_training_step_1e5_calls_memory_is_flat() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    labels = rng.integers(0, 3, 8).astype(np.int32)
    params = MODEL.init(0)
    state = OPTIMIZER.init(params)
    compiled = ig.jit(train_step, backend="cpu").lower(params, state, x, labels).compile()
    grown = growth(compiled, (params, state, x, labels), 100_000, carry=True)
    assert grown < SLACK, f"RSS grew by {grown / 2**20:.2f} MiB over 1e5 training steps"


def rnn_value_and_grad(params: Any, xs: Any, target: Any) -> Any:
    def loss(p: Any) -> Any:
        h = ig.fori_loop(0, xs.shape[0], lambda i, h: ig.tanh(h @ p["w"] + xs[i] @ p["u"]), ig.zeros((4, 16)))
        return ig.mean((h - target) ** 2)

    return ig.value_and_grad(loss)(params)


def cond_program(x: Any, p: Any) -> Any:
    return ig.cond(p, lambda v: ig.exp(v @ v.T) + 1.0, lambda v: (v @ v.T) * 2.0, x)


def while_gradient(x: Any) -> Any:
    def loss(x: Any) -> Any:
        body = lambda c: (c[0] + 1.0, ig.sin(c[1] @ ig.transpose(c[1])) @ c[1])  # noqa: E731
        return ig.sum(ig.while_loop(lambda c: c[0] < 5.0, body, (0.0, x))[1])

    return ig.value_and_grad(loss)(x)


def _f32(*shape: int) -> np.ndarray:
    return (np.random.default_rng(1).standard_normal(shape) * 0.1).astype(np.float32)


CONTROL_FLOW = {
    "fori_loop_gradient": (rnn_value_and_grad, ({"w": _f32(16, 16), "u": _f32(3, 16)}, _f32(6, 4, 3), _f32(4, 16))),
    "cond": (cond_program, (_f32(16, 16), np.bool_(False))),
    "while_loop_gradient": (while_gradient, (_f32(8, 8),)),
}


@pytest.mark.parametrize("name", list(CONTROL_FLOW))
def test_control_flow_2e4_calls_memory_is_flat(name: str) -> None:
    fn, args = CONTROL_FLOW[name]
    compiled = ig.jit(fn, backend="cpu").lower(*args).compile()
    grown = growth(compiled, args, 20_000, carry=False)
    assert grown < SLACK, f"{name}: RSS grew by {grown / 2**20:.2f} MiB over 2e4 calls"
