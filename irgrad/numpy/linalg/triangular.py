"""`solve_triangular` (jax.scipy.linalg's) and `_trsm(lower, unit)`, the custom_jvp
triangular solve (`nn.triangular_solve`: LAPACK's trsm on the CPU, `reference_loops.trsm_loop`
elsewhere) that cho_solve and lu_solve are built from.
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy.custom_derivatives import custom_jvp
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api
from irgrad.tracing import primitives as lax
from irgrad.tracing.tracer import Tracer
from irgrad.numpy.linalg.common import _matrix_rhs, _square, _trans_code
from irgrad.tracing.matrices import mT as _mT, triangle as _triangle


_TRSM: dict[tuple[bool, bool], custom_jvp] = {}


def _trsm(lower: bool, unit: bool) -> custom_jvp:
    """The custom_jvp triangular solve `(a, b) -> A^{-1} B` for one (lower, unit) pair: linear in
    b, and dX = -A^{-1} dA X with dA masked to the triangle that is read."""
    key = (lower, unit)
    if key not in _TRSM:

        def primal(a: Tracer, b: Tracer) -> Tracer:
            return lax.triangular_solve(a, b, lower, unit)

        primal.__name__ = primal.__qualname__ = f"solve_triangular_{'lower' if lower else 'upper'}{'_unit' if unit else ''}"
        f = custom_jvp(primal)

        @f.defjvp
        def _rule(primals: tuple[Tracer, Tracer], tangents: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
            (a, b), (da, db) = primals, tangents
            x = lax.triangular_solve(a, b, lower, unit)
            dx = lax.triangular_solve(a, db - np_api.matmul(_triangle(da, lower, -1 if unit else 0), x), lower, unit)
            return x, dx

        _TRSM[key] = f
    return _TRSM[key]


def _solve_tri(a: Tracer, b: Tracer, lower: bool, transpose: bool, unit: bool) -> Tracer:
    if transpose:
        return _trsm(not lower, unit)(_mT(a), b)
    return _trsm(lower, unit)(a, b)


@api
def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False, unit_diagonal: bool = False) -> Tracer:
    """jax.scipy.linalg.solve_triangular: x with op(a) x = b, op = identity (trans 0 or 'N') or
    transpose (1/'T', and 2/'C' for these real dtypes). Only the `lower` (else upper) triangle of a
    is read, and not its diagonal with `unit_diagonal`. b is a vector (..., n) if it has one
    dimension fewer than a, else a matrix (..., n, k); batch dimensions broadcast."""
    t = _trans_code("solve_triangular", trans)
    at, bt, vector = _matrix_rhs("solve_triangular", _square("solve_triangular", a), b, None)
    x = _solve_tri(at, bt, bool(lower), t != 0, bool(unit_diagonal))
    return lax.reshape(x, x.shape[:-1]) if vector else x
