"""The GPU backend without a GPU: PTX that ptxas accepts, and semantics on the emulator.

- Every case of test_lowering_nn_to_linalg's op table (every nn op, its dtypes and edge
  cases), batched into a few modules, compiles through `irgrad-gpu` to PTX that
  `ptxas -arch=sm_80` and `-arch=sm_90` accept; each case then runs on the emulated GPU
  (irgrad/backends/gpu/emulator.py: the host code with its allocations, copies and
  launches, each kernel interpreted thread by thread) and agrees with the reference
  interpreter as closely as the CPU lowering test asks (bitwise, or within a few ulps where
  a sum is accumulated in another order).
- The example programs (the MLP, a CNN with conv2d and max_pool2d, an RNN through
  ig.fori_loop) and gradient programs (ig.value_and_grad, ig.grad, a training step) do the
  same, once with the default block size and once with 4-thread blocks, which makes every
  reduction a multi-block tree.
- The host code of a training step reads nothing back from the device.
- The CUDA device code (pycuda module loading, prepared launches, copies, the buffer pool)
  runs against a stand-in for `pycuda.driver` backed by the emulator.
Tests that assemble PTX skip, with the reason "ptxas not found", where ptxas is missing;
the emulator tests need no tool. Nothing here runs on a GPU: tools/gpu_check.sh does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func, gpu, memref
from xdsl.dialects.builtin import ModuleOp, StringAttr

import test_lowering_nn_to_linalg as op_table
from _cpu_util import assert_close
from _interpreter_util import Scalar, assert_same, build
from irgrad.backends.gpu import (
    GpuCompiled,
    GpuUnavailableError,
    compile_module,
    compile_program,
    cuda_unavailable_reason,
    find_ptxas,
    ptxas_check,
)
from irgrad.backends.gpu.emulator import EmulatedDevice
from irgrad.backends.gpu.buffer_pool import BufferPool
from irgrad.backends.gpu.kernel_params import param_format, param_value
from irgrad.backends.interpreter import run_function
from irgrad.ir_numpy import tensor_type_for

ARCHS = ("sm_80", "sm_90")
ROOT = Path(__file__).resolve().parents[4]
OP_BATCHES = 3

needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found")


def assemble(compiled: GpuCompiled) -> None:
    """ptxas accepts the program's PTX for every arch in ARCHS."""
    for arch in ARCHS:
        ptx = compiled.ptx_for(arch)
        assert f".target {arch}" in ptx.ptx
        assert ptxas_check(ptx.ptx, arch), "ptxas not found"


def emulate(compiled: GpuCompiled, *args: Any) -> tuple[Any, ...]:
    return compiled.run(*args, device=EmulatedDevice(compiled.kernels, memory_bytes=1 << 24))


def assert_agrees(got: Sequence[Any], expected: Sequence[Any], *, exact: bool, what: str) -> None:
    assert len(got) == len(expected), what
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        if exact:
            assert_same(g, e)
        else:
            op_table.assert_close(g, e)


# ---------------------------------------------------------------------------------------------
# Every op
# ---------------------------------------------------------------------------------------------


def _case_inputs(case: op_table.Case) -> tuple[list[Any], list[Any]]:
    types = [a.type if isinstance(a, Scalar) else tensor_type_for(np.asarray(a)) for a in case.args]
    values = [a.value if isinstance(a, Scalar) else a for a in case.args]
    return types, values


def _batch_module(cases: Sequence[op_table.Case]) -> ModuleOp:
    """One function `@case<k>` per case."""
    functions = []
    for k, case in enumerate(cases):
        types, _ = _case_inputs(case)
        function = build(types, case.body).body.block.first_op
        assert isinstance(function, func.FuncOp)
        function.detach()
        function.sym_name = StringAttr(f"case{k}")
        functions.append(function)
    return ModuleOp(functions)


