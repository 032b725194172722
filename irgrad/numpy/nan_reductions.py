"""NaN-ignoring reductions and scans with numpy's names: nansum nanprod nanmean nanvar nanstd
nanmax nanmin nanargmax nanargmin nancumsum nancumprod.

Composites of existing irgrad functions (where, sum, max, cumsum, ...): no op and no derivative
rule of their own, so autodiff, vmap, jit and every backend cover them. numpy's signatures,
JAX's dtypes: integer results are int32, nanmean/nanvar/nanstd turn integers into float32.

Derivatives (docs/autodiff.md, Contracts): NaN entries get gradient 0, never NaN. Each starts
from `where(isnan(a), neutral, a)` and divides by counts that are themselves guarded
(`where(count == 0, 1, count)`, the "double where"), so no NaN or inf enters a computation whose
adjoint is taken; an all-NaN slice is a constant NaN. nanmax/nanmin share the cotangent among
tied maxima (reduce_max's rule); NaNs read as -inf (+inf), so only in a slice whose maximum is
-inf do they take shares, which are then dropped. nanstd has gradient 0 where the variance is 0
(as `std`); nanargmax/nanargmin are integers, with no gradient.

Differs from numpy: nanargmax/nanargmin give -1 for an all-NaN slice (as JAX; numpy raises,
which a traced value cannot), and a -inf beats the NaNs of its slice; nanvar/nanstd give NaN
where count - ddof <= 0, as numpy (`var` gives inf there); `out=` is accepted only as None.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api, reduction_keywords as keywords
from irgrad.numpy.support import api, lift, normalize_axes, require_float
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.numpy.numerics import (
    all as _all,
    argmax as _argmax,
    argmin as _argmin,
    isnan,
)
from irgrad.numpy.arrays import _int
from irgrad.numpy.reductions import cumprod, cumsum, prod
from irgrad.numpy.statistics_support import Axis, _bcast, _kept_shape, _no_out, _one_axis

__all__ = [
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nanstd",
    "nansum",
    "nanvar",
]


def _replace_nan(t: Tracer, value: float) -> tuple[Tracer, Tracer | None]:
    """(where(isnan(t), value, t), the NaN mask), or (t, None) for an integer or bool t."""
    if not dtypes.is_float(t.dtype):
        return t, None
    mask = isnan(t)
    return np_api.where(mask, value, t), mask


@api
def nansum(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Tracer:  # fmt: skip
    """The sum along `axis` with NaNs counted as 0 (0 over an all-NaN slice). Bool becomes
    int32, integers keep their dtype. NaN entries have gradient 0. `initial=`, `where=` as `sum`'s."""
    _no_out("nansum", out)
    t, _ = _replace_nan(lift(a), 0.0)
    return np_api.sum(t, axis=normalize_axes("nansum", axis, t.ndim), keepdims=keepdims, dtype=dtype,
                      initial=initial, where=where)


@api
def nanprod(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Tracer:  # fmt: skip
    """The product along `axis` with NaNs counted as 1 (`prod`'s multiply tree: exact zeros,
    the product of the others as gradient at a zero). NaN entries have gradient 0. `initial=`,
    `where=` as `prod`'s."""
    _no_out("nanprod", out)
    t, _ = _replace_nan(lift(a), 1.0)
    return prod(t, axis=normalize_axes("nanprod", axis, t.ndim), dtype=dtype, keepdims=keepdims,
                initial=initial, where=where)


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
                 ddof: int | None, where: Any = None) -> Tracer:  # fmt: skip
    t = lift(a)
    selected = keywords.selection(op_name, t, where)
    if dtype is not None:
        t = lax.convert(t, dtypes.canonical(dtype))
    t = require_float(op_name, t)
    axes = normalize_axes(op_name, axis, t.ndim)
    t0, mask = _replace_nan(t, 0.0)
    if selected is not None:
        # What where= leaves out counts as a NaN: out of the sums and the counts.
        left_out = np_api.logical_not(selected)
        mask = left_out if mask is None else lax.binary(nn.OrOp, mask, left_out)
        t0 = np_api.where(mask, 0.0, t0)
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
def nanmean(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False,
            *, where: Any = None) -> Tracer:  # fmt: skip
    """The mean of the non-NaN elements along `axis` (NaN for an all-NaN slice). Integers give
    float32. NaN entries have gradient 0; the others 1/count. `where=` leaves elements out too."""
    _no_out("nanmean", out)
    return _nan_moments("nanmean", a, axis, dtype, keepdims, None, where)


@api
def nanvar(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, *, where: Any = None) -> Tracer:  # fmt: skip
    """The variance of the non-NaN elements along `axis`, divided by count - ddof; NaN where
    that is <= 0 (numpy's rule), an all-NaN slice included. NaN entries have gradient 0."""
    _no_out("nanvar", out)
    return _nan_moments("nanvar", a, axis, dtype, keepdims, _int("nanvar", "ddof", ddof), where)


@api
def nanstd(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, *, where: Any = None) -> Tracer:  # fmt: skip
    """The square root of `nanvar`. Where the variance is 0 the gradient is 0 (as `std`), and
    NaN entries have gradient 0."""
    _no_out("nanstd", out)
    v = _nan_moments("nanstd", a, axis, dtype, keepdims, _int("nanstd", "ddof", ddof), where)
    spread = v > 0.0  # false for NaN and 0: the square root reads 1 there
    root = np_api.sqrt(np_api.where(spread, v, 1.0))
    return np_api.where(spread, root, np_api.where(v == 0.0, 0.0, float("nan")))


def _nan_extreme(op_name: str, a: Any, axis: Axis, keepdims: bool, largest: bool,
                 initial: Any = None, where: Any = None) -> Tracer:  # fmt: skip
    t = lift(a)
    reduce = np_api.max if largest else np_api.min
    axes = normalize_axes(op_name, axis, t.ndim)
    if not dtypes.is_float(t.dtype) or initial is not None:
        # With initial=, a slice of NaNs only (or with nothing selected) is `initial` (numpy's
        # fmax.reduce): the NaNs read as the identity, and max/min joins initial.
        keywords.require_initial(op_name, where, initial)
        safe, _ = _replace_nan(t, float("-inf") if largest else float("inf"))
        return reduce(safe, axis=axes, keepdims=keepdims, initial=initial, where=where)
    keywords.require_initial(op_name, where, initial)
    if any(t.shape[i] == 0 for i in axes):
        raise ShapeError(
            f"{op_name}: zero-size reduction over axes {axes} of shape {t.shape} has no identity "
            f"(numpy raises too){user_site()}"
        )
    safe, mask = _replace_nan(t, float("-inf") if largest else float("inf"))
    m = reduce(safe, axis=axes, keepdims=keepdims)
    return np_api.where(_all(mask, axis=axes, keepdims=keepdims), float("nan"), m)


@api
def nanmax(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Tracer:  # fmt: skip
    """The maximum along `axis` ignoring NaNs; NaN for an all-NaN slice (`initial` with
    initial=). Ties share the cotangent equally; NaN entries get 0. where= needs initial=."""
    _no_out("nanmax", out)
    return _nan_extreme("nanmax", a, axis, keepdims, True, initial, where)


@api
def nanmin(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Tracer:  # fmt: skip
    """The minimum along `axis` ignoring NaNs; NaN for an all-NaN slice (`initial` with
    initial=). Ties share the cotangent equally; NaN entries get 0. where= needs initial=."""
    _no_out("nanmin", out)
    return _nan_extreme("nanmin", a, axis, keepdims, False, initial, where)


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
