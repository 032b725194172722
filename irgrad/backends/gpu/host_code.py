"""Running the host code of a compiled GPU program: interpreted in Python, kernels on a device.

The host code of a stage-"nvvm" module (its functions; docs/design/gpu-pipeline.md) runs on
xDSL's interpreter with the reference interpreter's implementations of func, scf, arith and
math, so host scalar arithmetic (loop counters, slice offsets) means exactly what it means
there, plus this module's implementations of the host side of the GPU runtime, one `Device`
call each (irgrad/backends/gpu/device.py):
- `gpu.alloc` / `gpu.dealloc` -> `Device.alloc(nbytes)` / `free(pointer)`;
- `gpu.memcpy` -> host to device, device to host or device to device, chosen by where its
  operands live (a host operand is a `memref.alloca`'s numpy array);
- `gpu.launch_func` -> `Device.launch(kernel, grid, block, arguments)`;
- `memref.subview`, `collapse_shape`, `expand_shape`, `cast`, `reinterpret_cast` of a device
  buffer -> a `DeviceBuffer` at the view's first element (the bare-pointer model: strides come
  from the type); `memref.get_global` -> the device global of that name in the kernel module;
- `memref.alloca`, `load`, `store` (host scalars) -> numpy, as in the reference interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Attribute, Operation

from irgrad.backends import debug_print
from irgrad.ir_numpy import numpy_dtype
from irgrad.backends.gpu.device import Device, DeviceBuffer, GpuRuntimeError, element_bytes
from irgrad.dialects.blas import GemmOp
from irgrad.dialects.debug import PrintOp
from irgrad.lowering.llvm.memref_to_llvm import strides_of


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