@pytest.mark.parametrize("batch", range(OP_BATCHES))
def test_every_op_compiles_and_agrees_on_the_emulator(batch: int) -> None:
    cases = op_table.CASES[batch::OP_BATCHES]
    module = _batch_module(cases)
    signatures = {
        f.sym_name.data: (list(f.function_type.inputs.data), list(f.function_type.outputs.data))
        for f in module.ops
        if isinstance(f, func.FuncOp)
    }
    reference = module.clone()
    compiled = compile_module(module, "case0", check_ptx=False)
    if find_ptxas() is not None:
        assemble(compiled)
    for k, case in enumerate(cases):
        _, values = _case_inputs(case)
        with np.errstate(all="ignore"):
            expected = run_function(reference, f"case{k}", list(values))
        entry = compiled.function(f"case{k}", *signatures[f"case{k}"])
        got = emulate(entry, *values)
        assert_agrees(got, expected, exact=case.exact, what=case.name)


def test_the_op_batches_cover_the_op_table() -> None:
    covered = sum(len(op_table.CASES[b::OP_BATCHES]) for b in range(OP_BATCHES))
    assert covered == len(op_table.CASES)


@needs_ptxas
def test_ptx_of_every_op_reaches_ptxas_for_both_archs() -> None:
    # The batches above assemble when ptxas exists; this names the requirement on its own,
    # with a small module whose kernels cover ids, shared memory and libdevice.
    text = """
    func.func @main(%x: tensor<300xf32>) -> tensor<f32> {
      %e = nn.exp %x : tensor<300xf32>
      %s = nn.reduce_sum %e axes = [0] : tensor<300xf32> -> tensor<f32>
      func.return %s : tensor<f32>
    }
    """
    compiled = compile_module(op_table.parse(text), "main")
    assert compiled.ptxas_checked and compiled.ptx.uses_libdevice
    assemble(compiled)


# ---------------------------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------------------------

