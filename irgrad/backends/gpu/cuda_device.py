"""`CudaDevice`: the runtime's `Device` on a CUDA GPU through pycuda (one context, the
device's primary one; one loaded kernel module; prepared kernel functions; a `BufferPool`;
GEMMs through cuBLAS; kernel and GEMM timing with CUDA events), and
`cuda_unavailable_reason`, which says why none can be used here.

pycuda is optional (the 'gpu' extra): it is imported when a device is made or checked for,
never when irgrad is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import Attribute

from irgrad.ir_numpy import numpy_dtype
from irgrad.backends.gpu.buffer_pool import BufferPool
from irgrad.backends.gpu.device import DeviceBuffer, GpuUnavailableError
from irgrad.backends.gpu.kernel_params import param_format, param_value
from irgrad.backends.interpreter.blas import gemm_in_place
from irgrad.dialects.blas import GemmOp, unit_strides_last


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
