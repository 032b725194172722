"""shard-partition, checked by running: the per-device program on the simulated grid must give
the global program's results (float64, random inputs), for every FileCheck case of the pass,
for programs that exercise each sharding rule, and for every change of placement."""

from __future__ import annotations

import itertools
import pathlib

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp

from irgrad.backends.interpreter import run_function
from irgrad.ir_numpy import numpy_dtype
from irgrad.backends.spmd import run_partitioned
from irgrad.diagnostics import parse_module
from irgrad.dialects import shard
from irgrad.context import make_context
from irgrad.registry import build_pipeline

FILECHECK = pathlib.Path(__file__).parents[3] / "filecheck" / "transforms" / "shard" / "shard-partition.mlir"


def _parse(text: str) -> ModuleOp:
    return parse_module(make_context(), text)


def _inputs(fn: FuncOp, rng: np.random.Generator) -> list[np.ndarray]:
    args = []
    for t in fn.function_type.inputs.data:
        assert isinstance(t, TensorType)
        dtype = numpy_dtype(t.get_element_type())
        if np.issubdtype(dtype, np.integer):  # indices: negative and out of range ones too
            args.append(rng.integers(-3, 9, t.get_shape()).astype(dtype))
        else:
            args.append(rng.uniform(0.5, 2.0, t.get_shape()).astype(dtype))
    return args


def check_partition(text: str, seed: int = 0) -> list[ModuleOp]:
    """Every public function of `text`: partitioned result == global result."""
    module = _parse(text)
    partitioned = module.clone()
    build_pipeline("shard-partition").apply(make_context(), partitioned)
    partitioned.verify()
    rng = np.random.default_rng(seed)
    for fn in [op for op in module.ops if isinstance(op, FuncOp) and op.sym_visibility is None]:
        name = fn.sym_name.data
        args = _inputs(fn, rng)
        expected = run_function(module, name, args)
        pfn = next(op for op in partitioned.ops if isinstance(op, FuncOp) and op.sym_name.data == name)
        if "shard.grid" in pfn.attributes:
            got, _ = run_partitioned(partitioned, name, args)
        else:  # no shard ops: left alone
            got = run_function(partitioned, name, args)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=f"@{name}")
    return [partitioned]


def _f64(text: str) -> str:
    return text.replace("f32", "f64")


@pytest.mark.parametrize("case", range(len(FILECHECK.read_text().split("// -----"))))
def test_filecheck_cases_compute_the_global_result(case: int) -> None:
    chunk = FILECHECK.read_text().split("// -----")[case]
    check_partition(_f64(chunk))


