"""A GPU emulated in Python, to test the GPU pipeline's semantics on machines without one.

`EmulatedDevice` implements the runtime's `Device` protocol (irgrad/backends/gpu/device.py)
over a numpy byte array as device memory, and runs each kernel launch by interpreting the
kernel's `gpu.func` (stage "kernels", before NVVM) with the reference interpreter's
implementations of scf, arith, math and memref, one GPU thread at a time:
- a kernel argument buffer is a numpy view of device memory at its address, with the
  strides of its memref type (the bare-pointer model of the real device code);
- `gpu.thread_id`/`block_id`/`block_dim`/`grid_dim` read the running thread's coordinates;
- a kernel with `gpu.barrier` runs the threads of a block as Python threads meeting at a
  `threading.Barrier`, and its shared-memory `memref.alloca`s give one array per block;
  a kernel without barriers runs its threads one after another;
- `global_address` places each `memref.global` of the kernel module in device memory on
  first use, initialized as the module load would.

It checks what the host runtime, the launch mapping, the reduction trees, the placement and
the outlining compute, not the NVVM lowering or the PTX (ptxas checks those), and it is slow
(tens of microseconds per op and thread): for small test programs only.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import gpu, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)

from irgrad.ir_numpy import numpy_dtype
from irgrad.backends.gpu.buffer_pool import ALLOCATION_GRANULE, BufferPool
from irgrad.backends.gpu.device import GpuRuntimeError
from irgrad.lowering.gpu.common import is_shared_memory
from irgrad.lowering.llvm.type_conversion import byte_size, storage_type
from irgrad.lowering.llvm.memref_to_llvm import global_bytes, strides_of

BASE_ADDRESS = 1 << 20
"""The address of the first byte of emulated device memory (never 0: that is null)."""


class _ThreadState(threading.local):
    ids: dict[tuple[type, str], int]
    shared: dict[memref.AllocaOp, np.ndarray]
    shared_lock: threading.Lock
    barrier: threading.Barrier | None


@register_impls
class _KernelFunctions(InterpreterFunctions):
    """gpu ops inside a kernel, and shared memory, for the running emulated thread."""

    def __init__(self, state: _ThreadState):
        self.state = state

    def _id(self, op: Any) -> PythonValues:
        return (self.state.ids[(type(op), op.dimension.data.value)],)

    @impl(gpu.ThreadIdOp)
    def run_thread_id(self, interpreter: Interpreter, op: gpu.ThreadIdOp, args: PythonValues):
        return self._id(op)

    @impl(gpu.BlockIdOp)
    def run_block_id(self, interpreter: Interpreter, op: gpu.BlockIdOp, args: PythonValues):
        return self._id(op)

    @impl(gpu.BlockDimOp)
    def run_block_dim(self, interpreter: Interpreter, op: gpu.BlockDimOp, args: PythonValues):
        return self._id(op)

    @impl(gpu.GridDimOp)
    def run_grid_dim(self, interpreter: Interpreter, op: gpu.GridDimOp, args: PythonValues):
        return self._id(op)

    @impl(gpu.BarrierOp)
    def run_barrier(self, interpreter: Interpreter, op: gpu.BarrierOp, args: PythonValues):
        if self.state.barrier is not None:
            self.state.barrier.wait()
        return ()

    @impl(memref.AllocaOp)
    def run_alloca(self, interpreter: Interpreter, op: memref.AllocaOp, args: PythonValues):
        t = op.memref.type
        assert isinstance(t, MemRefType)
        if not is_shared_memory(t):
            return (np.zeros(t.get_shape(), numpy_dtype(t.element_type)),)
        with self.state.shared_lock:
            array = self.state.shared.get(op)
            if array is None:
                array = np.zeros(t.get_shape(), numpy_dtype(t.element_type))
                self.state.shared[op] = array
        return (array,)

    @impl_terminator(gpu.ReturnOp)
    def run_return(self, interpreter: Interpreter, op: gpu.ReturnOp, args: PythonValues):
        return ReturnedValues(args), ()


class EmulatedDevice:
    """The `Device` of the module doc, for the kernels of `kernel_module` (stage "kernels")."""

    def __init__(self, kernel_module: gpu.ModuleOp, memory_bytes: int = 1 << 26):
        self.loaded_kernels = kernel_module
        """The kernels this device runs (GpuCompiled.runs_on checks it)."""
        self.kernels = {
            op.sym_name.data: op for op in kernel_module.body.block.ops if isinstance(op, gpu.FuncOp)
        }
        self.globals_ops = {
            op.sym_name.data: op
            for op in kernel_module.body.block.ops
            if isinstance(op, memref.GlobalOp)
        }
        self.container = ModuleOp([])
        self.memory = np.zeros(memory_bytes, np.uint8)
        self.top = 0
        self.pool = BufferPool(self._raw_alloc, lambda pointer: None)
        self.global_addresses: dict[str, int] = {}
        self.launches = 0
        self.profile: dict[str, tuple[int, float]] | None = None

    # -- memory -------------------------------------------------------------------------

    def _raw_alloc(self, nbytes: int) -> int:
        if self.top + nbytes > self.memory.size:
            raise GpuRuntimeError(
                f"emulated device memory exhausted ({self.memory.size} bytes); "
                "pass a larger memory_bytes"
            )
        pointer = BASE_ADDRESS + self.top
        self.top += -(-nbytes // ALLOCATION_GRANULE) * ALLOCATION_GRANULE
        return pointer

    def alloc(self, nbytes: int) -> int:
        return self.pool.alloc(nbytes)

    def free(self, pointer: int) -> None:
        self.pool.free(pointer)

    def _bytes(self, pointer: int, nbytes: int) -> np.ndarray:
        start = pointer - BASE_ADDRESS
        if start < 0 or start + nbytes > self.memory.size:
            raise GpuRuntimeError(f"emulated access of {nbytes} bytes at {pointer:#x} is out of bounds")
        return self.memory[start : start + nbytes]

    def copy_to_device(self, pointer: int, array: np.ndarray) -> None:
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        self._bytes(pointer, data.size)[:] = data

    def copy_to_host(self, array: np.ndarray, pointer: int) -> None:
        target = array.reshape(-1).view(np.uint8)
        target[:] = self._bytes(pointer, target.size)

    def copy_on_device(self, target: int, source: int, nbytes: int) -> None:
        self._bytes(target, nbytes)[:] = self._bytes(source, nbytes).copy()

    def global_address(self, name: str) -> int:
        address = self.global_addresses.get(name)
        if address is None:
            op = self.globals_ops.get(name)
            if op is None:
                raise GpuRuntimeError(f"the kernel module has no global @{name}")
            t = op.type
            assert isinstance(t, MemRefType)
            data = np.frombuffer(global_bytes(op, t, math.prod(t.get_shape())), np.uint8)
            address = self._raw_alloc(max(1, data.size))
            self._bytes(address, data.size)[:] = data
            self.global_addresses[name] = address
        return address

    def gemm(self, op: Any, a: Any, b: Any, c: Any) -> None:
        """`blas.gemm` on emulated device memory: numpy on views of it, C written in place."""
        from irgrad.backends.interpreter.blas import gemm_in_place

        gemm_in_place(op, self.view(a.pointer, a.type), self.view(b.pointer, b.type), self.view(c.pointer, c.type))

    def view(self, pointer: int, t: MemRefType) -> np.ndarray:
        """The numpy view of device memory a buffer argument of type `t` is."""
        dtype = numpy_dtype(t.element_type)
        itemsize = byte_size(storage_type(t.element_type))
        shape = t.get_shape()
        strides = [s * itemsize for s in strides_of(t, None)]  # type: ignore[arg-type]
        extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides) if n > 0)
        if math.prod(shape) == 0:
            return np.zeros(shape, dtype)
        raw = self._bytes(pointer, max(itemsize, extent + itemsize - 1))
        return np.ndarray(shape, dtype, buffer=raw, offset=0, strides=strides)

    # -- launches -----------------------------------------------------------------------

    def start_profile(self) -> None:
        """Count launches per kernel, with the emulation's wall time (as CudaDevice does with
        CUDA events), until `stop_profile`."""
        self.profile = {}

    def stop_profile(self) -> dict[str, tuple[int, float]]:
        profile, self.profile = self.profile or {}, None
        return profile

    def launch(
        self, kernel: str, grid: tuple[int, int, int], block: tuple[int, int, int], args: Sequence[Any]
    ) -> None:
        if self.profile is None:
            self._launch(kernel, grid, block, args)
            return
        start = time.perf_counter()
        self._launch(kernel, grid, block, args)
        calls, ms = self.profile.get(kernel, (0, 0.0))
        self.profile[kernel] = (calls + 1, ms + 1e3 * (time.perf_counter() - start))

    def _launch(
        self, kernel: str, grid: tuple[int, int, int], block: tuple[int, int, int], args: Sequence[Any]
    ) -> None:
        function = self.kernels.get(kernel)
        if function is None:
            raise GpuRuntimeError(f"the kernel module has no kernel @{kernel}")
        self.launches += 1
        values = [
            self.view(a, t) if isinstance(t, MemRefType) else a
            for a, t in zip(args, function.function_type.inputs.data)
        ]
        has_barrier = any(isinstance(op, gpu.BarrierOp) for op in function.walk())
        threads_per_block = block[0] * block[1] * block[2]
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    shared: dict[memref.AllocaOp, np.ndarray] = {}
                    lock = threading.Lock()
                    barrier = threading.Barrier(threads_per_block) if has_barrier else None
                    coordinates = [
                        (tx, ty, tz)
                        for tz in range(block[2])
                        for ty in range(block[1])
                        for tx in range(block[0])
                    ]
                    runs = [
                        (self._thread_ids((bx, by, bz), t, grid, block), shared, lock, barrier)
                        for t in coordinates
                    ]
                    if barrier is None:
                        state = _ThreadState()
                        interpreter = self._interpreter(state)
                        for run in runs:
                            self._run(function, interpreter, state, run, values)
                    else:
                        self._run_concurrently(function, runs, values)

    @staticmethod
    def _thread_ids(
        block_id: tuple[int, int, int],
        thread_id: tuple[int, int, int],
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
    ) -> dict[tuple[type, str], int]:
        ids: dict[tuple[type, str], int] = {}
        for k, dim in enumerate("xyz"):
            ids[(gpu.BlockIdOp, dim)] = block_id[k]
            ids[(gpu.ThreadIdOp, dim)] = thread_id[k]
            ids[(gpu.GridDimOp, dim)] = grid[k]
            ids[(gpu.BlockDimOp, dim)] = block[k]
        return ids

    def _interpreter(self, state: _ThreadState) -> Interpreter:
        from irgrad.backends.interpreter.arith import ArithFunctions
        from irgrad.backends.interpreter.math import MathFunctions
        from irgrad.backends.interpreter.memref import MemRefFunctions
        from irgrad.backends.interpreter.scf import ScfFunctions

        interpreter = Interpreter(self.container, index_bitwidth=64)
        for functions in (ScfFunctions(), ArithFunctions(), MathFunctions(), MemRefFunctions()):
            interpreter.register_implementations(functions, override=True)
        interpreter.register_implementations(_KernelFunctions(state), override=True)
        return interpreter

    @staticmethod
    def _run(
        function: gpu.FuncOp, interpreter: Interpreter, state: _ThreadState, run: tuple, values: list
    ) -> None:
        state.ids, state.shared, state.shared_lock, state.barrier = run
        with np.errstate(all="ignore"):
            interpreter.run_ssacfg_region(function.body, tuple(values), function.sym_name.data)

    def _run_concurrently(self, function: gpu.FuncOp, runs: list[tuple], values: list) -> None:
        errors: list[BaseException] = []

        def work(run: tuple) -> None:
            state = _ThreadState()
            try:
                self._run(function, self._interpreter(state), state, run, values)
            except BaseException as err:  # a failing thread must not leave the others waiting
                errors.append(err)
                barrier = run[3]
                if barrier is not None:
                    barrier.abort()

        threads = [threading.Thread(target=work, args=(run,)) for run in runs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
        if real or errors:
            raise (real or errors)[0]

    def synchronize(self) -> None:
        pass

    def __enter__(self) -> EmulatedDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


__all__ = ["BASE_ADDRESS", "EmulatedDevice"]
