"""`cholesky` (jax.numpy.linalg's), `cho_factor` and `cho_solve` (jax.scipy.linalg's).

`nn.cholesky` (LAPACK's potrf on the CPU, `reference_loops.cholesky_loop` elsewhere) under a
custom_jvp with Murray's rule, as JAX; cho_solve is two custom_jvp triangular solves. A matrix
that is not positive definite gives an all-NaN factor (as JAX; numpy raises LinAlgError).
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy.custom_derivatives import custom_jvp
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api
from irgrad.tracing import primitives as lax
from irgrad.tracing.tracer import Tracer, full
from irgrad.numpy.linalg.common import _matrix_rhs, _square, _static_bool
from irgrad.tracing.matrices import iota as _iota, mT as _mT, symmetric_from as _symmetric_from, where as _where
from irgrad.numpy.linalg.triangular import _solve_tri


def _phi(x: Tracer) -> Tracer:
    """The lower triangle of x with its diagonal halved."""
    n = x.shape[-1]
    diff = _iota((n, n), 1) - _iota((n, n), 0)
    return _where(diff < 0, x, _where(diff == 0, 0.5 * x, full((), 0, x.dtype)))


def _cholesky_core(a: Tracer) -> Tracer:
    return lax.cholesky(a)


_cholesky_core = custom_jvp(_cholesky_core)


@_cholesky_core.defjvp
def _cholesky_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Tracer, Tracer]:
    """dL = L Phi(L^{-1} dA L^{-T}) (Murray 2016, as JAX), dA symmetrized."""
    (a,), (da,) = primals, tangents
    low = lax.cholesky(a)
    da = 0.5 * (da + _mT(da))
    left = lax.triangular_solve(low, da, True, False)  # L^{-1} dA
    middle = lax.triangular_solve(low, _mT(left), True, False)  # L^{-1} dA L^{-T}
    return low, np_api.matmul(low, _phi(middle))


@api
def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Tracer:
    """jax.numpy.linalg.cholesky: L lower triangular with a = L L^T (with `upper`, L^T). With
    `symmetrize_input` (the default, as JAX) a is replaced by (a + a^T) / 2, so the derivative is
    symmetric too; without it only a's lower triangle is read (LAPACK's potrf). A matrix that is
    not positive definite gives all NaN (as JAX; numpy raises LinAlgError)."""
    t = _square("cholesky", a)
    t = 0.5 * (t + _mT(t)) if symmetrize_input else _symmetric_from(t, True)
    low = _cholesky_core(t)
    return _mT(low) if upper else low


def cho_factor(a: Any, lower: bool = False) -> tuple[Any, bool]:
    """jax.scipy.linalg.cho_factor: (c, lower) for cho_solve; c is the lower (else upper)
    Cholesky factor, the other triangle zero. Only a's `lower` (else upper) triangle is read."""
    lower = _static_bool("cho_factor", "lower", lower)
    return _cho_factor(a, lower), lower


@api
def _cho_factor(a: Any, lower: bool) -> Tracer:
    t = _symmetric_from(_square("cho_factor", a), lower)
    low = _cholesky_core(t)
    return low if lower else _mT(low)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any) -> Any:
    """jax.scipy.linalg.cho_solve: x with A x = b, A = c c^T (lower) or c^T c (upper), from
    cho_factor's (c, lower). b: (..., n) vector if it has one dimension fewer than c, else (..., n, k)."""
    c, lower = c_and_lower
    return _cho_solve(c, _static_bool("cho_solve", "lower", lower), b)


@api
def _cho_solve(c: Any, lower: bool, b: Any) -> Tracer:
    ct, bt, vector = _matrix_rhs("cho_solve", _square("cho_solve", c), b, None)
    y = _solve_tri(ct, bt, lower, not lower, False)
    x = _solve_tri(ct, y, lower, lower, False)
    return lax.reshape(x, x.shape[:-1]) if vector else x