RULE_PROGRAMS = {
    # Two partial sums added stay partial; one all_reduce at the end.
    "partial_add": """
shard.grid @g(shape = 4)
func.func @f(%x: tensor<6x8xf64>, %w1: tensor<8x5xf64>, %w2: tensor<8x5xf64>) -> tensor<6x5xf64> {
  %k = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %r = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %k annotate_for_users : tensor<6x8xf64>
  %b = shard.shard %w1 to %r annotate_for_users : tensor<8x5xf64>
  %c = shard.shard %w2 to %r annotate_for_users : tensor<8x5xf64>
  %p = nn.matmul %a, %b : (tensor<6x8xf64>, tensor<8x5xf64>) -> tensor<6x5xf64>
  %q = nn.matmul %a, %c : (tensor<6x8xf64>, tensor<8x5xf64>) -> tensor<6x5xf64>
  %s = nn.sub %p, %q : tensor<6x5xf64>
  %t = nn.neg %s : tensor<6x5xf64>
  %u = nn.mul %t, %q : tensor<6x5xf64>
  func.return %u : tensor<6x5xf64>
}""",
    # A partial sum times and divided by replicated factors stays partial.
    "partial_scale": """
shard.grid @g(shape = 2)
func.func @f(%x: tensor<4x6xf64>, %w: tensor<6x3xf64>, %c: tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<4x3xf64>) {
  %k = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %x to %k annotate_for_users : tensor<4x6xf64>
  %p = nn.matmul %a, %w : (tensor<4x6xf64>, tensor<6x3xf64>) -> tensor<4x3xf64>
  %m = nn.mul %c, %p : tensor<4x3xf64>
  %d = nn.div %p, %c : tensor<4x3xf64>
  %e = nn.exp %d : tensor<4x3xf64>
  func.return %m, %e : tensor<4x3xf64>, tensor<4x3xf64>
}""",
    # Batched matmul with the batch split; M and N split over different axes of a 2-D grid.
    "matmuls_2d": """
shard.grid @g(shape = 2x2)
func.func @f(%x: tensor<4x6x8xf64>, %y: tensor<4x8x2xf64>, %a: tensor<6x8xf64>, %b: tensor<8x4xf64>) -> (tensor<4x6x2xf64>, tensor<6x4xf64>) {
  %sb = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %sm = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %sn = shard.sharding @g split_axes = [[], [1]] : !shard.sharding
  %x0 = shard.shard %x to %sb annotate_for_users : tensor<4x6x8xf64>
  %z = nn.matmul %x0, %y : (tensor<4x6x8xf64>, tensor<4x8x2xf64>) -> tensor<4x6x2xf64>
  %a0 = shard.shard %a to %sm annotate_for_users : tensor<6x8xf64>
  %b0 = shard.shard %b to %sn annotate_for_users : tensor<8x4xf64>
  %c = nn.matmul %a0, %b0 : (tensor<6x8xf64>, tensor<8x4xf64>) -> tensor<6x4xf64>
  func.return %z, %c : tensor<4x6x2xf64>, tensor<6x4xf64>
}""",
    # Softmax over a split dimension: the max and the sum are pending reductions.
    "softmax_split": """
shard.grid @g(shape = 2x3)
func.func @f(%x: tensor<4x6xf64>) -> tensor<4x6xf64> {
  %s = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<4x6xf64>
  %m = nn.reduce_max %a axes = [1] keepdims : tensor<4x6xf64> -> tensor<4x1xf64>
  %mb = nn.broadcast_in_dim %m dims = [0, 1] : tensor<4x1xf64> -> tensor<4x6xf64>
  %d = nn.sub %a, %mb : tensor<4x6xf64>
  %e = nn.exp %d : tensor<4x6xf64>
  %z = nn.reduce_sum %e axes = [1] : tensor<4x6xf64> -> tensor<4xf64>
  %zb = nn.broadcast_in_dim %z dims = [0] : tensor<4xf64> -> tensor<4x6xf64>
  %y = nn.div %e, %zb : tensor<4x6xf64>
  func.return %y : tensor<4x6xf64>
}""",
    # Reshapes that keep a split (merge and split of the leading dimension) and one that cannot.
    "reshapes": """
shard.grid @g(shape = 2)
func.func @f(%x: tensor<4x3x2xf64>) -> (tensor<12x2xf64>, tensor<2x2x6xf64>, tensor<3x8xf64>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<4x3x2xf64>
  %m = nn.reshape %a : tensor<4x3x2xf64> -> tensor<12x2xf64>
  %n = nn.reshape %a : tensor<4x3x2xf64> -> tensor<2x2x6xf64>
  %t = nn.transpose %a perm = [1, 0, 2] : tensor<4x3x2xf64> -> tensor<3x4x2xf64>
  %o = nn.reshape %t : tensor<3x4x2xf64> -> tensor<3x8xf64>
  func.return %m, %n, %o : tensor<12x2xf64>, tensor<2x2x6xf64>, tensor<3x8xf64>
}""",
    # Compare and select with a replicated operand, min over a split dimension, keepdims sum.
    "select_min": """
shard.grid @g(shape = 4)
func.func @f(%x: tensor<8x4xf64>, %y: tensor<8x4xf64>) -> (tensor<8x4xf64>, tensor<4xf64>, tensor<1x4xf64>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<8x4xf64>
  %c = nn.compare gt, %a, %y : tensor<8x4xf64>
  %z = nn.select %c, %a, %y : tensor<8x4xi1>, tensor<8x4xf64>
  %m = nn.reduce_min %z axes = [0] : tensor<8x4xf64> -> tensor<4xf64>
  %k = nn.reduce_sum %z axes = [0] keepdims : tensor<8x4xf64> -> tensor<1x4xf64>
  func.return %z, %m, %k : tensor<8x4xf64>, tensor<4xf64>, tensor<1x4xf64>
}""",
    # Slices, pads and concatenations keep the splits of the dimensions they leave alone.
    "replicated_fallback": """
shard.grid @g(shape = 2)
func.func @f(%x: tensor<4x6xf64>, %v: tensor<f64>) -> (tensor<4x8xf64>, tensor<8x6xf64>) {
  %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<4x6xf64>
  %p = nn.pad %a, %v low = [0, 1] high = [0, 1] : (tensor<4x6xf64>, tensor<f64>) -> tensor<4x8xf64>
  %c = nn.concatenate %a, %a dim = 0 : (tensor<4x6xf64>, tensor<4x6xf64>) -> tensor<8x6xf64>
  func.return %p, %c : tensor<4x8xf64>, tensor<8x6xf64>
}""",
    # Gathers and scatters along one axis keep the splits of the others; a zero-filled scatter
    # target takes the updates' split.
    "gather_scatter": """
shard.grid @g(shape = 2x2)
func.func @f(%x: tensor<4x6x8xf64>, %i: tensor<3xi32>, %j: tensor<4x2xi32>) -> (tensor<4x3x8xf64>, tensor<4x6x8xf64>, tensor<4x4x2x8xf64>) {
  %s = shard.sharding @g split_axes = [[0], [], [1]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<4x6x8xf64>
  %y = nn.gather %a[%i] axis = 1 : (tensor<4x6x8xf64>, tensor<3xi32>) -> tensor<4x3x8xf64>
  %z = nn.full 0.0 : tensor<4x6x8xf64>
  %t = nn.scatter_add %z[%i], %y axis = 1 : (tensor<4x6x8xf64>, tensor<3xi32>, tensor<4x3x8xf64>) -> tensor<4x6x8xf64>
  %js = shard.sharding @g split_axes = [[1]] : !shard.sharding
  %jj = shard.shard %j to %js : tensor<4x2xi32>
  %w = nn.gather %a[%jj] axis = 1 : (tensor<4x6x8xf64>, tensor<4x2xi32>) -> tensor<4x4x2x8xf64>
  func.return %y, %t, %w : tensor<4x3x8xf64>, tensor<4x6x8xf64>, tensor<4x4x2x8xf64>
}""",
    # Convolution and pooling with images, input channels or output channels split.
    "conv_pool": """
shard.grid @g(shape = 2)
func.func @f(%x: tensor<4x2x6x6xf64>, %k: tensor<4x2x3x3xf64>, %x2: tensor<2x4x6x6xf64>, %k2: tensor<2x4x3x3xf64>, %v: tensor<f64>) -> (tensor<4x4x3x3xf64>, tensor<2x2x5x5xf64>, tensor<4x4x4x4xf64>) {
  %n = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %c = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %x to %n annotate_for_users : tensor<4x2x6x6xf64>
  %y = nn.conv2d %a, %k stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<4x2x6x6xf64>, tensor<4x2x3x3xf64>) -> tensor<4x4x6x6xf64>
  %p = nn.max_pool2d %y kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<4x4x6x6xf64> -> tensor<4x4x3x3xf64>
  %b = shard.shard %x2 to %c annotate_for_users : tensor<2x4x6x6xf64>
  %d = shard.shard %k2 to %c annotate_for_users : tensor<2x4x3x3xf64>
  %q = nn.conv2d %b, %d stride = [2, 2] padding = [1, 0, 1, 0] dilation = [1, 1] : (tensor<2x4x6x6xf64>, tensor<2x4x3x3xf64>) -> tensor<2x2x3x3xf64>
  %r = nn.pad %q, %v low = [0, 0, 1, 1] high = [0, 0, 1, 1] : (tensor<2x2x3x3xf64>, tensor<f64>) -> tensor<2x2x5x5xf64>
  %o = shard.shard %k to %n annotate_for_users : tensor<4x2x3x3xf64>
  %u = nn.conv2d %x, %o stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<4x2x6x6xf64>, tensor<4x2x3x3xf64>) -> tensor<4x4x4x4xf64>
  func.return %p, %r, %u : tensor<4x4x3x3xf64>, tensor<2x2x5x5xf64>, tensor<4x4x4x4xf64>
}""",
    # Dynamic windows: a dimension spanned whole keeps its split; the indexed ones are gathered.
    "dynamic_slices": """
shard.grid @g(shape = 2x2)
func.func @f(%x: tensor<4x6x8xf64>, %u: tensor<4x2x8xf64>, %i: tensor<i32>) -> (tensor<4x3x8xf64>, tensor<4x6x8xf64>, tensor<2x6x8xf64>) {
  %s = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<4x6x8xf64>
  %k = tensor.extract %i[] : tensor<i32>
  %z = arith.constant 0 : i32
  %y = nn.dynamic_slice %a[%z, %k, %z] sizes = [4, 3, 8] : tensor<4x6x8xf64>, i32, i32, i32 -> tensor<4x3x8xf64>
  %w = nn.dynamic_update_slice %a, %u[%z, %k, %z] : tensor<4x6x8xf64>, tensor<4x2x8xf64>, i32, i32, i32
  %v = nn.dynamic_slice %a[%k, %z, %z] sizes = [2, 6, 8] : tensor<4x6x8xf64>, i32, i32, i32 -> tensor<2x6x8xf64>
  func.return %y, %w, %v : tensor<4x3x8xf64>, tensor<4x6x8xf64>, tensor<2x6x8xf64>
}""",
}


