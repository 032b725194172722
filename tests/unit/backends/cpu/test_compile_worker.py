"""The compile worker (irgrad/backends/cpu/compile_worker.py): the same object code as an
in-process compile, the policy that picks it, and what happens when the child dies, fails or
grows."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import irgrad as ig
from irgrad.backends.cpu import compile as cpu_compile
from irgrad.backends.cpu import compile_worker
from irgrad.backends.cpu.compile_worker import CompileWorker, WorkerDied, build
from irgrad.backends.cpu.errors import CompileError
from irgrad.backends.cpu.target import host_target

TEXT = """
define double @twice_exp(double %x) {
  %e = call double @llvm.exp.f64(double %x)
  %r = fmul double %e, 2.0
  ret double %r
}
declare double @llvm.exp.f64(double)
declare double @sin(double)
define double @calls_sin(double %x) {
  %r = call double @sin(double %x)
  ret double %r
}
"""


def request(text: str = TEXT) -> dict:
    t = host_target()
    return {"text": text, "triple": t.triple, "cpu": t.cpu, "features": t.features, "opt_level": 3,
            "loop_unrolling": True}


@pytest.fixture
def worker():
    w = CompileWorker()
    yield w
    w.close()


def test_the_child_emits_the_object_code_this_process_would(worker):
    here, there = build(request()), worker.build(request())
    assert there["object"] == here["object"]
    assert there["declared"] == here["declared"] == ["llvm.exp.f64", "sin"]
    assert "module" not in there and set(there["stats"]) == {"parse", "optimize", "codegen"}
    assert worker.started == 1


def test_llvm_rejecting_the_module_is_an_error_reply_and_the_child_lives(worker):
    reply = worker.build(request("define i32 @f() {\n  ret i64 0\n}\n"))
    assert reply["error"].startswith("LLVM rejected the translated module")
    assert "object" in worker.build(request())
    assert worker.started == 1


def test_a_child_that_dies_is_an_error_then_a_new_child(worker):
    worker.build(request())
    os.kill(worker._child.pid, signal.SIGKILL)
    with pytest.raises(WorkerDied, match=r"ended with signal 9 while compiling"):
        worker.build(request())
    assert "object" in worker.build(request())
    assert worker.started == 2


def test_a_child_past_its_memory_limit_is_replaced(worker, monkeypatch):
    monkeypatch.setattr(compile_worker, "RECYCLE_RSS_BYTES", 0)
    worker.build(request())
    assert worker._child is None  # stopped after replying
    worker.build(request())
    assert worker.started == 2


@pytest.mark.parametrize(
    "mode, in_process, wanted",
    [("auto", 0, False), ("auto", compile_worker.IN_PROCESS_COMPILES, True), ("never", 10**6, False),
     ("always", 0, True), ("", compile_worker.IN_PROCESS_COMPILES - 1, False)],
)
def test_the_mode_and_the_count_pick_the_child(monkeypatch, mode, in_process, wanted):
    monkeypatch.setenv(compile_worker.MODE_ENV, mode)
    w = CompileWorker()
    w.in_process = in_process
    assert w.wanted() is wanted


def test_jit_through_the_child_runs_and_shows_its_optimized_ir(monkeypatch):
    monkeypatch.setenv(compile_worker.MODE_ENV, "always")
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    x = np.linspace(-2.0, 2.0, 37)
    f = ig.jit(lambda v: ig.tanh(v) * 3.0 + ig.exp(v), backend="cpu")
    np.testing.assert_allclose(np.asarray(f(x)), np.tanh(x) * 3.0 + np.exp(x), rtol=1e-13)
    module = f.lower(x).compile().module
    assert module._optimized is None  # optimized in the child
    assert "define" in module.optimized_ir  # optimized again here, on request


def test_a_dead_child_during_compile_module_is_a_compile_error(monkeypatch):
    monkeypatch.setenv(compile_worker.MODE_ENV, "always")
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")

    def died(_request):
        raise WorkerDied("LLVM's compile worker (pid 1) ended with signal 11 while compiling")

    monkeypatch.setattr(cpu_compile._WORKER, "build", died)
    with pytest.raises(CompileError, match="signal 11"):
        ig.jit(lambda v: v * 5.0 + 1.0, backend="cpu")(np.ones(3))
