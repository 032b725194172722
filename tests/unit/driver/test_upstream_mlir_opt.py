"""irgrad speaks upstream MLIR, both ways, at every stage made of upstream dialects.

For a set of traced programs (a training step's gradient, a CNN, a scan, a masked softmax,
slices, a factorization, integer and boolean code), each stage from "linalg" to "llvm" of the
CPU pipeline and "gpu", "kernels", "nvvm" of the GPU pipeline (lowered without a GPU) as irgrad
prints it goes through upstream `mlir-opt` (MLIR 19 or newer: parsed and verified);
what upstream prints back (its custom forms, its hex constants) is read by irgrad, printed
again, and given to upstream once more, which must print exactly what it printed the first
time: nothing upstream sees is lost on the way through irgrad.

irgrad's own `blas` ops (calls into BLAS/LAPACK or cuBLAS, from stage "loops" on) are no upstream dialect: a
stage that holds them goes to upstream in generic form with `--allow-unregistered-dialect`,
so upstream still checks every other op.

Upstream `mlir-opt` comes from Debian's `mlir-19-tools` (`make mlir-check` installs it and
runs this file; `make test` installs it where apt and root are available). Without it the
tests say so and skip.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
from io import StringIO

import numpy as np
import pytest
from xdsl.printer import Printer

import irgrad as ig
from irgrad import layers, losses
from irgrad.context import make_context
from irgrad.diagnostics import parse_module, verify_module

CPU_STAGES = ("linalg", "bufferized", "loops", "llvm")
GPU_STAGES = ("gpu", "kernels", "nvvm")
STAGES = (*CPU_STAGES, *(f"gpu:{stage}" for stage in GPU_STAGES))
OWN_DIALECTS = ("blas.",)


@functools.cache
def upstream_mlir_opt() -> str | None:
    """IRGRAD_MLIR_OPT, else `mlir-opt` on PATH, else the newest /usr/lib/llvm-N/bin/mlir-opt (N >= 19)."""
    if path := os.environ.get("IRGRAD_MLIR_OPT"):
        return path
    if path := shutil.which("mlir-opt"):
        return path
    found = []
    for candidate in glob.glob("/usr/lib/llvm-*/bin/mlir-opt"):
        version = candidate.split("/usr/lib/llvm-")[1].split("/")[0]
        if version.isdigit() and int(version) >= 19:
            found.append((int(version), candidate))
    return max(found)[1] if found else None


needs_mlir_opt = pytest.mark.skipif(
    upstream_mlir_opt() is None,
    reason="upstream mlir-opt (MLIR >= 19) is not installed: `make mlir-check` installs mlir-19-tools and runs these",
)


def _mlp_step():
    model = layers.Sequential([layers.Linear(6, 16), layers.ReLU(), layers.Linear(16, 3)])
    params = model.init(0)
    x = np.random.default_rng(0).standard_normal((8, 6)).astype(np.float32)
    y = np.arange(8, dtype=np.int32) % 3

    def step(params, x, y):
        grads = ig.grad(lambda p: losses.softmax_cross_entropy(model.apply(p, x), y))(params)
        return ig.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    return step, (params, x, y)


def _cnn_grad():
    model = layers.Sequential(
        [layers.Conv2d(1, 2, kernel_size=3, padding=1), layers.ReLU(), layers.MaxPool2d(2), layers.Flatten(), layers.Linear(8, 4)]
    )
    params = model.init(1)
    images = np.random.default_rng(1).standard_normal((2, 1, 4, 4)).astype(np.float32)
    labels = np.array([1, 3], np.int32)
    return ig.grad(lambda p: losses.softmax_cross_entropy(model.apply(p, images), labels)), (params,)


def _scan():
    def run(h0, xs, w):
        def step(h, x):
            h = ig.tanh(h @ w + x)
            return h, h * 2.0

        return ig.scan(step, h0, xs)

    rng = np.random.default_rng(2)
    return ig.grad(lambda h0, xs, w: ig.sum(run(h0, xs, w)[1])), (rng.random((1, 3)), rng.random((5, 1, 3)), rng.random((3, 3)))


def _masked_softmax():
    mask = np.tril(np.ones((12, 12), bool))  # a boolean constant of 144 elements: hex in the IR

    def attend(s):
        return ig.softmax(ig.where(mask, s, -1e9), axis=-1)

    return attend, (np.random.default_rng(3).random((12, 12)).astype(np.float32),)


def _slices_and_integers():
    def f(x, k):
        top = x[1:3, ::2] * 2.0
        counts = ig.sum((k % 3 == 0).astype(np.int32))
        return top, counts, ig.argmax(x, axis=1), ig.cumsum(x[0])

    rng = np.random.default_rng(4)
    return f, (rng.random((4, 6)), rng.integers(0, 100, 10).astype(np.int64))


def _factorization():
    return (lambda a: ig.linalg.svd(a, compute_uv=False)), (np.random.default_rng(5).random((5, 3)),)


PROGRAMS = {
    "mlp_step": _mlp_step,
    "cnn_grad": _cnn_grad,
    "scan_grad": _scan,
    "masked_softmax": _masked_softmax,
    "slices_and_integers": _slices_and_integers,
    "factorization": _factorization,
}


@functools.cache
def _lowered(name: str):
    fn, args = PROGRAMS[name]()
    return ig.jit(fn).lower(*args)


@functools.cache
def _gpu_stages(name: str) -> dict[str, str]:
    """The irgrad-gpu pipeline's stages of the program (no GPU needed to lower)."""
    from irgrad.pipelines import GPU_STEPS
    from irgrad.registry import run_pipeline

    module = _lowered(name).program.module.clone()
    texts = {}
    for stage, spec in GPU_STEPS:
        run_pipeline(module, spec)
        texts[stage] = str(module) + "\n"
    return texts


