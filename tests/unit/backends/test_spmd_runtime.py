"""The SPMD runtime (irgrad/backends/spmd.py) and the shard ops on the interpreter.

Each collective runs through `run_spmd` on grids (4,), (2,3) and (2,2,2) with several grid_axes
orders, and is compared with an expectation written here from the definition (device groups
by transposing a [grid..., local...] array), not with collectives.py, which the runtime uses.
Then `run_partitioned` on hand-written per-device programs, and every way a run can go wrong:
it must end with an error naming the device, never hang.
"""

from __future__ import annotations

import math
import re
import threading
import time

import numpy as np
import pytest

from irgrad.backends.interpreter import InterpreterError, InterpreterInputError, run_function
from irgrad.backends.spmd import run_partitioned, run_spmd
from irgrad.diagnostics import parse_module
from irgrad.context import make_context


def parse(text: str):
    return parse_module(make_context(), text, "test.mlir")


def spell(shape) -> str:
    return "x".join(map(str, shape))


def tensor(shape) -> str:
    return f"tensor<{spell(shape)}xf64>" if shape else "tensor<f64>"


def grid_decl(grid) -> str:
    return f"shard.grid @g(shape = {spell(grid)})"


def device_coords(grid):
    return list(np.ndindex(*grid))


# ---------------------------------------------------------------------------------------------
# Expectations from the definition
# ---------------------------------------------------------------------------------------------


def by_group(values: np.ndarray, grid, axes):
    """`values` ([*grid, *local]) as [*others, n, *local]: the members of each group (devices
    sharing the coordinates outside `axes`) in row-major order over `axes` as listed."""
    others = [a for a in range(len(grid)) if a not in axes]
    local = values.shape[len(grid) :]
    perm = [*others, *axes, *range(len(grid), values.ndim)]
    n = math.prod(grid[a] for a in axes)
    return values.transpose(perm).reshape(*(grid[a] for a in others), n, *local), others


def member(coords, grid, axes) -> int:
    """A device's index in its group."""
    index = 0
    for a in axes:
        index = index * grid[a] + coords[a]
    return index


def expected(kind: str, values: np.ndarray, grid, axes, **p) -> list[np.ndarray]:
    groups, others = by_group(values, grid, axes)
    out = []
    for c in device_coords(grid):
        members = groups[tuple(c[a] for a in others)]  # [n, *local]
        i = member(c, grid, axes)
        n = len(members)
        if kind == "all_reduce":
            out.append(members.max(axis=0) if p.get("reduction") == "max" else members.sum(axis=0))
        elif kind == "all_gather":
            out.append(np.concatenate(list(members), axis=p["axis"]))
        elif kind == "all_slice":
            out.append(np.split(values[c], n, axis=p["axis"])[i])
        elif kind == "reduce_scatter":
            out.append(np.split(members.sum(axis=0), n, axis=p["axis"])[i])
        elif kind == "all_to_all":
            chunks = [np.split(m, n, axis=p["split"])[i] for m in members]
            out.append(np.concatenate(chunks, axis=p["concat"]))
    return out


def collective_ir(kind: str, grid, axes, local, **p) -> tuple[str, tuple[int, ...]]:
    """A per-device function applying one collective; returns its text and result shape."""
    n = math.prod(grid[a] for a in axes)
    shape = list(local)
    axes_text = f"grid_axes = {list(axes)}"
    if kind == "all_reduce":
        attrs = f"{axes_text} reduction = {p.get('reduction', 'sum')}"
    elif kind == "all_gather":
        shape[p["axis"]] *= n
        attrs = f"{axes_text} gather_axis = {p['axis']}"
    elif kind == "all_slice":
        shape[p["axis"]] //= n
        attrs = f"{axes_text} slice_axis = {p['axis']}"
    elif kind == "reduce_scatter":
        shape[p["axis"]] //= n
        attrs = f"{axes_text} scatter_axis = {p['axis']}"
    else:
        shape[p["split"]] //= n
        shape[p["concat"]] *= n
        attrs = f"{axes_text} split_axis = {p['split']} concat_axis = {p['concat']}"
    text = f"""
{grid_decl(grid)}
func.func @f(%x: {tensor(local)}) -> {tensor(shape)} {{
  %y = shard.{kind} %x on @g {attrs} : {tensor(local)} -> {tensor(shape)}
  func.return %y : {tensor(shape)}
}}
"""
    return text, tuple(shape)


GRIDS_AND_AXES = [
    ((4,), (0,)),
    ((4,), ()),
    ((2, 3), (0,)),
    ((2, 3), (1,)),
    ((2, 3), (0, 1)),
    ((2, 3), (1, 0)),
    ((2, 2, 2), (1,)),
    ((2, 2, 2), (2, 0)),
    ((2, 2, 2), (0, 1, 2)),
    ((2, 2, 2), (2, 1, 0)),
]

