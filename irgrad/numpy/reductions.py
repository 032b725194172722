"""Reductions, scans, sorting and statistics with numpy's names: prod, cumsum, cumprod, sort,
argsort, median, average, count_nonzero, isclose/allclose/array_equal, searchsorted, interp,
cov, corrcoef.

All are composites of `nn` ops. How each is built, and what its derivative is where that needs
deciding (docs/autodiff.md, Contracts):
- prod: a pairwise tree of multiplies (log2 n levels of slice-and-multiply), never
  exp(sum(log)): exact zero handling, and the product rule gives the right gradient at zeros
  (the product of the other factors).
- cumsum, cumprod: Hillis-Steele scans, log2 n steps of "add (multiply) the array shifted by
  2**k" built from slice and pad: O(n log n) work, exact for integers (floats round in a
  different order than numpy's sequential loop).
- sort, argsort: the bitonic network of irgrad/tracing/sorting.py (stable, NaN last); `sort` is a
  gather with the permutation, so its cotangent follows the permutation back (tied values
  each get the cotangent of the position the stable order gave them). argsort is int32, with
  no gradient.
- median: the sorted middle element, or half of each of the two middle ones for an even count
  (its gradient is half to each of those elements); NaN if the slice holds a NaN, as numpy.
- searchsorted, count_nonzero, the predicates: integer or bool results, no gradient.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.numpy import reduction_keywords as keywords
from irgrad.numpy import basic as np_api, support
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy.support import api, broadcast_to, lift, normalize_axes, require_float, result_dtype
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.numpy.numerics import all as _all, any as _any, isfinite, isnan
from irgrad.numpy.arrays import atleast_2d, moveaxis
from irgrad.numpy.shape import concatenate, take, take_along_axis
from irgrad.tracing.sorting import argsort_last, less_and_equal

__all__ = [
    "allclose",
    "argsort",
    "array_equal",
    "average",
    "corrcoef",
    "count_nonzero",
    "cov",
    "cumprod",
    "cumsum",
    "interp",
    "isclose",
    "median",
    "prod",
    "searchsorted",
    "sort",
]

Axis = int | Sequence[int] | None


def _stop(x: Tracer) -> Tracer:
    from irgrad.numpy.custom_derivatives import stop_gradient

    return stop_gradient(x)


def _accumulation_dtype(op_name: str, t: Tracer, dtype: Any) -> Tracer:
    """`dtype` if given; bool becomes int32 (as ig.sum); other dtypes stay (JAX's rule)."""
    if dtype is not None:
        return lax.convert(t, dtypes.canonical(dtype))
    if t.dtype == dtypes.bool_:
        return lax.convert(t, dtypes.int32)
    return t


def _to_last(t: Tracer, axes: list[int]) -> tuple[Tracer, tuple[int, ...]]:
    """`axes` moved last and merged into one; also the shape of the other axes."""
    rest = [i for i in range(t.ndim) if i not in axes]
    moved = lax.transpose(t, rest + axes)
    rest_shape = tuple(t.shape[i] for i in rest)
    n = int(np.prod([t.shape[a] for a in axes], dtype=np.int64))
    return lax.reshape(moved, (*rest_shape, n)), rest_shape


def _keep(r: Tracer, shape: tuple[int, ...], axes: list[int], keepdims: bool) -> Tracer:
    if not keepdims:
        return r
    return lax.reshape(r, [1 if i in axes else d for i, d in enumerate(shape)])


def _slice_last(t: Tracer, start: int, stop: int) -> Tracer:
    k = t.ndim - 1
    return lax.slice(t, [0] * k + [start], [*t.shape[:-1], stop], [1] * t.ndim)


# ---------------------------------------------------------------------------------------------
# prod, cumsum, cumprod
# ---------------------------------------------------------------------------------------------


@api
def prod(a: Any, axis: Axis = None, dtype: Any = None, keepdims: bool = False, *,
         out: None = None, initial: Any = None, where: Any = None) -> Tracer:  # fmt: skip
    """The product of the elements along `axis` (all for None), as a pairwise tree of
    multiplies: exact with zeros, and differentiable there (the gradient at a single zero is the
    product of the others). 1 over no elements. Bool becomes int32; `dtype=bool` is a product
    of bools, true where every factor is (numpy's multiply on bool is and): `all`. `where=`
    and `initial=` as numpy's (irgrad/numpy/reduction_keywords.py)."""
    if out is not None:
        raise NotImplementedError(f"prod: out= is not supported (arrays are immutable){user_site()}")
    t = lift(a)
    mask = keywords.selection("prod", t, where)
    keywords.check_initial("prod", initial)
    if dtype is not None and dtypes.canonical(dtype) == dtypes.bool_:
        r = _all(keywords.masked(lax.convert(t, dtypes.bool_), mask, True), axis, keepdims)
        return keywords.with_initial(r, initial, lambda x, y: lax.binary(nn.AndOp, x, y))
    t = keywords.masked(_accumulation_dtype("prod", t, dtype), mask, 1)
    r = _tree_product(t, normalize_axes("prod", axis, t.ndim), keepdims)
    return keywords.with_initial(r, initial, lambda x, y: x * y)


def _tree_product(t: Tracer, axes: list[int], keepdims: bool) -> Tracer:
    x, rest = _to_last(t, axes)
    n = x.shape[-1]
    if n == 0:
        return _keep(full(rest, 1, t.dtype), t.shape, axes, keepdims)
    while n > 1:
        if n % 2:
            x = lax.pad(x, full((), 1, x.dtype), [0] * x.ndim, [0] * (x.ndim - 1) + [1])
            n += 1
        h = n // 2
        x = _slice_last(x, 0, h) * _slice_last(x, h, n)
        n = h
    return _keep(lax.reshape(x, rest), t.shape, axes, keepdims)


def _scan(op_name: str, a: Any, axis: int | None, dtype: Any, multiply: bool) -> Tracer:
    t = _accumulation_dtype(op_name, lift(a), dtype)
    if axis is None:
        t = lax.reshape(t, (t.size,))
        axis = 0
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op_name}: axis must be an int or None, got {axis!r}{user_site()}")
    ax = normalize_axes(op_name, int(axis), t.ndim)[0]
    n = t.shape[ax]
    identity = full((), 1 if multiply else 0, t.dtype)
    d = 1
    while d < n:
        start, limit = [0] * t.ndim, list(t.shape)
        limit[ax] = n - d
        low, high = [0] * t.ndim, [0] * t.ndim
        low[ax] = d
        shifted = lax.pad(lax.slice(t, start, limit, [1] * t.ndim), identity, low, high)
        t = t * shifted if multiply else t + shifted
        d *= 2
    return t


