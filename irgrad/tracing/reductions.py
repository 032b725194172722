"""The reductions with numpy's semantics that the tracing core's numpy-style code needs:
`all` / `any` of a bool reduction (`bool_reduce`) and the first index of an extreme
(`arg_extreme`, `argmax`), on `nn` reduce ops.

Why here: the reference loops a pass traces (irgrad/tracing/reference_loops.py) pivot with
argmax and test finiteness with all; irgrad/numpy/numerics.py builds ig.all, ig.any, ig.argmax
and ig.argmin on these. argmax and argmin have integer results: no gradient flows through them.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.broadcasting import lift, normalize_axes
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.tracer import Tracer, full

Axis = int | Sequence[int] | None


def as_bool(x: Any) -> Tracer:
    t = lift(x)
    return t if t.dtype == dtypes.bool_ else lax.compare("ne", t, full(t.shape, 0, t.dtype))


def reduced_shape(shape: tuple[int, ...], axes: list[int], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def bool_reduce(op_name: str, op_class: type[nn.ReduceOp], over_nothing: bool, x: Any, axis: Axis,
                keepdims: bool) -> Tracer:  # fmt: skip
    """all (min) / any (max) of `x != 0` along `axis`; `over_nothing` for an empty reduction."""
    t = as_bool(x)
    axes = normalize_axes(op_name, axis, t.ndim)
    if builtins.any(t.shape[a] == 0 for a in axes):
        return full(reduced_shape(t.shape, axes, keepdims), over_nothing, dtypes.bool_)
    r = lax.reduce(op_class, lax.convert(t, dtypes.int32), axes, keepdims)
    return lax.compare("ne", r, full(r.shape, 0, dtypes.int32))


def all(x: Any, axis: Axis = None, keepdims: bool = False) -> Tracer:  # noqa: A001 (numpy's name)
    """Whether every element (along `axis`) is true (nonzero); true over no elements."""
    return bool_reduce("all", nn.ReduceMinOp, True, x, axis, keepdims)


def arg_extreme(op_name: str, op_class: type[nn.ReduceOp], x: Any, axis: int | None, keepdims: bool) -> Tracer:
    """The first index of the extreme along `axis` (of the flattened array for None), int32; a
    NaN counts as the extreme, as in numpy: max/min propagate it, and the first NaN wins."""
    t = lift(x)
    if axis is None:
        flat = lax.reshape(t, (t.size,))
        r = arg_extreme(op_name, op_class, flat, 0, False)
        return lax.reshape(r, (1,) * t.ndim) if keepdims else r
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ShapeError(f"{op_name}: axis must be an int or None, got {axis!r}{user_site()}")
    (ax,) = normalize_axes(op_name, axis, t.ndim)
    n = t.shape[ax]
    if n == 0:
        raise ShapeError(
            f"{op_name}: attempt to get {op_name} of an empty sequence (axis {ax} of shape {t.shape}){user_site()}"
        )
    if n >= 2**31:
        raise ShapeError(f"{op_name}: axis {ax} of shape {t.shape} is too long for int32 indices{user_site()}")
    extreme = lax.reduce(op_class, t, [ax], True)
    hit = lax.compare("eq", t, lax.broadcast_in_dim(extreme, t.shape, list(range(t.ndim))))
    if dtypes.is_float(t.dtype):
        hit = lax.binary(nn.OrOp, hit, lax.compare("ne", t, t))
    position = lax.iota(t.shape, ax, dtypes.int32)
    candidates = lax.select(hit, position, full(t.shape, n, dtypes.int32))
    return lax.reduce(nn.ReduceMinOp, candidates, [ax], keepdims)


def argmax(x: Any, axis: int | None = None, keepdims: bool = False) -> Tracer:
    """Index of the first maximum along `axis` (of the flattened array for None), int32."""
    return arg_extreme("argmax", nn.ReduceMaxOp, x, axis, keepdims)
