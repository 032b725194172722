"""Derivative rules of the shard dialect (irgrad/autodiff/rules/shard.py).

- A sharding annotation does not change a gradient, and the derivative carries the annotation
  on the cotangent (and the tangent), so the partitioner lays out the backward pass too.
- A collective is a linear map of all devices' local inputs: its VJP must be its transpose on
  the grid. Checked numerically through the SPMD runtime on random float64 inputs:
  sum over devices <J v, u> == sum over devices <v, J^T u>, with J v from the JVP and J^T u from
  the VJP, and J v equal to the collective itself (it is linear).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects import func

from irgrad.autodiff.errors import AutodiffError
from irgrad.backends.interpreter import run_function
from irgrad.backends.spmd import run_spmd
from irgrad.dialects import shard
from irgrad.diagnostics import parse_module
from irgrad.context import make_context

from _autodiff_harness import run_pass


def parse(text: str):
    return parse_module(make_context(), text, "test.mlir")


def functions(module) -> dict[str, func.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


# ---------------------------------------------------------------------------------------------
# shard.shard: gradient unchanged, annotation carried over
# ---------------------------------------------------------------------------------------------

LOSS = """
shard.grid @g(shape = 2x2)
func.func @loss(%x: tensor<4x6xf64>, %w: tensor<6x2xf64>) -> tensor<f64> {{
  {shard_x}
  %y = nn.matmul %x1, %w : (tensor<4x6xf64>, tensor<6x2xf64>) -> tensor<4x2xf64>
  {shard_y}
  %t = nn.tanh %y1 : tensor<4x2xf64>
  %l = nn.reduce_sum %t axes = [0, 1] : tensor<4x2xf64> -> tensor<f64>
  func.return %l : tensor<f64>
}}
func.func @grad(%x: tensor<4x6xf64>, %w: tensor<6x2xf64>) -> (tensor<4x6xf64>, tensor<6x2xf64>) {{
  %gx, %gw = autodiff.grad @loss(%x, %w) wrt [0, 1] : (tensor<4x6xf64>, tensor<6x2xf64>) -> (tensor<4x6xf64>, tensor<6x2xf64>)
  func.return %gx, %gw : tensor<4x6xf64>, tensor<6x2xf64>
}}
func.func @jvp(%x: tensor<4x6xf64>, %w: tensor<6x2xf64>, %dx: tensor<4x6xf64>) -> (tensor<f64>, tensor<f64>) {{
  %l, %dl = autodiff.jvp @loss(%x, %w) tangents(%dx : tensor<4x6xf64>) wrt [0] : (tensor<4x6xf64>, tensor<6x2xf64>) -> (tensor<f64>, tensor<f64>)
  func.return %l, %dl : tensor<f64>, tensor<f64>
}}
"""

ANNOTATED = LOSS.format(
    shard_x="%sx = shard.sharding @g split_axes = [[0]] : !shard.sharding\n"
    "  %x1 = shard.shard %x to %sx : tensor<4x6xf64>",
    shard_y="%sy = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding\n"
    "  %y1 = shard.shard %y to %sy annotate_for_users : tensor<4x2xf64>",
)
PLAIN = LOSS.format(shard_x="", shard_y="").replace("%x1", "%x").replace("%y1", "%y")


def test_sharding_annotation_does_not_change_the_gradient() -> None:
    rng = np.random.default_rng(0)
    x, w, dx = rng.standard_normal((4, 6)), rng.standard_normal((6, 2)), rng.standard_normal((4, 6))
    annotated, plain = run_pass(parse(ANNOTATED)), run_pass(parse(PLAIN))
    for got, want in zip(run_function(annotated, "grad", [x, w]), run_function(plain, "grad", [x, w])):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(run_function(annotated, "jvp", [x, w, dx]), run_function(plain, "jvp", [x, w, dx])):
        np.testing.assert_array_equal(got, want)


def depends_on(function: func.FuncOp, seed) -> set:
    """The values computed from `seed` (the cotangent or tangent argument)."""
    reached = {seed}
    for op in function.walk():
        if any(operand in reached for operand in op.operands):
            reached.update(op.results)
    return reached


def test_derivative_constrains_cotangent_and_tangent_to_the_same_sharding() -> None:
    module = run_pass(parse(ANNOTATED))
    for name in ("loss_vjp", "loss_jvp"):
        function = functions(module)[name]
        derived = depends_on(function, function.body.block.args[-1])  # %ct or %x_dot
        ops = [op for op in function.walk() if isinstance(op, shard.ShardOp)]
        primal = {op.sharding: op for op in ops if op.src not in derived}
        derivative = [op for op in ops if op.src in derived]
        assert len(primal) == len(derivative) == 2, f"@{name}"
        for op in derivative:
            assert op.sharding in primal, f"@{name}: the derivative annotation uses the primal's sharding"
            assert op.annotate_for_users == primal[op.sharding].annotate_for_users


# ---------------------------------------------------------------------------------------------
# Collectives: adjointness on the grid
# ---------------------------------------------------------------------------------------------


def spell(shape) -> str:
    return "x".join(map(str, shape))


def t(shape) -> str:
    return f"tensor<{spell(shape)}xf64>"


def collective(kind: str, grid, axes, local, **p) -> tuple[str, tuple[int, ...]]:
    n = math.prod(grid[a] for a in axes)
    shape = list(local)
    attrs = f"grid_axes = {list(axes)}"
    if kind == "all_reduce":
        attrs += f" reduction = {p.get('reduction', 'sum')}"
    elif kind == "all_gather":
        shape[p["axis"]] *= n
        attrs += f" gather_axis = {p['axis']}"
    elif kind == "reduce_scatter":
        shape[p["axis"]] //= n
        attrs += f" reduction = {p.get('reduction', 'sum')} scatter_axis = {p['axis']}"
    elif kind == "all_to_all":
        shape[p["split"]] //= n
        shape[p["concat"]] *= n
        attrs += f" split_axis = {p['split']} concat_axis = {p['concat']}"
    return f"shard.{kind} %x on @g {attrs} : {t(local)} -> {t(shape)}", tuple(shape)


def derivative_module(op_text: str, grid, local, shape) -> str:
    x, y = t(local), t(shape)
    return f"""
