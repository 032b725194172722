"""Running a compiled GPU program: host code interpreted in Python, kernels on a device.

The host code of a stage-"nvvm" module (its functions; docs/design/gpu-pipeline.md) runs on
xDSL's interpreter with the reference interpreter's implementations of func, scf, arith and
math, so host scalar arithmetic (loop counters, slice offsets) means exactly what it means
there, plus this module's implementations of the host side of the GPU runtime, one `Device`
call each:
- `gpu.alloc` / `gpu.dealloc` -> `Device.alloc(nbytes)` / `free(pointer)`;
- `gpu.memcpy` -> host to device, device to host or device to device, chosen by where its
  operands live (a host operand is a `memref.alloca`'s numpy array);
- `gpu.launch_func` -> `Device.launch(kernel, grid, block, arguments)`;
- `memref.subview`, `collapse_shape`, `expand_shape`, `cast`, `reinterpret_cast` of a device
  buffer -> a `DeviceBuffer` at the view's first element (the bare-pointer model: strides come
  from the type); `memref.get_global` -> the device global of that name in the kernel module;
- `memref.alloca`, `load`, `store` (host scalars) -> numpy, as in the reference interpreter.

A `Device` is `CudaDevice` (pycuda, below) or, for tests without a GPU, `EmulatedDevice`
(irgrad/backends/gpu/emulator.py). Device memory comes from a caching pool (`BufferPool`):
a freed block is kept and handed to the next allocation of the same size, so the temporaries
of a training step cost no `cuMemAlloc` after its first call.

`GpuUnavailableError` says why no CUDA device can be used (no pycuda, no driver, no device).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from xdsl.dialects import func, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Attribute, Operation

from irgrad.backends.cpu.abi import numpy_dtype
from irgrad.backends.interpreter.blas import gemm_in_place
from irgrad.backends import debug_print
from irgrad.dialects.blas import GemmOp, unit_strides_last
from irgrad.dialects.debug import PrintOp
from irgrad.diagnostics import IrgradError
from irgrad.lowering.llvm.common import byte_size, storage_type
from irgrad.lowering.llvm.memref_to_llvm import strides_of

ALLOCATION_GRANULE = 256
"""Bytes; device allocations are rounded up to this (cuMemAlloc aligns to 256 anyway)."""


class GpuUnavailableError(IrgradError):
    """No CUDA device can run the program here; the message says what is missing."""


class GpuRuntimeError(IrgradError):
    """The host code of a GPU program could not be run as compiled."""


@dataclass(frozen=True)
class DeviceBuffer:
    """A device memref value: the address of its first element and its type."""

    pointer: int
    type: MemRefType

    @property
    def nbytes(self) -> int:
        return math.prod(self.type.get_shape()) * element_bytes(self.type)


def element_bytes(t: MemRefType) -> int:
    return byte_size(storage_type(t.element_type))


class Device(Protocol):
    """What host code needs of a GPU (addresses are ints). A device made for one program's
    kernels says which, as `loaded_ptx` (the PTX text, CudaDevice) or `loaded_kernels` (the
    gpu.module, EmulatedDevice), so that another program is not run on it
    (GpuCompiled.runs_on); a device with neither (a test's stand-in that launches nothing)
    is trusted."""

    def alloc(self, nbytes: int) -> int: ...
    def free(self, pointer: int) -> None: ...
    def copy_to_device(self, pointer: int, array: np.ndarray) -> None: ...
    def copy_to_host(self, array: np.ndarray, pointer: int) -> None: ...
    def copy_on_device(self, target: int, source: int, nbytes: int) -> None: ...
    def launch(
        self, kernel: str, grid: tuple[int, int, int], block: tuple[int, int, int], args: Sequence[Any]
    ) -> None: ...
    def global_address(self, name: str) -> int: ...
    def synchronize(self) -> None: ...
    def gemm(self, op: Any, a: DeviceBuffer, b: DeviceBuffer, c: DeviceBuffer) -> None: ...


class BufferPool:
    """Caching allocation over a device's raw `alloc`/`free` (module doc)."""

    def __init__(self, raw_alloc: Any, raw_free: Any):
        self.raw_alloc = raw_alloc
        self.raw_free = raw_free
        self.free_blocks: dict[int, list[int]] = defaultdict(list)
        self.sizes: dict[int, int] = {}

    def alloc(self, nbytes: int) -> int:
        size = max(ALLOCATION_GRANULE, -(-nbytes // ALLOCATION_GRANULE) * ALLOCATION_GRANULE)
        blocks = self.free_blocks.get(size)
        if blocks:
            return blocks.pop()
        pointer = self.raw_alloc(size)
        self.sizes[pointer] = size
        return pointer

    def free(self, pointer: int) -> None:
        self.free_blocks[self.sizes[pointer]].append(pointer)

    def release(self) -> None:
        """Give every cached block back to the device."""
        for blocks in self.free_blocks.values():
            for pointer in blocks:
                self.raw_free(pointer)
                del self.sizes[pointer]
        self.free_blocks.clear()


# ---------------------------------------------------------------------------------------------
# Host code
# ---------------------------------------------------------------------------------------------

HOST_OPS = frozenset(
    {
        "func.func", "func.call", "func.return",
        "scf.for", "scf.if", "scf.while", "scf.yield", "scf.condition", "scf.index_switch",
        "memref.alloca", "memref.load", "memref.store", "memref.dealloc",
        "memref.subview", "memref.collapse_shape", "memref.expand_shape", "memref.cast",
        "memref.reinterpret_cast", "memref.get_global", "memref.global",
        "gpu.alloc", "gpu.dealloc", "gpu.memcpy", "gpu.launch_func", "blas.gemm", "debug.print",
    }
)  # fmt: skip
"""Ops host code may hold besides arith and math (checked before the first call)."""


def check_host_code(module: ModuleOp) -> None:
    """A GpuRuntimeError at the first host op the runtime cannot run."""
    for op in module.walk():
        if op is module or isinstance(op, gpu.ModuleOp) or _in_gpu_module(op):
            continue
        if op.dialect_name() in ("arith", "math") or op.name in HOST_OPS:
            continue
        raise GpuRuntimeError(f"host code holds '{op.name}', which the GPU runtime cannot run")


def _in_gpu_module(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, gpu.ModuleOp):
            return True
        parent = parent.parent_op()
    return False


def kernel_signatures(module: ModuleOp) -> dict[str, list[Attribute]]:
    """Kernel name -> its parameter types, from `gpu.launch_func` ops of host code."""
    signatures: dict[str, list[Attribute]] = {}
    for op in module.walk():
        if isinstance(op, gpu.LaunchFuncOp):
            name = op.kernel.nested_references.data[-1].data
            signatures[name] = [v.type for v in op.kernelOperands]
    return signatures


def _view_offset(op: memref.SubviewOp, source: MemRefType, dynamic: Sequence[int]) -> int:
    values = iter(dynamic)
    offsets = [
        int(next(values)) if o == memref.DYNAMIC_INDEX else o for o in op.static_offsets.get_values()
    ]
    strides = strides_of(source, op)
    return sum(o * s for o, s in zip(offsets, strides))


@register_impls
class GpuHostFunctions(InterpreterFunctions):
    """The host side of the GPU runtime (module doc)."""

    def __init__(self, device: Device):
        self.device = device
        self._launches: dict[Operation, tuple[str, int]] = {}
        self._allocs: dict[Operation, tuple[MemRefType, int]] = {}

    # -- memory -------------------------------------------------------------------------

    @impl(gpu.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: gpu.AllocOp, args: PythonValues):
        known = self._allocs.get(op)
        if known is None:
            t = op.result.type
            assert isinstance(t, MemRefType)
            known = self._allocs[op] = (t, DeviceBuffer(0, t).nbytes)
        t, nbytes = known
        return (DeviceBuffer(self.device.alloc(nbytes), t),)

    @impl(gpu.DeallocOp)
    def run_dealloc(self, interpreter: Interpreter, op: gpu.DeallocOp, args: PythonValues):
        buffer = args[-1]
        assert isinstance(buffer, DeviceBuffer)
        self.device.free(buffer.pointer)
        return ()

    @impl(gpu.MemcpyOp)
    def run_memcpy(self, interpreter: Interpreter, op: gpu.MemcpyOp, args: PythonValues):
        target, source = args[-2], args[-1]
        if isinstance(target, DeviceBuffer) and isinstance(source, DeviceBuffer):
            self.device.copy_on_device(target.pointer, source.pointer, source.nbytes)
        elif isinstance(target, DeviceBuffer):
            self.device.copy_to_device(target.pointer, np.ascontiguousarray(source))
        elif isinstance(source, DeviceBuffer):
            self.device.copy_to_host(target, source.pointer)
        else:
            np.copyto(target, source)
        return ()

    @impl(memref.DeallocOp)
    def run_memref_dealloc(self, interpreter: Interpreter, op: memref.DeallocOp, args: PythonValues):
        return ()  # host scalars: numpy owns them

    # -- views of device buffers --------------------------------------------------------

    @impl(memref.SubviewOp)
    def run_subview(self, interpreter: Interpreter, op: memref.SubviewOp, args: PythonValues):
        source = args[0]
        assert isinstance(source, DeviceBuffer), "subview of host memory"
        n = len(op.offsets)
        offset = _view_offset(op, source.type, args[1 : 1 + n])
        t = op.result.type
        assert isinstance(t, MemRefType)
        return (DeviceBuffer(source.pointer + offset * element_bytes(t), t),)

    def _same_pointer(self, op: Operation, args: PythonValues) -> PythonValues:
        source = args[0]
        assert isinstance(source, DeviceBuffer)
        t = op.results[0].type
        assert isinstance(t, MemRefType)
        return (DeviceBuffer(source.pointer, t),)

    @impl(memref.CollapseShapeOp)
    def run_collapse(self, interpreter: Interpreter, op: memref.CollapseShapeOp, args: PythonValues):
        return self._same_pointer(op, args)

    @impl(memref.ExpandShapeOp)
    def run_expand(self, interpreter: Interpreter, op: memref.ExpandShapeOp, args: PythonValues):
        return self._same_pointer(op, args)

    @impl(memref.CastOp)
    def run_cast(self, interpreter: Interpreter, op: memref.CastOp, args: PythonValues):
        return self._same_pointer(op, args)

    @impl(memref.ReinterpretCastOp)
    def run_reinterpret_cast(
        self, interpreter: Interpreter, op: memref.ReinterpretCastOp, args: PythonValues
    ):
        (buffer,) = self._same_pointer(op, args)
        offsets = op.static_offsets.get_values()
        offset = offsets[0] if offsets else 0
        return (DeviceBuffer(buffer.pointer + offset * element_bytes(buffer.type), buffer.type),)

    @impl(memref.GetGlobalOp)
    def run_get_global(self, interpreter: Interpreter, op: memref.GetGlobalOp, args: PythonValues):
        t = op.memref.type
        assert isinstance(t, MemRefType)
        return (DeviceBuffer(self.device.global_address(op.name_.string_value()), t),)

    # -- launches -----------------------------------------------------------------------

    @impl(GemmOp)
    def run_gemm(self, interpreter: Interpreter, op: GemmOp, args: PythonValues):
        a, b, c = args
        if not all(isinstance(x, DeviceBuffer) for x in (a, b, c)):
            raise GpuRuntimeError("'blas.gemm' in host code needs device buffers")
        self.device.gemm(op, a, b, c)
        return ()

    @impl(PrintOp)
    def run_print(self, interpreter: Interpreter, op: PrintOp, args: PythonValues):
        """`debug.print` of device buffers: each copied to the host (after the kernels that
        write it: the copy synchronizes), then printed as every backend prints."""
        values = []
        for value in args:
            if isinstance(value, DeviceBuffer):
                host = np.empty(value.type.get_shape(), dtype=numpy_dtype(value.type.element_type))
                self.device.copy_to_host(host, value.pointer)
                values.append(host)
            else:
                values.append(np.asarray(value))
        debug_print.emit(op.format.data, op.operand_names(), values)
        return ()

    @impl(gpu.LaunchFuncOp)
    def run_launch_func(self, interpreter: Interpreter, op: gpu.LaunchFuncOp, args: PythonValues):
        # The kernel's name and where its arguments start, read off the op once: xDSL's
        # property accessors cost more than the launch itself in a warm step.
        known = self._launches.get(op)
        if known is None:
            known = self._launches[op] = (op.kernel.nested_references.data[-1].data, len(args) - len(op.kernelOperands))
        name, first = known
        values = [a.pointer if isinstance(a, DeviceBuffer) else a for a in args[first:]]
        grid = (int(args[0]), int(args[1]), int(args[2]))
        block = (int(args[3]), int(args[4]), int(args[5]))
        self.device.launch(name, grid, block, values)  # type: ignore[arg-type]
        return ()

    # -- host loops carrying device buffers -------------------------------------------

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues):
        lb, ub, step, *loop_args = args
        is_index = isinstance(op.lb.type, IndexType)
        dtype = None if is_index else numpy_dtype(op.lb.type)
        results = tuple(loop_args)
        for i in range(int(lb), int(ub), int(step)):
            iv = i if dtype is None else np.array(i).astype(dtype)[()]
            results = interpreter.run_ssacfg_region(op.body, (iv, *results), "scf.for")
        return results


def host_interpreter(module: ModuleOp, device: Device) -> Interpreter:
    """xDSL's interpreter over `module`'s host code, on `device` (module doc)."""
    from xdsl.interpreters.func import FuncFunctions

    from irgrad.backends.interpreter.arith import ArithFunctions
    from irgrad.backends.interpreter.math import MathFunctions
    from irgrad.backends.interpreter.memref import MemRefFunctions
    from irgrad.backends.interpreter.scf import ScfFunctions

    interpreter = Interpreter(module, index_bitwidth=64)
    for functions in (FuncFunctions(), ScfFunctions(), ArithFunctions(), MathFunctions(), MemRefFunctions()):
        interpreter.register_implementations(functions, override=True)
    interpreter.register_implementations(GpuHostFunctions(device), override=True)
    return interpreter


def call_host_function(
    module: ModuleOp, device: Device, name: str, args: Sequence[Any]
) -> tuple[Any, ...]:
    """Run host function `@name` on `args` (DeviceBuffers, ints for index, numpy scalars)."""
    function = next(
        (f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name), None
    )
    if function is None:
        raise GpuRuntimeError(f"no function @{name} in the program")
    interpreter = host_interpreter(module, device)
    return tuple(interpreter.call_op(function, tuple(args)))


# ---------------------------------------------------------------------------------------------
# CUDA through pycuda
# ---------------------------------------------------------------------------------------------

_PARAM_FORMATS = {
    ("i", 1): "B",  # PTX passes an i1 parameter as .u8
    ("i", 8): "b",
    ("i", 16): "h",
    ("i", 32): "i",
    ("i", 64): "q",
    ("f", 16): "h",  # a half goes as its 16 bits (pycuda's struct packer has no 'e')
    ("f", 32): "f",
    ("f", 64): "d",
}


def param_format(t: Attribute) -> str:
    """The `struct` format of a kernel parameter of type `t` (a buffer is a pointer)."""
    from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType

    if isinstance(t, MemRefType):
        return "P"
    if isinstance(t, IndexType):
        return "q"
    if isinstance(t, BFloat16Type):
        return "h"
    if isinstance(t, IntegerType):
        return _PARAM_FORMATS[("i", t.width.data)]
    for kind, width in ((Float16Type, 16), (Float32Type, 32), (Float64Type, 64)):
        if isinstance(t, kind):
            return _PARAM_FORMATS[("f", width)]
    raise GpuRuntimeError(f"a kernel parameter of type {t} cannot be passed")


def param_value(value: Any, fmt: str) -> Any:
    """A kernel argument as `struct.pack` takes it for format character `fmt`."""
    if fmt == "P":
        return int(value)
    if fmt == "h" and isinstance(value, np.generic) and value.dtype.kind in "fV":
        return int(np.asarray(value).view(np.int16))  # f16 and bf16: their bits
    if fmt == "B":
        return int(bool(value))
    return value.item() if isinstance(value, np.generic) else value


def cuda_unavailable_reason() -> str | None:
    """Why a CUDA device cannot be used here, or None when one can."""
    try:
        import pycuda.driver as cuda  # noqa: F401
    except ImportError as err:
        if "libcuda" in str(err):  # pycuda is there, the driver's library is not
            return f"no CUDA driver: pycuda cannot load it ({err})"
        return (
            f"pycuda is not installed ({err}); install the 'gpu' extra "
            "(pip install 'irgrad[gpu]') on a machine with an NVIDIA driver"
        )
    except Exception as err:  # pycuda raises assorted errors when libcuda is missing
        return f"pycuda could not load the CUDA driver: {type(err).__name__}: {err}"
    try:
        cuda.init()
        count = cuda.Device.count()
    except Exception as err:
        return f"no usable CUDA driver: {type(err).__name__}: {err}"
    if count == 0:
        return "the CUDA driver found no GPU"
    return None


class CudaDevice:
    """A CUDA device through pycuda: one context (the device's primary one), one loaded
    kernel module, prepared kernel functions and a buffer pool."""

    def __init__(self, ptx: str, signatures: dict[str, list[Attribute]], device_index: int = 0):
        reason = cuda_unavailable_reason()
        if reason is not None:
            raise GpuUnavailableError(f"cannot run on the GPU: {reason}")
        import pycuda.driver as cuda

        self.cuda = cuda
        self.loaded_ptx = ptx
        """The PTX whose kernels this device launches (GpuCompiled.runs_on checks it)."""
        self.context = cuda.Device(device_index).retain_primary_context()
        self.context.push()
        try:
            self.module = cuda.module_from_buffer(ptx.encode())
        finally:
            self.context.pop()
        self.signatures = signatures
        self.functions: dict[str, Any] = {}
        self.allocations: dict[int, Any] = {}
        self.pool = BufferPool(self._raw_alloc, self._raw_free)
        self.cublas: Any = None
        self.cublas_missing: str | None = None
        self._events: list[tuple[str, Any, Any]] | None = None

    def start_profile(self) -> None:
        """Time each kernel launch and GEMM from now on with CUDA events (`stop_profile`)."""
        self._events = []

    def stop_profile(self) -> dict[str, tuple[int, float]]:
        """Since `start_profile`: {kernel or "cublas.gemm": (calls, device milliseconds)}."""
        events, self._events = self._events or [], None
        self.context.synchronize()
        totals: dict[str, tuple[int, float]] = {}
        for name, start, end in events:
            calls, ms = totals.get(name, (0, 0.0))
            totals[name] = (calls + 1, ms + end.time_since(start))
        return totals

    def _timed(self, name: str, run: Any) -> None:
        if self._events is None:
            run()
            return
        start, end = self.cuda.Event(), self.cuda.Event()
        start.record()
        run()
        end.record()
        self._events.append((name, start, end))

    def __enter__(self) -> CudaDevice:
        self.context.push()
        return self

    def __exit__(self, *exc: object) -> None:
        self.context.pop()

    def _raw_alloc(self, nbytes: int) -> int:
        allocation = self.cuda.mem_alloc(nbytes)
        pointer = int(allocation)
        self.allocations[pointer] = allocation
        return pointer

    def _raw_free(self, pointer: int) -> None:
        self.allocations.pop(pointer).free()

    def alloc(self, nbytes: int) -> int:
        return self.pool.alloc(nbytes)

    def free(self, pointer: int) -> None:
        self.pool.free(pointer)

    def copy_to_device(self, pointer: int, array: np.ndarray) -> None:
        if array.nbytes:
            self.cuda.memcpy_htod(pointer, array)

    def copy_to_host(self, array: np.ndarray, pointer: int) -> None:
        if array.nbytes:
            self.cuda.memcpy_dtoh(array, pointer)

    def copy_on_device(self, target: int, source: int, nbytes: int) -> None:
        if nbytes:
            self.cuda.memcpy_dtod(target, source, nbytes)

    def _function(self, name: str) -> tuple[Any, str]:
        cached = self.functions.get(name)
        if cached is None:
            fmt = "".join(param_format(t) for t in self.signatures[name])
            function = self.module.get_function(name)
            function.prepare(fmt)
            cached = self.functions[name] = (function, fmt)
        return cached

    def launch(
        self, kernel: str, grid: tuple[int, int, int], block: tuple[int, int, int], args: Sequence[Any]
    ) -> None:
        function, fmt = self._function(kernel)
        values = [param_value(v, f) for v, f in zip(args, fmt)]
        if self._events is None:
            function.prepared_call(grid, block, *values)
        else:
            self._timed(kernel, lambda: function.prepared_call(grid, block, *values))

    def global_address(self, name: str) -> int:
        pointer, _ = self.module.get_global(name)
        return int(pointer)

    def synchronize(self) -> None:
        self.context.synchronize()

    def gemm(self, op: GemmOp, a: DeviceBuffer, b: DeviceBuffer, c: DeviceBuffer) -> None:
        """`blas.gemm` through cuBLAS (irgrad/backends/gpu/cublas.py); without cuBLAS, on the
        host: the operands travel to the host and the result back (correct, slow)."""
        m, n, k = op.sizes()
        if self.cublas is None and self.cublas_missing is None:
            from irgrad.backends.gpu.cublas import Cublas, find_cublas

            path = find_cublas()
            if path is None:
                self.cublas_missing = "no libcublas found (set IRGRAD_CUBLAS)"
                import warnings

                warnings.warn(f"irgrad: GEMMs run on the host: {self.cublas_missing}", stacklevel=2)
            else:
                self.cublas = Cublas(path)
        if self.cublas is not None:
            lds = [unit_strides_last(x.type)[0] for x in (a, b, c)]  # type: ignore[index]
            double = numpy_dtype(c.type.element_type) == np.float64
            self._timed("cublas.gemm", lambda: self.cublas.gemm(
                double, bool(op.transpose_a), bool(op.transpose_b), m, n, k, op.alpha_value,
                a.pointer, lds[0], b.pointer, lds[1], op.beta_value, c.pointer, lds[2],
            ))  # fmt: skip
            return
        arrays = [self._download(x) for x in (a, b, c)]
        gemm_in_place(op, *arrays)
        self._upload(c, arrays[2])

    def _download(self, buffer: DeviceBuffer) -> np.ndarray:
        """The elements a (possibly strided) device buffer views, as a host array."""
        t = buffer.type
        rows, cols = t.get_shape()
        ld = unit_strides_last(t)[0]  # type: ignore[index]
        dtype = numpy_dtype(t.element_type)
        span = np.empty(((rows - 1) * ld + cols) if rows and cols else 0, dtype)
        self.copy_to_host(span, buffer.pointer)
        if not span.size:
            return np.zeros((rows, cols), dtype)
        return np.lib.stride_tricks.as_strided(span, (rows, cols), (ld * span.itemsize, span.itemsize)).copy()

    def _upload(self, buffer: DeviceBuffer, values: np.ndarray) -> None:
        t = buffer.type
        ld = unit_strides_last(t)[0]  # type: ignore[index]
        for r in range(values.shape[0]):  # row by row: a strided C keeps what lies between rows
            self.cuda.memcpy_htod(buffer.pointer + r * ld * values.itemsize, np.ascontiguousarray(values[r]))

    def close(self) -> None:
        """Free the cached device memory and the cuBLAS handle (in this device's context)."""
        self.context.push()
        try:
            if self.cublas is not None:
                self.cublas.close()
                self.cublas = None
            self.pool.release()
        finally:
            self.context.pop()


__all__ = [
    "BufferPool",
    "CudaDevice",
    "Device",
    "DeviceBuffer",
    "GpuRuntimeError",
    "GpuUnavailableError",
    "call_host_function",
    "check_host_code",
    "cuda_unavailable_reason",
    "host_interpreter",
    "kernel_signatures",
    "param_format",
    "param_value",
]
