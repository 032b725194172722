"""Binning with numpy's names: digitize bincount histogram.

Composites of searchsorted and scatter_add, with no op or derivative rule of their own. They
differentiate in `weights` (and histogram's auto-range edges in `a`, through min/max); counts
and digitize's indices are integers, with no gradient.

Differs from numpy:
- bincount: on a concrete (numpy) `x` the length is max(x) + 1 (at least `minlength`) and
  negative values raise ValueError, as numpy; a traced `x` needs a static `length=` (minlength
  is then ignored, as JAX), negative values count in bin 0 (JAX's clip), values >= length are
  dropped.
- histogram returns int32 counts without weights (numpy int64; JAX float), the weights' dtype
  with them, float with density; its edges are float (numpy keeps integer edge arrays). Bins
  are an int (with `range`, or the data's min/max: traced) or an array of edges (checked to
  increase when concrete); values outside the edges are ignored, the last bin is closed.
- digitize decides between increasing and decreasing bins in the graph (bins[-1] >= bins[0]),
  as JAX; concrete bins are checked to be monotonic, as numpy.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, lift, result_dtype, shape_of
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.numpy.arrays import _int, linspace
from irgrad.numpy.reductions import searchsorted
from irgrad.numpy.statistics_support import _float_dtype, _is_concrete, _slice_axis

__all__ = ["bincount", "digitize", "histogram"]


@api
def _digitize(x: Any, bins: Any, right: bool) -> Tracer:
    d = result_dtype(x, bins)
    xt, b = lift(x, d), lift(bins, d)
    if b.ndim != 1:
        raise ValueError(f"digitize: bins must be 1-D, got shape {b.shape}{user_site()}")
    n = b.shape[0]
    if n == 0:
        return full(xt.shape, 0, dtypes.int32)
    side = "left" if right else "right"
    increasing = searchsorted(b, xt, side=side)
    decreasing = n - searchsorted(_reverse(b), xt, side=side)
    first, last = lax.reshape(_slice_axis(b, 0, 0, 1), ()), lax.reshape(_slice_axis(b, 0, n - 1, n), ())
    return np_api.where(last >= first, increasing, decreasing)


def _reverse(v: Tracer) -> Tracer:
    n = v.shape[0]
    return lax.gather(v, lift(np.arange(n - 1, -1, -1, dtype=np.int32)), 0)


def digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """The index of the bin each x falls in (int32, x's shape), as numpy: for increasing bins,
    i with bins[i-1] <= x < bins[i] (bins[i-1] < x <= bins[i] with right=True); decreasing bins
    are read from the other end. NaN goes past the last bin."""
    if _is_concrete(bins):
        b = np.asarray(bins)
        if b.ndim == 1 and b.size > 1 and b.dtype.kind in "biuf":
            steps = np.diff(b.astype(np.float64))
            if not (np.all(steps >= 0) or np.all(steps <= 0)):
                raise ValueError(f"digitize: bins must be monotonically increasing or decreasing{user_site()}")
    return _digitize(x, bins, bool(right))


@api
def _bincount(x: Any, weights: Any, length: int) -> Tracer:
    xt = lift(x)
    if dtypes.is_float(xt.dtype):
        raise DTypeError(f"bincount: x must be integers, got {xt.dtype}{user_site()}")
    if xt.ndim != 1:
        raise ShapeError(f"bincount: x must be 1-D, got shape {xt.shape}{user_site()}")
    if xt.dtype == dtypes.bool_:
        xt = lax.convert(xt, dtypes.int32)
    if weights is None:
        w = full(xt.shape, 1, dtypes.int32)
    else:
        w = lift(weights)
        if w.dtype == dtypes.bool_:
            w = lax.convert(w, dtypes.int32)
        if w.shape != xt.shape:
            raise ShapeError(f"bincount: weights {w.shape} must have the shape of x {xt.shape}{user_site()}")
    return _scatter_counts(np_api.maximum(xt, 0), w, length)


def _scatter_counts(idx: Tracer, w: Tracer, length: int) -> Tracer:
    """Sums of w by idx into `length` bins; indices outside [0, length) are dropped."""
    if length == 0:
        return full((0,), 0, w.dtype)
    valid = (idx >= 0) & (idx < length)
    where_idx = lax.convert(np_api.where(valid, idx, 0), dtypes.int32)
    updates = np_api.where(valid, w, full(w.shape, 0, w.dtype))
    return lax.scatter_add(full((length,), 0, w.dtype), where_idx, updates, 0)


def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None) -> Any:
    """How many times each value 0, 1, ... occurs in the 1-D non-negative integer array x
    (int32), or the sum of `weights` (their dtype) per value. The output length is max(x) + 1,
    at least `minlength`, when x is concrete; a traced x needs a static `length=` (values past
    it are dropped, negative ones count as 0, as JAX)."""
    minlength = _int("bincount", "minlength", minlength)
    if minlength < 0:
        raise ValueError(f"bincount: minlength must not be negative, got {minlength}{user_site()}")
    if _is_concrete(x):
        xs = np.asarray(x)
        if xs.dtype.kind not in "biu":
            raise DTypeError(f"bincount: x must be integers, got {xs.dtype}{user_site()}")
        if xs.ndim != 1:
            raise ShapeError(f"bincount: x must be 1-D, got shape {xs.shape}{user_site()}")
        if xs.dtype.kind in "iu" and xs.size and xs.min() < 0:
            raise ValueError(f"bincount: x must be non-negative, got the value {xs.min()}{user_site()}")
        if length is None:
            length = builtins.max(int(xs.max()) + 1 if xs.size else 0, minlength)
    if length is None:
        raise ShapeError(
            "bincount: the output length depends on the values of a traced x; pass a static "
            f"length= (as jax.numpy.bincount under jit){user_site()}"
        )
    length = _int("bincount", "length", length)
    if length < 0:
        raise ValueError(f"bincount: length must not be negative, got {length}{user_site()}")
    return _bincount(x, weights, length)


@api
def _histogram(a: Any, bins: Any, range_: Any, density: bool, weights: Any) -> Any:
    t = lift(a)
    t = lax.reshape(t, (t.size,))
    d = _float_dtype(t) if isinstance(bins, (int, np.integer)) else _float_dtype(t, bins)
    t = lax.convert(t, d) if t.dtype != d else t
    if isinstance(bins, (int, np.integer)):
        nb = int(bins)
        if range_ is not None:
            lo, hi = (lift(v, d) for v in range_)
        elif t.size == 0:
            lo, hi = full((), 0.0, d), full((), 1.0, d)
        else:
            lo, hi = np_api.min(t), np_api.max(t)
        same = lo == hi
        lo, hi = np_api.where(same, lo - 0.5, lo), np_api.where(same, hi + 0.5, hi)
        edges = linspace(lo, hi, nb + 1, dtype=d)
    else:
        edges = lift(bins, d)
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(f"histogram: bins must be an int or a 1-D array of at least 2 edges, got shape {edges.shape}{user_site()}")
        nb = edges.shape[0] - 1
    if weights is None:
        w = full(t.shape, 1, dtypes.int32)
    else:
        w = lift(weights)
        if w.shape != tuple(shape_of(a)):
            raise ShapeError(f"histogram: weights {w.shape} must have the shape of a {tuple(shape_of(a))}{user_site()}")
        w = lax.reshape(w, (w.size,))
        if w.dtype == dtypes.bool_:
            w = lax.convert(w, dtypes.int32)
    idx = searchsorted(edges, t, side="right") - 1
    last = lax.reshape(_slice_axis(edges, 0, nb, nb + 1), ())
    idx = np_api.where(t == last, nb - 1, idx)  # the last bin is closed
    counts = _scatter_counts(idx, w, nb)
    if density:
        c = counts if dtypes.is_float(counts.dtype) else lax.convert(counts, d)
        widths = _slice_axis(edges, 0, 1, nb + 1) - _slice_axis(edges, 0, 0, nb)
        counts = c / widths / np_api.sum(c)
    return counts, edges


def histogram(a: Any, bins: Any = 10, range: tuple[Any, Any] | None = None, density: bool | None = None,  # noqa: A002
              weights: Any = None) -> Any:  # fmt: skip
    """numpy's histogram of the flattened `a`: (counts, edges). `bins` is a number of equal bins
    over `range` (default: the data's min and max, traced) or a 1-D array of increasing edges.
    Values outside the edges are ignored; the last bin includes its right edge. Counts are
    int32 (the weights' dtype with `weights`); `density=True` divides by the total and the bin
    widths."""
    if isinstance(bins, str):
        raise NotImplementedError(f"histogram: bin estimators such as {bins!r} are not supported{user_site()}")
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError(f"histogram: `bins` must be positive, got {bins}{user_site()}")
    elif _is_concrete(bins):
        b = np.asarray(bins)
        if b.ndim == 1 and b.dtype.kind in "biuf" and np.any(b[:-1] > b[1:]):
            raise ValueError(f"histogram: bins must increase monotonically, when an array{user_site()}")
    if range is not None:
        if len(range) != 2:
            raise ValueError(f"histogram: range must be a pair (min, max), got {range!r}{user_site()}")
        if all(_is_concrete(v) for v in range):
            lo, hi = (float(np.asarray(v)) for v in range)
            if lo > hi:
                raise ValueError(f"histogram: max must be larger than min in range parameter, got {range!r}{user_site()}")
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise ValueError(f"histogram: supplied range of [{lo}, {hi}] is not finite{user_site()}")
        range = tuple(range)
    return _histogram(a, bins, range, bool(density), weights)