def _stage_text(name: str, stage: str) -> str:
    if stage.startswith("gpu:"):
        return _gpu_stages(name)[stage.removeprefix("gpu:")]
    return _lowered(name).as_text(stage)


def _mlir_opt(text: str, *flags: str) -> str:
    done = subprocess.run(
        [upstream_mlir_opt(), *flags, "-"], input=text, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"upstream mlir-opt rejected it:\n{done.stderr[:4000]}"
    return done.stdout


def _irgrad_reprint(text: str) -> str:
    module = parse_module(make_context(), text, "<upstream>")
    verify_module(module)
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue() + "\n"


def _generic(text: str) -> str:
    module = parse_module(make_context(), text)
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue() + "\n"


@needs_mlir_opt
@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_upstream_reads_each_stage_and_irgrad_reads_upstreams_print(name, stage):
    text = _stage_text(name, stage)
    if any(f" {d}" in text for d in OWN_DIALECTS):
        # irgrad's blas ops, unknown upstream, in generic form; upstream checks every other op.
        flags = ("--allow-unregistered-dialect",)
        upstream = _mlir_opt(_generic(text), *flags)
        again = _mlir_opt(_generic(_irgrad_reprint(upstream)), *flags)
    else:
        upstream = _mlir_opt(text)
        again = _mlir_opt(_irgrad_reprint(upstream))
    assert again == upstream, "upstream's print changed on the way through irgrad"


@needs_mlir_opt
def test_the_programs_reach_every_stage_upstream_reads_without_irgrads_own_ops():
    """The generic-form fallback above is the exception: most stages are upstream-only."""
    upstream_only = [
        (name, stage)
        for name in PROGRAMS
        for stage in STAGES
        if not any(f" {d}" in _stage_text(name, stage) for d in OWN_DIALECTS)
    ]
    assert len(upstream_only) >= len(PROGRAMS) * len(STAGES) - 8
    assert {stage for _, stage in upstream_only} == set(STAGES)


@needs_mlir_opt
def test_upstream_mlir_opt_is_19_or_newer():
    done = subprocess.run([upstream_mlir_opt(), "--version"], capture_output=True, text=True, timeout=60)
    version = next(w for w in done.stdout.split() if w[:1].isdigit())
    assert int(version.split(".")[0]) >= 19, done.stdout
