"""`compile_program(program) -> GpuCompiled`: an nn program through the `irgrad-gpu`
pipeline to PTX and host code, callable with numpy arrays where a CUDA device is present.

Compiling needs no GPU: the pipeline runs to stage "nvvm", the kernels become PTX through
llvmlite (checked with ptxas when it is installed), and the host code is checked to hold
only what the runtime can run. Calling `GpuCompiled(*arrays)`:
1. checks each argument's shape and dtype against the signature (ArgumentError);
2. allocates a device buffer per array argument and copies it in, and one per tensor result
   (the function's out-params, in result order);
3. runs the host code of the entry function (irgrad/backends/gpu/host_code.py), which
   allocates, launches and frees on the device; buffers stay there between kernels;
4. copies the out-params back and returns the results as numpy arrays (tensor results)
   and numpy scalars (scalar results), in result order.
The CUDA module is loaded once, on the first call, and kept by the `GpuCompiled` (with its
prepared kernels and its buffer pool); `run(*arrays, device=...)` runs on another device,
such as the emulator (irgrad/backends/gpu/emulator.py).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func, gpu
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp, ShapedType, StringAttr
from xdsl.ir import Attribute, Block, Region

from irgrad.backends.cpu.abi import ArgumentError
from irgrad.ir_numpy import numpy_dtype
from irgrad.backends.gpu.host_plan import plan_for
from irgrad.backends.gpu.ptx import DEFAULT_ARCH, PtxModule, ptxas_check, to_ptx
from irgrad.backends.gpu.cuda_device import CudaDevice
from irgrad.backends.gpu.device import Device, DeviceBuffer
from irgrad.backends.gpu.host_code import check_host_code, host_interpreter, kernel_signatures
from irgrad.diagnostics import IrgradError


EMULATE_ENV = "IRGRAD_GPU_EMULATE"


@dataclass(eq=False)
class GpuCompiled:
    """A program compiled for NVIDIA GPUs (module doc)."""

    entry: str
    arg_types: list[Attribute]
    """The entry function's inputs: tensor (or memref) types for arrays, scalar types."""
    result_types: list[Attribute]
    """Its results: a tensor result is an out-param of the host function, a scalar is returned."""
    host: ModuleOp
    """Host code: the stage-"nvvm" module without its gpu.module."""
    kernels: gpu.ModuleOp
    """The kernels at stage "kernels" (gpu.func), for reading and for the emulator."""
    ptx: PtxModule
    device_code: ModuleOp = field(repr=False, default_factory=lambda: ModuleOp([]))
    """The kernels at stage "nvvm" (llvm dialect), which `ptx_for` translates."""
    stats: dict[str, float] = field(default_factory=dict)
    """Seconds per compile step."""
    ptxas_checked: bool = False
    """Whether ptxas assembled the PTX for its architecture."""
    _device: Any = field(default=None, repr=False)

    @property
    def arch(self) -> str:
        return self.ptx.arch

    def ptx_for(self, arch: str) -> PtxModule:
        """The same kernels' PTX for another architecture."""
        if arch == self.arch:
            return self.ptx
        if self.ptx.kernels and not self.device_code.body.block.ops:
            raise IrgradError(
                f"this program was loaded from the disk cache with PTX for {self.arch} only; "
                f"compile it again for {arch}"
            )
        return to_ptx(self.device_code, arch)

    def to_bytes(self) -> bytes:
        """What the disk cache keeps (`from_bytes` reads it back): the host code and the
        stage-"kernels" module as MLIR text, the PTX, the signature. Not the llvm-dialect
        device code: a loaded program has PTX for its own architecture only."""
        import json

        payload = {
            "entry": self.entry,
            "arg_types": [str(t) for t in self.arg_types],
            "result_types": [str(t) for t in self.result_types],
            "host": str(self.host),
            "kernels": str(ModuleOp([self.kernels.clone()])),
            "ptx": dataclasses.asdict(self.ptx),
            "ptxas_checked": self.ptxas_checked,
        }
        return json.dumps(payload).encode()

    @staticmethod
    def from_bytes(data: bytes) -> GpuCompiled:
        """A GpuCompiled from `to_bytes`; ValueError (or KeyError) for anything else."""
        import json

        from xdsl.parser import Parser

        from irgrad.diagnostics import parse_module
        from irgrad.context import make_context

        start = time.perf_counter()
        payload = json.loads(data.decode())
        ctx = make_context(plugins=False)
        host = parse_module(ctx, payload["host"], "<cache>")
        kernels = next(op for op in parse_module(ctx, payload["kernels"], "<cache>").ops)
        if not isinstance(kernels, gpu.ModuleOp):
            raise ValueError("not a gpu.module")
        kernels.detach()
        ptx = payload["ptx"]
        ptx_module = PtxModule(
            ptx["ptx"], ptx["arch"], tuple(ptx["kernels"]), tuple(ptx["globals"]), "", ptx["uses_libdevice"]
        )
        types = [[Parser(ctx, text).parse_attribute() for text in payload[key]] for key in ("arg_types", "result_types")]
        check_host_code(host)
        return GpuCompiled(
            payload["entry"], types[0], types[1], host, kernels, ptx_module,
            stats={"load": time.perf_counter() - start}, ptxas_checked=bool(payload["ptxas_checked"]),
        )  # fmt: skip

    def device(self) -> Any:
        """The CUDA device with this program's module loaded (loaded on first use);
        GpuUnavailableError where there is none. With `IRGRAD_GPU_EMULATE=1`, the emulator
        (irgrad/backends/gpu/emulator.py) instead: for tests on machines without a GPU."""
        if self._device is None:
            if os.environ.get(EMULATE_ENV, "") not in ("", "0"):
                from irgrad.backends.gpu.emulator import EmulatedDevice

                self._device = EmulatedDevice(self.kernels)
            else:
                self._device = CudaDevice(self.ptx.ptx, kernel_signatures(self.host))
        return self._device

    def runs_on(self, device: Any) -> bool:
        """Whether `device` has this program's kernels loaded. A device is made for one
        program's module (`device()`); another program's kernels may share names with this
        one's (`step_kernel3`) but not their parameters, so a launch there would pack the
        wrong arguments, or run the wrong code on this program's buffers."""
        if device is self._device:
            return True
        kernels = getattr(device, "loaded_kernels", None)
        if kernels is not None:
            return kernels is self.kernels
        ptx = getattr(device, "loaded_ptx", None)
        return ptx is None or ptx == self.ptx.ptx  # neither: a stand-in (Device's doc)

    def function(
        self, name: str, arg_types: Sequence[Attribute], result_types: Sequence[Attribute]
    ) -> GpuCompiled:
        """Another public function of the same program (its host code and kernels are
        compiled already), with its nn-level signature; it shares this one's device once
        that is loaded."""
        return dataclasses.replace(
            self, entry=name, arg_types=list(arg_types), result_types=list(result_types)
        )

    def __call__(self, *args: Any) -> tuple[Any, ...]:
        device = self.device()
        with device:
            results = self.run(*args, device=device)
            device.synchronize()
        return results

    def call_flat(self, leaves: Sequence[Any]) -> list[Any]:
        return list(self(*leaves))

    def run(self, *args: Any, device: Device) -> tuple[Any, ...]:
        """Run the entry function on `device` (see the module doc)."""
        call = self.resident(*args, device=device)
        try:
            call.run()
            return call.results()
        finally:
            call.free()

    def resident(self, *args: Any, device: Device) -> ResidentCall:
        """The arguments uploaded to `device` and the result buffers allocated, once:
        `run()` then executes the host code alone, as often as wanted (steady-state
        timing without transfers), `results()` downloads, `free()` releases."""
        return ResidentCall(self, device, args)

    def interpreter(self, device: Device) -> Any:
        """The host-code interpreter on `device` (made once per device)."""
        cache = self.__dict__.setdefault("_interpreters", {})
        key = id(device)
        if key not in cache:
            cache[key] = (device, host_interpreter(self.host, device))
        return cache[key][1]