@api
def cumsum(a: Any, axis: int | None = None, dtype: Any = None) -> Tracer:
    """Running sums along `axis` (of the flattened array for None): a Hillis-Steele scan,
    log2 n shifted adds (exact for integers; floats round in another order than numpy's loop)."""
    return _scan("cumsum", a, axis, dtype, multiply=False)


@api
def cumprod(a: Any, axis: int | None = None, dtype: Any = None) -> Tracer:
    """Running products along `axis` (of the flattened array for None), as `cumsum` with
    multiplies: exact with zeros, the product rule's gradient there."""
    return _scan("cumprod", a, axis, dtype, multiply=True)


# ---------------------------------------------------------------------------------------------
# sort, argsort, median
# ---------------------------------------------------------------------------------------------


def _sort_args(op_name: str, a: Any, axis: int | None, kind: Any, order: Any) -> tuple[Tracer, int]:
    if order is not None:
        raise NotImplementedError(f"{op_name}: order= (structured arrays) is not supported{user_site()}")
    if kind not in (None, "stable", "mergesort", "quicksort", "heapsort"):
        raise ValueError(f"{op_name}: unknown kind {kind!r}{user_site()}")
    t = lift(a)
    if axis is None:
        return lax.reshape(t, (t.size,)), 0
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op_name}: axis must be an int or None, got {axis!r}{user_site()}")
    if t.ndim == 0:
        raise ShapeError(f"{op_name}: axis {axis} is out of range for a scalar{user_site()}")
    return t, normalize_axes(op_name, int(axis), t.ndim)[0]