RNG = np.random.default_rng(11)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _programs() -> list[tuple[str, Callable[..., Any], tuple[Any, ...]]]:
    """(name, function, arguments): examples and gradient programs (test_cpu_end_to_end's
    traced programs, the CNN and RNN examples, a training step)."""
    import irgrad as ig
    from irgrad import layers, losses

    def mlp(x, w1, w2):
        h = ig.tanh(x @ w1)
        return ((h @ w2) ** 2).mean()

    def classifier_loss(w, b, x, labels):
        logits = x @ w + b
        return -(ig.log_softmax(logits, axis=1) * labels).sum(axis=1).mean()

    cnn = layers.Sequential(
        [
            layers.Conv2d(1, 2, kernel_size=3, padding=1),
            layers.ReLU(),
            layers.MaxPool2d(2),
            layers.Flatten(),
            layers.Linear(2 * 3 * 3, 4),
        ]
    )
    cnn_params = cnn.init(1)

    def cnn_loss(p, x, y):
        return losses.softmax_cross_entropy(cnn.apply(p, x), y)

    def rnn_loss(params, xs, target):
        def step(i, h):
            return ig.tanh(h @ params["w"] + xs[i] @ params["u"])

        h0 = ig.zeros((xs.shape[1], params["w"].shape[0]))
        h = ig.fori_loop(0, xs.shape[0], step, h0)
        return ig.mean((h - target) ** 2)

    rnn_params = {"w": f32(6, 6) * 0.3, "u": f32(3, 6) * 0.3}

    def train_step(params, x, labels):
        def loss(p):
            h = ig.relu(x @ p["w1"] + p["b1"])
            logp = ig.log_softmax(h @ p["w2"] + p["b2"], axis=-1)
            return -ig.mean(ig.take_along_axis(logp, labels[:, None], axis=1))

        value, grads = ig.value_and_grad(loss)(params)
        return value, ig.tree_map(lambda p, g: p - 0.01 * g, params, grads)

    def rnn_scan(w, xs):
        return ig.sum(ig.scan(lambda h, x: (ig.tanh(h @ w + x), h * 2.0), ig.zeros((4,)), xs)[1])

    def attention_energy(q, k):
        return ig.sum(ig.softmax(ig.einsum("bqd,bkd->bqk", q, k)) ** 2)

    @ig.custom_jvp
    def softplus(x):
        return ig.log(1.0 + ig.exp(x))

    @softplus.defjvp
    def _softplus_jvp(primals, tangents):
        return softplus(primals[0]), tangents[0] * ig.sigmoid(primals[0])

    def doubling(x):
        return ig.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0 + 1.0, c[1] + 1), (x, 0))

    mlp_params = {"w1": f32(12, 16) * 0.3, "b1": np.zeros(16, np.float32), "w2": f32(16, 10) * 0.3, "b2": np.zeros(10, np.float32)}
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]]
    m = f32(4, 4)
    spd = m @ m.T + 4 * np.eye(4, dtype=np.float32)

    def linalg_energy(a, b):
        return ig.sum(ig.linalg.solve(a, b) ** 2) + ig.linalg.slogdet(a)[1] + ig.sum(ig.linalg.cholesky(a))

    def special_energy(x):
        return ig.sum(ig.special.erfc(x)) + ig.nanmean(x) + ig.sum(ig.top_k(x, 3)[0]) + ig.percentile(x, 30.0)

    def fft_energy(x):
        spectrum = ig.fft.rfft(x)
        return ig.sum(ig.fft.irfft(spectrum * 1j, n=12) ** 2) + ig.sum(ig.abs(ig.fft.fft(x, axis=0)))

    return [
        ("mlp_value_and_grad", ig.value_and_grad(mlp, argnums=(1, 2)), (f32(5, 4), f32(4, 6), f32(6, 3))),
        ("classifier_grad", ig.grad(classifier_loss, argnums=(0, 1)), (f32(4, 3), f32(3), f32(5, 4), onehot)),
        ("cnn_value_and_grad", ig.value_and_grad(cnn_loss), (cnn_params, f32(2, 1, 6, 6), np.array([1, 3], np.int32))),
        ("rnn_value_and_grad", ig.value_and_grad(rnn_loss), (rnn_params, f32(4, 2, 3), f32(2, 6))),
        ("f64_tanh_grad", ig.grad(lambda v: ig.tanh(v).sum()), (RNG.standard_normal((3, 4)),)),
        ("train_step", train_step, (mlp_params, f32(8, 12), RNG.integers(0, 10, 8).astype(np.int32))),
        # The transforms and functions of 2026-11-30: scan, einsum, custom_jvp, sort/cumsum, erf,
        # vmap of a per-example while loop, a Hessian (forward over reverse).
        ("scan_grad", ig.grad(rnn_scan), (f32(4, 4), f32(6, 4))),
        ("einsum_attention_grad", ig.grad(attention_energy, argnums=(0, 1)), (f32(2, 5, 4), f32(2, 6, 4))),
        ("custom_jvp_grad", ig.grad(lambda x: ig.sum(softplus(x))), (f32(7),)),
        ("sort_cumsum", lambda x: (ig.sort(x), ig.cumsum(x), ig.argsort(x)), (f32(9),)),
        ("erf_gelu_grad", ig.grad(lambda x: ig.sum(ig.gelu(x, approximate=False) + ig.erf(x))), (f32(5),)),
        ("vmap_while", ig.vmap(doubling), (np.abs(f32(5)) * 3,)),
        ("hessian", ig.hessian(lambda x: ig.sum(ig.tanh(x) ** 3)), (f32(3),)),
        # And of the second half of that day: linear algebra (host loops launching kernels, a
        # custom_jvp rule per factorization), special functions, lax and statistics.
        ("linalg_grad", ig.grad(linalg_energy, argnums=(0, 1)), (spd, f32(4))),
        ("special_lax_stats_grad", ig.grad(special_energy), (f32(6),)),
        # Few outputs, long reductions: split into chunks (irgrad/lowering/gpu/split_reductions.py;
        # 2100 rows into 124 chunks of 17, the last one short), a bias gradient among them.
        ("column_reductions", lambda x: (ig.sum(x, axis=0), ig.max(x, axis=0), ig.min(x, axis=0),
                                         ig.prod(x[:2048] * 0.001 + 1.0, axis=0)), (f32(2100, 3),)),
        ("bias_grad", ig.grad(lambda b, x: ig.sum(ig.tanh(x + b) ** 2)), (f32(5), f32(2048, 5))),
        # The FFT (nn-expand-fft: DFT matmuls and twiddles on (re, im) pairs) and its gradient.
        ("fft_grad", ig.grad(fft_energy), (f32(3, 12),)),
    ]


PROGRAMS = {name: (fn, args) for name, fn, args in _programs()}


