"""Complex numbers' numpy names: `real`, `imag`, `conj`/`conjugate`, `angle`, `iscomplex`,
`isreal`, `iscomplexobj`, `isrealobj` (`abs` of a complex array is basic.abs's).

On real arrays they do what numpy does (`real(x)` is x, `imag(x)` zeros, `conj(x)` x); on
complex64/complex128 arrays they emit `nn.real`, `nn.imag`, `nn.conj`. Derivatives follow JAX's
convention (docs/autodiff.md, "Complex numbers"): the gradient of a real loss with respect to
a complex input z = x + iy is dL/dx - i dL/dy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy.support import api, lift
from irgrad.tracing.tracer import Tracer, full


@api
def real(x: Any) -> Tracer:
    """The real part (x itself for a real array)."""
    t = lift(x)
    return lax.unary(nn.RealOp, t) if dtypes.is_complex(t.dtype) else t


@api
def imag(x: Any) -> Tracer:
    """The imaginary part (zeros of x's dtype for a real array, as numpy)."""
    t = lift(x)
    return lax.unary(nn.ImagOp, t) if dtypes.is_complex(t.dtype) else full(t.shape, 0, t.dtype)


@api
def conj(x: Any) -> Tracer:
    """The complex conjugate (x itself for a real array)."""
    t = lift(x)
    return lax.unary(nn.ConjOp, t) if dtypes.is_complex(t.dtype) else t


conjugate = conj


@api
def angle(z: Any, deg: bool = False) -> Tracer:
    """The argument arctan2(imag(z), real(z)) in radians (degrees with `deg`); a real array
    gives 0 or pi, and integers give float32, as jnp.angle."""
    from irgrad.numpy.trigonometric import arctan2

    t = lift(z)
    if not dtypes.is_inexact(t.dtype):
        t = lax.convert(t, dtypes.float32)
    a = arctan2(imag(t), real(t))
    return a * (180.0 / np.pi) if deg else a


def _imaginary_vs_zero(x: Any, direction: str) -> Tracer:
    """imag(x) <direction> 0 (eq or ne); a real array's imaginary part is 0."""
    t = lift(x)
    if not dtypes.is_complex(t.dtype):
        return full(t.shape, direction == "eq", dtypes.bool_)
    im = imag(t)
    return lax.compare(direction, im, full(im.shape, 0.0, im.dtype))


@api
def iscomplex(x: Any) -> Tracer:
    """True where the imaginary part is nonzero (false everywhere for a real array)."""
    return _imaginary_vs_zero(x, "ne")


@api
def isreal(x: Any) -> Tracer:
    """True where the imaginary part is zero (true everywhere for a real array)."""
    return _imaginary_vs_zero(x, "eq")


def iscomplexobj(x: Any) -> bool:
    """Whether x's dtype is complex (a Python bool from the dtype alone, as numpy)."""
    return dtypes.is_complex(_dtype(x))


def isrealobj(x: Any) -> bool:
    """Whether x's dtype is not complex."""
    return not iscomplexobj(x)


def _dtype(x: Any) -> np.dtype:
    if isinstance(x, Tracer):
        return x.dtype
    if isinstance(x, complex):
        return dtypes.complex64
    return np.asarray(x).dtype


__all__ = ["angle", "conj", "conjugate", "imag", "iscomplex", "iscomplexobj", "isreal", "isrealobj", "real"]
