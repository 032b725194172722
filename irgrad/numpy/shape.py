"""Shape functions with numpy names: reshape, transpose, broadcast_to, concatenate, pad, take ...

`take_along_axis` is the tracing core's (irgrad/tracing/gathers.py), made public and eager here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, gathers, primitives as lax
from irgrad.numpy import basic as np_api, support
from irgrad.numpy.support import api, broadcast_to, lift, normalize_axes
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
def reshape(x: Any, shape: int | Sequence[int], order: str = "C") -> Tracer:
    """numpy's reshape. order="F" reads and writes the elements with the first index changing
    fastest: the reversed-axes view reshaped to the reversed shape, reversed back."""
    t = lift(x)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    new_shape = _resolve_shape("reshape", t.size, shape)
    if new_shape != t.shape and t.size != int(np.prod(new_shape, dtype=np.int64)):
        raise ShapeError(f"reshape: cannot reshape {t.shape} into {new_shape}{user_site()}")
    if order == "F":
        reverse = lambda u: lax.transpose(u, list(range(u.ndim))[::-1]) if u.ndim > 1 else u
        return reverse(lax.reshape(reverse(t), new_shape[::-1]))
    if order != "C":
        raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}{user_site()}")
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
def broadcast_to(x: Any, shape: int | Sequence[int]) -> Tracer:
    """x broadcast to `shape` (an int for a 1-D shape, as numpy's)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
    return support.broadcast_to(lift(x), tuple(int(d) for d in shape))


def _static_axes(axis: Any) -> Any:
    """0-d integer numpy arrays among the axes as ints, as numpy and jax.numpy take them
    (`operator.index`): `expand_dims(x, np.array(0))`, `squeeze(x, (np.array(1),))`."""
    if isinstance(axis, np.ndarray) and axis.ndim == 0 and axis.dtype.kind in "iu":
        return int(axis)
    if isinstance(axis, (tuple, list)):
        return tuple(_static_axes(a) for a in axis)
    return axis


@api
def expand_dims(x: Any, axis: int | Sequence[int]) -> Tracer:
    t = lift(x)
    axis = _static_axes(axis)
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
        axes = normalize_axes("squeeze", _static_axes(axis), t.ndim)
        for a in axes:
            if t.shape[a] != 1:
                raise ShapeError(f"squeeze: axis {a} of shape {t.shape} is not 1{user_site()}")
    return lax.reshape(t, [d for i, d in enumerate(t.shape) if i not in axes])


@api
def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Tracer:
    """numpy's concatenate: axis=None joins the flattened arrays; `dtype` is the result's
    (the inputs cast to it, as jax.numpy's, numpy's with casting="unsafe")."""
    if len(arrays) == 0:
        raise ShapeError(f"concatenate: needs at least one array{user_site()}")
    d = support.result_dtype(*[a for a in arrays if not support.is_scalar(a)])
    ts = [lift(a, d) for a in arrays]
    if dtype is not None:
        ts = [lax.convert(t, dtypes.canonical(dtype)) for t in ts]
    if axis is None:
        ts, axis = [lax.reshape(t, (t.size,)) for t in ts], 0
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
def stack(arrays: Sequence[Any], axis: int = 0, dtype: Any = None) -> Tracer:
    """The arrays joined along a new axis; `dtype` as in concatenate."""
    ts = [lift(a) for a in arrays]
    if not ts:
        raise ShapeError(f"stack: needs at least one array{user_site()}")
    ax = normalize_axes("stack", axis, ts[0].ndim + 1)[0]
    return concatenate([expand_dims(t, ax) for t in ts], axis=ax, dtype=dtype)


@api
def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0, *,
        end_values: Any = 0, reflect_type: str = "even") -> Tracer:  # fmt: skip
    """numpy's pad: pad_width is an int, a (before, after) pair, or one per axis. Modes:
    "constant" (and "empty", filled with 0 here), "edge", "reflect", "symmetric", "wrap"
    (gathers of the elements numpy copies: the gradient adds up over the copies),
    "maximum", "minimum", "mean" (of the whole axis; no stat_length) and "linear_ramp"
    (towards `end_values`). Axes are padded in order, as numpy does, so corners agree."""
    t = lift(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (t.ndim, 2))
    if (widths < 0).any():
        raise ShapeError(f"pad: negative pad widths {pad_width}{user_site()}")
    if mode == "empty":
        mode = "constant"
    if mode != "constant":
        return _pad_by_axis(t, widths, mode, end_values, reflect_type)
    value = lift(constant_values, t.dtype)
    if value.shape != ():
        raise ShapeError(f"pad: constant_values must be a scalar{user_site()}")
    return lax.pad(t, value, widths[:, 0].tolist(), widths[:, 1].tolist())


_COPY_MODES = ("edge", "reflect", "symmetric", "wrap")
_STAT_MODES = {"maximum": "max", "minimum": "min", "mean": "mean"}