COLLECTIVES = [
    ("all_reduce", {}),
    ("all_reduce", {"reduction": "max"}),
    ("all_gather", {"axis": 0}),
    ("all_gather", {"axis": 1}),
    ("all_slice", {"axis": 0}),
    ("reduce_scatter", {"axis": 0}),
    ("reduce_scatter", {"axis": 1}),
    ("all_to_all", {"split": 0, "concat": 1}),
    ("all_to_all", {"split": 1, "concat": 0}),
    ("all_to_all", {"split": 0, "concat": 0}),
]


@pytest.mark.parametrize("grid,axes", GRIDS_AND_AXES, ids=lambda v: spell(v) if v else "none")
@pytest.mark.parametrize("kind,params", COLLECTIVES, ids=lambda v: "-".join(f"{k}{x}" for k, x in v.items()) if isinstance(v, dict) else v)
def test_collective_matches_its_definition(kind, params, grid, axes) -> None:
    local = (24, 24)  # divisible by every group size here (1, 2, 3, 4, 6, 8)
    text, shape = collective_ir(kind, grid, axes, local, **params)
    rng = np.random.default_rng(0)
    values = rng.integers(-9, 10, size=(*grid, *local)).astype(np.float64)  # exact sums
    run = run_spmd(parse(text), "f", [[values[c]] for c in device_coords(grid)], grid)
    want = expected(kind, values, grid, axes, **params)
    for c, got, exp in zip(device_coords(grid), run.results, want):
        assert got[0].shape == shape
        np.testing.assert_array_equal(got[0], exp, err_msg=f"device {c}")


def test_process_linear_index_and_communication_counts() -> None:
    text = f"""
{grid_decl((2, 3))}
func.func @f(%x: tensor<2xf64>) -> (index, tensor<6xf64>, tensor<2xf64>) {{
  %i = shard.process_linear_index on @g : index
  %y = shard.all_gather %x on @g grid_axes = [1] gather_axis = 0 : tensor<2xf64> -> tensor<6xf64>
  %z = shard.all_reduce %x on @g grid_axes = [0, 1] : tensor<2xf64> -> tensor<2xf64>
  %w = shard.all_reduce %z on @g : tensor<2xf64> -> tensor<2xf64>
  func.return %i, %y, %w : index, tensor<6xf64>, tensor<2xf64>
}}
"""
    run = run_spmd(parse(text), "f", [[np.full(2, float(i))] for i in range(6)], (2, 3))
    assert [r[0] for r in run.results] == list(range(6))
    np.testing.assert_array_equal(run.results[4][1], [3, 3, 4, 4, 5, 5])
    np.testing.assert_array_equal(run.results[4][2], [15, 15])
    for stats in run.stats:
        assert stats.collectives == {"all_gather": 1, "all_reduce": 2}
        # all_gather over 3 devices: 2 * 16 bytes; all_reduce over 6: 2 * 5 * 16 // 6; over 1: 0
        assert stats.bytes_sent == 2 * 16 + 2 * 5 * 16 // 6
    assert run.total_bytes_sent == 6 * (32 + 26)


def test_sharding_and_shard_are_identity() -> None:
    text = f"""
{grid_decl((2,))}
func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {{
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %y = shard.shard %x to %s : tensor<4xf64>
  func.return %y : tensor<4xf64>
}}
"""
    x = np.arange(4.0)
    np.testing.assert_array_equal(run_function(parse(text), "f", [x])[0], x)


# ---------------------------------------------------------------------------------------------
# Single-device runs
# ---------------------------------------------------------------------------------------------

ALL_REDUCE_ON = """
shard.grid @g(shape = {grid})
func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {{
  %y = shard.all_reduce %x on @g grid_axes = [0] : tensor<3xf64> -> tensor<3xf64>
  func.return %y : tensor<3xf64>
}}
"""


def test_collective_on_one_device_grid_is_identity() -> None:
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(run_function(parse(ALL_REDUCE_ON.format(grid="1")), "f", [x])[0], x)


def test_collective_on_bigger_grid_needs_the_spmd_runtime() -> None:
    with pytest.raises(InterpreterError, match=r"per-device \(SPMD\) program.*run_partitioned"):
        run_function(parse(ALL_REDUCE_ON.format(grid="4")), "f", [np.zeros(3)])


def test_grid_of_the_run_must_match_the_program() -> None:
    with pytest.raises(InterpreterError, match=r"grid @g \(4\), but the SPMD run simulates a grid 2x2"):
        run_spmd(parse(ALL_REDUCE_ON.format(grid="4")), "f", [[np.zeros(3)]] * 4, (2, 2))


