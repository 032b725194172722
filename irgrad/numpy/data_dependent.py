"""jax.numpy's data-dependent-shape functions, with a static `size`: composites of existing ops
(no new IR, no new derivative rules).

- `nonzero`, `argwhere`, `flatnonzero`, `unique(..., size=, fill_value=)`: as jax.numpy, the
  result padded with `fill_value` (nonzero family: 0; unique: its smallest value) or truncated
  to `size` elements. Indices are int32. `size` is required when the argument is traced (a
  ConcretizationError names the function and says to pass size=); on concrete numpy values
  (eager calls, captured constants) it defaults to the data's own count, computed with numpy.
  `unique` flattens its argument (axis=None, or axis 0 of a 1-D array); `equal_nan` as numpy.

Derivatives: nonzero, argwhere, flatnonzero, and unique's indices, inverse and counts: integers, no
  gradient. unique's values are a gather of the first occurrence of each value (fill slots
  given by `fill_value` get none; default padding repeats the smallest value's occurrence).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from irgrad.numpy import basic as np_api
from irgrad.numpy.numerics import isnan
from irgrad.numpy.reductions import cumsum as _np_cumsum
from irgrad.numpy.shape import stack, take
from irgrad.tracing.sorting import argsort_last
from irgrad.numpy.support import api, broadcast_to, lift
from irgrad.tracing import dtypes
from irgrad.tracing import primitives as lax
from irgrad.tracing.errors import ConcretizationError, ShapeError, user_site
from irgrad.tracing.tracer import Tracer, full

__all__ = ["argwhere", "flatnonzero", "nonzero", "unique", "where"]

_I32 = dtypes.int32

def is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def static_int(op_name: str, what: str, v: Any) -> int:
    """`v` as a Python int; a traced or non-integer value is an error naming `op_name`."""
    if isinstance(v, Tracer):
        raise ConcretizationError(f"{op_name}: {what} must be a static Python int, got a traced value{user_site()}")
    if not is_int(v):
        raise TypeError(f"{op_name}: {what} must be a Python int, got {v!r}{user_site()}")
    return int(v)


def slice_axis(t: Tracer, axis: int, start: int, stop: int) -> Tracer:
    """`t[start:stop]` along `axis`."""
    begin, end = [0] * t.ndim, list(t.shape)
    begin[axis], end[axis] = start, stop
    return lax.slice(t, begin, end, [1] * t.ndim)


# ---------------------------------------------------------------------------------------------
# nonzero, argwhere, flatnonzero, unique: a static `size`
# ---------------------------------------------------------------------------------------------


def _size(op_name: str, a: Any, size: Any, count: Callable[[np.ndarray], int]) -> int:
    """The static result size: `size` if given, else counted with numpy on a concrete `a`."""
    if size is not None:
        s = static_int(op_name, "size", size)
        if s < 0:
            raise ValueError(f"{op_name}: size must be non-negative, got {s}{user_site()}")
        return s
    if isinstance(a, Tracer):
        raise ConcretizationError(
            f"{op_name}: the size of the result depends on the values of a traced array, which are "
            f"unknown while tracing (under ig.jit, ig.vmap, ig.grad, ...); pass size= (a Python int: "
            f"the result is padded with fill_value or truncated to it), as in JAX{user_site()}"
        )
    return int(count(np.asarray(a)))


def _flat_true(mask: Tracer, size: int) -> tuple[Tracer, Tracer]:
    """The positions (int32, `size` of them, 0 past the count) of the first `size` true elements
    of the 1-D bool `mask`, and whether each slot holds one: an exclusive running count sends
    each true element's position to its slot (`nn.scatter_add`, one writer per slot)."""
    n = mask.shape[0]
    if n == 0 or size == 0:
        return full((size,), 0, _I32), full((size,), False, dtypes.bool_)
    running = _np_cumsum(lax.convert(mask, _I32))
    count = lax.reshape(slice_axis(running, 0, n - 1, n), ())
    kept = mask & (running <= size)
    slot = np_api.where(kept, running - 1, size)
    positions = np_api.where(kept, lax.iota((n,), 0, _I32), 0)
    slots = lax.scatter_add(full((size + 1,), 0, _I32), slot, positions, 0)
    return slice_axis(slots, 0, 0, size), lax.iota((size,), 0, _I32) < count


def _fills(op_name: str, fill_value: Any, ndim: int) -> list[Any]:
    if fill_value is None:
        return [0] * ndim
    if isinstance(fill_value, (tuple, list)):
        if len(fill_value) != ndim:
            raise ValueError(f"{op_name}: fill_value has {len(fill_value)} entries for an array of rank {ndim}{user_site()}")
        return list(fill_value)
    return [fill_value] * ndim


def _coordinates(op_name: str, a: Any, size: int, fill_value: Any) -> list[Tracer]:
    t = lift(a)
    shape = t.shape
    mask = t if t.dtype == dtypes.bool_ else np_api.not_equal(t, lift(0, t.dtype))
    flat, valid = _flat_true(lax.reshape(mask, (t.size,)), size)
    coords = []
    for d, fill in zip(range(len(shape)), _fills(op_name, fill_value, len(shape))):
        stride = int(np.prod(shape[d + 1 :], dtype=np.int64))
        c = flat if stride == 1 else np_api.floor_divide(flat, stride)
        if d > 0:
            c = np_api.remainder(c, shape[d])
        coords.append(np_api.where(valid, c, lift(fill, _I32)))
    return coords