def _pad_by_axis(t: Tracer, widths: np.ndarray, mode: str, end_values: Any, reflect_type: str) -> Tracer:
    if mode not in (*_COPY_MODES, *_STAT_MODES, "linear_ramp"):
        raise ValueError(
            f"pad: mode {mode!r} is not one of 'constant', 'empty', 'edge', 'reflect', 'symmetric', "
            f"'wrap', 'maximum', 'minimum', 'mean', 'linear_ramp'{user_site()}"
        )
    if reflect_type != "even":
        raise NotImplementedError(f"pad: reflect_type={reflect_type!r}; only 'even' is supported{user_site()}")
    ends = np.broadcast_to(np.asarray(end_values, dtype=np.float64), (t.ndim, 2))
    for axis, (before, after) in enumerate(widths.tolist()):
        if not before and not after:
            continue
        n = t.shape[axis]
        if n == 0:
            raise ShapeError(f"pad: can't extend empty axis {axis} using mode {mode!r}{user_site()}")
        if mode in _COPY_MODES:
            # numpy's own pad of the positions says which element each new place copies.
            source = np.pad(np.arange(n), (before, after), mode=mode).astype(np.int32)
            t = take(t, source, axis=axis)
            continue
        pieces = []
        if mode in _STAT_MODES:
            stat = getattr(np_api, _STAT_MODES[mode])(t, axis=axis, keepdims=True)
            if mode == "mean" and not dtypes.is_float(t.dtype):
                stat = lax.convert(_half_to_even(stat), t.dtype)  # numpy rounds an integer mean
            edges = (stat, stat)
        else:
            edges = (_axis_slice(t, axis, 0, 1), _axis_slice(t, axis, n - 1, n))
        for side, width in ((0, before), (1, after)):
            if not width:
                pieces.append(None)
                continue
            edge = edges[side]
            shape = list(t.shape)
            shape[axis] = width
            if mode == "linear_ramp":
                # From end_value (outermost) to the edge element, excluding the edge itself.
                steps = np.arange(width, dtype=np.float64) / width
                if side == 1:
                    steps = steps[::-1]
                ramp_shape = [1] * t.ndim
                ramp_shape[axis] = width
                weight = lift(steps.reshape(ramp_shape), t.dtype if dtypes.is_float(t.dtype) else dtypes.float64)
                edge_f = edge if dtypes.is_float(t.dtype) else lax.convert(edge, dtypes.float64)
                ramp = float(ends[axis, side]) + (edge_f - float(ends[axis, side])) * weight
                piece = ramp if dtypes.is_float(t.dtype) else lax.convert(np_api.floor(ramp), t.dtype)  # numpy floors an integer ramp
                pieces.append(broadcast_to(piece, tuple(shape)))
            else:
                pieces.append(broadcast_to(edge, tuple(shape)))
        parts = [p for p in (pieces[0], t, pieces[1]) if p is not None]
        t = lax.concatenate(parts, axis)
    return t


def _half_to_even(x: Tracer) -> Tracer:
    """x rounded to the nearest integer, ties to even (np.around; rounding.rint is above here)."""
    r = np_api.floor(x + 0.5)
    tie_to_odd = (r - x == 0.5) & (np_api.floor(r * 0.5) * 2.0 != r)
    return np_api.where(tie_to_odd, r - 1.0, r)


def _axis_slice(t: Tracer, axis: int, start: int, stop: int) -> Tracer:
    begin, end = [0] * t.ndim, list(t.shape)
    begin[axis], end[axis] = start, stop
    return lax.slice(t, begin, end, [1] * t.ndim)


@api
def take(x: Any, indices: Any, axis: int | None = None, mode: str | None = None, fill_value: Any = None) -> Tracer:
    """numpy's take. By `mode`: None (the default, irgrad's choice): negative indices count
    from the end and indices still out of range are clamped to the nearest end (numpy raises,
    and JAX's default is "fill"); "clip" (numpy's and JAX's): every index clipped to
    [0, n - 1], so a negative one takes element 0, it does not count from the end; "fill"
    (JAX's: `fill_value`, default NaN for floats, the lowest integer, True for bool; indices in
    [-n, n) are in range, negative ones counting from the end) or "wrap" (modulo n)."""
    t = lift(x)
    if axis is None:
        t = lax.reshape(t, (t.size,))
        axis = 0
    ax = normalize_axes("take", axis, t.ndim)[0]
    idx = gathers.index_array("take", indices)
    if mode is None:
        return lax.gather(t, idx, ax)  # nn.gather: negatives from the end, then clamped
    if mode == "clip":
        return lax.gather(t, np_api.maximum(idx, 0), ax)  # nn.gather clamps the top end
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
def take_along_axis(x: Any, indices: Any, axis: int | None) -> Tracer:
    """numpy's take_along_axis, built as one gather on the flattened array; axis=None takes
    1-D indices into the flattened array (numpy's)."""
    if axis is None:
        t = lift(x)
        return gathers.take_along_axis(lax.reshape(t, (t.size,)), indices, 0)
    return gathers.take_along_axis(x, indices, axis)
