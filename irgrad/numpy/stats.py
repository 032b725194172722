"""NaN-ignoring reductions, quantiles and numerical statistics with numpy's names: nansum
nanmean nanmax nanmin nanprod nanvar nanstd nanargmax nanargmin nancumsum nancumprod nanmedian
nanpercentile nanquantile; percentile quantile; ptp diff ediff1d trapezoid gradient; digitize
bincount histogram; select polyval vander.

All are composites of existing irgrad functions (where, sum, max, argsort, take_along_axis,
searchsorted, cumprod, scatter_add, ...): no op and no derivative rule of their own, so
autodiff, vmap, jit and every backend cover them. numpy's signatures, JAX's dtypes: integer
results are int32, float-only functions (nanmean, nanvar, nanstd, the quantiles, trapezoid,
gradient, polyval) turn integer inputs into float32, Python scalars are weak.

Derivatives where they need deciding (docs/autodiff.md, Contracts): NaN entries get gradient 0,
never NaN, in every nan-function (the "double where"); quantiles differentiate as the gathers of
the order statistics they read; ties share the cotangent as reduce_max's rule does.
Where results differ from numpy (nanargmax of an all-NaN slice is -1, as JAX; a traced
bincount needs a static `length=`; histogram's count dtype; ...), and each derivative decision:
docs/api/python.md, "irgrad/numpy/stats.py".
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax

from irgrad.numpy import basic as np_api
from irgrad.numpy.support import (
    api,
    broadcast_shapes,
    broadcast_to,
    is_scalar,
    lift,
    normalize_axes,
    require_float,
    result_dtype,
    shape_of,
)
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.numpy.numerics import (
    all as _all,
    any as _any,
    argmax as _argmax,
    argmin as _argmin,
    isnan,
)
from irgrad.numpy.arrays import _int, _one_axis as arrays_one_axis, linspace
from irgrad.numpy.math import round as _round
from irgrad.numpy.reductions import _to_last, argsort, cumprod, cumsum, prod, searchsorted
from irgrad.numpy.shape import concatenate, take_along_axis

__all__ = [
    "bincount",
    "diff",
    "digitize",
    "ediff1d",
    "gradient",
    "histogram",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nansum",
    "nanvar",
    "percentile",
    "polyval",
    "ptp",
    "quantile",
    "select",
    "trapezoid",
    "vander",
]

Axis = int | Sequence[int] | None

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")
_OTHER_NUMPY_METHODS = (
    "inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
    "hazen", "weibull", "median_unbiased", "normal_unbiased",
)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# NaN-ignoring reductions and scans
# ---------------------------------------------------------------------------------------------


def _replace_nan(t: Tracer, value: float) -> tuple[Tracer, Tracer | None]:
    """(where(isnan(t), value, t), the NaN mask), or (t, None) for an integer or bool t."""
    if not dtypes.is_float(t.dtype):
        return t, None
    mask = isnan(t)
    return np_api.where(mask, value, t), mask


@api
def nansum(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tracer:
    """The sum along `axis` with NaNs counted as 0 (0 over an all-NaN slice). Bool becomes
    int32, integers keep their dtype. NaN entries have gradient 0."""
    _no_out("nansum", out)
    t, _ = _replace_nan(lift(a), 0.0)
    return np_api.sum(t, axis=normalize_axes("nansum", axis, t.ndim), keepdims=keepdims, dtype=dtype)


@api
def nanprod(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tracer:
    """The product along `axis` with NaNs counted as 1 (`prod`'s multiply tree: exact zeros,
    the product of the others as gradient at a zero). NaN entries have gradient 0."""
    _no_out("nanprod", out)
    t, _ = _replace_nan(lift(a), 1.0)
    return prod(t, axis=normalize_axes("nanprod", axis, t.ndim), dtype=dtype, keepdims=keepdims)


def _count(mask: Tracer | None, shape: tuple[int, ...], axes: list[int], keepdims: bool, d: np.dtype) -> Tracer:
    """How many non-NaN elements each slice has, as dtype d."""
    if mask is None:
        n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
        return full(_kept_shape(shape, axes, keepdims), n, d)
    kept = lax.convert(np_api.logical_not(mask), dtypes.int32)
    return lax.convert(np_api.sum(kept, axis=axes, keepdims=keepdims), d)


def _safe_divide(num: Tracer, den: Tracer, bad: Tracer) -> Tracer:
    """num / den, NaN where `bad`; the division reads 1 there, so its adjoint stays finite."""
    safe = np_api.where(bad, 1.0, den)
    return np_api.where(bad, float("nan"), num / safe)


def _nan_moments(op_name: str, a: Any, axis: Axis, dtype: Any, keepdims: bool,
                 ddof: int | None) -> Tracer:  # fmt: skip
    t = lift(a)
    if dtype is not None:
        t = lax.convert(t, dtypes.canonical(dtype))
    t = require_float(op_name, t)
    axes = normalize_axes(op_name, axis, t.ndim)
    t0, mask = _replace_nan(t, 0.0)
    count = _count(mask, t.shape, axes, True, t.dtype)
    total = np_api.sum(t0, axis=axes, keepdims=True)
    mean = _safe_divide(total, count, count == 0.0)
    if ddof is None:
        return mean if keepdims else lax.reshape(mean, _kept_shape(t.shape, axes, False))
    # Deviations read the mean of the slice (a finite stand-in where it is all NaN).
    safe_mean = np_api.where(count == 0.0, 0.0, mean)
    dev = t0 - _bcast(safe_mean, t.shape)
    if mask is not None:
        dev = np_api.where(mask, 0.0, dev)
    squares = np_api.sum(dev * dev, axis=axes, keepdims=keepdims)
    dof = _count(mask, t.shape, axes, keepdims, t.dtype) - float(ddof)
    return _safe_divide(squares, dof, dof <= 0.0)


@api
def nanmean(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tracer:
    """The mean of the non-NaN elements along `axis` (NaN for an all-NaN slice). Integers give
    float32. NaN entries have gradient 0; the others 1/count."""
    _no_out("nanmean", out)
    return _nan_moments("nanmean", a, axis, dtype, keepdims, None)


@api
def nanvar(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False) -> Tracer:  # fmt: skip
    """The variance of the non-NaN elements along `axis`, divided by count - ddof; NaN where
    that is <= 0 (numpy's rule), an all-NaN slice included. NaN entries have gradient 0."""
    _no_out("nanvar", out)
    return _nan_moments("nanvar", a, axis, dtype, keepdims, _int("nanvar", "ddof", ddof))


@api
def nanstd(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False) -> Tracer:  # fmt: skip
    """The square root of `nanvar`. Where the variance is 0 the gradient is 0 (as `std`), and
    NaN entries have gradient 0."""
    _no_out("nanstd", out)
    v = _nan_moments("nanstd", a, axis, dtype, keepdims, _int("nanstd", "ddof", ddof))
    spread = v > 0.0  # false for NaN and 0: the square root reads 1 there
    root = np_api.sqrt(np_api.where(spread, v, 1.0))
    return np_api.where(spread, root, np_api.where(v == 0.0, 0.0, float("nan")))


def _nan_extreme(op_name: str, a: Any, axis: Axis, keepdims: bool, largest: bool) -> Tracer:
    t = lift(a)
    reduce = np_api.max if largest else np_api.min
    axes = normalize_axes(op_name, axis, t.ndim)
    if not dtypes.is_float(t.dtype):
        return reduce(t, axis=axes, keepdims=keepdims)
    if any(t.shape[i] == 0 for i in axes):
        raise ShapeError(
            f"{op_name}: zero-size reduction over axes {axes} of shape {t.shape} has no identity "
            f"(numpy raises too){user_site()}"
        )
    safe, mask = _replace_nan(t, float("-inf") if largest else float("inf"))
    m = reduce(safe, axis=axes, keepdims=keepdims)
    return np_api.where(_all(mask, axis=axes, keepdims=keepdims), float("nan"), m)


@api
def nanmax(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False) -> Tracer:
    """The maximum along `axis` ignoring NaNs; NaN for an all-NaN slice. Ties share the
    cotangent equally; NaN entries get 0."""
    _no_out("nanmax", out)
    return _nan_extreme("nanmax", a, axis, keepdims, largest=True)


@api
def nanmin(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False) -> Tracer:
    """The minimum along `axis` ignoring NaNs; NaN for an all-NaN slice. Ties share the
    cotangent equally; NaN entries get 0."""
    _no_out("nanmin", out)
    return _nan_extreme("nanmin", a, axis, keepdims, largest=False)


def _nan_arg_extreme(op_name: str, a: Any, axis: int | None, keepdims: bool, largest: bool) -> Tracer:
    t = lift(a)
    if axis is not None:
        _one_axis(op_name, axis, t.ndim)
    if not dtypes.is_float(t.dtype):
        return (_argmax if largest else _argmin)(t, axis=axis, keepdims=keepdims)
    if axis is None:
        r = _nan_arg_extreme(op_name, lax.reshape(t, (t.size,)), 0, False, largest)
        return lax.reshape(r, (1,) * t.ndim) if keepdims else r
    ax = _one_axis(op_name, axis, t.ndim)
    n = t.shape[ax]
    if n == 0:
        raise ShapeError(f"{op_name}: attempt to get {op_name} of an empty sequence (axis {ax} of shape {t.shape}){user_site()}")
    safe, _ = _replace_nan(t, float("-inf") if largest else float("inf"))
    m = (np_api.max if largest else np_api.min)(safe, axis=ax, keepdims=True)
    hit = t == _bcast(m, t.shape)  # a NaN equals nothing
    position = lax.iota(t.shape, ax, dtypes.int32)
    first = np_api.min(np_api.where(hit, position, n), axis=ax, keepdims=keepdims)
    return np_api.where(first == n, -1, first)


@api
def nanargmax(a: Any, axis: int | None = None, out: None = None, *, keepdims: bool = False) -> Tracer:
    """The index of the first maximum along `axis` ignoring NaNs (of the flattened array for
    None), int32; -1 for an all-NaN slice (as JAX; numpy raises)."""
    _no_out("nanargmax", out)
    return _nan_arg_extreme("nanargmax", a, axis, keepdims, largest=True)


@api
def nanargmin(a: Any, axis: int | None = None, out: None = None, *, keepdims: bool = False) -> Tracer:
    """The index of the first minimum along `axis` ignoring NaNs (of the flattened array for
    None), int32; -1 for an all-NaN slice (as JAX; numpy raises)."""
    _no_out("nanargmin", out)
    return _nan_arg_extreme("nanargmin", a, axis, keepdims, largest=False)


@api
def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Tracer:
    """Running sums along `axis` (of the flattened array for None) with NaNs counted as 0."""
    _no_out("nancumsum", out)
    t, _ = _replace_nan(lift(a), 0.0)
    if axis is not None:
        _one_axis("nancumsum", axis, t.ndim)
    return cumsum(t, axis=axis, dtype=dtype)


@api
def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Tracer:
    """Running products along `axis` (of the flattened array for None) with NaNs counted as 1."""
    _no_out("nancumprod", out)
    t, _ = _replace_nan(lift(a), 1.0)
    if axis is not None:
        _one_axis("nancumprod", axis, t.ndim)
    return cumprod(t, axis=axis, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# Quantiles
# ---------------------------------------------------------------------------------------------


def _order_statistics(x: Tracer, ignore_nan: bool) -> tuple[Tracer, Tracer, Tracer, Tracer]:
    """For x (..., n): the stable sort permutation (NaN last), x with NaNs read as 0, the count
    of the values each slice ranks (..., 1) int32, and where a slice's result is NaN (..., 1)."""
    mask = isnan(x)
    order = argsort(x, axis=-1)
    safe = np_api.where(mask, 0.0, x)
    n = x.shape[-1]
    if ignore_nan:
        count = np_api.sum(lax.convert(np_api.logical_not(mask), dtypes.int32), axis=-1, keepdims=True)
        bad = count == 0
    else:
        count = full((*x.shape[:-1], 1), n, dtypes.int32)
        bad = _any(mask, axis=-1, keepdims=True)
    return order, safe, count, bad


def _gather_ranks(order: Tracer, safe: Tracer, ranks: Tracer, count: Tracer) -> Tracer:
    """The values at sorted positions `ranks` (..., m) (clamped to [0, count - 1])."""
    last = _bcast(count - 1, ranks.shape)
    r = np_api.maximum(np_api.minimum(ranks, last), 0)
    return take_along_axis(safe, take_along_axis(order, r, axis=-1), axis=-1)


def _lerp(a: Tracer, b: Tracer, g: Tracer) -> Tracer:
    """numpy's _lerp: a + (b - a) g, computed from b's side for g >= 1/2 (exact at g = 1)."""
    diff = b - a
    return np_api.where(g >= 0.5, b - diff * (1.0 - g), a + diff * g)


def _quantile_values(x: Tracer, q: Tracer, method: str, ignore_nan: bool) -> Tracer:
    """Quantiles q (m,) of x (..., n) along its last axis: (..., m)."""
    order, safe, count, bad = _order_statistics(x, ignore_nan)
    shape = (*x.shape[:-1], q.shape[0])
    v = _bcast(lax.convert(count, x.dtype) - 1.0, shape) * lax.broadcast_in_dim(q, shape, [len(shape) - 1])
    low = np_api.floor(v)
    to_int = lambda f: lax.convert(f, dtypes.int32)  # noqa: E731  (values >= 0 or clamped)
    if method in ("linear", "midpoint"):
        i = to_int(low)
        a = _gather_ranks(order, safe, i, count)
        b = _gather_ranks(order, safe, i + 1, count)
        g = v - low if method == "linear" else np_api.where(low == v, 0.0, 0.5)
        r = _lerp(a, b, g)
    else:
        if method == "lower":
            idx = low
        elif method == "higher":
            idx = -np_api.floor(-v)
        else:  # nearest: half to even, as numpy's around
            idx = _round(v)
        r = _gather_ranks(order, safe, to_int(idx), count)
    return np_api.where(_bcast(bad, shape), float("nan"), r)


def _median_values(x: Tracer) -> Tracer:
    """nanmedian of x (..., n) along its last axis: (..., 1); the mean of the two middle non-NaN
    values (one value for an odd count: that one is returned as is)."""
    order, safe, count, bad = _order_statistics(x, ignore_nan=True)
    lo_rank = np_api.floor_divide(count - 1, 2)
    hi_rank = np_api.floor_divide(count, 2)
    lo = _gather_ranks(order, safe, lo_rank, count)
    hi = _gather_ranks(order, safe, hi_rank, count)
    m = np_api.where(lo_rank == hi_rank, lo, (lo + hi) * 0.5)
    return np_api.where(bad, float("nan"), m)


def _quantile_impl(op_name: str, a: Any, q: Any, axis: Axis, method: str, keepdims: bool,
                   ignore_nan: bool, scale: float) -> Tracer:  # fmt: skip
    t = lift(a)
    weak_q = is_scalar(q) or isinstance(q, (list, tuple))
    d = _float_dtype(t) if weak_q else _float_dtype(t, q)
    t = lax.convert(t, d) if t.dtype != d else t
    qt = lift(q, d)
    if scale != 1.0:
        qt = qt / scale
    axes = normalize_axes(op_name, axis, t.ndim)
    x, rest = _to_last(t, axes)
    out_shape = (*qt.shape, *_kept_shape(t.shape, axes, keepdims))
    if x.shape[-1] == 0:
        return full(out_shape, float("nan"), d)
    m = qt.size
    r = _quantile_values(x, lax.reshape(qt, (m,)), method, ignore_nan)  # (*rest, m)
    r = lax.transpose(r, [len(rest), *range(len(rest))])
    return lax.reshape(r, out_shape)


_quantile_api = api(_quantile_impl)


def _check_quantile_args(op_name: str, q: Any, top: float, out: Any, method: str, weights: Any,
                         interpolation: Any) -> str:  # fmt: skip
    """Validates what can be checked before tracing; returns the method."""
    _no_out(op_name, out)
    if weights is not None:
        raise NotImplementedError(f"{op_name}: weights= is not supported{user_site()}")
    if interpolation is not None:
        method = interpolation
    if method not in _METHODS:
        if method in _OTHER_NUMPY_METHODS:
            raise NotImplementedError(
                f"{op_name}: method {method!r} is not supported; use one of {', '.join(_METHODS)}{user_site()}"
            )
        raise ValueError(f"{op_name}: {method!r} is not a valid method; use one of {', '.join(_METHODS)}{user_site()}")
    if _is_concrete(q):
        values = np.asarray(q)
        if values.dtype.kind not in "biuf":
            raise TypeError(f"{op_name}: q must be numbers, got {values.dtype}{user_site()}")
        if values.size and not (np.all(values >= 0) and np.all(values <= top)):
            raise ValueError(f"{op_name}: q must be in the range [0, {top:g}], got {q!r}{user_site()}")
    return method


def quantile(a: Any, q: Any, axis: Axis = None, out: None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: str | None = None) -> Any:  # fmt: skip
    """The q-th quantiles (q in [0, 1]) along `axis` (all for None; several may be given), from
    the stable sort: the result has q's shape followed by the reduced shape. Methods "linear"
    (default), "lower", "higher", "nearest", "midpoint" as numpy. NaN where a slice holds a NaN.
    Integers give float32."""
    method = _check_quantile_args("quantile", q, 1.0, out, method, weights, interpolation)
    return _quantile_api("quantile", a, q, axis, method, keepdims, False, 1.0)


def percentile(a: Any, q: Any, axis: Axis = None, out: None = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: Any = None,
               interpolation: str | None = None) -> Any:  # fmt: skip
    """`quantile` with q in percent ([0, 100])."""
    method = _check_quantile_args("percentile", q, 100.0, out, method, weights, interpolation)
    return _quantile_api("percentile", a, q, axis, method, keepdims, False, 100.0)


def nanquantile(a: Any, q: Any, axis: Axis = None, out: None = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights: Any = None,
                interpolation: str | None = None) -> Any:  # fmt: skip
    """`quantile` of the non-NaN elements of each slice (NaN for an all-NaN slice); NaN entries
    have gradient 0."""
    method = _check_quantile_args("nanquantile", q, 1.0, out, method, weights, interpolation)
    return _quantile_api("nanquantile", a, q, axis, method, keepdims, True, 1.0)


def nanpercentile(a: Any, q: Any, axis: Axis = None, out: None = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, weights: Any = None,
                  interpolation: str | None = None) -> Any:  # fmt: skip
    """`nanquantile` with q in percent ([0, 100])."""
    method = _check_quantile_args("nanpercentile", q, 100.0, out, method, weights, interpolation)
    return _quantile_api("nanpercentile", a, q, axis, method, keepdims, True, 100.0)


@api
def nanmedian(a: Any, axis: Axis = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Tracer:  # fmt: skip
    """The median of the non-NaN elements along `axis` (NaN for an all-NaN slice): the middle
    one, or the mean of the two middle ones (half the gradient to each). Integers give float32."""
    _no_out("nanmedian", out)
    t = require_float("nanmedian", lift(a))
    axes = normalize_axes("nanmedian", axis, t.ndim)
    x, _ = _to_last(t, axes)
    out_shape = _kept_shape(t.shape, axes, keepdims)
    if x.shape[-1] == 0:
        return full(out_shape, float("nan"), t.dtype)
    return lax.reshape(_median_values(x), out_shape)


# ---------------------------------------------------------------------------------------------
# ptp, diff, ediff1d, trapezoid, gradient
# ---------------------------------------------------------------------------------------------


@api
def ptp(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False) -> Tracer:
    """max - min along `axis` (integers keep their dtype and wrap, as numpy). Tied extremes
    share the cotangent equally, so a constant slice has gradient 0."""
    _no_out("ptp", out)
    t = lift(a)
    axis = normalize_axes("ptp", axis, t.ndim)
    return np_api.max(t, axis=axis, keepdims=keepdims) - np_api.min(t, axis=axis, keepdims=keepdims)


def _edge(op_name: str, v: Any, t: Tracer, ax: int, d: np.dtype) -> Tracer:
    """prepend/append: a scalar becomes a slab of size 1 along `ax`; an array is used as is."""
    e = lift(v, d)
    if e.ndim == 0:
        shape = list(t.shape)
        shape[ax] = 1
        return broadcast_to(e, shape)
    return e


@api
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Tracer:
    """The n-th forward difference along `axis` (a[1:] - a[:-1], n times; bool: a[1:] != a[:-1],
    as numpy). `prepend`/`append` (scalars or arrays) are concatenated first."""
    n = _int("diff", "n", n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}{user_site()}")
    t = lift(a)
    if n == 0:
        return t
    if t.ndim == 0:
        raise ValueError(f"diff: diff requires input that is at least one dimensional{user_site()}")
    ax = _one_axis("diff", axis, t.ndim)
    if prepend is not None or append is not None:
        d = result_dtype(t, *[v for v in (prepend, append) if v is not None])
        t = lax.convert(t, d) if t.dtype != d else t
        parts = [t]
        if prepend is not None:
            parts.insert(0, _edge("diff", prepend, t, ax, d))
        if append is not None:
            parts.append(_edge("diff", append, t, ax, d))
        t = concatenate(parts, axis=ax)
    for _ in range(n):
        length = t.shape[ax]
        if length == 0:
            break
        hi, lo = _slice_axis(t, ax, 1, length), _slice_axis(t, ax, 0, length - 1)
        t = np_api.not_equal(hi, lo) if t.dtype == dtypes.bool_ else hi - lo
    return t


@api
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tracer:
    """Differences between consecutive elements of the flattened array, with `to_begin` and
    `to_end` (flattened, cast to ary's dtype) around them."""
    t = lift(ary)
    t = lax.reshape(t, (t.size,))
    n = t.shape[0]
    r = _slice_axis(t, 0, 1, n) - _slice_axis(t, 0, 0, n - 1) if n > 1 else full((0,), 0, t.dtype)
    parts = [r]
    if to_begin is not None:
        b = lift(to_begin, t.dtype)
        parts.insert(0, lax.reshape(b, (b.size,)))
    if to_end is not None:
        e = lift(to_end, t.dtype)
        parts.append(lax.reshape(e, (e.size,)))
    return concatenate(parts, axis=0) if len(parts) > 1 else r


@api
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Tracer:
    """The integral of y along `axis` by the trapezoidal rule, with sample points `x` (1-D along
    `axis`, or y's shape) or the uniform spacing `dx`: sum(d * (y[1:] + y[:-1]) / 2).
    Integers give float32."""
    d = _float_dtype(y, x) if x is not None else _float_dtype(y, dx)
    yt = lift(y, d)
    ax = _one_axis("trapezoid", axis, yt.ndim)
    length = yt.shape[ax]
    out_shape = _kept_shape(yt.shape, [ax], False)
    if x is None:
        step = dx if is_scalar(dx) else lift(dx, d)
    else:
        xt = lift(x, d)
        if xt.ndim == 1:
            if xt.shape[0] != length:
                raise ShapeError(f"trapezoid: x of length {xt.shape[0]} does not match axis {ax} of y {yt.shape}{user_site()}")
            step = diff(xt)
            shape = [1] * yt.ndim
            shape[ax] = builtins.max(length - 1, 0)
            step = lax.reshape(step, shape)
        else:
            step = diff(xt, axis=ax)
    if length < 2:
        return full(out_shape, 0.0, d)
    pairs = _slice_axis(yt, ax, 1, length) + _slice_axis(yt, ax, 0, length - 1)
    return np_api.sum(step * pairs / 2.0, axis=ax)


def _gradient_spacings(f: Tracer, axes: list[int], varargs: tuple[Any, ...], d: np.dtype) -> list[Any]:
    """One spacing per axis: a Python float, a traced scalar, or a 1-D coordinate tracer."""
    if len(varargs) == 0:
        return [1.0] * len(axes)
    if len(varargs) == 1 and len(shape_of(varargs[0])) == 0:
        varargs = varargs * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"gradient: {len(varargs)} spacings given for {len(axes)} axes{user_site()}")
    out: list[Any] = []
    for v, ax in zip(varargs, axes):
        if is_scalar(v):
            out.append(float(v))
            continue
        s = lift(v, d)
        if s.ndim == 1 and s.shape[0] != f.shape[ax]:
            raise ValueError(
                f"gradient: when 1d, distances must match the length of the corresponding dimension "
                f"(got {s.shape[0]} for axis {ax} of shape {f.shape}){user_site()}"
            )
        if s.ndim > 1:
            raise ValueError(f"gradient: distances must be either scalars or 1d, got shape {s.shape}{user_site()}")
        out.append(s)
    return out


def _along(v: Tracer, ax: int, ndim: int) -> Tracer:
    """A 1-D v as an array of rank ndim lying along `ax`."""
    shape = [1] * ndim
    shape[ax] = v.shape[0]
    return lax.reshape(v, shape)


def _gradient_axis(f: Tracer, ax: int, h: Any, edge_order: int) -> Tracer:
    n = f.shape[ax]
    nd = f.ndim

    def at(i: int) -> Tracer:
        return _slice_axis(f, ax, i, i + 1)

    # The first three and the last three samples (f2 and fl3 only exist, and are only used by
    # edge_order=2, for n >= 3).
    f0, f1, f2 = at(0), at(1), (at(2) if n > 2 else None)
    fl1, fl2, fl3 = at(n - 1), at(n - 2), (at(n - 3) if n > 2 else None)
    parts = []
    if isinstance(h, Tracer) and h.ndim == 1:
        dxs = diff(h)  # (n - 1,)
        first_dx, last_dx = _slice_axis(dxs, 0, 0, 1), _slice_axis(dxs, 0, n - 2, n - 1)
        if edge_order == 1:
            parts.append((f1 - f0) / _along(first_dx, ax, nd))
        else:
            dx1, dx2 = _slice_axis(dxs, 0, 0, 1), _slice_axis(dxs, 0, 1, 2)
            a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = -dx1 / (dx2 * (dx1 + dx2))
            parts.append(_along(a, ax, nd) * f0 + _along(b, ax, nd) * f1 + _along(c, ax, nd) * f2)
        if n > 2:
            dx1, dx2 = _slice_axis(dxs, 0, 0, n - 2), _slice_axis(dxs, 0, 1, n - 1)
            a = -dx2 / (dx1 * (dx1 + dx2))
            b = (dx2 - dx1) / (dx1 * dx2)
            c = dx1 / (dx2 * (dx1 + dx2))
            interior = (_along(a, ax, nd) * _slice_axis(f, ax, 0, n - 2) + _along(b, ax, nd) * _slice_axis(f, ax, 1, n - 1)
                        + _along(c, ax, nd) * _slice_axis(f, ax, 2, n))  # fmt: skip
            parts.append(interior)
        if edge_order == 1:
            parts.append((fl1 - fl2) / _along(last_dx, ax, nd))
        else:
            dx1, dx2 = _slice_axis(dxs, 0, n - 3, n - 2), _slice_axis(dxs, 0, n - 2, n - 1)
            a = dx2 / (dx1 * (dx1 + dx2))
            b = -(dx2 + dx1) / (dx1 * dx2)
            c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
            parts.append(_along(a, ax, nd) * fl3 + _along(b, ax, nd) * fl2 + _along(c, ax, nd) * fl1)
    else:
        if edge_order == 1:
            parts.append((f1 - f0) / h)
        else:
            parts.append(f0 * (-1.5 / h) + f1 * (2.0 / h) + f2 * (-0.5 / h))
        if n > 2:
            parts.append((_slice_axis(f, ax, 2, n) - _slice_axis(f, ax, 0, n - 2)) / (2.0 * h))
        if edge_order == 1:
            parts.append((fl1 - fl2) / h)
        else:
            parts.append(fl3 * (0.5 / h) + fl2 * (-2.0 / h) + fl1 * (1.5 / h))
    return concatenate(parts, axis=ax)


@api
def gradient(f: Any, *varargs: Any, axis: Axis = None, edge_order: int = 1) -> Any:
    """numpy's gradient: second-order central differences inside, first- or second-order
    (`edge_order`) one-sided ones at the ends. Spacing: none (1), one scalar for every axis, or
    one scalar or 1-D coordinate array per axis. One array for one axis, else a list (in the
    order of `axis`). Integers give float32."""
    edge_order = _int("gradient", "edge_order", edge_order)
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: 'edge_order' must be 1 or 2, got {edge_order}{user_site()}")
    d = _float_dtype(f)
    ft = lift(f, d)
    if axis is None:
        axes = list(range(ft.ndim))
    else:
        given = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
        axes = [_one_axis("gradient", a, ft.ndim) for a in given]
        if len(set(axes)) != len(axes):
            raise ShapeError(f"gradient: repeated axis in {axis}{user_site()}")
    spacings = _gradient_spacings(ft, axes, varargs, d)
    outs = []
    for ax, h in zip(axes, spacings):
        if ft.shape[ax] < edge_order + 1:
            raise ValueError(
                f"gradient: shape {ft.shape} is too small along axis {ax} to calculate a numerical gradient: "
                f"at least edge_order + 1 = {edge_order + 1} elements are required{user_site()}"
            )
        outs.append(_gradient_axis(ft, ax, h, edge_order))
    return outs[0] if len(outs) == 1 else outs


# ---------------------------------------------------------------------------------------------
# digitize, bincount, histogram
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# select, polyval, vander
# ---------------------------------------------------------------------------------------------


def _entries(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return list(x)
    t = lift(x)
    if t.ndim == 0:
        raise TypeError(f"select: condlist and choicelist must be sequences{user_site()}")
    return [lax.reshape(_slice_axis(t, 0, i, i + 1), t.shape[1:]) for i in range(t.shape[0])]


@api
def select(condlist: Any, choicelist: Any, default: Any = 0) -> Tracer:
    """choicelist[i] where condlist[i] is the first true condition, else `default`, elementwise
    (everything broadcast together), as numpy: a chain of wheres."""
    conds, choices = _entries(condlist), _entries(choicelist)
    if len(conds) != len(choices):
        raise ValueError(f"select: list of cases must be same length as list of conditions ({len(choices)} vs {len(conds)}){user_site()}")
    if not conds:
        raise ValueError(f"select: select with an empty condition list is not possible{user_site()}")
    cts = []
    for i, c in enumerate(conds):
        ct = lift(c)
        if ct.dtype != dtypes.bool_:
            raise DTypeError(f"select: invalid entry {i} in condlist: should be boolean, got {ct.dtype}{user_site()}")
        cts.append(ct)
    d = result_dtype(*choices, default)
    shape = broadcast_shapes("select", *[c.shape for c in cts], *[shape_of(v) for v in choices], shape_of(default))
    out = broadcast_to(lift(default, d), shape)
    for c, v in zip(reversed(cts), reversed(choices)):
        out = np_api.where(broadcast_to(c, shape), broadcast_to(lift(v, d), shape), out)
    return out


@api
def polyval(p: Any, x: Any) -> Tracer:
    """p[0] x^(M-1) + ... + p[M-1] by Horner's rule (y = y * x + p[i] from y = 0, numpy's
    order); p may have trailing axes that broadcast with x (as JAX). Integers give float32."""
    d = _float_dtype(p, x)
    pt, xt = lift(p, d), lift(x, d)
    if pt.ndim == 0:
        raise ShapeError(f"polyval: p must be at least 1-D, got a scalar{user_site()}")
    shape = broadcast_shapes("polyval", pt.shape[1:], xt.shape)
    xb = broadcast_to(xt, shape)
    y = full(shape, 0.0, d)
    for i in range(pt.shape[0]):
        y = y * xb + broadcast_to(lax.reshape(_slice_axis(pt, 0, i, i + 1), pt.shape[1:]), shape)
    return y


@api
def vander(x: Any, N: int | None = None, increasing: bool = False) -> Tracer:  # noqa: N803
    """The Vandermonde matrix of the 1-D x: columns x^(N-1), ..., x, 1 (reversed with
    `increasing`), N defaulting to len(x), as running products. Integers stay integers (bool
    becomes int32)."""
    t = lift(x)
    if t.ndim != 1:
        raise ValueError(f"vander: x must be a one-dimensional array or sequence, got shape {t.shape}{user_site()}")
    if t.dtype == dtypes.bool_:
        t = lax.convert(t, dtypes.int32)
    n = t.shape[0]
    cols = n if N is None else _int("vander", "N", N)
    if cols < 0:
        raise ValueError(f"vander: N must be non-negative, got {cols}{user_site()}")
    if cols == 0:
        return full((n, 0), 0, t.dtype)
    ones = full((n, 1), 1, t.dtype)
    if cols == 1:
        return ones
    powers = cumprod(concatenate([ones, lax.broadcast_in_dim(t, (n, cols - 1), [0])], axis=1), axis=1)
    return powers if increasing else lax.gather(powers, lift(np.arange(cols - 1, -1, -1, dtype=np.int32)), 1)
