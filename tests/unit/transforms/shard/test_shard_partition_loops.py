"""shard-partition of scf.for, scf.if and scf.while, checked by running: the per-device program
(bodies partitioned, collectives inside the loops) gives the global program's results in
float64 on simulated grids, on the interpreter and compiled (irgrad/backends/spmd_cpu.py drives
loops with collectives from Python); and a data-parallel training loop under
`ig.distributed.jit` communicates once per step instead of gathering its data set."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp

import irgrad as ig
from irgrad.backends.interpreter import run_function
from irgrad.backends.spmd import grid_of_function, run_partitioned
from irgrad.backends.spmd_cpu import SpmdProgram, _For, _While
from irgrad.diagnostics import parse_module
from irgrad.distributed import Mesh, Shard
from irgrad.context import make_context
from irgrad.registry import build_pipeline

FILECHECK = pathlib.Path(__file__).parents[3] / "filecheck" / "transforms" / "shard" / "shard-partition-loops.mlir"
CASES = FILECHECK.read_text().split("// -----")


def _partition(text: str) -> tuple[ModuleOp, ModuleOp]:
    module = parse_module(make_context(), text)
    partitioned = module.clone()
    build_pipeline("shard-partition,canonicalize,cse").apply(make_context(), partitioned)
    partitioned.verify()
    return module, partitioned


def _check(text: str, backend: str, seed: int = 0) -> list[SpmdProgram]:
    """Every function of `text`, for both values of an i1 argument: partitioned == global."""
    module, partitioned = _partition(text)
    rng = np.random.default_rng(seed)
    programs = []
    for fn in [op for op in module.ops if isinstance(op, FuncOp)]:
        name = fn.sym_name.data
        types = fn.function_type.inputs.data
        tensors = [rng.uniform(0.5, 1.5, t.get_shape()) if isinstance(t, TensorType) else None for t in types]
        runner = None
        if backend == "cpu":
            pfn = next(op for op in partitioned.ops if isinstance(op, FuncOp) and op.sym_name.data == name)
            found = grid_of_function(partitioned, pfn)
            assert found is not None
            program = SpmdProgram(partitioned, name, found[1])
            programs.append(program)
            runner = program.run
        for flag in ([True, False] if any(a is None for a in tensors) else [None]):
            args = [flag if a is None else a for a in tensors]
            expected = run_function(module, name, args)
            got, _ = run_partitioned(partitioned, name, args, runner)
            for g, e in zip(got, expected, strict=True):
                np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=f"@{name} {backend}")
    return programs


@pytest.mark.parametrize("backend", ["interp", "cpu"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_filecheck_cases_compute_the_global_result(case: int, backend: str) -> None:
    _check(CASES[case], backend)


# A loop, a branch and a while loop on a grid of either shape, with the placements `rows`
# (the batch) and `cols` (what the carried %h is made inside the loop).
PROGRAM = """
shard.grid @mesh(shape = {grid})
func.func @f(%x: tensor<8x4xf64>, %y: tensor<8x1xf64>, %w0: tensor<4x1xf64>) -> (tensor<4x1xf64>, tensor<8x4xf64>, tensor<f64>) {{
  %rows = shard.sharding @mesh split_axes = {rows} : !shard.sharding
  %cols = shard.sharding @mesh split_axes = {cols} : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8x4xf64>
  %ys = shard.shard %y to %rows annotate_for_users : tensor<8x1xf64>
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %one = arith.constant 1 : index
  %w, %h = scf.for %i = %lo to %hi step %one iter_args(%wi = %w0, %hi_ = %x) -> (tensor<4x1xf64>, tensor<8x4xf64>) {{
    %p = nn.matmul %xs, %wi : (tensor<8x4xf64>, tensor<4x1xf64>) -> tensor<8x1xf64>
    %r = nn.sub %p, %ys : tensor<8x1xf64>
    %xt = nn.transpose %xs perm = [1, 0] : tensor<8x4xf64> -> tensor<4x8xf64>
    %g = nn.matmul %xt, %r : (tensor<4x8xf64>, tensor<8x1xf64>) -> tensor<4x1xf64>
    %lr = nn.full 0.05 : tensor<4x1xf64>
    %step = nn.mul %lr, %g : tensor<4x1xf64>
    %wn = nn.sub %wi, %step : tensor<4x1xf64>
    %hc = shard.shard %hi_ to %cols : tensor<8x4xf64>
    %ht = nn.tanh %hc : tensor<8x4xf64>
    %hn = nn.add %ht, %xs : tensor<8x4xf64>
    scf.yield %wn, %hn : tensor<4x1xf64>, tensor<8x4xf64>
  }}
  %s = nn.reduce_sum %h axes = [0, 1] : tensor<8x4xf64> -> tensor<f64>
  %z = nn.full 0.0 : tensor<f64>
  %pos = nn.compare gt, %s, %z : tensor<f64>
  %pb = tensor.extract %pos[] : tensor<i1>
  %b = scf.if %pb -> (tensor<8x4xf64>) {{
    %e = nn.exp %h : tensor<8x4xf64>
    scf.yield %e : tensor<8x4xf64>
  }} else {{
    scf.yield %xs : tensor<8x4xf64>
  }}
  %u = scf.while (%c = %s) : (tensor<f64>) -> tensor<f64> {{
    %lim = nn.full 1000.0 : tensor<f64>
    %lt = nn.compare lt, %c, %lim : tensor<f64>
    %lb = tensor.extract %lt[] : tensor<i1>
    scf.condition(%lb) %c : tensor<f64>
  }} do {{
  ^bb0(%d: tensor<f64>):
    %bs = nn.reduce_sum %b axes = [0, 1] : tensor<8x4xf64> -> tensor<f64>
    %d1 = nn.add %d, %bs : tensor<f64>
    scf.yield %d1 : tensor<f64>
  }}
  func.return %w, %b, %u : tensor<4x1xf64>, tensor<8x4xf64>, tensor<f64>
}}
"""

GRIDS = {
    "4": dict(grid="4", rows="[[0]]", cols="[[], [0]]"),
    "2x2": dict(grid="2x2", rows="[[0, 1]]", cols="[[0], [1]]"),
}


@pytest.mark.parametrize("backend", ["interp", "cpu"])
@pytest.mark.parametrize("grid", sorted(GRIDS))
def test_loops_on_grids_compute_the_global_result(grid: str, backend: str) -> None:
    text = PROGRAM.format(**GRIDS[grid])
    programs = _check(text, backend, seed=1)
    _, partitioned = _partition(text)
    assert "shard.all_reduce" in str(partitioned)
    if backend == "cpu":  # the loops with collectives are driven from Python, cut at them
        kinds = {type(s) for s in programs[0].steps}
        assert _For in kinds and _While in kinds


# ---------------------------------------------------------------------------------------------
# ig.distributed.jit of a training loop
# ---------------------------------------------------------------------------------------------


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = ig.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return ig.mean((out - y) ** 2)


STEPS = 3


def train(params, x, y):
    def step(i, p):
        g = ig.grad(mlp_loss)(p, x, y)
        return [a - 0.1 * b for a, b in zip(p, g)]

    params = ig.fori_loop(0, STEPS, step, params)
    return params, mlp_loss(params, x, y)


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_data_parallel_training_loop_is_the_single_device_loop(backend: str) -> None:
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(s) for s in [(6, 8), (8,), (8, 3), (3,)]]
    x, y = rng.standard_normal((16, 6)), rng.standard_normal((16, 3))
    fit = ig.distributed.jit(train, Mesh((4,)), in_placements=(None, [Shard(0)], [Shard(0)]), backend=backend)
    (got, loss) = fit(params, x, y)
    (want, loss0) = ig.jit(train)(params, x, y)
    np.testing.assert_allclose(loss, loss0, rtol=1e-12)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)
    # DDP inside the loop: one all-reduce per parameter per step (plus the final loss's), and
    # the data set is never gathered: each device keeps its 4 of the 16 rows. The devices run
    # convert-shard-to-mpi's program, where an all-reduce of a small array is an allgather.
    for device in fit.stats:
        assert dict(device.collectives) == {"all_gather": 4 * STEPS + 1}
    text = fit.lower(params, x, y).as_text("spmd")
    assert "shard.all_gather" not in text and "tensor<4x6xf64>" in text
    body = text[text.index("scf.for"):]
    assert body.count("shard.all_reduce") == 5  # four in the loop body, the loss after it


def test_data_parallel_cond_and_while_loop() -> None:
    """ig.cond and ig.while_loop on a split batch: the predicate's sum is all-reduced where it
    is computed, and the result equals the single-device one."""

    def fn(w, x):
        def cond(c):
            return ig.sum(x @ c[0]) * c[1] < 50.0

        def body(c):
            return c[0] * 1.5, c[1] + 1.0

        w, k = ig.while_loop(cond, body, (w, ig.ones(())))
        return ig.cond(ig.sum(x @ w) > 0.0, lambda v: v * 2.0, lambda v: -v, x @ w), k

    rng = np.random.default_rng(3)
    w, x = rng.uniform(0.1, 1.0, (4, 2)), rng.uniform(0.1, 1.0, (8, 4))
    want = ig.jit(fn)(w, x)
    for backend in ("interp", "cpu"):
        run = ig.distributed.jit(fn, Mesh((2, 2)), in_placements=(None, [Shard(0), Shard(0)]), backend=backend)
        got = run(w, x)
        for g, e in zip(got, want, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-12)
        assert "shard.all_gather" not in run.lower(w, x).as_text("spmd").split("scf.while")[0]
