"""What the statistics modules share (nan_reductions, order_statistics, differences,
histograms, polynomials, selection): the axis type and one-axis check, `out=` rejection (arrays
are immutable), the float result dtype (integers become float32, as JAX), kept shapes, slices
along one axis and broadcasts of kept dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy.support import result_dtype
from irgrad.tracing.tracer import Tracer
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.numpy.arrays import _one_axis as arrays_one_axis


Axis = int | Sequence[int] | None


def _no_out(op_name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"{op_name}: out= is not supported (arrays are immutable){user_site()}")


def _one_axis(op_name: str, axis: Any, ndim: int) -> int:
    if ndim == 0 and isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        raise ShapeError(f"{op_name}: axis {axis} is out of range for a scalar{user_site()}")
    return arrays_one_axis(op_name, axis, ndim)


def _float_dtype(*xs: Any) -> np.dtype:
    d = result_dtype(*xs)
    return d if dtypes.is_float(d) else dtypes.float32


def _kept_shape(shape: tuple[int, ...], axes: list[int], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _slice_axis(t: Tracer, axis: int, start: int, stop: int) -> Tracer:
    begin, end = [0] * t.ndim, list(t.shape)
    begin[axis], end[axis] = start, stop
    return lax.slice(t, begin, end, [1] * t.ndim)


def _bcast(t: Tracer, shape: tuple[int, ...]) -> Tracer:
    """`t` (same rank, size-1 axes) broadcast to `shape`."""
    return t if t.shape == tuple(shape) else lax.broadcast_in_dim(t, shape, list(range(t.ndim)))


def _is_concrete(x: Any) -> bool:
    return not isinstance(x, Tracer)