class ResidentCall:
    """One call of a GpuCompiled with its buffers on the device (see `resident`)."""

    def __init__(self, compiled: GpuCompiled, device: Device, args: Sequence[Any]):
        if len(args) != len(compiled.arg_types):
            raise ArgumentError(
                f"@{compiled.entry} takes {len(compiled.arg_types)} argument(s), got {len(args)}"
            )
        if not compiled.runs_on(device):
            raise ArgumentError(
                f"@{compiled.entry}: the device given has another program's kernels loaded; "
                "run each program on its own `device()` (or an EmulatedDevice of its kernels)"
            )
        self.compiled = compiled
        self.device = device
        self.owned: list[DeviceBuffer] = []
        self.values: list[Any] = []
        self.outs: list[DeviceBuffer] = []
        self.returned: tuple[Any, ...] = ()
        try:
            for k, (value, t) in enumerate(zip(args, compiled.arg_types)):
                if isinstance(t, ShapedType):
                    array = _checked_array(compiled.entry, k, value, t)
                    buffer = self._alloc(_memref_type(t))
                    device.copy_to_device(buffer.pointer, array)
                    self.values.append(buffer)
                else:
                    self.values.append(_scalar(value, t))
            for t in compiled.result_types:
                if isinstance(t, ShapedType):
                    self.outs.append(self._alloc(_memref_type(t)))
        except BaseException:
            self.free()
            raise

    def _alloc(self, t: MemRefType) -> DeviceBuffer:
        buffer = DeviceBuffer(self.device.alloc(DeviceBuffer(0, t).nbytes), t)
        self.owned.append(buffer)
        return buffer

    def run(self) -> None:
        """Run the entry function's host code (kernels are queued; `results` waits): its
        plan where it has one (host_plan.py), else interpreted."""
        interpreter = self.compiled.interpreter(self.device)
        plans = self.compiled.__dict__.setdefault("_plans", {}).setdefault(id(interpreter), {})
        plan = plan_for(interpreter, self.compiled.entry, plans)
        if plan is not None:
            self.returned = plan((*self.values, *self.outs))
            return
        function = next(
            f
            for f in self.compiled.host.ops
            if isinstance(f, func.FuncOp) and f.sym_name.data == self.compiled.entry
        )
        self.returned = tuple(interpreter.call_op(function, (*self.values, *self.outs)))

    def results(self) -> tuple[Any, ...]:
        """Tensor results copied to numpy arrays, scalar results, in result order."""
        returned = iter(self.returned)
        out_buffers = iter(self.outs)
        results: list[Any] = []
        for t in self.compiled.result_types:
            if isinstance(t, ShapedType):
                buffer = next(out_buffers)
                array = np.empty(buffer.type.get_shape(), numpy_dtype(buffer.type.element_type))
                self.device.copy_to_host(array, buffer.pointer)
                results.append(array)
            else:
                results.append(next(returned))
        return tuple(results)

    def free(self) -> None:
        for buffer in self.owned:
            self.device.free(buffer.pointer)
        self.owned = []


