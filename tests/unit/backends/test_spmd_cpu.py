"""Compiled per-device programs (irgrad/backends/spmd_cpu.py): cut at the collectives, each piece
compiled for the CPU; results equal the interpreter's run of the same per-device program."""

from __future__ import annotations

import numpy as np

from irgrad.backends.spmd import run_partitioned
from irgrad.backends.spmd_cpu import SpmdProgram, _Piece
from irgrad.diagnostics import parse_module
from irgrad.context import make_context
from irgrad.registry import build_pipeline

GLOBAL = """
shard.grid @mesh(shape = 2x2)
func.func @f(%x: tensor<8x6xf64>, %w: tensor<6x4xf64>) -> (tensor<8x4xf64>, tensor<f64>, tensor<8x6xf64>) {
  %rows = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %a = shard.shard %x to %rows annotate_for_users : tensor<8x6xf64>
  %e = nn.exp %a : tensor<8x6xf64>
  %y = nn.matmul %e, %w : (tensor<8x6xf64>, tensor<6x4xf64>) -> tensor<8x4xf64>
  %t = nn.tanh %y : tensor<8x4xf64>
  %s = nn.reduce_sum %t axes = [0, 1] : tensor<8x4xf64> -> tensor<f64>
  %none = shard.sharding @mesh split_axes = [] : !shard.sharding
  %g = shard.shard %e to %none : tensor<8x6xf64>
  %n = nn.neg %g : tensor<8x6xf64>
  func.return %t, %s, %n : tensor<8x4xf64>, tensor<f64>, tensor<8x6xf64>
}
"""


def _partitioned(text: str):
    module = parse_module(make_context(), text)
    build_pipeline("shard-partition,canonicalize,cse").apply(make_context(), module)
    return module


def test_pieces_between_collectives_compute_what_the_interpreter_does() -> None:
    module = _partitioned(GLOBAL)
    program = SpmdProgram(module, "f", (2, 2))
    kinds = ["piece" if isinstance(s, _Piece) else s.name for s in program.steps]
    # exp and the matmul's local part; the partial sum is all-reduced; tanh and sum; the gathers.
    assert kinds.count("piece") >= 2 and "shard.all_reduce" in kinds and "shard.all_gather" in kinds
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((8, 6)), rng.standard_normal((6, 4))
    compiled, stats = run_partitioned(module, "f", [x, w], program.run)
    interpreted, stats_interp = run_partitioned(module, "f", [x, w])
    for c, i in zip(compiled, interpreted):
        np.testing.assert_allclose(c, i, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(compiled[0], np.tanh(np.exp(x) @ w), rtol=1e-13)
    assert np.asarray(compiled[1]).shape == ()
    assert [s.collectives for s in stats] == [s.collectives for s in stats_interp]
    assert [s.bytes_sent for s in stats] == [s.bytes_sent for s in stats_interp]


def test_a_collective_inside_a_loop_runs_compiled() -> None:
    """The loop is driven from Python, its body cut at the collective (here: nothing else)."""
    text = """
shard.grid @mesh(shape = 2)
func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> attributes {shard.grid = @mesh, shard.arg_split_axes = [#shard<axisarray[[]]>], shard.result_split_axes = [#shard<axisarray[[]]>]} {
  %lo = arith.constant 0 : index
  %hi = arith.constant 3 : index
  %one = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %one iter_args(%acc = %x) -> (tensor<4xf64>) {
    %s = shard.all_reduce %acc on @mesh grid_axes = [0] : tensor<4xf64> -> tensor<4xf64>
    scf.yield %s : tensor<4xf64>
  }
  func.return %r : tensor<4xf64>
}
"""
    module = parse_module(make_context(), text)
    program = SpmdProgram(module, "f", (2,))
    results, stats = run_partitioned(module, "f", [np.ones(4)], program.run)
    np.testing.assert_array_equal(results[0], np.full(4, 8.0))
    assert [dict(s.collectives) for s in stats] == [{"all_reduce": 3}] * 2
    interpreted, _ = run_partitioned(module, "f", [np.ones(4)])
    np.testing.assert_array_equal(interpreted[0], results[0])
