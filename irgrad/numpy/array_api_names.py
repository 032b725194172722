"""numpy 2's (and the array API standard's) names for functions irgrad has under numpy 1's:
`acos` for `arccos`, `pow` for `power`, `concat` for `concatenate`, ... as jax.numpy offers
both. The same function objects, so their derivatives and dtypes are the originals'; plus the
two small functions numpy 2 added with them, `matrix_transpose` and `array_equiv`.
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy.basic import power
from irgrad.numpy.bitwise import bitwise_not, left_shift, right_shift
from irgrad.numpy.hyperbolic import arccosh, arcsinh, arctanh
from irgrad.numpy.more import broadcast_arrays
from irgrad.numpy.numerics import all as _all
from irgrad.numpy.shape import concatenate, swapaxes, transpose
from irgrad.numpy.support import api, lift
from irgrad.numpy.trigonometric import arccos, arcsin, arctan, arctan2
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.tracer import Tracer

acos, asin, atan, atan2 = arccos, arcsin, arctan, arctan2
acosh, asinh, atanh = arccosh, arcsinh, arctanh
pow = power  # noqa: A001
bitwise_invert, bitwise_left_shift, bitwise_right_shift = bitwise_not, left_shift, right_shift
concat, permute_dims = concatenate, transpose


@api
def matrix_transpose(x: Any) -> Tracer:
    """The last two axes swapped (numpy 2's `matrix_transpose`, `x.mT`)."""
    t = lift(x)
    if t.ndim < 2:
        raise ShapeError(f"matrix_transpose: needs at least 2 dimensions, got shape {t.shape}{user_site()}")
    return swapaxes(t, -1, -2)


@api
def array_equiv(a1: Any, a2: Any) -> Tracer:
    """Whether the two broadcast to one shape and are equal there (False, not an error, when
    the shapes do not broadcast), as numpy's."""
    x, y = lift(a1), lift(a2)
    try:
        bx, by = broadcast_arrays(x, y)
    except ShapeError:
        return lift(False)
    return _all(bx == by)


__all__ = [
    "acos", "acosh", "array_equiv", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_invert",
    "bitwise_left_shift", "bitwise_right_shift", "concat", "matrix_transpose", "permute_dims", "pow",
]