# The three slowest programs run at one block size only (the small block size is about the
# launch geometry, which the other programs cover): CI's time budget.
ONE_BLOCK_SIZE = {"linalg_grad", "special_lax_stats_grad", "column_reductions", "fft_grad"}


@pytest.mark.parametrize(
    "name,block_size",
    [(n, b) for n in PROGRAMS for b in (256, 4) if not (b == 4 and n in ONE_BLOCK_SIZE)],
)
def test_program_compiles_and_agrees_on_the_emulator(name: str, block_size: int) -> None:
    import irgrad as ig

    fn, args = PROGRAMS[name]
    program = ig.trace(fn, *args)
    compiled = compile_program(program, block_size=block_size, check_ptx=False)
    if block_size == 256 and find_ptxas() is not None:
        assemble(compiled)
    leaves = ig.tree_leaves(list(args))
    expected = ig.tree_leaves(fn(*args))
    got = emulate(compiled, *leaves)
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_close(np.asarray(e), np.asarray(g), normwise=True, what=f"{name} result #{k}")


def test_mlp_example_file_compiles_and_agrees() -> None:
    module = op_table.parse((ROOT / "examples" / "mlp.mlir").read_text())
    reference = module.clone()
    compiled = compile_module(module, "mlp", check_ptx=find_ptxas() is not None)
    args = [f32(4, 3), f32(3, 8), f32(8), f32(8, 2), f32(2)]
    (got,) = emulate(compiled, *args)
    (expected,) = run_function(reference, "mlp", args)
    # normwise: an output near 0 (0.0356, a sum of terms up to 5) keeps only its absolute,
    # ulp-level agreement; the elementwise relative error there is cancellation, not a bug.
    assert_close(expected, got, normwise=True, what="@mlp")


# ---------------------------------------------------------------------------------------------
# Host code
# ---------------------------------------------------------------------------------------------


def _host_op_counts(compiled: GpuCompiled) -> dict[str, int]:
    counts: dict[str, int] = {}
    for op in compiled.host.walk():
        counts[op.name] = counts.get(op.name, 0) + 1
    return counts


def test_a_training_step_keeps_its_buffers_on_the_device() -> None:
    import irgrad as ig

    fn, args = PROGRAMS["train_step"]
    compiled = compile_program(ig.trace(fn, *args), check_ptx=False)
    counts = _host_op_counts(compiled)
    # No transfer at all inside the step (the runtime copies arguments in and results out,
    # once per call), no host-level load of device memory, and no memref op left to run on
    # the host but views.
    assert counts.get("gpu.memcpy", 0) == 0
    assert not [op for op in compiled.host.walk() if isinstance(op, memref.LoadOp)]
    assert counts["gpu.launch_func"] > 10
    assert counts["gpu.alloc"] == counts["gpu.dealloc"]
    assert {name for name in counts if name.startswith("memref.")} <= {
        "memref.subview", "memref.collapse_shape", "memref.expand_shape", "memref.get_global",
        "memref.alloca", "memref.store", "memref.cast",
    }


def test_kernels_take_global_pointers_and_are_entries() -> None:
    import irgrad as ig

    fn, args = PROGRAMS["mlp_value_and_grad"]
    compiled = compile_program(ig.trace(fn, *args), check_ptx=False)
    ptx = compiled.ptx.ptx
    assert ".target sm_80" in ptx
    for name in compiled.ptx.kernels:
        assert f".visible .entry {name}(" in ptx
    assert ".param .u64 .ptr .global" in ptx
    launched = {
        op.kernel.nested_references.data[-1].data
        for op in compiled.host.walk()
        if isinstance(op, gpu.LaunchFuncOp)
    }
    assert launched == set(compiled.ptx.kernels)


def test_calling_without_a_gpu_says_what_is_missing() -> None:
    reason = cuda_unavailable_reason()
    if reason is None:
        pytest.skip("a CUDA device is present: tools/gpu_check.sh runs the programs on it")
    compiled = compile_module(op_table.parse(
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %y = nn.neg %x : tensor<4xf32>\n  func.return %y : tensor<4xf32>\n}\n"
    ), "f", check_ptx=False)
    with pytest.raises(GpuUnavailableError, match="cannot run on the GPU: "):
        compiled(np.ones(4, np.float32))


