"""The LAPACK entry points and the contract all of them keep; each one's own contract heads
its shim, shims/lapack/<routine>.ll (the numpy fallbacks keep the same).

All matrices ROW-MAJOR, in place; `ld*` is the row stride in elements, >= the row length; T
is float for the `s` variants, double for `d`; sizes are i64.

syevd, gesdd, geqrf and geev ask LAPACK for their workspace sizes first (lwork = -1) and malloc and
free their work arrays per call. No entry point calls LAPACK on a non-finite input (some
routines may loop or misbehave on one); the ops they serve make such a result NaN anyway.

Errors the caller should never cause (a row stride below the row length, a size above the
library's integer range, memory that could not be allocated) are handled rather than passed to
LAPACK's xerbla: the outputs are filled with NaN, getrf's pivots and perm are the identity.

Threads: the library's own thread pool and thread count apply (OPENBLAS_NUM_THREADS,
threadpoolctl). The entry points keep no state and may be called from several threads at once,
as far as the library allows it (OpenBLAS does).
Details: docs/design/cpu-backend.md, "irgrad/backends/cpu/lapack/entry_points.py".
"""

from __future__ import annotations

ROUTINES = ("potrf", "trsm", "getrf", "syevd", "gesdd", "geqrf", "geev")
REQUIRED = ("potrf", "trsm", "getrf")
"""The routines a library must have to be chosen; the others fall back one by one."""
PRECISIONS = (("s", "float", 4), ("d", "double", 8))
ENTRY_POINTS = tuple(f"irgrad_lapack_{p}{r}" for p, _, _ in PRECISIONS for r in ROUTINES)

__all__ = ["ENTRY_POINTS", "PRECISIONS", "REQUIRED", "ROUTINES"]
