"""jax.lax's complex-number ops: `real`, `imag`, `complex`, `conj`, with lax's dtypes.

They differ from numpy's names (irgrad/numpy/complex_numbers.py) where lax's do: `lax.real` and
`lax.imag` take complex arrays only, `lax.complex(x, y)` of two float arrays is complex (float32
parts give complex64, float64 parts complex128), and `lax.conj` of a float array is complex too.
"""

from __future__ import annotations

from typing import Any

from irgrad.dialects import nn
from irgrad.numpy.support import api, lift, operands
from irgrad.tracing import dtypes, primitives as prim
from irgrad.tracing.errors import DTypeError, user_site
from irgrad.tracing.tracer import Tracer


def _complex_operand(name: str, x: Any) -> Tracer:
    t = lift(x)
    if not dtypes.is_complex(t.dtype):
        raise DTypeError(f"lax.{name}: takes a complex array, got dtype {t.dtype} (shape {t.shape}){user_site()}")
    return t


@api
def real(x: Any) -> Tracer:
    """The real part of a complex array."""
    return prim.unary(nn.RealOp, _complex_operand("real", x))


@api
def imag(x: Any) -> Tracer:
    """The imaginary part of a complex array."""
    return prim.unary(nn.ImagOp, _complex_operand("imag", x))


@api
def complex(x: Any, y: Any) -> Tracer:
    """x + i*y of two float arrays (float16/bfloat16 parts become float32, as lax's)."""
    (a, b), d = operands("complex", x, y)
    if not dtypes.is_float(d):
        raise DTypeError(f"lax.complex: takes float arrays, got dtype {d}{user_site()}")
    part = dtypes.real_of(dtypes.complex_of(d))
    return prim.binary(nn.ComplexOp, prim.convert(a, part), prim.convert(b, part))


@api
def conj(x: Any) -> Tracer:
    """The complex conjugate, a complex array also for a float input (lax's rule)."""
    t = lift(x)
    if not dtypes.is_complex(t.dtype):
        t = prim.convert(t, dtypes.complex_of(t.dtype))
    return prim.unary(nn.ConjOp, t)
