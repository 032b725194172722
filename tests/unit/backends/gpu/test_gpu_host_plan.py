"""Host code as a straight-line plan (irgrad/backends/gpu/host_plan.py), scatter-add loops
as one kernel (irgrad/lowering/gpu/scatter_loops.py), several points per thread
(convert-parallel-loops-to-gpu{points-per-thread}), and the GPU disk cache, on the emulated
GPU."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
import pytest

import irgrad as ig
from irgrad.backends.gpu import compile_module, compile_program
from irgrad.backends.gpu.emulator import EmulatedDevice
from irgrad.backends.gpu.host_plan import plan_for
from irgrad.backends.interpreter import run_function
from irgrad.diagnostics import parse_module
from irgrad.context import make_context


def _mlp_step(params, x, labels):  # type: ignore[no-untyped-def]
    def loss(params, x, labels):  # type: ignore[no-untyped-def]
        h = ig.relu(x @ params["w1"] + params["b1"])
        logp = ig.log_softmax(h @ params["w2"], axis=-1)
        return -ig.mean(ig.take_along_axis(logp, labels[:, None], axis=1))

    value, grads = ig.value_and_grad(loss)(params, x, labels)
    return value, ig.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def _mlp_inputs(rng: np.random.Generator):  # type: ignore[no-untyped-def]
    params = {
        "w1": rng.standard_normal((6, 8)).astype(np.float32),
        "b1": rng.standard_normal(8).astype(np.float32),
        "w2": rng.standard_normal((8, 5)).astype(np.float32),
    }
    return params, rng.standard_normal((7, 6)).astype(np.float32), rng.integers(0, 5, 7).astype(np.int32)


def test_a_training_step_runs_as_a_plan_and_agrees_with_interpretation() -> None:
    params, x, labels = _mlp_inputs(np.random.default_rng(0))
    compiled = compile_program(ig.trace(_mlp_step, params, x, labels))
    device = EmulatedDevice(compiled.kernels)
    interpreter = compiled.interpreter(device)
    plan = plan_for(interpreter, compiled.entry, {})
    assert plan is not None
    # The step (autodiff's derivative function inlined in it) is a plan of launches and GEMMs;
    # a call left in it would be a nested plan. Constants are folded into the plans' initial
    # slots rather than run as steps.
    callees = [ft for impl, ft, *_ in plan.steps if impl is None]
    assert len(plan.steps) > 10 and all(len(c.steps) > 10 for c in callees)
    assert any(v is not None for c in [plan, *callees] for v in c.initial[c.arity :])
    assert not any(isinstance(op, arith.ConstantOp) for c in [plan, *callees] for _, _, op, _, _ in c.steps)
    leaves = ig.tree_leaves([params, x, labels])
    planned = compiled.run(*leaves, device=device)
    # The same host code interpreted op by op: equal bit for bit.
    call = compiled.resident(*leaves, device=device)
    function = next(f for f in compiled.host.ops if getattr(f, "sym_name", None) and f.sym_name.data == compiled.entry)
    call.returned = tuple(interpreter.call_op(function, (*call.values, *call.outs)))
    interpreted = call.results()
    call.free()
    for a, b in zip(planned, interpreted):
        np.testing.assert_array_equal(a, b)
    expected = ig.tree_leaves(_mlp_step(params, x, labels))
    for a, b in zip(planned, expected):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


HOST_LOOP = """
func.func @f(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xf32>) {
    %y = nn.add %acc, %x : tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
"""


def test_host_code_with_a_loop_gets_no_plan_and_is_interpreted() -> None:
    compiled = compile_module(parse_module(make_context(), HOST_LOOP), "f")
    device = EmulatedDevice(compiled.kernels)
    assert plan_for(compiled.interpreter(device), "f", {}) is None
    x = np.array([1, -2, 3, 0.5], np.float32)
    (got,) = compiled.run(x, 3, device=device)
    np.testing.assert_array_equal(got, 4 * x)


SCATTER = """
func.func @f(%x: tensor<5xCxf32>, %i: tensor<9xi32>, %u: tensor<9xCxf32>) -> tensor<5xCxf32> {
  %y = nn.scatter_add %x[%i], %u axis = 0 : (tensor<5xCxf32>, tensor<9xi32>, tensor<9xCxf32>) -> tensor<5xCxf32>
  func.return %y : tensor<5xCxf32>
}
"""


@pytest.mark.parametrize("columns", [3, 40])  # rows shorter than a warp: a thread per element
@pytest.mark.parametrize("seed", range(3))
def test_scatter_add_is_one_kernel_equal_to_the_serial_loop_bit_for_bit(seed: int, columns: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((5, columns)).astype(np.float32)
    indices = rng.integers(-5, 5, 9).astype(np.int32)  # repeated, negative: counted from the end
    indices[:3] = 2  # one row hit three times: the additions' order matters in float32
    updates = (rng.standard_normal((9, columns)) * 10.0 ** rng.integers(-4, 4, (9, columns))).astype(np.float32)
    text = SCATTER.replace("C", str(columns))
    compiled = compile_module(parse_module(make_context(), text), "f")
    launches = [op for op in compiled.host.walk() if op.name == "gpu.launch_func"]
    loops = [op for op in compiled.host.walk() if op.name == "scf.for"]
    assert not loops and len(launches) <= 2  # the copy of x, then the one scatter kernel
    threads = [int(op.operands[0].owner.value.value.data) * int(op.operands[3].owner.value.value.data) for op in launches]  # type: ignore[union-attr]
    assert max(threads) >= (5 * columns if columns < 32 else columns)
    device = EmulatedDevice(compiled.kernels)
    (got,) = compiled.run(x, indices, updates, device=device)
    (expected,) = run_function(parse_module(make_context(), text), "f", [x, indices, updates])
    np.testing.assert_array_equal(got, expected)


def test_jit_gpu_programs_come_from_the_disk_cache(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """ig.jit(backend="gpu") keeps compiled programs on disk as the CPU backend does: a new
    process (here: a new jit object) loads host code, kernels and PTX instead of compiling;
    a corrupt entry is compiled again and overwritten."""
    from irgrad.backends import gpu as gpu_backend
    from irgrad.frontend import jit as jit_module

    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("IRGRAD_GPU_EMULATE", "1")
    params, x, labels = _mlp_inputs(np.random.default_rng(1))
    first = ig.jit(_mlp_step, backend="gpu")(params, x, labels)
    entries = list(tmp_path.glob("*.gpu.json"))
    assert len(entries) == 1

    def no_compile(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("compiled although the disk cache holds the program")

    monkeypatch.setattr(gpu_backend, "compile_program", no_compile)
    second = ig.jit(_mlp_step, backend="gpu")(params, x, labels)
    for a, b in zip(ig.tree_leaves(first), ig.tree_leaves(second)):
        np.testing.assert_array_equal(a, b)

    monkeypatch.undo()
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("IRGRAD_GPU_EMULATE", "1")
    entries[0].write_bytes(b"{not json")
    program = ig.trace(_mlp_step, params, x, labels)
    compiled = jit_module._gpu_compile(program)
    assert compiled.ptx.kernels and b"not json" not in entries[0].read_bytes()


@pytest.mark.parametrize("points", [2, 4])
def test_several_points_per_thread_agree_with_numpy(points: int) -> None:
    rng = np.random.default_rng(points)
    x = rng.standard_normal((16, 32)).astype(np.float32)  # 512 points: 2 or 4 per thread
    b = rng.standard_normal(32).astype(np.float32)

    def fn(x, b):  # type: ignore[no-untyped-def]
        return ig.tanh(x) * 0.5 + x * b, ig.exp(x)

    compiled = compile_program(ig.trace(fn, x, b), block_size=64, points_per_thread=points)
    kernels = [op for op in compiled.host.walk() if op.name == "gpu.launch_func"]
    grids = {int(op.operands[0].owner.value.value.data) for op in kernels}  # type: ignore[union-attr]
    assert grids == {512 // (64 * points)}
    got = compiled.run(x, b, device=EmulatedDevice(compiled.kernels))
    np.testing.assert_allclose(got[0], np.tanh(x) * 0.5 + x * b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], np.exp(x), rtol=1e-5)


def test_large_loops_run_four_points_per_thread_by_default() -> None:
    """points-per-thread=0 (the default): 4 per thread from 2^20 points on (AUTO_MIN_POINTS),
    one below. (The emulator runs a thread at a time: what 4 points per thread compute is
    checked on 512 points above, and on the GPU by tools/gpu_check.sh's W4.)"""
    from irgrad.lowering.gpu.parallel_loops_to_gpu import AUTO_MIN_POINTS, auto_points_per_thread

    assert auto_points_per_thread(AUTO_MIN_POINTS) == 4
    assert auto_points_per_thread(AUTO_MIN_POINTS - 1) == 1

    def fn(v):  # type: ignore[no-untyped-def]
        return ig.tanh(v) * 0.5 + v * v

    for n, grid in ((AUTO_MIN_POINTS, AUTO_MIN_POINTS // (256 * 4)), (4096, 4096 // 256)):
        compiled = compile_program(ig.trace(fn, np.zeros(n, np.float32)))
        kernels = [op for op in compiled.host.walk() if op.name == "gpu.launch_func"]
        assert [int(op.operands[0].owner.value.value.data) for op in kernels] == [grid]  # type: ignore[union-attr]
        loads = compiled.ptx.ptx.count("ld.global")
        assert loads == (4 if n == AUTO_MIN_POINTS else 1), compiled.ptx.ptx


def test_random_permutation_runs_on_the_gpu_emulator() -> None:
    """ig.random.permutation (a bitonic sort in an scf.for of gather/select kernels) compiles
    for the GPU (ptxas where found) and gives the eager permutation."""
    key = ig.random.key(3)
    compiled = compile_program(ig.trace(lambda k: ig.random.permutation(k, 50), key))
    (got,) = compiled.run(key, device=EmulatedDevice(compiled.kernels))
    np.testing.assert_array_equal(got, ig.random.permutation(key, 50))