def test_arguments_are_checked() -> None:
    from irgrad.backends.cpu import ArgumentError

    compiled = compile_module(op_table.parse(
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %y = nn.neg %x : tensor<4xf32>\n  func.return %y : tensor<4xf32>\n}\n"
    ), "f", check_ptx=False)
    with pytest.raises(ArgumentError, match=r"expected an array of shape \(4,\) and dtype float32"):
        emulate(compiled, np.ones(5, np.float32))
    with pytest.raises(ArgumentError, match="takes 1 argument"):
        emulate(compiled)


def test_a_device_runs_only_its_own_programs_kernels() -> None:
    """Two programs' kernels share names (`f_kernel0`) but not parameters: a launch on the
    other program's device would pack the wrong arguments or run the wrong code."""
    import types

    from irgrad.backends.cpu import ArgumentError

    def program(body: str) -> GpuCompiled:
        return compile_module(op_table.parse(
            "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            f"  %y = {body}\n  func.return %y : tensor<4xf32>\n}}\n"
        ), "f", check_ptx=False)  # fmt: skip

    neg, add = program("nn.neg %x : tensor<4xf32>"), program("nn.add %x, %x : tensor<4xf32>")
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(ArgumentError, match="another program's kernels"):
        neg.run(x, device=EmulatedDevice(add.kernels))
    np.testing.assert_array_equal(neg.run(x, device=EmulatedDevice(neg.kernels))[0], -x)
    np.testing.assert_array_equal(neg.function("f", neg.arg_types, neg.result_types).run(x, device=EmulatedDevice(neg.kernels))[0], -x)
    assert neg.runs_on(types.SimpleNamespace(loaded_ptx=neg.ptx.ptx))
    assert not neg.runs_on(types.SimpleNamespace(loaded_ptx=add.ptx.ptx))
    assert neg.runs_on(object())  # a stand-in that says nothing of its kernels is trusted


def test_buffer_pool_reuses_freed_blocks() -> None:
    raw: list[int] = []
    pool = BufferPool(lambda n: raw.append(n) or 4096 * len(raw), lambda p: None)
    a = pool.alloc(100)
    pool.free(a)
    assert pool.alloc(200) == a  # both round up to 256 bytes
    assert pool.alloc(1000) != a
    assert raw == [256, 1024]


def test_kernel_parameters_pack_as_ptx_declares_them() -> None:
    import ml_dtypes
    from xdsl.dialects.builtin import BFloat16Type, Float16Type, IndexType, MemRefType, f32, i1, i32

    types = [MemRefType(f32, [4]), IndexType(), i32, i1, Float16Type(), BFloat16Type()]
    assert "".join(param_format(t) for t in types) == "PqiBhh"
    assert param_value(np.float16(1.5), "h") == 0x3E00
    assert param_value(np.array(1.5, ml_dtypes.bfloat16)[()], "h") == 0x3FC0
    assert param_value(np.bool_(True), "B") == 1


# ---------------------------------------------------------------------------------------------
# The pycuda path, against a stand-in
# ---------------------------------------------------------------------------------------------


