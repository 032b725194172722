"""What the GPU runtime's host code needs of a GPU: the `Device` protocol, the `DeviceBuffer`
values host code passes around, and the runtime's two errors.

A `Device` is `CudaDevice` (pycuda, irgrad/backends/gpu/cuda_device.py) or, for tests without
a GPU, `EmulatedDevice` (irgrad/backends/gpu/emulator.py); host code runs on either
(irgrad/backends/gpu/host_code.py). `GpuUnavailableError` says why no CUDA device can be used
(no pycuda, no driver, no device).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from xdsl.dialects.builtin import MemRefType

from irgrad.diagnostics import IrgradError
from irgrad.lowering.llvm.type_conversion import byte_size, storage_type


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
