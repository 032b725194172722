"""numpy's `where=` and `initial=` keywords of the reductions (sum, prod, max, min, mean, var,
std, all, any and their nan-variants), as JAX gives them.

- `where=` (a bool array broadcastable to the operand's shape) keeps the elements where it is
  true: the others are replaced by the reduction's identity before reducing (0 for sum, 1 for
  prod, false/true for any/all, -inf/+inf or the integer limits for max/min) and left out of
  the counts of mean, var and std (NaN for a slice with nothing selected, as numpy). Their
  gradient is 0.
- `initial=` (a scalar) joins every slice: added for sum, multiplied for prod, the max/min
  with it for max/min; a max/min over no elements (or nothing selected) is then `initial`.
  max/min with `where=` need `initial=`, as in numpy and JAX (there is no identity to fall
  back on for an all-false slice).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.broadcasting import broadcast_to, is_scalar, lift
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.tracer import Tracer, full


def selection(op_name: str, t: Tracer, where: Any) -> Tracer | None:
    """`where` as a bool array of `t`'s shape, None where it is None."""
    if where is None:
        return None
    w = lift(where)
    if w.dtype != dtypes.bool_:
        raise TypeError(f"{op_name}: where= must be a bool array, got dtype {w.dtype}{user_site()}")
    try:
        shape = np.broadcast_shapes(w.shape, t.shape)
    except ValueError:
        shape = None
    if shape != t.shape:
        raise ShapeError(
            f"{op_name}: where= of shape {w.shape} does not broadcast to the operand's shape {t.shape}{user_site()}"
        )
    return broadcast_to(w, t.shape)


def masked(t: Tracer, mask: Tracer | None, fill: bool | int | float) -> Tracer:
    """`t` where `mask` is true, `fill` elsewhere (`t` itself without a mask)."""
    if mask is None:
        return t
    return lax.select(mask, t, full(t.shape, fill, t.dtype))


def lowest(d: np.dtype) -> bool | int | float:
    """The identity of max over dtype `d`: -inf, the smallest integer, False."""
    if dtypes.is_float(d):
        return float("-inf")
    return False if d == dtypes.bool_ else int(np.iinfo(d).min)


def highest(d: np.dtype) -> bool | int | float:
    """The identity of min over dtype `d`: +inf, the largest integer, True."""
    if dtypes.is_float(d):
        return float("inf")
    return True if d == dtypes.bool_ else int(np.iinfo(d).max)


def check_initial(op_name: str, initial: Any) -> None:
    if initial is not None and not (is_scalar(initial) or np.ndim(initial) == 0):
        raise ValueError(f"{op_name}: initial= must be a scalar, got shape {np.shape(initial)}{user_site()}")


def require_initial(op_name: str, where: Any, initial: Any) -> None:
    """max/min: a where= mask needs an initial= value (numpy's and JAX's error)."""
    if where is not None and initial is None:
        raise ValueError(
            f"{op_name}: reduction operation '{op_name}' does not have an identity, so to use a "
            f"where mask one has to specify 'initial'{user_site()}"
        )


def with_initial(r: Tracer, initial: Any, combine: Any) -> Tracer:
    """`combine(r, initial)` in `r`'s dtype, or `r` itself where `initial` is None."""
    if initial is None:
        return r
    value = full(r.shape, initial, r.dtype) if is_scalar(initial) else broadcast_to(lift(initial, r.dtype), r.shape)
    return combine(r, value)