shard.grid @g(shape = {spell(grid)})
func.func @f(%x: {x}) -> {y} {{
  %y = {op_text}
  func.return %y : {y}
}}
func.func @vjp(%x: {x}, %u: {y}) -> ({y}, {x}) {{
  %y, %dx = autodiff.vjp @f(%x) cotangents(%u : {y}) : ({x}) -> ({y}, {x})
  func.return %y, %dx : {y}, {x}
}}
func.func @jvp(%x: {x}, %v: {x}) -> ({y}, {y}) {{
  %y, %dy = autodiff.jvp @f(%x) tangents(%v : {x}) : ({x}) -> ({y}, {y})
  func.return %y, %dy : {y}, {y}
}}
"""


CASES = [
    ("all_reduce", {}),
    ("all_reduce", {"reduction": "average"}),
    ("all_gather", {"axis": 0}),
    ("all_gather", {"axis": 1}),
    ("reduce_scatter", {"axis": 0}),
    ("reduce_scatter", {"axis": 1, "reduction": "average"}),
    ("all_to_all", {"split": 0, "concat": 1}),
    ("all_to_all", {"split": 1, "concat": 0}),
    ("all_to_all", {"split": 1, "concat": 1}),
]
GRIDS = [((4,), (0,)), ((2, 3), (0,)), ((2, 3), (1,)), ((2, 3), (1, 0)), ((2, 3), (0, 1)), ((2, 3), ())]


@pytest.mark.parametrize("grid,axes", GRIDS, ids=lambda v: spell(v) if v else "none")
@pytest.mark.parametrize("kind,params", CASES, ids=lambda v: "-".join(f"{k}{x}" for k, x in v.items()) if isinstance(v, dict) else v)
def test_collective_vjp_is_the_transpose_of_its_jvp(kind, params, grid, axes) -> None:
    local = (12, 12)  # divisible by every group size here
    op_text, shape = collective(kind, grid, axes, local, **params)
    module = run_pass(parse(derivative_module(op_text, grid, local, shape)))
    devices = math.prod(grid)
    rng = np.random.default_rng(0)
    x = [rng.standard_normal(local) for _ in range(devices)]
    v = [rng.standard_normal(local) for _ in range(devices)]
    u = [rng.standard_normal(shape) for _ in range(devices)]

    jvp = run_spmd(module, "jvp", [[xi, vi] for xi, vi in zip(x, v)], grid).results
    vjp = run_spmd(module, "vjp", [[xi, ui] for xi, ui in zip(x, u)], grid).results
    primal = run_spmd(module, "f", [[xi] for xi in x], grid).results
    image = run_spmd(module, "f", [[vi] for vi in v], grid).results  # J v: the map is linear
    for d in range(devices):
        np.testing.assert_array_equal(jvp[d][0], primal[d][0])
        np.testing.assert_array_equal(vjp[d][0], primal[d][0])
        np.testing.assert_allclose(jvp[d][1], image[d][0], rtol=1e-12, atol=1e-12)
    forward = sum(float(np.sum(jvp[d][1] * u[d])) for d in range(devices))
    backward = sum(float(np.sum(v[d] * vjp[d][1])) for d in range(devices))
    assert forward == pytest.approx(backward, rel=1e-12, abs=1e-12)


def test_transpose_pairs_in_the_derivative_ir() -> None:
    def derived(kind, **p):
        op_text, shape = collective(kind, (2, 3), (1, 0), (12, 6), **p)
        module = run_pass(parse(derivative_module(op_text, (2, 3), (12, 6), shape)))
        return str(functions(module)["f_vjp"])

    assert "shard.reduce_scatter %ct on @g grid_axes = [1, 0] scatter_axis = 1" in derived("all_gather", axis=1)
    assert "shard.all_gather %ct on @g grid_axes = [1, 0] gather_axis = 0" in derived("reduce_scatter", axis=0)
    assert "split_axis = 1 concat_axis = 0" in derived("all_to_all", split=0, concat=1)


@pytest.mark.parametrize(
    "op_text,message",
    [
        (
            "shard.all_reduce %x on @g grid_axes = [0] reduction = max : tensor<4xf64> -> tensor<4xf64>",
            "with reduction = max .* only sum and average reductions are linear",
        ),
        (
            "shard.all_slice %x on @g grid_axes = [0] slice_axis = 0 : tensor<4xf64> -> tensor<2xf64>",
            "not supported yet: shard.all_slice .* the transpose of shard.all_slice",
        ),
    ],
)
def test_unsupported_collectives_say_so(op_text: str, message: str) -> None:
    shape = (2,) if "all_slice" in op_text else (4,)
    text = derivative_module(op_text, (2,), (4,), shape)
    with pytest.raises(AutodiffError, match=message):
        run_pass(parse(text))
