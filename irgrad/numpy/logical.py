"""The logical functions with numpy's names: logical_and logical_or logical_xor, for operands
of any dtype (nonzero is true, NaN included), as `nn.and`/`nn.or`/`nn.xor` on bools. Their
results are bool and carry no gradient.
"""

from __future__ import annotations

from typing import Any

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy.support import api, broadcast_shapes, broadcast_to, lift
from irgrad.tracing.tracer import Tracer

__all__ = ["logical_and", "logical_or", "logical_xor"]


def _truth(x: Any) -> Tracer:
    """x != 0 as bool (NaN is true, as in numpy)."""
    t = lift(x)
    return t if t.dtype == dtypes.bool_ else lax.convert(t, dtypes.bool_)


def _logical(name: str, op_class: type[nn.ElementwiseBinaryOp], x1: Any, x2: Any) -> Tracer:
    a, b = _truth(x1), _truth(x2)
    shape = broadcast_shapes(name, a.shape, b.shape)
    return lax.binary(op_class, broadcast_to(a, shape), broadcast_to(b, shape))


@api
def logical_and(x1: Any, x2: Any) -> Tracer:
    """Both nonzero (bool), for operands of any dtype."""
    return _logical("logical_and", nn.AndOp, x1, x2)


@api
def logical_or(x1: Any, x2: Any) -> Tracer:
    """Either nonzero (bool), for operands of any dtype."""
    return _logical("logical_or", nn.OrOp, x1, x2)


@api
def logical_xor(x1: Any, x2: Any) -> Tracer:
    """Exactly one nonzero (bool), for operands of any dtype."""
    return _logical("logical_xor", nn.XorOp, x1, x2)
