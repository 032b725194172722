"""The GPU backend: nn programs to PTX for NVIDIA GPUs, run through pycuda.

- `compile_program(program) -> GpuCompiled` (and `compile_module(module, entry)`): the
  `irgrad-gpu` pipeline, PTX through llvmlite's NVPTX target, checked with ptxas where it is
  installed; no GPU needed (`program.py`);
- `GpuCompiled(*arrays)`: runs on the first CUDA device, or raises `GpuUnavailableError`
  saying what is missing (pycuda, the driver, a device); `run(..., device=EmulatedDevice(...))`
  runs the same host code (`host_code.py`) on the emulator (`emulator.py`) instead of
  the CUDA device (`cuda_device.py`);
- `to_ptx(module, arch)`, `ptxas_check(ptx, arch)`, `find_libdevice()` (`ptx.py`).

docs/design/gpu-pipeline.md describes the stages, the kernel mapping and the memory model.
"""

from irgrad.backends.gpu.program import GpuCompiled, compile_module, compile_program
from irgrad.backends.gpu.ptx import (
    DEFAULT_ARCH,
    PtxCompileError,
    PtxModule,
    find_libdevice,
    find_ptxas,
    ptxas_check,
    to_ptx,
)
from irgrad.backends.gpu.cuda_device import cuda_unavailable_reason
from irgrad.backends.gpu.device import GpuRuntimeError, GpuUnavailableError

__all__ = [
    "DEFAULT_ARCH",
    "GpuCompiled",
    "GpuRuntimeError",
    "GpuUnavailableError",
    "PtxCompileError",
    "PtxModule",
    "compile_module",
    "compile_program",
    "cuda_unavailable_reason",
    "find_libdevice",
    "find_ptxas",
    "ptxas_check",
    "to_ptx",
]