@pytest.mark.parametrize("name", sorted(RULE_PROGRAMS))
def test_rule_programs_compute_the_global_result(name: str) -> None:
    check_partition(RULE_PROGRAMS[name])


def _collectives(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if isinstance(op, shard.COLLECTIVES)]


def test_partial_sums_are_reduced_once() -> None:
    (module,) = check_partition(RULE_PROGRAMS["partial_add"])
    # p - q, its negation and the product with q: q is resolved for the product, the
    # partial difference is not resolved before the multiply.
    assert _collectives(module).count("shard.all_reduce") == 2


def _shardings(shape: tuple[int, ...], grid: tuple[int, ...]) -> list[list[list[int]]]:
    """Every sharding of `shape` on `grid` with equal chunks (axes in increasing order)."""
    result = []
    for assignment in itertools.product(range(len(shape) + 1), repeat=len(grid)):
        split: list[list[int]] = [[] for _ in shape]
        for axis, dim in enumerate(assignment):
            if dim < len(shape):
                split[dim].append(axis)
        if all(n % int(np.prod([grid[a] for a in axes])) == 0 for n, axes in zip(shape, split)):
            result.append(split)
    return result


def _spell(split: list[list[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, a)) + "]" for a in split) + "]"


@pytest.mark.parametrize("grid", [(4,), (2, 3), (2, 2)])
def test_every_change_of_placement(grid: tuple[int, ...]) -> None:
    """From every sharding to every other, and from the partial sum a contraction over each
    split dimension leaves: the value is unchanged."""
    shape = (12, 6)
    shardings = _shardings(shape, grid)
    grid_text = "x".join(map(str, grid))
    funcs = []
    for i, (src, dst) in enumerate(itertools.product(shardings, shardings)):
        funcs.append(
            f"""
func.func @move{i}(%x: tensor<12x6xf64>) -> tensor<12x6xf64> {{
  %s = shard.sharding @g split_axes = {_spell(src)} : !shard.sharding
  %d = shard.sharding @g split_axes = {_spell(dst)} : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<12x6xf64>
  %b = shard.shard %a to %d : tensor<12x6xf64>
  func.return %b : tensor<12x6xf64>
}}"""
        )
    for i, (src, dst) in enumerate(itertools.product(shardings, shardings)):
        # x (12x6, sharded src) times ones (6x6): a partial sum when dim 1 is split.
        funcs.append(
            f"""
func.func @partial{i}(%x: tensor<12x6xf64>, %w: tensor<6x6xf64>) -> tensor<12x6xf64> {{
  %s = shard.sharding @g split_axes = {_spell(src)} : !shard.sharding
  %d = shard.sharding @g split_axes = {_spell(dst)} : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<12x6xf64>
  %p = nn.matmul %a, %w : (tensor<12x6xf64>, tensor<6x6xf64>) -> tensor<12x6xf64>
  %b = shard.shard %p to %d : tensor<12x6xf64>
  func.return %b : tensor<12x6xf64>
}}"""
        )
    check_partition(f"shard.grid @g(shape = {grid_text})\n" + "\n".join(funcs))