class _StandInDriver:
    """A stand-in for `pycuda.driver` that follows pycuda's documented API (init, Device,
    retain_primary_context, module_from_buffer, get_function/prepare/prepared_call with
    struct-packed arguments, get_global, mem_alloc, memcpy_*) over the emulator, so the
    CUDA device code of the runtime runs without pycuda. It checks our use of that API as
    documented, not pycuda itself: only tools/gpu_check.sh on a GPU does."""

    def __init__(self, compiled: GpuCompiled):
        import types

        self.emulated = EmulatedDevice(compiled.kernels, memory_bytes=1 << 24)
        self.ptx = compiled.ptx.ptx
        self.launches = 0
        driver = self

        class Allocation:
            def __init__(self, pointer: int):
                self.pointer = pointer

            def __int__(self) -> int:
                return self.pointer

            def free(self) -> None:
                pass

        class Function:
            def __init__(self, name: str):
                self.name = name
                self.arg_format = ""

            def prepare(self, arg_types: str) -> Function:
                self.arg_format = "".join(arg_types)
                return self

            def prepared_call(self, grid: tuple, block: tuple, *args: Any) -> None:
                import struct

                from irgrad.ir_numpy import numpy_dtype
                from xdsl.dialects.builtin import MemRefType

                packed = struct.pack(self.arg_format, *args)  # what pycuda hands the driver
                values = struct.unpack(self.arg_format, packed)
                kernel = driver.emulated.kernels[self.name]
                typed = []
                for value, fmt, t in zip(values, self.arg_format, kernel.function_type.inputs.data):
                    if isinstance(t, MemRefType) or fmt == "q":
                        typed.append(value)
                    elif fmt == "h" and numpy_dtype(t).kind in "fV":
                        typed.append(np.array(value, np.int16).view(numpy_dtype(t))[()])
                    else:
                        typed.append(np.array(value).astype(numpy_dtype(t))[()])
                driver.launches += 1
                driver.emulated.launch(self.name, tuple(grid), tuple(block), typed)

        class Module:
            def get_function(self, name: str) -> Function:
                assert f".entry {name}(" in driver.ptx
                return Function(name)

            def get_global(self, name: str) -> tuple[Allocation, int]:
                assert f" {name}[" in driver.ptx
                return Allocation(driver.emulated.global_address(name)), 0

        class Context:
            def push(self) -> None:
                pass

            @staticmethod
            def pop() -> None:
                pass

            @staticmethod
            def synchronize() -> None:
                pass

        class Device:
            def __init__(self, index: int):
                assert index == 0

            @staticmethod
            def count() -> int:
                return 1

            def retain_primary_context(self) -> Context:
                return Context()

        self.module = types.ModuleType("pycuda.driver")
        self.module.init = lambda: None
        self.module.Device = Device
        self.module.module_from_buffer = lambda data: (
            Module() if data.decode().startswith("//") else None
        )
        self.module.mem_alloc = lambda n: Allocation(self.emulated._raw_alloc(n))
        self.module.memcpy_htod = lambda dest, src: self.emulated.copy_to_device(int(dest), src)
        self.module.memcpy_dtoh = lambda dest, src: self.emulated.copy_to_host(dest, int(src))
        self.module.memcpy_dtod = lambda dest, src, n: self.emulated.copy_on_device(int(dest), int(src), n)


def _use_stand_in(compiled: GpuCompiled, monkeypatch: pytest.MonkeyPatch) -> _StandInDriver:
    """Make `import pycuda.driver` give a stand-in over the emulator for this test."""
    import sys
    import types

    stand_in = _StandInDriver(compiled)
    package = types.ModuleType("pycuda")
    package.driver = stand_in.module  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pycuda", package)
    monkeypatch.setitem(sys.modules, "pycuda.driver", stand_in.module)
    monkeypatch.delenv("IRGRAD_GPU_EMULATE", raising=False)
    return stand_in


@pytest.mark.parametrize("name", ["rnn_value_and_grad", "train_step"])
def test_the_cuda_device_drives_pycuda_as_documented(name: str, monkeypatch: pytest.MonkeyPatch) -> None:

    import irgrad as ig

    fn, args = PROGRAMS[name]
    compiled = compile_program(ig.trace(fn, *args), check_ptx=False)
    stand_in = _use_stand_in(compiled, monkeypatch)
    got = compiled(*ig.tree_leaves(list(args)))
    expected = ig.tree_leaves(fn(*args))
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_close(np.asarray(e), np.asarray(g), normwise=True, what=f"{name} result #{k}")
    assert stand_in.launches >= len(compiled.ptx.kernels) // 2
    again = compiled(*ig.tree_leaves(list(args)))  # the module and kernels stay loaded
    for g, h in zip(got, again):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(h))


# ---------------------------------------------------------------------------------------------
# GEMMs: blas.gemm host ops on device buffers (cuBLAS on a GPU)
# ---------------------------------------------------------------------------------------------


