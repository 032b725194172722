"""jax.numpy's array edits: unstack, delete, insert, resize, diagflat, block.

All are static in shape, as in JAX under jit: which elements `delete` drops and where `insert`
puts its values are Python ints, slices or concrete numpy arrays, read with numpy while
tracing (a traced index array is a ConcretizationError). Each is built from existing `nn`
data movement (slice, reshape, concatenate, gather with a constant index, tile, diag), so it
is exact for every dtype and its derivative is that movement's adjoint: each element's
cotangent goes back to the element it was copied from (nothing to deleted elements; to
`insert`'s values, summed over the places a broadcast value went).

Where numpy and JAX differ, these follow JAX: `insert` clips out-of-range indices (numpy
raises) and refuses bool ones; `diagflat` is always 2-D; `block` refuses tuples. `delete` and
`insert` also take lists of indices (numpy does, JAX does not); `delete` refuses a bool scalar
(numpy reads it as a mask, JAX as the index 1) and raises IndexError for an index out of range.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import arrays as arrays_api, shape as shape_api
from irgrad.numpy.support import api, lift, normalize_axes, result_dtype, shape_of
from irgrad.tracing.errors import ConcretizationError, ShapeError, user_site
from irgrad.tracing.tracer import Tracer, full

__all__ = ["block", "delete", "diagflat", "insert", "resize", "unstack"]


def _axis_of(op_name: str, t: Tracer, axis: Any) -> tuple[Tracer, int]:
    """(t, axis) with axis=None meaning axis 0 of the flattened array, as numpy's."""
    if axis is None:
        return lax.reshape(t, (t.size,)), 0
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op_name}: axis must be an int or None, got {axis!r}{user_site()}")
    return t, normalize_axes(op_name, int(axis), t.ndim)[0]


def _gather(t: Tracer, positions: np.ndarray, axis: int) -> Tracer:
    """t's elements at the static `positions` along `axis` (a gather with a constant index)."""
    if positions.size == 0:
        return full((*t.shape[:axis], 0, *t.shape[axis + 1 :]), 0, t.dtype)
    return lax.gather(t, lift(positions.astype(np.int32)), axis)


@dataclasses.dataclass(frozen=True)
class _StaticIndices:
    """A numpy index array kept static through an eager call (which makes its numpy array
    arguments traced parameters), hashable for the eager program cache."""

    data: bytes
    dtype: str
    shape: tuple[int, ...]

    @classmethod
    def of(cls, a: np.ndarray) -> _StaticIndices:
        return cls(np.ascontiguousarray(a).tobytes(), a.dtype.str, a.shape)

    def array(self) -> np.ndarray:
        return np.frombuffer(self.data, np.dtype(self.dtype)).reshape(self.shape)


def _static_index(op_name: str, obj: Any) -> Any:
    """`obj` as numpy sees it (an int, a slice, or index values kept static); traced values
    are refused."""
    if isinstance(obj, Tracer):
        raise ConcretizationError(
            f"{op_name}: the indices (obj, a traced {obj.dtype} array of shape {obj.shape}) must be static: "
            f"the result's shape depends on them. Pass a Python int, a slice, or a numpy array "
            f"(closed over, not an argument of ig.jit), as JAX requires under jit{user_site()}"
        )
    if isinstance(obj, slice):
        return obj
    if isinstance(obj, (bool, np.bool_)):
        raise TypeError(
            f"{op_name}: obj must be an int, a slice, or an array of ints, got the bool {obj!r} "
            f"(numpy reads it as a mask, JAX as the index {int(obj)}){user_site()}"
        )
    try:
        return operator.index(obj)
    except TypeError:
        a = np.asarray(obj)
        if a.dtype == object:
            raise TypeError(f"{op_name}: obj must be an int, a slice, or an array of ints, got {obj!r}{user_site()}")
        return _StaticIndices.of(a)


def _index_value(obj: Any) -> Any:
    """The int, slice or numpy array that `_static_index` kept."""
    return obj.array() if isinstance(obj, _StaticIndices) else obj


@api
def unstack(x: Any, /, *, axis: int = 0) -> tuple[Tracer, ...]:
    """The slices of x along `axis`, as a tuple (the array API's unstack, the inverse of
    `stack`): one slice and one reshape each."""
    t = lift(x)
    if t.ndim == 0:
        raise ShapeError(f"unstack: needs an array of at least one dimension, got shape (){user_site()}")
    _, ax = _axis_of("unstack", t, axis)
    rest = (*t.shape[:ax], *t.shape[ax + 1 :])
    return tuple(lax.reshape(arrays_api._slice_axis(t, ax, i, i + 1), rest) for i in range(t.shape[ax]))