def _memref_type(t: Attribute) -> MemRefType:
    assert isinstance(t, ShapedType)
    if isinstance(t, MemRefType):
        return t
    return MemRefType(t.get_element_type(), t.get_shape())  # type: ignore[attr-defined]


def _checked_array(entry: str, k: int, value: Any, t: Attribute) -> np.ndarray:
    memref_type = _memref_type(t)
    dtype = numpy_dtype(memref_type.element_type)
    array = np.asarray(value)
    if array.dtype != dtype or array.shape != tuple(memref_type.get_shape()):
        if array.shape == tuple(memref_type.get_shape()) and array.dtype.newbyteorder("=") == dtype:
            array = array.astype(dtype)
        else:
            raise ArgumentError(
                f"@{entry} argument #{k}: expected an array of shape "
                f"{tuple(memref_type.get_shape())} and dtype {dtype}, got shape {array.shape} "
                f"and dtype {array.dtype}"
            )
    return np.ascontiguousarray(array)


def _scalar(value: Any, t: Attribute) -> Any:
    if isinstance(t, IndexType):
        return int(value)
    return np.asarray(value).astype(numpy_dtype(t))[()]


# ---------------------------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------------------------


def gpu_steps(block_size: int = 256, points_per_thread: int = 0, split_reductions: bool = True) -> list[tuple[str, str]]:
    """The `irgrad-gpu` steps, with the launch block size `block_size`, the points per thread
    of large elementwise loops (0: automatic) and the splitting of few long reductions
    (convert-parallel-loops-to-gpu's options)."""
    from irgrad.pipelines import GPU_STEPS

    if block_size == 256 and points_per_thread == 0 and split_reductions:
        return list(GPU_STEPS)
    mapping = (
        f"convert-parallel-loops-to-gpu{{block-size={block_size} points-per-thread={points_per_thread} "
        f"split-reductions={'true' if split_reductions else 'false'}}}"
    )
    return [(stage, mapping if stage == "gpu" else spec) for stage, spec in GPU_STEPS]


