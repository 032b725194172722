"""`eigh` and `eigvalsh` (numpy.linalg's) of symmetric matrices.

`nn.eigh` (LAPACK's syevd on the CPU, parallel cyclic Jacobi, `reference_loops.eigh_raw`,
elsewhere) under JAX's custom_jvp rule: dw = diag(V^T dA V), dV = V (F o V^T dA V),
F_ij = 1 / (w_j - w_i). As in JAX, degenerate eigenvalues make F infinite and the
eigenvectors' derivative inf/NaN; the eigenvalues' own derivative stays finite.
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy.custom_derivatives import custom_jvp
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api
from irgrad.tracing import primitives as lax
from irgrad.tracing.errors import user_site
from irgrad.tracing.tracer import Tracer, full
from irgrad.numpy.linalg.common import _square
from irgrad.tracing.matrices import (
    diagonal as _diagonal, iota as _iota, mT as _mT, symmetric_from as _symmetric_from, where as _where,
)


def _eigh_core(a: Tracer) -> tuple[Tracer, Tracer]:
    return lax.eigh(a)


_eigh_core = custom_jvp(_eigh_core)


@_eigh_core.defjvp
def _eigh_jvp(primals: tuple[Tracer], tangents: tuple[Tracer]) -> tuple[Any, Any]:
    """JAX's rule: with dA symmetrized and X = V^T dA V, dw = diag(X), dV = V (F o X),
    F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it."""
    (a,), (da,) = primals, tangents
    w, v = lax.eigh(a)
    da = 0.5 * (da + _mT(da))
    x = np_api.matmul(_mT(v), np_api.matmul(da, v))
    n = w.shape[-1]
    eye = lax.compare("eq", _iota((n, n), 0), _iota((n, n), 1))
    diff = lax.reshape(w, (*w.shape[:-1], 1, n)) - lax.reshape(w, (*w.shape, 1))
    f = _where(eye, full((), 0, a.dtype), 1.0 / _where(eye, full((), 1, a.dtype), diff))
    return (w, v), (_diagonal(x), np_api.matmul(v, f * x))


def _uplo_lower(op_name: str, uplo: Any) -> bool:
    if uplo not in ("L", "U"):
        raise ValueError(f"{op_name}: UPLO must be 'L' or 'U', got {uplo!r}{user_site()}")
    return uplo == "L"


@api
def eigh(a: Any, UPLO: str = "L", symmetrize_input: bool = True) -> tuple[Tracer, Tracer]:  # noqa: N803
    """jax.numpy.linalg.eigh of a symmetric (..., n, n) a: (w, v), the eigenvalues ascending and
    the eigenvectors as the columns of v (a v = v diag(w)), by parallel cyclic Jacobi rotations. With
    `symmetrize_input` (the default, as JAX) a is replaced by (a + a^T) / 2; without it only the
    `UPLO` triangle ('L' or 'U') is read, as numpy. Each eigenvector's sign is fixed (its first
    entry of at least half its largest magnitude is positive; nn.eigh's convention), so results
    agree across backends; numpy's signs are LAPACK's and may differ.
    The derivative is JAX's: degenerate eigenvalues make the eigenvectors' derivative inf/NaN."""
    lower = _uplo_lower("eigh", UPLO)
    t = _square("eigh", a)
    t = 0.5 * (t + _mT(t)) if symmetrize_input else _symmetric_from(t, lower)
    return _eigh_core(t)


@api
def eigvalsh(a: Any, UPLO: str = "L", symmetrize_input: bool = True) -> Tracer:  # noqa: N803
    """numpy.linalg.eigvalsh: eigh's eigenvalues, ascending (their derivative diag(V^T dA V) is
    finite even for degenerate eigenvalues)."""
    return eigh(a, UPLO, symmetrize_input)[0]
