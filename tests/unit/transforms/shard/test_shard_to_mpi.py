"""convert-shard-to-mpi: every collective, lowered to mpi.alltoall / mpi.allgather and IR that
reduces in group order, gives bit-identical results to the shard collective on the simulated
grid (the interpreter and compiled code), for 1-d and 2-d grids, every group, small and large
arrays, even and padded splits, and every reduction."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from irgrad.backends.spmd import run_spmd
from irgrad.backends.spmd_cpu import SpmdProgram
from irgrad.context import make_context
from irgrad.diagnostics import parse_module
from irgrad.registry import build_pipeline


def _module(text: str) -> ModuleOp:
    return parse_module(make_context(plugins=False), text)


def _lowered(module: ModuleOp) -> ModuleOp:
    out = module.clone()
    build_pipeline("convert-shard-to-mpi").apply(make_context(plugins=False), out)
    assert "shard.all" not in str(out) and "shard.reduce_scatter" not in str(out)
    return out


def _program(grid, op_text, in_type, out_type) -> str:
    shape = "x".join(map(str, grid))
    return (
        f"shard.grid @mesh(shape = {shape})\n"
        f"func.func @f(%x: {in_type}) -> {out_type} attributes {{shard.grid = @mesh}} {{\n"
        f"  %y = {op_text} : {in_type} -> {out_type}\n"
        f"  func.return %y : {out_type}\n}}\n"
    )


def _t(shape, element):
    return f"tensor<{'x'.join(map(str, shape))}x{element}>" if shape else f"tensor<{element}>"


def _cases():
    for grid in [(4,), (2, 2), (3, 2)]:
        axes_choices = [p for r in (1, 2) for p in itertools.permutations(range(len(grid)), r)]
        for axes in axes_choices:
            g = math.prod(grid[a] for a in axes)
            for reduction, element in [("sum", "f64"), ("max", "f32"), ("product", "f64"), ("average", "f32"), ("sum", "i32")]:
                for shape in [(2 * g, 3), (700 * g + 1,)]:
                    yield grid, axes, f"shard.all_reduce %x on @mesh grid_axes = {list(axes)} reduction = {reduction}", shape, shape, element
            for axis in (0, 1):
                shape = [2 * g, 3 * g]
                out = list(shape)
                out[axis] *= g
                yield grid, axes, f"shard.all_gather %x on @mesh grid_axes = {list(axes)} gather_axis = {axis}", shape, out, "f64"
                out = list(shape)
                out[axis] //= g
                yield grid, axes, f"shard.reduce_scatter %x on @mesh grid_axes = {list(axes)} scatter_axis = {axis}", shape, out, "f64"
                yield grid, axes, f"shard.all_slice %x on @mesh grid_axes = {list(axes)} slice_axis = {axis}", shape, out, "f32"
                for concat in (0, 1):
                    out = list(shape)
                    out[axis] //= g
                    out[concat] *= g
                    yield grid, axes, (f"shard.all_to_all %x on @mesh grid_axes = {list(axes)} split_axis = {axis} "
                                       f"concat_axis = {concat}"), shape, out, "f64"


CASES = list(_cases())


@pytest.mark.parametrize("index", range(0, len(CASES), 1))
def test_the_mpi_program_is_the_shard_program_bit_for_bit(index):
    grid, axes, op_text, shape, out, element = CASES[index]
    module = _module(_program(grid, op_text, _t(shape, element), _t(out, element)))
    lowered = _lowered(module)
    rng = np.random.default_rng(index)
    dtype = {"f64": np.float64, "f32": np.float32, "i32": np.int32}[element]
    args = [[(rng.standard_normal(shape) * 4).astype(dtype)] for _ in range(math.prod(grid))]
    want = run_spmd(module, "f", args, grid).results
    got = run_spmd(lowered, "f", args, grid).results
    for device, (w, g) in enumerate(zip(want, got)):
        assert w[0].dtype == g[0].dtype and np.array_equal(w[0], g[0]), f"device {device}: {op_text}"


@pytest.mark.parametrize("index", [0, 7, 40, 97, len(CASES) - 1])
def test_compiled_mpi_program_is_the_shard_program_bit_for_bit(index):
    grid, axes, op_text, shape, out, element = CASES[index]
    module = _module(_program(grid, op_text, _t(shape, element), _t(out, element)))
    lowered = _lowered(module)
    rng = np.random.default_rng(index)
    dtype = {"f64": np.float64, "f32": np.float32, "i32": np.int32}[element]
    args = [[(rng.standard_normal(shape) * 4).astype(dtype)] for _ in range(math.prod(grid))]
    want = SpmdProgram(module, "f", grid).run(args).results
    got = SpmdProgram(lowered, "f", grid).run(args).results
    for w, g in zip(want, got):
        assert np.array_equal(w[0], g[0]), op_text


def test_a_large_all_reduce_moves_a_rings_bytes():
    module = _module(_program((4,), "shard.all_reduce %x on @mesh grid_axes = [0]", "tensor<4000xf64>", "tensor<4000xf64>"))
    args = [[np.ones(4000)] for _ in range(4)]
    stats = run_spmd(_lowered(module), "f", args, (4,)).stats
    assert dict(stats[0].collectives) == {"all_to_all": 1, "all_gather": 1}
    assert stats[0].bytes_sent == 2 * 3 * 4000 * 8 // 4  # 2 (g-1)/g of the array
