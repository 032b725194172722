"""`x[...]` on tracers: numpy basic indexing plus traced integer indices and integer index arrays.

- Python ints (negative ones count from the end) and slices with any step, negative included,
  become one `nn.slice` followed by a `nn.reshape` that drops the indexed dimensions.
- A traced integer scalar (a `fori_loop` counter, say) becomes `nn.dynamic_slice`; negative
  values count from the end, out-of-range ones are clamped (as in JAX).
- `None` inserts an axis, `...` fills the remaining ones.
- One integer index array (numpy or traced) gathers along its axis (`nn.gather`); several
  broadcast together and gather once from their axes merged into one (`x[rows, cols]`). As in
  numpy, the gathered dimensions replace the indexed ones where they stand, or come first in
  the result when the arrays and the integer indices are separated by a slice, `None` or `...`.
Boolean masks would give data-dependent shapes and are rejected.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy.support import lift
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import user_site


def _is_int(i: Any) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_traced_scalar_int(i: Any) -> bool:
    return isinstance(i, Tracer) and i.shape == () and dtypes.is_int(i.dtype)


def _is_index_array(i: Any) -> bool:
    if isinstance(i, Tracer):
        return i.ndim > 0 or not dtypes.is_int(i.dtype)
    return isinstance(i, (np.ndarray, list)) and not isinstance(i, str)


def getitem(x: Tracer, index: Any) -> Tracer:
    items = list(index) if isinstance(index, tuple) else [index]
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for an array of shape {x.shape}: {index!r}{user_site()}")
    # numpy: when the advanced indices (arrays and the ints beside them) are separated by a
    # slice, None or `...`, the gathered dimensions go first in the result.
    advanced = [k for k, i in enumerate(items) if i is not None and i is not Ellipsis and not isinstance(i, slice)]
    separated = bool(advanced) and advanced != list(range(advanced[0], advanced[-1] + 1))
    # Identity, not `==`: items may be arrays or tracers, whose `==` is elementwise.
    ellipses = [k for k, i in enumerate(items) if i is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if ellipses:
        k = ellipses[0]
        items[k : k + 1] = [slice(None)] * (x.ndim - consumed)
    else:
        items += [slice(None)] * (x.ndim - consumed)

    start, limit, stride = [], [], []
    dynamic: list[tuple[int, Any]] = []  # (dim, traced index)
    gathers: list[tuple[int, Any]] = []  # (dim, index array)
    out_shape: list[int] = []
    dim = 0
    for item in items:
        if item is None:
            out_shape.append(-2)  # marker for a new axis
            continue
        n = x.shape[dim]
        if isinstance(item, slice):
            s, e, k = item.indices(n)
            start.append(s)
            limit.append(e)
            stride.append(k)
            from irgrad.dialects.nn import slice_length

            out_shape.append(slice_length(s, e, k))
        elif _is_int(item):
            i = int(item)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}{user_site()}")
            i %= n
            start.append(i)
            limit.append(i + 1)
            stride.append(1)
        elif _is_traced_scalar_int(item):
            start.append(0)
            limit.append(n)
            stride.append(1)
            dynamic.append((dim, item))
        elif isinstance(item, (bool, np.bool_)) or (
            isinstance(item, (np.ndarray, Tracer)) and np.dtype(item.dtype) == np.bool_
        ) or (isinstance(item, list) and np.asarray(item).dtype == np.bool_):
            raise IndexError(
                "boolean mask indexing gives a data-dependent shape, which irgrad cannot trace; "
                f"use ig.where instead{user_site()}"
            )
        elif _is_index_array(item):
            start.append(0)
            limit.append(n)
            stride.append(1)
            gathers.append((dim, item))
            out_shape.append(-3)  # marker: replaced by the index array's shape
        else:
            raise IndexError(f"unsupported index {item!r}{user_site()}")
        dim += 1
    y = x
    if (start, limit, stride) != ([0] * x.ndim, list(x.shape), [1] * x.ndim):
        y = lax.slice(y, start, limit, stride)
    if dynamic:
        starts: list[Any] = [0] * y.ndim
        sizes = list(y.shape)
        for d, i in dynamic:
            starts[d] = _wrap_negative(i, y.shape[d])
            sizes[d] = 1
        y = lax.dynamic_slice(y, starts, sizes)
    # Dimensions indexed by an int are dropped; gathered ones are handled after the reshape.
    kept_dims = []
    d = 0
    for item in items:
        if item is None:
            continue
        if isinstance(item, slice) or _is_index_array(item):
            kept_dims.append(d)
        d += 1
    kept_shape = [y.shape[k] for k in kept_dims]
    y = lax.reshape(y, kept_shape)
    gather_rank = 0
    if gathers:
        axes = [kept_dims.index(gdim) for gdim, _ in gathers]
        idxs = [lift(arr) for _, arr in gathers]
        for idx in idxs:
            if not dtypes.is_int(idx.dtype):
                raise IndexError(f"index arrays must hold integers, got {idx.dtype}{user_site()}")
        if len(gathers) == 1:
            y = lax.gather(y, idxs[0], axes[0])
            gather_rank = idxs[0].ndim
        else:
            y, flat = _merge_index_arrays(y, axes, idxs)
            y = lax.gather(y, flat, axes[0])
            gather_rank = flat.ndim
    # Insert the new axes where the `None`s were.
    final: list[int] = []
    it = iter(y.shape)
    gather_at = -1
    for marker in out_shape:
        if marker == -2:
            final.append(1)
        elif marker == -3:
            if gather_at < 0:  # all index arrays' dimensions go where the first one was
                gather_at = len(final)
                final.extend(next(it) for _ in range(gather_rank))
        else:
            final.append(next(it))
    final.extend(it)
    y = lax.reshape(y, final)
    if gathers and separated:
        gathered = list(range(gather_at, gather_at + gather_rank))
        y = lax.transpose(y, gathered + [d for d in range(len(final)) if d not in gathered])
    return y


def _merge_index_arrays(y: Tracer, axes: list[int], idxs: list[Tracer]) -> tuple[Tracer, Tracer]:
    """Several index arrays as one: the indexed axes of `y` moved together to where the first
    one is and merged into one axis, the arrays broadcast together into one flat index into
    it (each wrapped if negative and clamped into its axis first, as one gather would)."""
    from irgrad.numpy.support import broadcast_shapes, broadcast_to

    others = [a for a in range(y.ndim) if a not in axes]
    before = [a for a in others if a < axes[0]]
    after = [a for a in others if a > axes[0]]
    y = lax.transpose(y, before + axes + after) if before + axes + after != list(range(y.ndim)) else y
    sizes = [y.shape[len(before) + k] for k in range(len(axes))]
    merged = [y.shape[a] for a in range(len(before))] + [int(np.prod(sizes))]
    merged += [y.shape[a] for a in range(len(before) + len(axes), y.ndim)]
    y = lax.reshape(y, merged)
    shape = broadcast_shapes("indexing", *[i.shape for i in idxs])
    wide = any(i.dtype == dtypes.int64 for i in idxs) or int(np.prod(sizes)) >= 2**31
    d = dtypes.int64 if wide else dtypes.int32  # the flat index must fit
    flat: Tracer | None = None
    for idx, n in zip(idxs, sizes):
        i = broadcast_to(lax.convert(idx, d) if idx.dtype != d else idx, shape)
        i = _wrap_negative(i, n)
        i = lax.select(lax.compare("lt", i, full(shape, 0, d)), full(shape, 0, d), i)
        i = lax.select(lax.compare("gt", i, full(shape, n - 1, d)), full(shape, n - 1, d), i)
        flat = i if flat is None else lax.binary(nn.AddOp, lax.binary(nn.MulOp, flat, full(shape, n, d)), i)
    assert flat is not None
    return y, flat


def _wrap_negative(i: Tracer, n: int) -> Tracer:
    zero = full(i.shape, 0, i.dtype)
    size = full(i.shape, n, i.dtype)
    return lax.select(lax.compare("lt", i, zero), lax.binary(nn.AddOp, i, size), i)
