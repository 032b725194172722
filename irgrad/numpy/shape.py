"""Shape functions with numpy names: reshape, transpose, broadcast_to, concatenate, pad, take ...

`take_along_axis` is the tracing core's (irgrad/tracing/gathers.py), made public and eager here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, gathers, primitives as lax
from irgrad.numpy import basic as np_api, support
from irgrad.numpy.support import api, lift, normalize_axes
from irgrad.tracing.tracer import Tracer
from irgrad.tracing.errors import ShapeError, user_site


def _resolve_shape(op_name: str, size: int, shape: Sequence[int]) -> tuple[int, ...]:
    shape = [int(d) for d in shape]
    if any(d < -1 for d in shape):
        raise ShapeError(f"{op_name}: negative dimension in {tuple(shape)} (only one -1, to infer){user_site()}")
    if shape.count(-1) > 1:
        raise ShapeError(f"{op_name}: can only infer one dimension, got {tuple(shape)}{user_site()}")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ShapeError(f"{op_name}: cannot reshape {size} elements into {tuple(shape)}{user_site()}")
        shape[shape.index(-1)] = size // known
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ShapeError(f"{op_name}: cannot reshape {size} elements into {tuple(shape)}{user_site()}")
    return tuple(shape)


@api
def reshape(x: Any, shape: int | Sequence[int]) -> Tracer:
    t = lift(x)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    new_shape = _resolve_shape("reshape", t.size, shape)
    if new_shape != t.shape and t.size != int(np.prod(new_shape, dtype=np.int64)):
        raise ShapeError(f"reshape: cannot reshape {t.shape} into {new_shape}{user_site()}")
    return lax.reshape(t, new_shape)


@api
def transpose(x: Any, axes: Sequence[int] | None = None) -> Tracer:
    t = lift(x)
    if axes is None:
        perm = list(range(t.ndim))[::-1]
    else:
        perm = [normalize_axes("transpose", a, t.ndim)[0] for a in axes]
        if sorted(perm) != list(range(t.ndim)):
            raise ShapeError(f"transpose: axes {tuple(axes)} are not a permutation for shape {t.shape}{user_site()}")
    return lax.transpose(t, perm)


@api
def swapaxes(x: Any, axis1: int, axis2: int) -> Tracer:
    t = lift(x)
    perm = list(range(t.ndim))
    a, b = (normalize_axes("swapaxes", axis, t.ndim)[0] for axis in (axis1, axis2))
    perm[a], perm[b] = perm[b], perm[a]
    return lax.transpose(t, perm)


@api
def broadcast_to(x: Any, shape: Sequence[int]) -> Tracer:
    return support.broadcast_to(lift(x), tuple(int(d) for d in shape))


@api
def expand_dims(x: Any, axis: int | Sequence[int]) -> Tracer:
    t = lift(x)
    count = 1 if isinstance(axis, (int, np.integer)) else len(axis)
    axes = normalize_axes("expand_dims", axis, t.ndim + count)
    shape = list(t.shape)
    for a in axes:
        shape.insert(a, 1)
    return lax.reshape(t, shape)


@api
def squeeze(x: Any, axis: int | Sequence[int] | None = None) -> Tracer:
    t = lift(x)
    if axis is None:
        axes = [i for i, d in enumerate(t.shape) if d == 1]
    else:
        axes = normalize_axes("squeeze", axis, t.ndim)
        for a in axes:
            if t.shape[a] != 1:
                raise ShapeError(f"squeeze: axis {a} of shape {t.shape} is not 1{user_site()}")
    return lax.reshape(t, [d for i, d in enumerate(t.shape) if i not in axes])


@api
def concatenate(arrays: Sequence[Any], axis: int = 0) -> Tracer:
    if len(arrays) == 0:
        raise ShapeError(f"concatenate: needs at least one array{user_site()}")
    d = support.result_dtype(*[a for a in arrays if not support.is_scalar(a)])
    ts = [lift(a, d) for a in arrays]
    ndim = ts[0].ndim
    if ndim == 0:
        raise ShapeError(f"concatenate: zero-dimensional arrays cannot be concatenated{user_site()}")
    ax = normalize_axes("concatenate", axis, ndim)[0]
    for t in ts[1:]:
        if t.ndim != ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, ts[0].shape)) if i != ax):
            raise ShapeError(
                f"concatenate: shapes {', '.join(str(u.shape) for u in ts)} differ outside axis {ax}{user_site()}"
            )
    return lax.concatenate(ts, ax)


@api
def stack(arrays: Sequence[Any], axis: int = 0) -> Tracer:
    ts = [lift(a) for a in arrays]
    if not ts:
        raise ShapeError(f"stack: needs at least one array{user_site()}")
    ax = normalize_axes("stack", axis, ts[0].ndim + 1)[0]
    return concatenate([expand_dims(t, ax) for t in ts], axis=ax)


@api
def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Tracer:
    """numpy's pad in "constant" mode: pad_width is an int, a (before, after) pair, or one per axis."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode {mode!r}; only 'constant' is supported")
    t = lift(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (t.ndim, 2))
    if (widths < 0).any():
        raise ShapeError(f"pad: negative pad widths {pad_width}{user_site()}")
    value = lift(constant_values, t.dtype)
    if value.shape != ():
        raise ShapeError(f"pad: constant_values must be a scalar{user_site()}")
    return lax.pad(t, value, widths[:, 0].tolist(), widths[:, 1].tolist())


@api
def take(x: Any, indices: Any, axis: int | None = None, mode: str | None = None, fill_value: Any = None) -> Tracer:
    """numpy's take: negative indices count from the end. Out-of-range indices, by `mode`:
    "clip" (the default, and irgrad's choice: the nearest end; numpy raises, and JAX's default
    is "fill"), "fill" (JAX's: `fill_value`, default NaN for floats, the lowest integer, True
    for bool; indices in [-n, n) are in range) or "wrap" (modulo n)."""
    t = lift(x)
    if axis is None:
        t = lax.reshape(t, (t.size,))
        axis = 0
    ax = normalize_axes("take", axis, t.ndim)[0]
    idx = gathers.index_array("take", indices)
    if mode in (None, "clip"):
        return lax.gather(t, idx, ax)
    n = t.shape[ax]
    if mode == "wrap":
        return lax.gather(t, idx % n if n else idx, ax)
    if mode != "fill":
        raise ValueError(f"take: mode must be 'clip', 'fill' or 'wrap', got {mode!r}{user_site()}")
    picked = lax.gather(t, idx, ax)
    inside = (idx >= -n) & (idx < n)
    inside = lax.reshape(inside, (1,) * ax + idx.shape + (1,) * (t.ndim - ax - 1))
    if fill_value is None:
        fill_value = _default_fill(t.dtype)
    return np_api.where(inside, picked, lift(fill_value, t.dtype))


def _default_fill(dtype: np.dtype) -> Any:
    if dtypes.is_float(dtype):
        return float("nan")
    if dtype == np.bool_:
        return True
    return int(np.iinfo(dtype).min)


@api
def take_along_axis(x: Any, indices: Any, axis: int) -> Tracer:
    """numpy's take_along_axis, built as one gather on the flattened array."""
    return gathers.take_along_axis(x, indices, axis)
