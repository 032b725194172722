"""The LAPACK entry points and the contract all of them keep; each one's own contract heads
its shim, shims/lapack/<routine>.ll (the numpy fallbacks keep the same).

All matrices ROW-MAJOR, in place; `ld*` is the row stride in elements, >= the row length; T
is float for the `s` variants, double for `d`; sizes are i64.

syevd, gesdd and geqrf ask LAPACK for their workspace sizes first (lwork = -1), take at least
the documented minimum (and a margin over a float32 answer, which may be rounded down), then
malloc and free the work, iwork and tau arrays per call. They never call LAPACK on a non-finite
input (some routines may loop or misbehave on one); the ops they serve make such a result NaN
anyway.

Errors the caller should never cause but which are handled rather than passed to LAPACK's
xerbla (which would print and return): a row stride below the row length, a size or stride
above the library's integer range (int32 max with a 32-bit library; getrf's i32 pivots also
limit n to int32 max; a workspace size too), or memory LAPACKE or the shim could not
allocate. Then the output (potrf's and getrf's n x n `a`, trsm's n x k `b`, and all outputs
of syevd, gesdd and geqrf as for their failure) is filled with NaN; getrf's pivots and perm
are then the identity.

Threads: the library's own thread pool and thread count apply (OPENBLAS_NUM_THREADS,
threadpoolctl), shared with numpy and the GEMM entry points. The entry points keep no state
(getrf mallocs its ipiv scratch per call, syevd, gesdd and geqrf their workspaces) and may be
called from several threads at once, as far as the library allows it (OpenBLAS does).
"""

from __future__ import annotations

ROUTINES = ("potrf", "trsm", "getrf", "syevd", "gesdd", "geqrf")
REQUIRED = ("potrf", "trsm", "getrf")
"""The routines a library must have to be chosen; the others fall back one by one."""
PRECISIONS = (("s", "float", 4), ("d", "double", 8))
ENTRY_POINTS = tuple(f"irgrad_lapack_{p}{r}" for p, _, _ in PRECISIONS for r in ROUTINES)

__all__ = ["ENTRY_POINTS", "PRECISIONS", "REQUIRED", "ROUTINES"]