# ---------------------------------------------------------------------------------------------
# run_partitioned
# ---------------------------------------------------------------------------------------------

DATA_PARALLEL_SUM = """
shard.grid @g(shape = 4)
func.func @sum(%x: tensor<2x3xf64>) -> tensor<f64> attributes {
    shard.grid = @g,
    shard.arg_split_axes = [#shard<axisarray[[0]]>],
    shard.result_split_axes = [#shard<axisarray[]>]} {
  %s = nn.reduce_sum %x axes = [0, 1] : tensor<2x3xf64> -> tensor<f64>
  %t = shard.all_reduce %s on @g grid_axes = [0] : tensor<f64> -> tensor<f64>
  func.return %t : tensor<f64>
}
"""


def test_run_partitioned_data_parallel_sum() -> None:
    x = np.random.default_rng(1).standard_normal((8, 3))
    (total,), stats = run_partitioned(parse(DATA_PARALLEL_SUM), "sum", [x])
    np.testing.assert_allclose(total, x.sum(), rtol=1e-12)
    assert [s.collectives["all_reduce"] for s in stats] == [1, 1, 1, 1]


SCALE_2D = """
shard.grid @g(shape = 2x3)
func.func @f(%x: tensor<2x2xf64>, %w: tensor<2xf64>, %a: f64) -> (tensor<2x2xf64>, tensor<2xf64>, f64)
    attributes {
      shard.grid = @g,
      shard.arg_split_axes = [#shard<axisarray[[0], [1]]>, #shard<axisarray[[0]]>, #shard<axisarray[]>],
      shard.result_split_axes = [#shard<axisarray[[0], [1]]>, #shard<axisarray[[0]]>, #shard<axisarray[]>]} {
  %s = tensor.splat %a : tensor<2x2xf64>
  %y = nn.mul %x, %s : tensor<2x2xf64>
  %v = nn.neg %w : tensor<2xf64>
  func.return %y, %v, %a : tensor<2x2xf64>, tensor<2xf64>, f64
}
"""


def test_run_partitioned_splits_and_reassembles() -> None:
    x = np.arange(24.0).reshape(4, 6)
    w = np.arange(4.0)
    (y, v, a), _ = run_partitioned(parse(SCALE_2D), "f", [x, w, 2.5])
    np.testing.assert_array_equal(y, 2.5 * x)
    np.testing.assert_array_equal(v, -w)  # split over axis 0, replicated over axis 1
    assert a == 2.5


def test_run_partitioned_rejects_disagreeing_replicas() -> None:
    text = """
shard.grid @g(shape = 2x2)
func.func @f() -> index attributes {
    shard.grid = @g, shard.arg_split_axes = [], shard.result_split_axes = [#shard<axisarray[]>]} {
  %i = shard.process_linear_index on @g : index
  func.return %i : index
}
"""
    with pytest.raises(InterpreterError, match=r"result #0 of @f is replicated, but devices \(0, 0\) and \(0, 1\)"):
        run_partitioned(parse(text), "f", [])


def test_run_partitioned_non_divisible_input() -> None:
    with pytest.raises(InterpreterInputError, match=r"argument #0 of @sum: dimension 0 of shape \(7, 3\).*4 equal chunks over axes \[0\] of grid @g \(4\)"):
        run_partitioned(parse(DATA_PARALLEL_SUM), "sum", [np.zeros((7, 3))])


def test_run_partitioned_wrong_global_shape_or_dtype() -> None:
    with pytest.raises(InterpreterInputError, match=r"expected a global array of shape \(8, 3\) and dtype float64"):
        run_partitioned(parse(DATA_PARALLEL_SUM), "sum", [np.zeros((8, 3), np.float32)])
    with pytest.raises(InterpreterInputError, match=r"expected a rank-2 array, got shape \(8,\)"):
        run_partitioned(parse(DATA_PARALLEL_SUM), "sum", [np.zeros(8)])


def test_run_partitioned_wrong_arg_count() -> None:
    with pytest.raises(InterpreterInputError, match=r"@sum takes 1 argument\(s\), got 2"):
        run_partitioned(parse(DATA_PARALLEL_SUM), "sum", [np.zeros((8, 3))] * 2)


def test_run_partitioned_needs_a_grid() -> None:
    text = "func.func @f(%x: f64) -> f64 {\n  func.return %x : f64\n}"
    with pytest.raises(InterpreterInputError, match="not a per-device program"):
        run_partitioned(parse(text), "f", [1.0])


