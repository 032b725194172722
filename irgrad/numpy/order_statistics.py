"""Order statistics with numpy's names: quantile percentile nanquantile nanpercentile nanmedian
ptp.

Composites of existing irgrad functions (the stable argsort, take_along_axis, max, min): no op
and no derivative rule of their own. The quantiles read the stable `argsort` of each slice (NaN
last), gather the one or two order statistics they need and interpolate; integers give float32.

Derivatives (docs/autodiff.md, Contracts): with ties the cotangent goes to the element the
stable order puts at that rank (the earlier one for the lower rank), not shared. "linear" gives
(1 - g) and g to the two neighbours (g the fraction of the virtual index (n - 1) q), "midpoint"
1/2 each, "lower"/"higher"/"nearest" 1 to one element; in a traced q (linear only) it is
(n - 1) (s[i+1] - s[i]) (/ 100 for percentile), the slope right of the virtual index (0 at
q = 1). nanmedian gives half to each of the two middle non-NaN elements, NaN entries 0.
ptp = max - min: ties share equally, so a constant slice has gradient 0.

Differs from numpy: the methods are "linear", "lower", "higher", "nearest", "midpoint"; q may be
a Python scalar or sequence (range-checked; it does not change the result's dtype), a numpy
array (range-checked) or a traced array (not checked; indices are clamped). An empty slice gives
NaN (numpy raises IndexError for quantile); `out=` only as None, `overwrite_input` is ignored.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, is_scalar, lift, normalize_axes, require_float
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import user_site
from irgrad.numpy.numerics import any as _any, isnan
from irgrad.numpy.rounding import round as _round
from irgrad.numpy.reductions import _to_last, argsort
from irgrad.numpy.shape import take_along_axis
from irgrad.numpy.statistics_support import Axis, _bcast, _float_dtype, _is_concrete, _kept_shape, _no_out

__all__ = ["nanmedian", "nanpercentile", "nanquantile", "percentile", "ptp", "quantile"]


_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")
_OTHER_NUMPY_METHODS = (
    "inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
    "hazen", "weibull", "median_unbiased", "normal_unbiased",
)  # fmt: skip


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


@api
def ptp(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False) -> Tracer:
    """max - min along `axis` (integers keep their dtype and wrap, as numpy). Tied extremes
    share the cotangent equally, so a constant slice has gradient 0."""
    _no_out("ptp", out)
    t = lift(a)
    axis = normalize_axes("ptp", axis, t.ndim)
    return np_api.max(t, axis=axis, keepdims=keepdims) - np_api.min(t, axis=axis, keepdims=keepdims)
