"""`x.at[index].set(v)` and its siblings: JAX's functional indexed updates, on tracers.

Arrays are values, so an update returns a new array; `index` is anything `x[index]` accepts
(indexing.py). Out-of-range traced indices follow JAX: `get` clamps (as `x[i]` does), updates
are *dropped* (the element is left as it was). Two lowerings:

- A box: every index an int, a traced integer scalar or a slice of step 1 (with `None` and `...`
  anywhere). The update is one `nn.dynamic_update_slice` of the box (read with
  `nn.dynamic_slice` first for `add`, `multiply`, ... and where a traced index may be out of
  range). Cost: the box, not the array; inside a loop bufferization updates in place.
- Anything else (an index array, a strided or reversed slice): the flat positions of the
  indexed elements are computed (an iota indexed like `x`; a traced index out of range points
  at a sentinel row of -1) and the update is an `nn.scatter_add` into the flattened array. `add`
  accumulates repeated positions, as in JAX. For `set` and the others JAX leaves repeated
  positions unspecified; here the updates of a repeated position are summed (and for
  `multiply`, `divide`, `power`, `min`, `max`, applied to the old value once each then summed),
  so use `add` where indices repeat.

Derivatives come from the ops' own rules: through `set` the overwritten elements get no
cotangent and the update gets the cotangent of where it went.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax

from irgrad.numpy import basic as np_api, shape as shape_api
from irgrad.numpy.support import lift
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.numpy.indexing import _is_index_array, _is_int, _is_traced_scalar_int, getitem

Combine = Callable[[Tracer, Tracer], Tracer]


class IndexUpdateHelper:
    """`x.at`: indexing it gives the reference that `.set`, `.add`, ... update."""

    __slots__ = ("array",)

    def __init__(self, array: Tracer):
        self.array = array

    def __getitem__(self, index: Any) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class IndexUpdateRef:
    """`x.at[index]`: what an update writes to."""

    __slots__ = ("array", "index")

    def __init__(self, array: Tracer, index: Any):
        self.array, self.index = array, index

    def get(self) -> Tracer:
        """`x[index]` (out-of-range traced indices are clamped)."""
        return getitem(self.array, self.index)

    def set(self, values: Any) -> Tracer:
        return _update(self.array, self.index, values, None, "set")

    def add(self, values: Any) -> Tracer:
        return _update(self.array, self.index, values, np_api.add, "add")

    def multiply(self, values: Any) -> Tracer:
        return _update(self.array, self.index, values, np_api.multiply, "multiply")

    mul = multiply

    def divide(self, values: Any) -> Tracer:
        return _update(self.array, self.index, values, np_api.divide, "divide")

    def power(self, values: Any) -> Tracer:
        return _update(self.array, self.index, values, np_api.power, "power")

    def min(self, values: Any) -> Tracer:
        return _update(self.array, self.index, values, np_api.minimum, "min")

    def max(self, values: Any) -> Tracer:
        return _update(self.array, self.index, values, np_api.maximum, "max")

    def apply(self, fn: Callable[[Any], Any]) -> Tracer:
        """`fn` (elementwise) applied to the indexed elements."""
        return _update(self.array, self.index, None, lambda old, _: fn(old), "apply")


def _expand(x: Tracer, index: Any) -> list[Any]:
    """The index as one item per dimension of `x` (plus the `None`s), `...` expanded."""
    items = list(index) if isinstance(index, tuple) else [index]
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for an array of shape {x.shape}: {index!r}{user_site()}")
    ellipses = [k for k, i in enumerate(items) if i is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    fill = [slice(None)] * (x.ndim - consumed)
    if ellipses:
        items[ellipses[0] : ellipses[0] + 1] = fill
    else:
        items += fill
    return items


def _view_shape(x: Tracer, items: list[Any]) -> tuple[int, ...]:
    """The shape of `x[items]`, found by numpy on a zero-stride stand-in (no IR, no copy of x)."""
    stand_in = np.broadcast_to(np.zeros((), np.bool_), x.shape)
    probe = tuple(
        0 if _is_traced_scalar_int(i)
        else np.zeros(i.shape, np.intp) if isinstance(i, Tracer)
        else i
        for i in items
    )
    return tuple(stand_in[probe].shape)


def _is_box(x: Tracer, items: list[Any]) -> bool:
    dims = [i for i in items if i is not None]
    return all(
        _is_int(i) or _is_traced_scalar_int(i) or (isinstance(i, slice) and i.indices(n)[2] == 1)
        for i, n in zip(dims, x.shape)
    )


def _values(x: Tracer, values: Any, view_shape: tuple[int, ...], what: str) -> Tracer:
    v = lift(values)
    if not dtypes.is_float(x.dtype) and dtypes.is_float(v.dtype):
        raise TypeError(f"at[].{what}: cannot write floating-point values ({v.dtype}) into an array of {x.dtype}{user_site()}")
    v = lax.convert(v, x.dtype)
    try:
        np.broadcast_shapes(v.shape, view_shape)
        if len(v.shape) > len(view_shape) or np.broadcast_shapes(v.shape, view_shape) != view_shape:
            raise ValueError
    except ValueError:
        raise ShapeError(
            f"at[].{what}: values of shape {v.shape} do not broadcast to the indexed shape {view_shape} "
            f"of an array of shape {x.shape}{user_site()}"
        ) from None
    return shape_api.broadcast_to(v, view_shape)


def _in_range(i: Tracer, n: int) -> tuple[Tracer, Tracer]:
    """A traced index with negatives wrapped, and whether it is in [0, n)."""
    wrapped = np_api.where(i < 0, i + n, i)
    return wrapped, (wrapped >= 0) & (wrapped < n)


def _update(x: Any, index: Any, values: Any, combine: Combine | None, what: str) -> Tracer:
    x = lift(x)
    items = _expand(x, index)
    view_shape = _view_shape(x, items)
    if values is not None:
        values = _values(x, values, view_shape, what)
    if _is_box(x, items):
        return _update_box(x, items, values, combine)
    return _update_scattered(x, items, values, combine)


def _update_box(x: Tracer, items: list[Any], values: Tracer | None, combine: Combine | None) -> Tracer:
    starts: list[Any] = []
    sizes: list[int] = []
    valid: Tracer | None = None
    for item, n in zip([i for i in items if i is not None], x.shape):
        if isinstance(item, slice):
            start, stop, _ = item.indices(n)
            starts.append(start)
            sizes.append(max(stop - start, 0))
        elif _is_int(item):
            if not -n <= int(item) < n:
                raise IndexError(f"index {int(item)} is out of bounds for an axis of size {n}{user_site()}")
            starts.append(int(item) % n)
            sizes.append(1)
        else:
            wrapped, ok = _in_range(item, n)
            starts.append(wrapped)
            sizes.append(1)
            valid = ok if valid is None else valid & ok
    if 0 in sizes:
        return x
    old = lax.dynamic_slice(x, starts, sizes) if combine is not None or valid is not None else None
    new = lax.reshape(values, sizes) if values is not None else None
    if combine is not None:
        new = combine(old, new)
    if valid is not None:
        new = np_api.where(valid, new, old)
    return lax.dynamic_update_slice(x, lift(new, x.dtype), starts)


def _flat_positions(x: Tracer, items: list[Any]) -> Tracer:
    """int64 flat positions of the elements `x[items]` selects; -1 where a traced index is out of range.

    An iota of x's flat positions is indexed like x. Each dimension indexed by a traced value is
    padded with one sentinel element (-1), where its out-of-range indices are sent."""
    strides = [int(np.prod(x.shape[d + 1 :])) for d in range(x.ndim)]
    flat = full(x.shape, 0, np.int64)
    for d, s in enumerate(strides):
        flat = flat + lax.iota(x.shape, d, np.int64) * s
    high = [0] * x.ndim
    moved: list[Any] = []
    dim = 0
    for item in items:
        if item is None or isinstance(item, slice) or _is_int(item):
            moved.append(item)
        else:
            n = x.shape[dim]
            i = lift(item)
            if not dtypes.is_int(i.dtype):
                raise IndexError(f"index arrays must hold integers, got {i.dtype}{user_site()}")
            wrapped, ok = _in_range(i, n)
            moved.append(np_api.where(ok, wrapped, n))
            high[dim] = 1
        if item is not None:
            dim += 1
    if any(high):
        flat = lax.pad(flat, full((), -1, np.int64), [0] * x.ndim, high)
    return getitem(flat, tuple(moved))


def _update_scattered(x: Tracer, items: list[Any], values: Tracer | None, combine: Combine | None) -> Tracer:
    for item in items:
        if isinstance(item, (bool, np.bool_)) or (_is_index_array(item) and np.dtype(item.dtype) == np.bool_):
            raise IndexError(f"boolean mask updates give a data-dependent shape; use ig.where instead{user_site()}")
    positions = _flat_positions(x, items)
    valid = positions >= 0
    at = np_api.where(valid, positions, 0).reshape((-1,))
    flat_x = x.reshape((-1,))
    work = np.dtype(np.int32) if x.dtype == np.bool_ else x.dtype
    flat_w = lax.convert(flat_x, work)
    if combine is not None and combine is not np_api.add:
        old = lax.gather(flat_w, at, 0).reshape(positions.shape)
        new = lift(combine(lax.convert(old, x.dtype), values if values is not None else old), x.dtype)
    else:
        new = values
    new = lax.convert(np_api.where(valid, new, lift(0, x.dtype)), work).reshape((-1,))
    zeros = full((int(np.prod(x.shape)),), 0, work)
    if combine is np_api.add:
        result = lax.scatter_add(flat_w, at, new, 0)
    else:
        hits = lax.scatter_add(full(zeros.shape, 0, np.int32), at, lax.convert(valid, np.int32).reshape((-1,)), 0)
        result = np_api.where(hits > 0, lax.scatter_add(zeros, at, new, 0), flat_w)
    return lax.convert(result, x.dtype).reshape(x.shape)