def compile_module(
    module: ModuleOp,
    entry: str,
    *,
    arch: str = DEFAULT_ARCH,
    block_size: int = 256,
    points_per_thread: int = 0,
    split_reductions: bool = True,
    check_ptx: bool = True,
) -> GpuCompiled:
    """Compile `@entry` of an nn module (with autodiff requests) for the GPU; `module` is
    lowered in place. `check_ptx` assembles the PTX with ptxas when it is installed."""
    from irgrad.registry import run_pipeline

    function = next(
        (f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == entry), None
    )
    if function is None:
        raise IrgradError(f"no function @{entry} in the module")
    arg_types = list(function.function_type.inputs.data)
    result_types = list(function.function_type.outputs.data)
    stats: dict[str, float] = {}
    kernels: gpu.ModuleOp | None = None
    for stage, spec in gpu_steps(block_size, points_per_thread, split_reductions):
        start = time.perf_counter()
        run_pipeline(module, spec)
        stats[stage] = time.perf_counter() - start
        if stage == "kernels":
            kernels = next((m.clone() for m in module.ops if isinstance(m, gpu.ModuleOp)), None)
    start = time.perf_counter()
    if kernels is None:  # nothing runs on the device
        kernels = gpu.ModuleOp(StringAttr("kernels"), Region(Block()))  # type: ignore[arg-type]
    ptx = to_ptx(module, arch)
    stats["ptx"] = time.perf_counter() - start
    checked = False
    if check_ptx:
        start = time.perf_counter()
        checked = ptxas_check(ptx.ptx, arch)
        stats["ptxas"] = time.perf_counter() - start
    host = module
    device_code = ModuleOp([])
    for op in [m for m in host.ops if isinstance(m, gpu.ModuleOp)]:
        op.detach()
        device_code.body.block.add_op(op)
    # Host code is interpreted on every call: one op per SSA value costs time each run, and
    # lowering leaves many repeated constants (each launch's sizes); merge them once here.
    run_pipeline(host, "cse")
    check_host_code(host)
    return GpuCompiled(
        entry, arg_types, result_types, host, kernels, ptx, device_code, stats, checked
    )


def compile_program(program: Any, **options: Any) -> GpuCompiled:
    """Compile a traced program (`ig.trace(...)`, a `Program`) for the GPU; options as in
    `compile_module`."""
    return compile_module(program.module.clone(), program.entry, **options)


__all__ = ["GpuCompiled", "ResidentCall", "compile_module", "compile_program", "gpu_steps"]