# ---------------------------------------------------------------------------------------------
# delete
# ---------------------------------------------------------------------------------------------


def _kept_positions(obj: Any, n: int) -> np.ndarray:
    """The positions along an axis of length n that delete(obj) keeps, computed with numpy."""
    if isinstance(obj, int):
        if not -n <= obj < n:
            raise IndexError(f"delete: index {obj} is out of bounds for an axis of size {n}{user_site()}")
        return np.delete(np.arange(n), obj)
    if isinstance(obj, slice):
        return np.delete(np.arange(n), obj)
    if obj.dtype == np.bool_:
        if obj.shape != (n,):
            raise ValueError(
                f"delete: a boolean obj must be 1-D with the axis' length {n}, got shape {obj.shape}{user_site()}"
            )
        return np.flatnonzero(~obj)
    if obj.size == 0:
        return np.arange(n)
    if obj.dtype.kind not in "iu":
        raise ValueError(f"delete: obj must be integer or bool, got dtype {obj.dtype}{user_site()}")
    bad = (obj < -n) | (obj >= n)
    if bad.any():
        raise IndexError(f"delete: index {obj[bad].ravel()[0]} is out of bounds for an axis of size {n}{user_site()}")
    keep = np.ones(n, dtype=bool)
    keep[obj] = False
    return np.flatnonzero(keep)


def delete(arr: Any, obj: Any, axis: int | None = None, *, assume_unique_indices: bool = False) -> Tracer:
    """arr without the entries `obj` (an int, a slice, integer indices, negative ones from the
    end, repeats allowed, or a bool mask of the axis' length) along `axis` (of the flattened
    array for None): a gather of the kept positions. `obj` must be static, as JAX requires
    under jit; `assume_unique_indices` is accepted and changes nothing here (JAX uses it for
    traced unique indices, which irgrad does not take)."""
    del assume_unique_indices
    return _delete(arr, _static_index("delete", obj), axis)


@api
def _delete(arr: Any, obj: Any, axis: int | None) -> Tracer:
    t, ax = _axis_of("delete", lift(arr), axis)
    return _gather(t, _kept_positions(_index_value(obj), t.shape[ax]), ax)


# ---------------------------------------------------------------------------------------------
# insert
# ---------------------------------------------------------------------------------------------


def _insert_indices(obj: Any, n: int) -> np.ndarray:
    """insert's indices, as JAX reads them: a slice's range, or a 0-d / 1-D integer array."""
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n))
    indices = np.asarray(obj)
    if indices.ndim > 1:
        raise ValueError(f"insert: obj must be a slice, a 1-D array or a scalar, got shape {indices.shape}{user_site()}")
    if indices.dtype.kind not in "iu":
        if indices.size == 0 and indices.dtype != np.bool_:
            return indices.astype(np.int64)
        raise ValueError(f"insert: the indices must be integers, got dtype {indices.dtype}{user_site()}")
    return indices.astype(np.int64)


def _insert_plan(indices: np.ndarray, n: int, n_insert: int) -> np.ndarray:
    """For each output position, where it comes from in concat([arr, values]) along the axis:
    JAX's (and numpy's) placement, indices counted from the end when negative, clipped to
    [0, n], values at one index in their order (a stable sort)."""
    indices = np.broadcast_to(indices, (n_insert,))
    indices = np.clip(np.where(indices < 0, indices + n, indices), 0, n)
    values_at = indices.copy()
    values_at[np.argsort(indices, kind="stable")] += np.arange(n_insert)
    arr_mask = np.ones(n + n_insert, dtype=bool)
    arr_mask[values_at] = False
    source = np.empty(n + n_insert, dtype=np.int64)
    source[values_at] = n + np.arange(n_insert)
    source[arr_mask] = np.arange(n)
    return source


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Tracer:
    """arr with `values` inserted before the indices `obj` (an int, a slice or 1-D integer
    indices, static as JAX requires under jit) along `axis` (of the flattened array for None).
    values take arr's dtype and broadcast as in JAX; out-of-range indices are clipped to
    [0, n] (JAX's choice; numpy raises). arr and values are concatenated, then gathered in
    the output order, so values get their cotangents back (summed over broadcast copies)."""
    return _insert(arr, _static_index("insert", obj), values, axis)