def _argsort_along(t: Tracer, ax: int) -> Tracer:
    keys = _stop(moveaxis(t, ax, -1)) if dtypes.is_float(t.dtype) else moveaxis(t, ax, -1)
    return moveaxis(argsort_last(keys), -1, ax)


@api
def argsort(a: Any, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
            stable: bool | None = None) -> Tracer:  # fmt: skip
    """Indices that sort `a` along `axis` (the flattened array for None), int32. Always stable
    (equal elements keep their order, numpy's kind="stable", whatever `kind` says); NaN sorts
    last. A bitonic network over the axis padded to a power of two: O(n log^2 n) compares."""
    t, ax = _sort_args("argsort", a, axis, kind, order)
    return _argsort_along(t, ax)


@api
def sort(a: Any, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
         stable: bool | None = None) -> Tracer:  # fmt: skip
    """`a` sorted along `axis` (the flattened array for None), NaN last: a gather with the
    stable `argsort`, so the gradient follows the permutation."""
    t, ax = _sort_args("sort", a, axis, kind, order)
    if t.shape[ax] <= 1:
        return t
    return take_along_axis(t, _argsort_along(t, ax), ax)


@api
def median(a: Any, axis: Axis = None, keepdims: bool = False) -> Tracer:
    """The middle value along `axis` (all axes for None; several may be given): the sorted
    middle element, or the mean of the two middle ones for an even count (the gradient is then
    half to each). NaN where the slice holds a NaN, or is empty."""
    t = require_float("median", lift(a))
    axes = normalize_axes("median", axis, t.ndim)
    x, rest = _to_last(t, axes)
    n = x.shape[-1]
    if n == 0:
        return _keep(full(rest, float("nan"), t.dtype), t.shape, axes, keepdims)
    s = sort(x, axis=-1)
    if n % 2:
        m = _slice_last(s, n // 2, n // 2 + 1)
    else:
        m = (_slice_last(s, n // 2 - 1, n // 2) + _slice_last(s, n // 2, n // 2 + 1)) * 0.5
    m = lax.reshape(m, rest)
    m = np_api.where(_any(isnan(x), axis=-1), float("nan"), m)
    return _keep(m, t.shape, axes, keepdims)


# ---------------------------------------------------------------------------------------------
# average, count_nonzero
# ---------------------------------------------------------------------------------------------


@api
def average(a: Any, axis: Axis = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:  # fmt: skip
    """The weighted mean sum(a * w) / sum(w) along `axis`; `weights` has a's shape, or is 1-D
    along a single `axis`. `returned=True` also gives sum(w) (broadcast to the result's shape).
    A zero weight sum gives inf or NaN (numpy raises ZeroDivisionError; a traced value cannot)."""
    if weights is None:
        t = require_float("average", lift(a))
        avg = np_api.mean(t, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        axes = normalize_axes("average", axis, t.ndim)
        count = float(np.prod([t.shape[i] for i in axes], dtype=np.int64))
        return avg, full(avg.shape, count, avg.dtype)
    d = result_dtype(a, weights)
    if not dtypes.is_float(d):
        d = dtypes.float32
    t, w = lift(a, d), lift(weights, d)
    axes = normalize_axes("average", axis, t.ndim)
    if w.shape != t.shape:
        if axis is None:
            raise TypeError(f"average: axis must be given when the shapes of a {t.shape} and weights {w.shape} differ{user_site()}")
        if w.ndim != 1 or len(axes) != 1:
            raise TypeError(f"average: 1-D weights {w.shape} need one axis, got a {t.shape} with axis {axis}{user_site()}")
        if w.shape[0] != t.shape[axes[0]]:
            raise ValueError(
                f"average: weights of length {w.shape[0]} do not match axis {axes[0]} of shape {t.shape}{user_site()}"
            )
        w = lax.broadcast_in_dim(w, t.shape, axes)
    scale = np_api.sum(w, axis=axes, keepdims=keepdims)
    avg = np_api.sum(t * w, axis=axes, keepdims=keepdims) / scale
    return (avg, broadcast_to(scale, avg.shape)) if returned else avg


@api
def count_nonzero(a: Any, axis: Axis = None, keepdims: bool = False) -> Tracer:
    """How many elements (along `axis`) are nonzero (NaN counts), int32."""
    t = lift(a)
    nonzero = t if t.dtype == dtypes.bool_ else lax.compare("ne", t, full(t.shape, 0, t.dtype))
    return np_api.sum(lax.convert(nonzero, dtypes.int32), axis=axis, keepdims=keepdims)


# ---------------------------------------------------------------------------------------------
# isclose, allclose, array_equal
# ---------------------------------------------------------------------------------------------


@api
def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tracer:
    """|a - b| <= atol + rtol * |b| elementwise (numpy's asymmetric test), bool. Infinities are
    close only to themselves; NaN to nothing, or to NaN with `equal_nan`. Integers compare in
    float64."""
    d = result_dtype(a, b)
    if not dtypes.is_float(d):
        d = dtypes.float64
    (x, y), _ = support.operands("isclose", a, b, dtype=d)
    finite = isfinite(x) & isfinite(y)
    near = np_api.abs(x - y) <= atol + rtol * np_api.abs(y)
    out = np_api.where(finite, near, x == y)
    if equal_nan:
        out = out | (isnan(x) & isnan(y))
    return out


@api
def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tracer:
    """Whether every element is `isclose` (a traced bool scalar; broadcasting shapes)."""
    return _all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


@api
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Tracer:
    """Same shape and equal elements (a bool scalar; False at once for different shapes)."""
    x, y = lift(a1), lift(a2)
    if x.shape != y.shape:
        return full((), False, dtypes.bool_)
    d = dtypes.promote(x.dtype, y.dtype)
    x, y = lax.convert(x, d), lax.convert(y, d)
    same = x == y
    if equal_nan and dtypes.is_float(d):
        same = same | (isnan(x) & isnan(y))
    return _all(same)


# ---------------------------------------------------------------------------------------------
# searchsorted, interp
# ---------------------------------------------------------------------------------------------


@api
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Tracer:
    """Indices where `v`'s elements would be inserted into the sorted 1-D `a` to keep it sorted
    (int32, v's shape): side="left" the first such index (the count of a < v), "right" the last
    (the count of a <= v); NaN sorts last, as in numpy. One compare of every v with every a and
    a sum: O(len(a) * v.size) work, no data-dependent control flow."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}{user_site()}")
    d = result_dtype(a, v)
    arr, val = lift(a, d), lift(v, d)
    if arr.ndim != 1:
        raise ShapeError(f"searchsorted: a must be 1-D, got shape {arr.shape}{user_site()}")
    if sorter is not None:
        arr = take(arr, sorter)
    n = arr.shape[0]
    if n == 0:
        return full(val.shape, 0, dtypes.int32)
    shape = (*val.shape, n)
    aa = lax.broadcast_in_dim(arr, shape, [val.ndim])
    vv = lax.broadcast_in_dim(val, shape, list(range(val.ndim)))
    if side == "left":
        before, _ = less_and_equal(aa, vv)
    else:
        v_less, _ = less_and_equal(vv, aa)
        before = lax.compare("eq", v_less, full(shape, False, dtypes.bool_))
    return np_api.sum(lax.convert(before, dtypes.int32), axis=-1)


@api
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Tracer:
    """Piecewise-linear interpolation of the points (xp, fp) at x, xp increasing: numpy's
    formula slope * (x - xp[j]) + fp[j] with xp[j] <= x < xp[j+1], exact at the points; left
    (default fp[0]) below xp[0], right (default fp[-1]) above xp[-1]. Differentiable in x, xp
    and fp (the segment is found by `searchsorted`, a constant for autodiff)."""
    if period is not None:
        raise NotImplementedError(f"interp: period= is not supported{user_site()}")
    d = result_dtype(x, xp, fp)
    if not dtypes.is_float(d):
        d = dtypes.float32
    xs, xps, fps = lift(x, d), lift(xp, d), lift(fp, d)
    if xps.ndim != 1 or fps.ndim != 1 or xps.shape != fps.shape:
        raise ValueError(f"interp: xp and fp must be 1-D of the same length, got {xps.shape} and {fps.shape}{user_site()}")
    n = xps.shape[0]
    if n == 0:
        raise ValueError(f"interp: xp and fp are empty{user_site()}")
    first_x, last_x = (lax.reshape(_slice_last(xps, i, i + 1), ()) for i in (0, n - 1))
    first_f, last_f = (lax.reshape(_slice_last(fps, i, i + 1), ()) for i in (0, n - 1))
    if n == 1:
        r = broadcast_to(first_f, xs.shape)
    else:
        j = searchsorted(_stop(xps), _stop(xs), side="right") - 1
        j = np_api.minimum(np_api.maximum(j, 0), n - 2)
        x0, x1 = take(xps, j), take(xps, j + 1)
        f0, f1 = take(fps, j), take(fps, j + 1)
        slope = (f1 - f0) / (x1 - x0)
        r = slope * (xs - x0) + f0
        r = np_api.where(xs == x0, f0, r)
        r = np_api.where(xs == last_x, broadcast_to(last_f, xs.shape), r)
    low = first_f if left is None else left
    high = last_f if right is None else right
    r = np_api.where(xs < first_x, low, r)
    return np_api.where(xs > last_x, high, r)


# ---------------------------------------------------------------------------------------------
# cov, corrcoef
# ---------------------------------------------------------------------------------------------


def _observations(op_name: str, m: Any, rowvar: bool, d: np.dtype) -> Tracer:
    t = lift(m, d)
    if t.ndim > 2:
        raise ShapeError(f"{op_name}: m has more than 2 dimensions ({t.shape}){user_site()}")
    t = atleast_2d(t)
    if not rowvar and t.shape[0] != 1:
        t = lax.transpose(t, [1, 0])
    return t


@api
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None) -> Tracer:  # fmt: skip
    """The covariance matrix of the variables (rows, or columns with rowvar=False) of m (and
    y, stacked below), normalized by N - 1 (N with bias=True, N - ddof if ddof is given);
    squeezed as numpy does (one variable gives a scalar). Integer input gives float32 (JAX)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError(f"cov: fweights and aweights are not supported{user_site()}")
    d = result_dtype(m) if y is None else result_dtype(m, y)
    if not dtypes.is_float(d):
        d = dtypes.float32
    x = _observations("cov", m, rowvar, d)
    if y is not None:
        other = _observations("cov", y, rowvar, d)
        if other.shape[1] != x.shape[1]:
            raise ShapeError(f"cov: m and y have {x.shape[1]} and {other.shape[1]} observations{user_site()}")
        x = concatenate([x, other], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = x.shape[1]
    centered = x - np_api.mean(x, axis=1, keepdims=True)
    c = np_api.matmul(centered, lax.transpose(centered, [1, 0])) / float(builtins.max(n - ddof, 0))
    return lax.reshape(c, [s for s in c.shape if s != 1])


@api
def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Tracer:
    """Pearson correlation coefficients: cov / (std_i std_j), clipped to [-1, 1] as numpy."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    if c.ndim != 2:
        raise ShapeError(f"corrcoef: unexpected covariance shape {c.shape}{user_site()}")
    n = c.shape[0]
    diag = lax.slice(lax.reshape(c, (n * n,)), [0], [n * n], [n + 1])
    s = np_api.sqrt(diag)
    c = c / lax.broadcast_in_dim(s, (n, n), [0])
    c = c / lax.broadcast_in_dim(s, (n, n), [1])
    return np_api.minimum(np_api.maximum(c, -1.0), 1.0)

