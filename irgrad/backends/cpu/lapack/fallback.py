"""The LAPACK entry points as ctypes callbacks into the reference interpreter's numpy
implementations (irgrad/backends/interpreter/nn_linalg.py).

Used where no library is found (or `IRGRAD_LAPACK=none`), and for each entry point whose
routines the chosen library lacks (library.py): the same contract, correct and slow (the
Python interpreter per call), so compiled code never lacks a symbol it calls.
"""

from __future__ import annotations

import ctypes
from collections.abc import Collection

import llvmlite.binding as llvm

_FALLBACKS: list[object] = []
"""The ctypes callbacks defined so far, kept alive as long as the process."""


def _matrix(pointer: int, rows: int, cols: int, stride: int, ctype: type, dtype: type) -> "np.ndarray":
    """A numpy view of `rows` x `cols` elements at `pointer`, rows `stride` elements apart."""
    import numpy as np

    if rows <= 0 or cols <= 0:
        return np.zeros((max(rows, 0), max(cols, 0)), dtype)
    flat = np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctype)), shape=((rows - 1) * stride + cols,))
    return np.lib.stride_tricks.as_strided(flat, (rows, cols), (stride * flat.itemsize, flat.itemsize))


def install_fallback(entry_points: Collection[str]) -> None:
    """Define `entry_points` as callbacks into irgrad/backends/interpreter/nn_linalg.py."""
    import numpy as np

    from irgrad.backends.interpreter import nn_linalg as ref

    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    for p, ctype, dtype in (("s", ctypes.c_float, np.float32), ("d", ctypes.c_double, np.float64)):

        def potrf(n: int, a: int, lda: int, ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0:
                view = _matrix(a, n, n, lda, ctype, dtype)
                view[...] = ref.cholesky(view)

        def trsm(lower: int, unit: int, n: int, k: int, a: int, lda: int, b: int, ldb: int,
                 ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0 and k > 0:
                x = _matrix(b, n, k, ldb, ctype, dtype)
                x[...] = ref.triangular_solve(_matrix(a, n, n, lda, ctype, dtype), x, bool(lower), bool(unit))

        def getrf(n: int, a: int, lda: int, pivots: int, perm: int, ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0:
                view = _matrix(a, n, n, lda, ctype, dtype)
                lu, piv, permutation = ref.lu(view)
                view[...] = lu
                _matrix(pivots, 1, n, n, ctypes.c_int32, np.int32)[0] = piv
                _matrix(perm, 1, n, n, ctypes.c_int32, np.int32)[0] = permutation

        # The reference's vectors have the nn ops' signs: one of the "any signs" allowed.
        def syevd(n: int, a: int, lda: int, w: int, ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0:
                view = _matrix(a, n, n, lda, ctype, dtype)
                values, vectors = ref.eigh(view)
                view[...] = vectors
                _matrix(w, 1, n, n, ctype, dtype)[0] = values

        def gesdd(m: int, n: int, a: int, lda: int, s: int, u: int, ldu: int, vt: int, ldvt: int,
                  ctype: type = ctype, dtype: type = dtype) -> None:
            if m > 0 and n > 0:
                k = min(m, n)
                left, values, right = ref.svd(_matrix(a, m, n, lda, ctype, dtype))
                _matrix(u, m, k, ldu, ctype, dtype)[...] = left
                _matrix(s, 1, k, k, ctype, dtype)[0] = values
                _matrix(vt, k, n, ldvt, ctype, dtype)[...] = right

        def geqrf(m: int, n: int, q: int, ldq: int, r: int, ldr: int, ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0:
                view = _matrix(q, max(m, 0), n, ldq, ctype, dtype)
                out = _matrix(r, n, n, ldr, ctype, dtype)
                if m < n:  # not a tall matrix: the failure convention
                    view[...], out[...] = np.nan, np.nan
                    return
                view[...], out[...] = ref.qr(view)

        def geev(n: int, a: int, lda: int, w: int, v: int, ldv: int, ctype: type = ctype, dtype: type = dtype) -> None:
            if n > 0:
                values, vectors = ref.eig(_matrix(a, n, n, lda, ctype, dtype))
                _matrix(w, n, 2, 2, ctype, dtype)[...] = values
                _matrix(v, n, 2 * n, ldv, ctype, dtype)[...] = vectors.reshape(n, 2 * n)

        thunks = (
            (f"irgrad_lapack_{p}potrf", ctypes.CFUNCTYPE(None, i64, ptr, i64)(potrf)),
            (f"irgrad_lapack_{p}trsm", ctypes.CFUNCTYPE(None, i64, i64, i64, i64, ptr, i64, ptr, i64)(trsm)),
            (f"irgrad_lapack_{p}getrf", ctypes.CFUNCTYPE(None, i64, ptr, i64, ptr, ptr)(getrf)),
            (f"irgrad_lapack_{p}syevd", ctypes.CFUNCTYPE(None, i64, ptr, i64, ptr)(syevd)),
            (f"irgrad_lapack_{p}gesdd", ctypes.CFUNCTYPE(None, i64, i64, ptr, i64, ptr, ptr, i64, ptr, i64)(gesdd)),
            (f"irgrad_lapack_{p}geqrf", ctypes.CFUNCTYPE(None, i64, i64, ptr, i64, ptr, i64)(geqrf)),
            (f"irgrad_lapack_{p}geev", ctypes.CFUNCTYPE(None, i64, ptr, i64, ptr, ptr, i64)(geev)),
        )
        for name, thunk in thunks:
            if name in entry_points:
                _FALLBACKS.append(thunk)
                llvm.add_symbol(name, ctypes.cast(thunk, ctypes.c_void_p).value)


__all__ = ["install_fallback"]
