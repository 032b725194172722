"""`eig` and `eigvals` (numpy.linalg's, jax.numpy.linalg's) of general real square matrices.

`nn.eig` gives the eigenvalues and right eigenvectors as real (re, im) pairs, w (..., n, 2) and
v (..., n, n, 2), so nothing below the library has a complex type; here they become complex64 /
complex128 arrays with `nn.complex` of the two halves (the library's lax.complex). The values
are LAPACK geev's, as numpy's and JAX's CPU eig: geev's order, each eigenvector of unit 2-norm
with its largest component real. The CPU backend calls geev, the interpreter numpy.linalg.eig;
there is no GPU eig (JAX's calls cuSOLVER's geev). Complex input matrices are not supported yet, nor is the
derivative (JAX's _eig_jvp_rule): ig.grad through eig is an error that says so.
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy.complex_functions import from_parts
from irgrad.numpy.linalg.common import _square
from irgrad.numpy.support import api
from irgrad.tracing import primitives as lax
from irgrad.tracing.tracer import Tracer


def _part(pairs: Tracer, k: int) -> Tracer:
    """The real (k = 0) or imaginary (k = 1) half of a (..., 2) pairs tensor, without that axis."""
    shape = pairs.shape
    start = [0] * (len(shape) - 1) + [k]
    limit = [*shape[:-1], k + 1]
    return lax.reshape(lax.slice(pairs, start, limit, [1] * len(shape)), shape[:-1])


def _complex(pairs: Tracer) -> Tracer:
    """The complex array of a (..., 2) pairs tensor (complex64 for f32 pairs, complex128 for f64)."""
    return from_parts(_part(pairs, 0), _part(pairs, 1))


@api
def eig(a: Any) -> tuple[Tracer, Tracer]:
    """jax.numpy.linalg.eig of a real square (..., n, n) a: (w, v), the eigenvalues (..., n) and
    the right eigenvectors as the columns of v (..., n, n), a v = v diag(w), both complex
    (complex64 for float32 and integer input, complex128 for float64). LAPACK geev's results, as
    numpy's and JAX's: a conjugate pair adjacent (positive imaginary part first), each vector of
    unit 2-norm with its largest component real. A NaN or inf in a matrix makes its results NaN.
    Not differentiable yet; complex a is a DTypeError."""
    t = _square("eig", a)
    w, v = lax.eig(t)
    return _complex(w), _complex(v)


@api
def eigvals(a: Any) -> Tracer:
    """jax.numpy.linalg.eigvals: eig's eigenvalues (..., n), complex, in geev's order."""
    t = _square("eigvals", a)
    w, _ = lax.eig(t)
    return _complex(w)
