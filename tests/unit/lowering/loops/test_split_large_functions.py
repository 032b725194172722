"""split-large-functions: a large traced function compiled as calls of chunk functions gives
the same bits as compiled whole; the chunks' `noalias` and `noinline` reach LLVM IR; the CPU
pipeline splits only functions above max-ops."""

from __future__ import annotations

import numpy as np

import irgrad as ig
from irgrad.backends.cpu import compile_module
from irgrad.backends.cpu.translate import to_llvm_ir
from irgrad.frontend.stages import Compiled
from irgrad.pipelines import CPU_STEPS
from irgrad.registry import run_pipeline
from irgrad.lowering.loops.split_large_functions import op_count


def mlp_step(params, x, labels):
    """Four layers and an SGD update: about 500 ops at stage "loops"."""

    def loss(params):
        h = x
        for w, b in params[:-1]:
            h = ig.nn.relu(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        logp = logits - ig.logsumexp(logits, axis=1, keepdims=True)
        return -ig.mean(ig.take_along_axis(logp, labels[:, None], axis=1))

    value, grads = ig.value_and_grad(loss)(params)
    new = [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return new, value


def data(seed=0):
    rng = np.random.default_rng(seed)
    sizes = [12, 16, 16, 16, 5]
    params = [
        ((rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32), (0.1 * rng.standard_normal(o)).astype(np.float32))
        for i, o in zip(sizes[:-1], sizes[1:])
    ]
    x = rng.standard_normal((8, 12)).astype(np.float32)
    labels = rng.integers(0, 5, 8).astype(np.int32)
    return params, x, labels


def compiled_with(program, split_spec: str | None) -> Compiled:
    """The program through the CPU pipeline, with `split_spec` in place of the default split."""
    module = program.module.clone()
    for _, spec in CPU_STEPS:
        passes = [p for p in spec.split(",") if p != "split-large-functions"]
        if split_spec is not None and "scf-split-reductions" in passes:
            passes.append(split_spec)
        run_pipeline(module, ",".join(passes))
    return Compiled(program, compile_module(module), {}), module


def test_chunks_compute_the_same_bits_as_the_whole_function():
    params, x, labels = data()
    program = ig.jit(mlp_step).trace(params, x, labels)
    whole, _ = compiled_with(program, None)
    split, module = compiled_with(program, "split-large-functions{max-ops=100 chunk-ops=60}")
    names = [f.sym_name.data for f in module.ops if hasattr(f, "sym_name")]
    assert sum("_part" in n for n in names) >= 3, names
    for seed in range(3):
        params, x, labels = data(seed)
        expected, got = whole(params, x, labels), split(params, x, labels)
        for a, b in zip(ig.tree_leaves(expected), ig.tree_leaves(got)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_noalias_and_noinline_reach_llvm_ir():
    params, x, labels = data()
    program = ig.jit(mlp_step).trace(params, x, labels)
    module = program.module.clone()
    for stage, spec in CPU_STEPS:
        spec = spec.replace("split-large-functions", "split-large-functions{max-ops=100 chunk-ops=60}")
        run_pipeline(module, spec)
    text = str(to_llvm_ir(module))
    parts = [line for line in text.splitlines() if line.startswith("define internal") and "_part" in line]
    assert parts and all("noinline" in line for line in parts)
    assert any("ptr noalias" in line for line in parts)


def test_the_cpu_pipeline_splits_only_large_functions():
    params, x, labels = data()
    lowered = ig.jit(mlp_step).lower(params, x, labels)
    loops = lowered.modules["loops"]
    assert op_count(loops) < 1500 and "_part" not in lowered.as_text("loops")

    def deep(x):
        for k in range(90):
            x = ig.tanh(x @ x.T) * (k + 1.0) + ig.sum(x, axis=0)
        return x

    big = ig.jit(deep).lower(np.eye(3, dtype=np.float32)).modules["loops"]
    parts = [f for f in big.ops if "_part" in getattr(getattr(f, "sym_name", None), "data", "")]
    assert len(parts) >= 2
    assert all(op_count(f) < 1500 for f in big.ops)