def test_run_spmd_argument_errors() -> None:
    module = parse(ALL_REDUCE_ON.format(grid="4"))
    with pytest.raises(InterpreterInputError, match=r"3 argument lists for a grid of shape \(4,\)"):
        run_spmd(module, "f", [[np.zeros(3)]] * 3, (4,))
    with pytest.raises(InterpreterInputError, match=r"takes 1 argument\(s\), got 2 \(on device \(0,\)"):
        run_spmd(module, "f", [[np.zeros(3), np.zeros(3)]] * 4, (4,))
    with pytest.raises(InterpreterInputError, match=r"argument #0.*\(on device \(2,\) of grid 4\)"):
        run_spmd(module, "f", [[np.zeros(3)], [np.zeros(3)], [np.zeros(2)], [np.zeros(3)]], (4,))
    with pytest.raises(InterpreterInputError, match="positive sizes"):
        run_spmd(module, "f", [], (0,))


# ---------------------------------------------------------------------------------------------
# Failures never hang
# ---------------------------------------------------------------------------------------------


def no_device_threads_left() -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not any(t.name.startswith("irgrad-device-") for t in threading.enumerate()):
            return True
        time.sleep(0.01)
    return False


def test_a_failing_device_stops_the_grid() -> None:
    text = f"""
{grid_decl((4,))}
func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {{
  %y = shard.all_reduce %x on @g grid_axes = [0] : tensor<3xf64> -> tensor<3xf64>
  %i = shard.process_linear_index on @g : index
  %c2 = arith.constant 2 : index
  %ok = arith.cmpi ne, %i, %c2 : index
  cf.assert %ok, "device two gives up"
  %z = shard.all_reduce %y on @g grid_axes = [0] : tensor<3xf64> -> tensor<3xf64>
  func.return %z : tensor<3xf64>
}}
"""
    # The failing device must end the call, not leave the others waiting in the second
    # all_reduce: the call runs in a thread, and a hang shows as a thread still alive.
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            run_spmd(parse(text), "f", [[np.zeros(3)]] * 4, (4,))
        except BaseException as err:  # noqa: BLE001  (checked below)
            outcome.append(err)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    caller.join(timeout=120)
    assert not caller.is_alive(), "the grid hangs after a device failed"
    assert len(outcome) == 1 and isinstance(outcome[0], InterpreterError), outcome
    assert re.search(r"device two gives up \(on device \(2,\) of grid 4\)", str(outcome[0]))
    assert no_device_threads_left()


def branch_on_device_zero(then: str, otherwise: str) -> str:
    return f"""
{grid_decl((2, 2))}
func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {{
  %i = shard.process_linear_index on @g : index
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %i, %c0 : index
  %y = scf.if %first -> (tensor<3xf64>) {{
    {then}
  }} else {{
    {otherwise}
  }}
  func.return %y : tensor<3xf64>
}}
"""


REDUCE = "%r = shard.all_reduce %x on @g grid_axes = [0, 1] reduction = {kind} : tensor<3xf64> -> tensor<3xf64>\n    scf.yield %r : tensor<3xf64>"


def test_devices_that_skip_a_collective_are_a_divergence() -> None:
    text = branch_on_device_zero(REDUCE.format(kind="sum"), "scf.yield %x : tensor<3xf64>")
    with pytest.raises(InterpreterError, match=r"returned without reaching it: the devices' control flow diverged"):
        run_spmd(parse(text), "f", [[np.zeros(3)]] * 4, (2, 2))
    assert no_device_threads_left()


def test_devices_at_different_collectives_are_a_divergence() -> None:
    text = branch_on_device_zero(REDUCE.format(kind="sum"), REDUCE.format(kind="max"))
    with pytest.raises(InterpreterError, match=r"devices disagree on the collective: device \(0, 0\) runs shard.all_reduce grid_axes = \[0, 1\] reduction = sum, device \(0, 1\) runs .* reduction = max"):
        run_spmd(parse(text), "f", [[np.zeros(3)]] * 4, (2, 2))


def test_a_stuck_device_times_out() -> None:
    loop = """%t = arith.constant true
    scf.while () : () -> () {
      scf.condition(%t)
    } do {
      scf.yield
    }
    scf.yield %x : tensor<3xf64>"""
    text = branch_on_device_zero(loop, REDUCE.format(kind="sum"))
    with pytest.raises(InterpreterError, match=r"waited 0.5 s at this collective for the other devices"):
        run_spmd(parse(text), "f", [[np.zeros(3)]] * 4, (2, 2), timeout=0.5)
    assert no_device_threads_left()  # device (0, 0) stopped looping


def test_run_partitioned_rejects_split_axes_that_do_not_fit() -> None:
    text = DATA_PARALLEL_SUM.replace("[#shard<axisarray[[0]]>]", "[#shard<axisarray[[0], [], []]>]")
    with pytest.raises(InterpreterError, match=r"shard.arg_split_axes entry .* does not fit tensor<2x3xf64>"):
        run_partitioned(parse(text), "sum", [np.zeros((8, 3))])