class _ColumnMajorCublas:
    """cuBLAS's documented column-major xGEMM over emulated device memory: checks how
    `CudaDevice.gemm` maps a row-major product onto it (operands swapped, flags kept)."""

    def __init__(self, emulated: EmulatedDevice):
        self.emulated = emulated
        self.calls = 0

    def gemm(self, double, transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) -> None:
        # The arguments as CudaDevice passes them to cublas<t>gemm: (opB, opA, n, m, k, B, ldb, A, lda).
        self.calls += 1
        dtype = np.float64 if double else np.float32
        item = np.dtype(dtype).itemsize

        def col_major(pointer: int, rows: int, cols: int, ld: int) -> np.ndarray:
            raw = self.emulated._bytes(pointer, ((cols - 1) * ld + rows) * item)
            return np.ndarray((rows, cols), dtype, buffer=raw, strides=(item, ld * item))

        # cuBLAS: C' (n x m) = op1(X) @ op2(Y) with X = B (stored n x k, or k x n when op1 = T).
        x = col_major(b, k if transpose_b else n, n if transpose_b else k, ldb)
        y = col_major(a, m if transpose_a else k, k if transpose_a else m, lda)
        op_x = x.T if transpose_b else x
        op_y = y.T if transpose_a else y
        out = col_major(c, n, m, ldc)
        product = alpha * (op_x.astype(np.float64) @ op_y.astype(np.float64))
        out[...] = (product if beta == 0 else product + beta * out).astype(dtype)


@pytest.mark.parametrize("transposes", ["a@b", "a.T@b", "a@b.T"])
def test_gemm_host_op_through_the_cuda_device(transposes: str, monkeypatch: pytest.MonkeyPatch) -> None:

    import irgrad as ig
    from irgrad.backends.gpu import cuda_device

    fns = {
        "a@b": (lambda a, b: ig.tanh(a @ b), [(48, 40), (40, 56)]),
        "a.T@b": (lambda a, b: ig.tanh(a.T @ b), [(40, 48), (40, 56)]),
        "a@b.T": (lambda a, b: ig.tanh(a @ b.T), [(48, 40), (56, 40)]),
    }
    fn, shapes = fns[transposes]
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    compiled = compile_program(ig.trace(fn, *args), check_ptx=False)
    assert "blas.gemm" in str(compiled.host)
    stand_in = _use_stand_in(compiled, monkeypatch)
    cublas = _ColumnMajorCublas(stand_in.emulated)
    original_init = cuda_device.CudaDevice.__init__

    def init_with_cublas(self, *a, **kw):  # type: ignore[no-untyped-def]
        original_init(self, *a, **kw)
        self.cublas = cublas

    monkeypatch.setattr(cuda_device.CudaDevice, "__init__", init_with_cublas)
    (got,) = compiled(*args)
    assert cublas.calls == 1
    a, b = (x.astype(np.float64) for x in args)
    expected = np.asarray(fn(a, b))  # eager, float64
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_gemm_without_cublas_runs_on_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    import warnings

    import irgrad as ig
    from irgrad.backends.gpu import cublas as cublas_module

    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((64, 40)).astype(np.float32), rng.standard_normal((40, 72)).astype(np.float32)
    compiled = compile_program(ig.trace(lambda a, b: a @ b * 2.0, a, b), check_ptx=False)
    stand_in = _use_stand_in(compiled, monkeypatch)
    monkeypatch.setattr(cublas_module, "find_cublas", lambda: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (got,) = compiled(a, b)
    assert any("GEMMs run on the host" in str(w.message) for w in caught)
    np.testing.assert_allclose(got, (a.astype(np.float64) @ b) * 2.0, rtol=1e-5, atol=1e-5)


def test_gemm_on_the_emulator_matches_the_interpreter() -> None:
    import irgrad as ig

    rng = np.random.default_rng(7)
    # Each product (and its gradients') is big enough for a gemm host op (linalg_to_blas's
    # min_flops); the elementwise parts are kept small, since the emulator runs every GPU thread.
    w = rng.standard_normal((3, 16, 128)).astype(np.float32)
    x = rng.standard_normal((128, 8)).astype(np.float32)
    fn = ig.value_and_grad(lambda w, x: ig.sum(ig.tanh(w @ x) ** 2))
    compiled = compile_program(ig.trace(fn, w, x), check_ptx=False)
    assert "blas.gemm" in str(compiled.host)
    value, grad = emulate(compiled, w, x)
    ref_value, ref_grad = ig.jit(fn, backend="interp")(w, x)
    np.testing.assert_allclose(value, ref_value, rtol=1e-4)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-4, atol=1e-4 * np.abs(ref_grad).max())