@api
def _nonzero(a: Any, size: int, fill_value: Any) -> tuple[Tracer, ...]:
    if lift(a).ndim == 0:
        raise ShapeError(f"nonzero: not defined for a 0-d array (use atleast_1d){user_site()}")
    return tuple(_coordinates("nonzero", a, size, fill_value))


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """`jax.numpy.nonzero(a, size=, fill_value=)`: per axis, the int32 indices of the nonzero
    elements in row-major order, `size` of them (padded with `fill_value`, default 0, a scalar or
    one per axis; or truncated). `size` is required for a traced `a`."""
    return _nonzero(a, _size("nonzero", a, size, np.count_nonzero), fill_value)


@api
def _argwhere(a: Any, size: int, fill_value: Any) -> Tracer:
    t = lift(a)
    if t.ndim == 0:
        return full((size, 0), 0, _I32)  # as JAX: the rows of atleast_1d(a), with no columns
    coords = _coordinates("argwhere", t, size, fill_value)
    return stack(coords, axis=1)


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """`jax.numpy.argwhere(a, size=, fill_value=)`: the int32 indices of the nonzero elements,
    one row each, shape (size, a.ndim); padded or truncated as `nonzero`."""
    return _argwhere(a, _size("argwhere", a, size, np.count_nonzero), fill_value)


@api
def _flatnonzero(a: Any, size: int, fill_value: Any) -> Tracer:
    t = lift(a)
    return _coordinates("flatnonzero", lax.reshape(t, (t.size,)), size, fill_value)[0]


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """`jax.numpy.flatnonzero(a, size=, fill_value=)`: int32 indices of the nonzero elements of
    the flattened `a`, padded or truncated to `size` as `nonzero`."""
    return _flatnonzero(a, _size("flatnonzero", a, size, np.count_nonzero), fill_value)


@api
def _unique(ar: Any, size: int, fill_value: Any, return_index: bool, return_inverse: bool,
            return_counts: bool, equal_nan: bool) -> Any:  # fmt: skip
    from irgrad.numpy.custom_derivatives import stop_gradient

    t = lift(ar)
    shape = t.shape
    flat = lax.reshape(t, (t.size,))
    n = flat.shape[0]
    keys = stop_gradient(flat) if dtypes.is_float(flat.dtype) else flat
    perm = argsort_last(keys) if n > 1 else lax.iota((n,), 0, _I32)
    aux = take(flat, perm)
    if n == 0:
        empty = broadcast_to(lift(0 if fill_value is None else fill_value, t.dtype), (size,))
        values, firsts, mask = empty, full((size,), 0, _I32), full((0,), False, dtypes.bool_)
        valid = full((size,), False, dtypes.bool_)
    else:
        prev, cur = slice_axis(aux, 0, 0, n - 1), slice_axis(aux, 0, 1, n)
        if aux.dtype == dtypes.bool_:
            differ = np_api.not_equal(lax.convert(prev, _I32), lax.convert(cur, _I32))
        else:
            differ = np_api.not_equal(prev, cur)
        if dtypes.is_float(aux.dtype) and equal_nan:
            differ = differ & np_api.logical_not(isnan(prev) & isnan(cur))
        mask = lax.concatenate([full((1,), True, dtypes.bool_), differ], 0)
        firsts, valid = _flat_true(mask, size)
        values = take(aux, firsts)
        if fill_value is not None:
            values = np_api.where(valid, values, lift(fill_value, t.dtype))
    out: list[Tracer] = [values]
    if return_index:
        out.append(take(perm, firsts) if n else full((size,), 0, _I32))
    if return_inverse:
        if n:
            group = _np_cumsum(lax.convert(mask, _I32)) - 1
            inverse = lax.scatter_add(full((n,), 0, _I32), perm, group, 0)
        else:
            inverse = full((0,), 0, _I32)
        out.append(lax.reshape(inverse, shape))
    if return_counts:
        if n:
            # Start of each group in sorted order (n past the last), then differences.
            starts, ok = _flat_true(mask, size + 1)
            starts = np_api.where(ok, starts, n)
            out.append(slice_axis(starts, 0, 1, size + 1) - slice_axis(starts, 0, 0, size))
        else:
            out.append(full((size,), 0, _I32))
    return out[0] if len(out) == 1 else tuple(out)


def _count_unique(equal_nan: bool) -> Callable[[np.ndarray], int]:
    def count(a: np.ndarray) -> int:
        return len(np.unique(a.ravel(), equal_nan=equal_nan)) if a.size else 0

    return count


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, size: int | None = None,
           fill_value: Any = None) -> Any:  # fmt: skip
    """`jax.numpy.unique` of the flattened `ar`: its sorted distinct values (NaNs one value with
    `equal_nan`), `size` of them, padded with `fill_value` (default: the smallest value) or
    truncated; with `return_index` the int32 index of each value's first occurrence, with
    `return_inverse` each element's slot (int32, ar's shape), with `return_counts` the counts
    (0 for padding). `size` is required for a traced `ar`."""
    ndim = ar.ndim if isinstance(ar, Tracer) else np.ndim(ar)
    if axis is not None and not (ndim == 1 and axis in (0, -1)):
        raise NotImplementedError(f"unique: only axis=None (or axis 0 of a 1-D array) is supported, got axis={axis!r}{user_site()}")
    s = _size("unique", ar, size, _count_unique(bool(equal_nan)))
    return _unique(ar, s, fill_value, bool(return_index), bool(return_inverse), bool(return_counts), bool(equal_nan))


def where(condition: Any, x: Any = None, y: Any = None, *, size: int | None = None,
          fill_value: Any = None) -> Any:
    """`ig.where`: numpy's three-argument where (irgrad/numpy/basic.py); with the condition
    alone, `nonzero(condition, size=, fill_value=)` as jax.numpy."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError(f"where: give both x and y, or neither{user_site()}")
    return np_api.where(condition, x, y)
