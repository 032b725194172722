"""The LAPACK entry points generated code calls:
`irgrad_lapack_{s,d}{potrf,trsm,getrf,syevd,gesdd,geqrf}`.

Cholesky, triangular solves, LU, the symmetric eigendecomposition, the SVD and QR are O(n^3)
with a sequential dependency along the diagonal (or, for eigh and svd, iterations to
convergence); the compiler's own loop nests for them are correct but far from a tuned LAPACK
(blocked, multithreaded, vectorized). So, like GEMM (see blas.py), the compiler can lower them
to calls of a few fixed-signature runtime symbols, each defined once per process, when code
first calls it (`install_lapack`: a program compiles only the shims it uses):

- entry_points.py: the entry points and the contract they all keep (each one's own in its
  shim's IR, shims/lapack/<routine>.ll);
- library.py: which library serves them, and under which symbol names;
- shim_ir.py: the LLVM IR of the shims that adapt the calls to that library;
- fallback.py: numpy callbacks where the library lacks a routine, or there is none;
- install.py: defining them on first use; `lapack_info()` says which library and symbols
  were chosen, for benchmarks and bug reports.
"""

from irgrad.backends.cpu.lapack.entry_points import ENTRY_POINTS
from irgrad.backends.cpu.lapack.install import install_lapack, lapack_info
from irgrad.backends.cpu.lapack.library import LapackInfo

__all__ = ["ENTRY_POINTS", "LapackInfo", "install_lapack", "lapack_info"]
