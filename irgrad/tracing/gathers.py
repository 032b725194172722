"""numpy's `take_along_axis` on the tracing core: one `nn.gather` on the flattened array, the
indices wrapped (negative ones count from the end) and clamped into range first.

Why here: the reference loops a pass traces (irgrad/tracing/reference_loops.py) pick pivot
rows and sort columns with it; irgrad/numpy/shape.py's `ig.take_along_axis` and `ig.take`
build on these (`index_array` checks the indices' dtype).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.broadcasting import broadcast_shapes, broadcast_to, lift, normalize_axes
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.tracing.tracer import Tracer, full


def index_array(op_name: str, indices: Any) -> Tracer:
    """`indices` as a tracer of an integer dtype (bool and float are refused)."""
    idx = lift(indices)
    if idx.dtype not in dtypes.INTS:
        if idx.dtype == dtypes.bool_ or dtypes.is_float(idx.dtype):
            raise DTypeError(f"{op_name}: indices must be integers, got {idx.dtype}{user_site()}")
    return idx


def take_along_axis(x: Any, indices: Any, axis: int) -> Tracer:
    """numpy's take_along_axis, built as one gather on the flattened array."""
    t = lift(x)
    idx = index_array("take_along_axis", indices)
    ax = normalize_axes("take_along_axis", axis, t.ndim)[0]
    if idx.ndim != t.ndim:
        raise ShapeError(
            f"take_along_axis: indices {idx.shape} and array {t.shape} need the same rank{user_site()}"
        )
    out_shape = broadcast_shapes(
        "take_along_axis",
        [d for i, d in enumerate(t.shape) if i != ax],
        [d for i, d in enumerate(idx.shape) if i != ax],
    )
    out_shape = (*out_shape[:ax], idx.shape[ax], *out_shape[ax:])
    idx = broadcast_to(idx, out_shape)
    n = t.shape[ax]
    # Wrap negative indices and clamp here, so the flat offset below stays inside its row.
    zero = full(idx.shape, 0, idx.dtype)
    size = full(idx.shape, n, idx.dtype)
    idx = lax.select(lax.compare("lt", idx, zero), lax.binary(nn.AddOp, idx, size), idx)
    idx = lax.binary(nn.MaximumOp, idx, zero)
    idx = lax.binary(nn.MinimumOp, idx, full(idx.shape, builtins.max(n - 1, 0), idx.dtype))
    # Flat index = sum over axes of coordinate * stride, with `idx` standing in on `ax`.
    src_shape = tuple(out_shape[i] if i != ax else n for i in range(t.ndim))
    t = broadcast_to(t, src_shape)
    strides = np.cumprod((*src_shape[1:], 1)[::-1])[::-1]
    flat = idx
    if strides[ax] != 1:
        flat = lax.binary(nn.MulOp, idx, full(idx.shape, int(strides[ax]), idx.dtype))
    for i in range(t.ndim):
        if i == ax or out_shape[i] == 1:
            continue
        coord = lax.iota(out_shape, i, idx.dtype)
        flat = lax.binary(nn.AddOp, flat, lax.binary(nn.MulOp, coord, full(idx.shape, int(strides[i]), idx.dtype)))
    return lax.gather(lax.reshape(t, (t.size,)), flat, 0)
