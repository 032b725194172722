"""Parallel loops on the thread pool: the same bits as the serial code, from any number of
Python threads at once, after fork, and with the pool off."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import irgrad as ig
from irgrad.backends.cpu import compile_module
from irgrad.backends.cpu.threads import pool_threads
from irgrad.context import make_context
from irgrad.pipelines import stage_spec
from irgrad.registry import run_pipeline
from irgrad.lowering.llvm.to_llvm import ConvertToLLVMPass

RNG = np.random.default_rng(3)


def _step(w, x):
    h = ig.tanh(x @ w)
    return ig.sum(h * h) + ig.mean(ig.exp(-x * x))


def test_pool_uses_the_cores():
    assert pool_threads() == min(os.cpu_count() or 1, int(os.environ.get("IRGRAD_NUM_THREADS", "0")) or 99) or 1


@pytest.mark.parametrize("shape", [(1 << 20,), (300, 700), (7, 64, 513)])
def test_threaded_results_are_bitwise_serial(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    fn = lambda x: ig.tanh(x) * 0.5 + x * x  # noqa: E731
    threaded = ig.jit(fn, backend="cpu")
    loops_ir = threaded.lower(x).as_text("llvm")
    assert "irgrad_parallel_for" in loops_ir
    got = threaded(x)
    serial_module = ig.trace(fn, x).module.clone()
    run_pipeline(serial_module, stage_spec("loops"))
    ConvertToLLVMPass(threads=False).apply(make_context(), serial_module)
    from irgrad.ir_numpy import element_type_for
    from xdsl.dialects.builtin import MemRefType

    t = MemRefType(element_type_for(np.dtype(np.float32)), list(shape))
    serial = compile_module(serial_module).function("main", [t], [t])
    (expected,) = serial(x)
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
    np.testing.assert_allclose(got, np.tanh(x) * 0.5 + x * x, rtol=2e-6, atol=1e-6)


def test_training_step_gradient_matches_interpreter():
    w = RNG.standard_normal((256, 512)).astype(np.float32) * 0.05
    x = RNG.standard_normal((384, 256)).astype(np.float32)
    grad = ig.value_and_grad(_step)
    value, g = ig.jit(grad, backend="cpu")(w, x)
    assert "irgrad_parallel_for" in ig.jit(grad, backend="cpu").lower(w, x).as_text("llvm")
    ref_value, ref_g = ig.jit(grad, backend="interp")(w, x)
    # A sum of 98304 float32 terms: the loop's order and numpy's pairwise order differ.
    np.testing.assert_allclose(value, ref_value, rtol=1e-4)
    np.testing.assert_allclose(g, ref_g, rtol=1e-4, atol=1e-5 * np.abs(ref_g).max())


def test_many_python_threads_at_once():
    """Concurrent callers: one gets the pool, the others run their loops serially."""
    fn = ig.jit(lambda x: ig.exp(-x * x) + 1.0, backend="cpu")
    inputs = [RNG.standard_normal(1 << 19).astype(np.float32) for _ in range(6)]
    fn(inputs[0])
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(20):
                results[k] = fn(inputs[k])
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and all(not t.is_alive() for t in threads)
    for k, x in enumerate(inputs):
        np.testing.assert_allclose(results[k], np.exp(-x * x) + 1.0, rtol=1e-6)


_CHILD = textwrap.dedent(
    """
    import os, sys, numpy as np, irgrad as ig
    from irgrad.backends.cpu.threads import pool_threads
    fn = ig.jit(lambda x: ig.tanh(x) * 2.0, backend="cpu")
    x = np.linspace(-3, 3, 1 << 20, dtype=np.float32)
    first = fn(x)
    if {fork}:
        pid = os.fork()
        if pid == 0:  # the child has no workers: its loops must run (serially), not hang
            ok = np.array_equal(fn(x), first)
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0, status
    assert np.allclose(first, np.tanh(x) * 2.0, rtol=2e-6, atol=1e-6)
    print(pool_threads())
    """
)


def _run_child(fork: bool, env_extra: dict[str, str]) -> str:
    env = dict(os.environ, IRGRAD_CACHE_DIR="off", **env_extra)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD.format(fork=fork)], env=env, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


def test_fork_child_runs_serially():
    _run_child(True, {})


def test_one_thread_setting():
    assert _run_child(False, {"IRGRAD_NUM_THREADS": "1"}) == "1"


@pytest.mark.parametrize(("value", "expected"), [("", None), ("x", None), ("0", 1), (" 64 ", 64)])
def test_spin_setting_is_read_leniently(monkeypatch, value, expected):
    """$IRGRAD_SPIN empty or malformed means the default, as $IRGRAD_NUM_THREADS does: it
    must not make the first compiled call raise."""
    from irgrad.backends.cpu.threads import DEFAULT_SPIN, configured_spin

    monkeypatch.setenv("IRGRAD_SPIN", value)
    assert configured_spin() == (DEFAULT_SPIN if expected is None else expected)