@api
def _insert(arr: Any, obj: Any, values: Any, axis: int | None) -> Tracer:
    t, ax = _axis_of("insert", lift(arr), axis)
    n = t.shape[ax]
    indices = _insert_indices(_index_value(obj), n)
    v = lift(values, t.dtype)
    v = lax.reshape(v, (1,) * (t.ndim - v.ndim) + v.shape) if v.ndim < t.ndim else v
    if indices.size == 1:
        if indices.ndim == 0:
            v = arrays_api.moveaxis(v, 0, ax)
        indices = np.full(v.shape[ax], indices.reshape(()))
    try:
        n_insert = np.broadcast_shapes(indices.shape, (v.shape[ax],))[0]
        v = shape_api.broadcast_to(v, (*t.shape[:ax], n_insert, *t.shape[ax + 1 :]))
    except (ValueError, ShapeError):
        raise ShapeError(
            f"insert: values of shape {v.shape} do not broadcast to {indices.size} insertions into axis {ax} "
            f"of shape {t.shape}{user_site()}"
        ) from None
    joined = lax.concatenate([t, v], ax)
    return _gather(joined, _insert_plan(indices, n, n_insert), ax)


# ---------------------------------------------------------------------------------------------
# resize, diagflat, block
# ---------------------------------------------------------------------------------------------


@api
def resize(a: Any, new_shape: int | Sequence[int]) -> Tracer:
    """An array of `new_shape` filled with a's flattened elements, repeated as often as needed
    (numpy's resize: a tile, a slice and a reshape); zeros where a or the result is empty."""
    shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    shape = tuple(arrays_api._int("resize", "new_shape", d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"resize: all elements of new_shape must be non-negative, got {shape}{user_site()}")
    flat = arrays_api.ravel(a)
    size = int(np.prod(shape, dtype=np.int64))
    if flat.size == 0 or size == 0:
        return full(shape, 0, flat.dtype)
    tiled = arrays_api.tile(flat, -(-size // flat.size))
    return lax.reshape(arrays_api._slice_axis(tiled, 0, 0, size), shape)


@api
def diagflat(v: Any, k: int = 0) -> Tracer:
    """A 2-D array with v's flattened elements on diagonal k, zeros elsewhere (always 2-D, as
    JAX's; numpy's may differ for some scalars)."""
    return arrays_api.diag(arrays_api.ravel(v), arrays_api._int("diagflat", "k", k))


def _depth(op_name: str, xs: Any, where: str = "arrays") -> int:
    """How deeply `xs` nests lists (0 for an array); tuples, empty and ragged lists refused."""
    if isinstance(xs, tuple):
        raise ValueError(f"{op_name}: {where} is a tuple; only lists arrange blocks, as in JAX{user_site()}")
    if not isinstance(xs, list):
        return 0
    if not xs:
        raise ValueError(f"{op_name}: {where} is an empty list{user_site()}")
    depths = {_depth(op_name, x, f"{where}[{i}]") for i, x in enumerate(xs)}
    if len(depths) > 1:
        raise ValueError(f"{op_name}: mismatched list depths in {where} ({sorted(depths)}){user_site()}")
    return depths.pop() + 1


def _leaves(xs: Any) -> list[Any]:
    return [leaf for x in xs for leaf in _leaves(x)] if isinstance(xs, list) else [xs]


def _assemble(xs: Any, dtype: np.dtype) -> tuple[Tracer, int]:
    """JAX's _block: (the array, its list depth + 1); the innermost lists join along the last
    axis, each level out one axis further left, blocks given leading ones to the level's rank."""
    if not isinstance(xs, list):
        return lift(xs, dtype), 1
    parts, depths = zip(*[_assemble(x, dtype) for x in xs])
    rank = max(depths[0], *(p.ndim for p in parts))
    parts = [lax.reshape(p, (1,) * (rank - p.ndim) + p.shape) for p in parts]
    return shape_api.concatenate(parts, axis=-depths[0]), depths[0] + 1


@api
def block(arrays: Any) -> Tracer:
    """An array assembled from nested lists of blocks (numpy's and JAX's block): the innermost
    lists are concatenated along the last axis, the next level along the one before, and so
    on; blocks of lower rank get leading axes of length 1. The dtype is the blocks' promoted
    one (Python scalars weakly typed)."""
    _depth("block", arrays)
    dtype = result_dtype(*_leaves(arrays))
    return _assemble(arrays, dtype)[0]
