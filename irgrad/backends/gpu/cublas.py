"""`blas.gemm` on the GPU: cuBLAS through ctypes, on device buffers, on the default stream.

Why cuBLAS: the GPU pipeline lowers a matmul it writes itself to one thread per output
element with a serial dot product (no tiling, no shared memory, no tensor cores), an order of
magnitude below what the device can do; PyTorch and JAX call cuBLAS for the same products.
`convert-linalg-to-blas` runs in the GPU pipeline as in the CPU one, so large matmuls reach
the runtime as `blas.gemm` host ops on device buffers, and `CudaDevice.gemm` calls
`cublasSgemm_v2`/`cublasDgemm_v2` here.

Row-major to column-major: a row-major matrix is the column-major view of its transpose, so
`C = op(A) @ op(B)` (row-major) is `C^T = op(B)^T @ op(A)^T` (column-major): one call with the
operands swapped, the same transpose flags, sizes (n, m, k) and the same leading dimensions.

The library is found by `find_cublas()`: `$IRGRAD_CUBLAS` (`none`: no cuBLAS), the dynamic loader's search path,
CUDA's usual install directories, or the `nvidia-cublas` wheel (PyTorch's CUDA builds bring
it). Without it the device runtime computes the product on the host (`CudaDevice.gemm`), and
says so once: correct, but the buffers travel.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys

CUBLAS_OP_N = 0
CUBLAS_OP_T = 1


def find_cublas() -> str | None:
    """A loadable libcublas path, or None."""
    setting = os.environ.get("IRGRAD_CUBLAS", "").strip()
    if setting.lower() == "none":  # GEMMs on the host, on request
        return None
    candidates: list[str] = [setting] if setting else []
    name = ctypes.util.find_library("cublas")
    if name:
        candidates.append(name)
    patterns = [
        "/usr/local/cuda*/lib64/libcublas.so*",
        "/usr/local/cuda*/targets/*/lib/libcublas.so*",
        "/usr/lib/x86_64-linux-gnu/libcublas.so*",
        "/usr/lib/aarch64-linux-gnu/libcublas.so*",
        "/opt/cuda*/lib64/libcublas.so*",
    ]
    for base in sys.path:
        patterns.append(os.path.join(base, "nvidia", "cublas", "lib", "libcublas.so*"))
    for pattern in patterns:
        candidates.extend(sorted(glob.glob(pattern), reverse=True))
    for path in candidates:
        try:
            ctypes.CDLL(path)
        except OSError:
            continue
        return path
    return None


CUBLAS_DEFAULT_MATH = 0
CUBLAS_PEDANTIC_MATH = 2


def math_mode() -> int:
    """cuBLAS math mode: pedantic (IEEE float32 throughout) unless IRGRAD_CUBLAS_MATH=default."""
    return CUBLAS_DEFAULT_MATH if os.environ.get("IRGRAD_CUBLAS_MATH") == "default" else CUBLAS_PEDANTIC_MATH


class CublasError(RuntimeError):
    """A cuBLAS call returned a status other than CUBLAS_STATUS_SUCCESS."""


class Cublas:
    """One cuBLAS handle, created in the CUDA context current when this is constructed."""

    def __init__(self, path: str):
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.handle = ctypes.c_void_p()
        self._check(self.lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate_v2")
        # IEEE float32 arithmetic throughout, as on the CPU: no TF32 tensor cores or other
        # reduced-precision shortcuts that the library's default mode may pick by size.
        self._check(self.lib.cublasSetMathMode(self.handle, math_mode()), "cublasSetMathMode")
        pointer, integer = ctypes.c_void_p, ctypes.c_int
        for name, scalar in (("cublasSgemm_v2", ctypes.c_float), ("cublasDgemm_v2", ctypes.c_double)):
            function = getattr(self.lib, name)
            function.restype = integer
            function.argtypes = [
                pointer, integer, integer, integer, integer, integer,
                ctypes.POINTER(scalar), pointer, integer, pointer, integer,
                ctypes.POINTER(scalar), pointer, integer,
            ]  # fmt: skip

    @staticmethod
    def _check(status: int, what: str) -> None:
        if status != 0:
            raise CublasError(f"{what} failed with cuBLAS status {status}")

    def gemm(
        self,
        double: bool,
        transpose_a: bool,
        transpose_b: bool,
        m: int,
        n: int,
        k: int,
        alpha: float,
        a: int,
        lda: int,
        b: int,
        ldb: int,
        beta: float,
        c: int,
        ldc: int,
    ) -> None:
        """Row-major `C = alpha * op(A) @ op(B) + beta * C` on device pointers (module doc)."""
        if m == 0 or n == 0:
            return
        scalar = ctypes.c_double if double else ctypes.c_float
        name = "cublasDgemm_v2" if double else "cublasSgemm_v2"
        status = getattr(self.lib, name)(
            self.handle,
            CUBLAS_OP_T if transpose_b else CUBLAS_OP_N,
            CUBLAS_OP_T if transpose_a else CUBLAS_OP_N,
            n, m, k,
            ctypes.byref(scalar(alpha)),
            b, max(ldb, 1),
            a, max(lda, 1),
            ctypes.byref(scalar(beta)),
            c, max(ldc, 1),
        )  # fmt: skip
        self._check(status, name)

    def close(self) -> None:
        if self.handle:
            self.lib.cublasDestroy_v2(self.handle)
            self.handle = ctypes.c_void_p()
