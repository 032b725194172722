"""More numpy names, each a few lines over the rest of the API: array/asarray, broadcasting
helpers, the flip/rotate/append/split variants, index constructions (indices, ix_,
tril_indices, unravel_index, ...), geomspace/logspace, fill_diagonal, and size/ndim/shape.

`array` and `asarray` follow JAX: nested lists may hold traced values (they are stacked),
Python scalars are weakly typed (a list of Python floats is float32, of ints int32), and numpy
arrays keep their dtype. Index constructions whose output depends only on static sizes
(`tril_indices`, `diag_indices`, ...) return numpy int32 arrays, as JAX returns concrete
arrays: they index traced values directly. Everything here is data movement or a composite of
other API functions, so autodiff, vmap, jit and the backends need nothing new.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax

from irgrad.numpy import arrays, basic as np_api, shape as shape_api
from irgrad.numpy.support import (
    api,
    broadcast_shapes as _broadcast_shapes,
    broadcast_to,
    is_scalar,
    lift,
    normalize_axes,
    result_dtype,
    shape_of,
)
from irgrad.tracing.tracer import Tracer, full
from irgrad.numpy.numerics import clip
from irgrad.tracing.errors import ShapeError, user_site

__all__ = [
    "append",
    "array",
    "asarray",
    "broadcast_arrays",
    "broadcast_shapes",
    "diag_indices",
    "diag_indices_from",
    "dsplit",
    "fill_diagonal",
    "fliplr",
    "flipud",
    "geomspace",
    "hsplit",
    "indices",
    "isscalar",
    "ix_",
    "logspace",
    "ndim",
    "ravel_multi_index",
    "rollaxis",
    "rot90",
    "shape",
    "size",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
    "unravel_index",
    "vsplit",
]


# ---------------------------------------------------------------------------------------------
# array / asarray
# ---------------------------------------------------------------------------------------------


def _contains_tracer(obj: Any) -> bool:
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_contains_tracer(o) for o in obj)
    return False


def _leaves(obj: Any) -> list[Any]:
    if isinstance(obj, (list, tuple)):
        return [leaf for o in obj for leaf in _leaves(o)]
    return [obj]


def _nested(obj: Any, dtype: np.dtype) -> Tracer:
    """A nested list/tuple holding tracers as one array: each level is a `stack`."""
    if isinstance(obj, (list, tuple)):
        if not obj:
            raise ShapeError(f"array: an empty list inside a list of traced values{user_site()}")
        parts = [_nested(o, dtype) for o in obj]
        shapes = {p.shape for p in parts}
        if len(shapes) != 1:
            raise ShapeError(
                f"array: inhomogeneous nesting, elements have shapes "
                f"{', '.join(str(s) for s in sorted(shapes))}{user_site()}"
            )
        return shape_api.stack(parts, axis=0)
    return lift(obj, dtype) if not is_scalar(obj) else full((), obj, dtype)


def _default_dtype(obj: Any) -> np.dtype:
    """JAX's dtype for a constant: Python scalars (in lists) weak, numpy values their own."""
    if isinstance(obj, (list, tuple)):
        leaves = _leaves(obj)
        if not leaves:
            return dtypes.float32
        return result_dtype(*leaves)
    if is_scalar(obj):
        return dtypes.scalar_dtype(obj)
    if isinstance(obj, Tracer):
        return obj.dtype
    return dtypes.array_dtype_of(np.asarray(obj))


@api
def array(object: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> Tracer:  # noqa: A002
    """An array from a tracer, numpy array, Python scalar or nested list/tuple of them.

    Lists holding traced values are stacked, level by level; every leaf is converted to the
    result dtype (`dtype`, else JAX's promotion with Python scalars weak). `ndmin` prepends
    ones to the shape as numpy. `copy` is accepted for numpy's signature: values are
    immutable here, so a copy and the original cannot be told apart."""
    d = dtypes.canonical(dtype) if dtype is not None else _default_dtype(object)
    if isinstance(object, Tracer):
        t = lift(object, d)
    elif _contains_tracer(object):
        t = _nested(object, d)
    else:
        value = np.asarray(object)
        if value.dtype == object_dtype:
            raise TypeError(f"array: cannot make an array of {object!r}{user_site()}")
        t = lift(value, d)
    if ndmin > t.ndim:
        t = lax.reshape(t, (1,) * (ndmin - t.ndim) + t.shape)
    return t


object_dtype = np.dtype(object)


@api
def asarray(a: Any, dtype: Any = None) -> Tracer:
    """`array(a, dtype)`; a traced value of that dtype comes back as it is."""
    return array(a, dtype)


# ---------------------------------------------------------------------------------------------
# Broadcasting
# ---------------------------------------------------------------------------------------------


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape numpy broadcasting gives `shapes` (static: no trace needed)."""
    return _broadcast_shapes("broadcast_shapes", *[(s,) if isinstance(s, int) else tuple(s) for s in shapes])


@api
def broadcast_arrays(*args: Any) -> list[Tracer]:
    """Every argument broadcast to their common shape (each one `nn.broadcast_in_dim`)."""
    target = _broadcast_shapes("broadcast_arrays", *[shape_of(a) for a in args])
    return [broadcast_to(lift(a), target) for a in args]


# ---------------------------------------------------------------------------------------------
# Flips, rotations, appends, splits
# ---------------------------------------------------------------------------------------------


def _at_least(op_name: str, t: Tracer, ndim: int) -> None:
    if t.ndim < ndim:
        raise ShapeError(f"{op_name}: needs an array of rank {ndim} or more, got shape {t.shape}{user_site()}")


@api
def fliplr(m: Any) -> Tracer:
    """Reversed along axis 1."""
    t = lift(m)
    _at_least("fliplr", t, 2)
    return arrays.flip(t, 1)


@api
def flipud(m: Any) -> Tracer:
    """Reversed along axis 0."""
    t = lift(m)
    _at_least("flipud", t, 1)
    return arrays.flip(t, 0)


@api
def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Tracer:
    """Rotated by 90 degrees k times in the plane of `axes`, from the first axis towards the
    second (numpy's direction): a flip and a transpose."""
    t = lift(m)
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must name two axes, got {axes!r}{user_site()}")
    a0, a1 = (normalize_axes("rot90", int(a), t.ndim)[0] for a in axes)
    if a0 == a1:
        raise ValueError(f"rot90: axes must be different, got {axes!r}{user_site()}")
    k = int(k) % 4
    if k == 0:
        return t
    if k == 2:
        return arrays.flip(arrays.flip(t, a0), a1)
    perm = list(range(t.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return shape_api.transpose(arrays.flip(t, a1), perm)
    return arrays.flip(shape_api.transpose(t, perm), a1)


@api
def append(arr: Any, values: Any, axis: int | None = None) -> Tracer:
    """`values` after `arr` along `axis`; both flattened first when axis is None (numpy)."""
    d = result_dtype(arr, values)
    a, v = lift(arr, d), lift(values, d)
    if axis is None:
        return shape_api.concatenate([arrays.ravel(a), arrays.ravel(v)], axis=0)
    return shape_api.concatenate([a, v], axis=axis)


@api
def hsplit(ary: Any, indices_or_sections: Any) -> list[Tracer]:
    """`split` along axis 1, or axis 0 for 1-D arrays (numpy)."""
    t = lift(ary)
    _at_least("hsplit", t, 1)
    return arrays.split(t, indices_or_sections, axis=1 if t.ndim > 1 else 0)


@api
def vsplit(ary: Any, indices_or_sections: Any) -> list[Tracer]:
    """`split` along axis 0 of an array of rank 2 or more."""
    t = lift(ary)
    _at_least("vsplit", t, 2)
    return arrays.split(t, indices_or_sections, axis=0)


@api
def dsplit(ary: Any, indices_or_sections: Any) -> list[Tracer]:
    """`split` along axis 2 of an array of rank 3 or more."""
    t = lift(ary)
    _at_least("dsplit", t, 3)
    return arrays.split(t, indices_or_sections, axis=2)


@api
def rollaxis(a: Any, axis: int, start: int = 0) -> Tracer:
    """numpy's rollaxis: `axis` moved to sit before position `start` (a transpose)."""
    t = lift(a)
    n = t.ndim
    ax = normalize_axes("rollaxis", int(axis), n)[0]
    if not -n <= start <= n:
        raise ShapeError(f"rollaxis: start {start} is out of range for an array of rank {n}{user_site()}")
    start = start + n if start < 0 else start
    if ax < start:
        start -= 1
    if ax == start:
        return t
    perm = [i for i in range(n) if i != ax]
    perm.insert(start, ax)
    return shape_api.transpose(t, perm)


# ---------------------------------------------------------------------------------------------
# Index constructions
# ---------------------------------------------------------------------------------------------


@api
def indices(dimensions: Sequence[int], dtype: Any = dtypes.int32, sparse: bool = False) -> Any:
    """The index grid of `dimensions`: shape (len(dims), *dims), or with `sparse` a tuple of
    arrays shaped to broadcast against each other (numpy)."""
    dims = tuple(int(d) for d in dimensions)
    d = dtypes.canonical(dtype)
    if sparse:
        out = []
        for i, n in enumerate(dims):
            shape = tuple(n if j == i else 1 for j in range(len(dims)))
            out.append(lax.iota(shape, i, d))
        return tuple(out)
    if not dims:
        return lax.reshape(lax.iota((0,), 0, d), (0,))
    return shape_api.stack([lax.iota(dims, i, d) for i in range(len(dims))], axis=0)


@api
def ix_(*args: Any) -> tuple[Tracer, ...]:
    """Open-mesh index arrays: the k-th 1-D argument reshaped to (1, ..., n, ..., 1)."""
    out = []
    for k, a in enumerate(args):
        t = lift(a)
        if t.ndim != 1:
            raise ShapeError(f"ix_: arguments must be 1-D, argument {k} has shape {t.shape}{user_site()}")
        if t.dtype == dtypes.bool_:
            raise TypeError(f"ix_: boolean arguments select a data-dependent number of items; "
                            f"pass integer indices{user_site()}")
        shape = [1] * len(args)
        shape[k] = t.shape[0]
        out.append(lax.reshape(t, tuple(shape)))
    return tuple(out)


def _int32_pair(rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return rows.astype(np.int32), cols.astype(np.int32)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the lower triangle (numpy's order), int32 numpy arrays."""
    return _int32_pair(*np.tril_indices(int(n), int(k), None if m is None else int(m)))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the upper triangle (numpy's order), int32 numpy arrays."""
    return _int32_pair(*np.triu_indices(int(n), int(k), None if m is None else int(m)))


def tril_indices_from(arr: Any, k: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`tril_indices` for the last two dimensions of `arr` (only its shape is read)."""
    s = _shape2("tril_indices_from", arr)
    return tril_indices(s[0], k, s[1])


def triu_indices_from(arr: Any, k: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`triu_indices` for the shape of the 2-D `arr`."""
    s = _shape2("triu_indices_from", arr)
    return triu_indices(s[0], k, s[1])


def _shape2(op_name: str, arr: Any) -> tuple[int, ...]:
    s = tuple(shape_of(arr))
    if len(s) != 2:
        raise ShapeError(f"{op_name}: needs a 2-D array, got shape {s}{user_site()}")
    return s


def diag_indices(n: int, ndim: int = 2) -> tuple[np.ndarray, ...]:
    """`ndim` copies of arange(n): the indices of the main diagonal, int32 numpy arrays."""
    return tuple(np.arange(int(n), dtype=np.int32) for _ in range(int(ndim)))


def diag_indices_from(arr: Any) -> tuple[np.ndarray, ...]:
    """`diag_indices` for an array whose dimensions are all equal (only its shape is read)."""
    s = tuple(shape_of(arr))
    if len(s) < 2 or len(set(s)) != 1:
        raise ShapeError(f"diag_indices_from: needs an array of rank 2 or more with equal "
                         f"dimensions, got shape {s}{user_site()}")
    return diag_indices(s[0], len(s))


@api
def unravel_index(indices: Any, shape: Sequence[int]) -> tuple[Tracer, ...]:
    """Flat indices to one index array per dimension of `shape` (C order), as JAX: indices
    out of range are clipped to the array (negative ones count from the end first)."""
    dims = tuple(int(d) for d in shape)
    t = lift(indices)
    if not dtypes.is_int(t.dtype):
        raise TypeError(f"unravel_index: indices must be integers, got {t.dtype}{user_site()}")
    total = math.prod(dims)
    flat = np_api.where(t < 0, t + total, t)
    flat = clip(flat, 0, max(total - 1, 0))
    out = []
    for k in range(len(dims)):
        inner = math.prod(dims[k + 1 :])
        out.append(np_api.remainder(np_api.floor_divide(flat, inner), dims[k]) if k else np_api.floor_divide(flat, inner))
    return tuple(out)


@api
def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "clip",
                      order: str = "C") -> Tracer:
    """Index arrays (one per dimension) to flat indices in C (row-major) or F (column-major)
    order. `mode` "clip" clamps each index into its dimension and "wrap" takes it modulo the
    dimension; numpy's default "raise" needs the values, so it is not offered (JAX's choice
    too)."""
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}{user_site()}")
    if order == "F":
        return ravel_multi_index(list(multi_index)[::-1], list(dims)[::-1], mode, "C")
    sizes = tuple(int(d) for d in dims)
    if len(multi_index) != len(sizes):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(sizes)} "
                         f"dimensions{user_site()}")
    if mode not in ("clip", "wrap"):
        raise ValueError(f"ravel_multi_index: mode must be 'clip' or 'wrap', got {mode!r}{user_site()}")
    flat: Any = None
    for idx, n in zip(multi_index, sizes):
        t = lift(idx)
        if not dtypes.is_int(t.dtype):
            raise TypeError(f"ravel_multi_index: indices must be integers, got {t.dtype}{user_site()}")
        t = clip(t, 0, n - 1) if mode == "clip" else np_api.remainder(t, n)
        flat = t if flat is None else flat * n + t
    return flat


# ---------------------------------------------------------------------------------------------
# Ranges and fills
# ---------------------------------------------------------------------------------------------


@api
def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Tracer:
    """base ** linspace(start, stop, num): numbers spaced evenly on a log scale."""
    exponents = arrays.linspace(start, stop, num, endpoint=endpoint, axis=axis)
    out = np_api.power(base, exponents)
    return out if dtype is None else lax.convert(out, dtypes.canonical(dtype))


@api
def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Tracer:
    """A geometric progression from `start` to `stop` (same sign, nonzero), the ends exact
    as numpy makes them: sign * exp(linspace(log|start|, log|stop|))."""
    d = result_dtype(start, stop, 1.0)
    s, e = lift(start, d), lift(stop, d)
    sign = np_api.sign(s)
    logs = arrays.linspace(np_api.log(np_api.abs(s)), np_api.log(np_api.abs(e)), num, endpoint=endpoint, axis=axis)
    out = np_api.exp(logs)
    n = out.shape[axis]
    if n > 0:
        # The first and (with endpoint) the last entries are start and stop exactly.
        pos = lax.iota(out.shape, axis % out.ndim, dtypes.int32)
        ends = [(0, np_api.abs(s))] + ([(n - 1, np_api.abs(e))] if endpoint and n > 1 else [])
        for k, v in ends:
            out = np_api.where(pos == k, broadcast_to(shape_api.expand_dims(v, axis) if v.ndim else v, out.shape), out)
    out = out * (shape_api.expand_dims(sign, axis) if sign.ndim else sign)
    return out if dtype is None else lax.convert(out, dtypes.canonical(dtype))


@api
def fill_diagonal(a: Any, val: Any, wrap: bool = False, inplace: bool = False) -> Tracer:
    """`a` with its main diagonal set to `val` (a scalar or an array cycled along the
    diagonal), returned as a new array: JAX's form (`inplace=False` is required)."""
    if inplace:
        raise ValueError(f"fill_diagonal: arrays are immutable here; pass inplace=False and use "
                         f"the result{user_site()}")
    t = lift(a)
    if t.ndim < 2:
        raise ShapeError(f"fill_diagonal: needs an array of rank 2 or more, got shape {t.shape}{user_site()}")
    if t.ndim > 2 and len(set(t.shape)) != 1:
        raise ShapeError(f"fill_diagonal: an array of rank > 2 needs equal dimensions, got {t.shape}{user_site()}")
    total = math.prod(t.shape)
    # numpy's own rule: a.flat[:end:step] = val, with val cycled over the positions.
    if t.ndim == 2:
        step, end = t.shape[1] + 1, (None if wrap else t.shape[1] * t.shape[1])
    else:
        step, end = 1 + int(np.cumprod(t.shape[:-1]).sum()), None
    positions = np.arange(total)[:end:step]
    values = arrays.ravel(lift(val, t.dtype))
    if positions.size == 0 or values.shape[0] == 0:
        return t
    which = np.full(total, -1, dtype=np.int32)
    which[positions] = np.arange(positions.size, dtype=np.int32) % values.shape[0]
    spread = shape_api.take(values, np.maximum(which, 0), axis=0)
    return lax.reshape(np_api.where(which >= 0, spread, arrays.ravel(t)), t.shape)


# ---------------------------------------------------------------------------------------------
# Static queries
# ---------------------------------------------------------------------------------------------


def size(a: Any, axis: int | None = None) -> int:
    """The number of elements (or the length of `axis`): a Python int, traced or not."""
    s = tuple(shape_of(a))
    if axis is None:
        return math.prod(s)
    return s[normalize_axes("size", axis, len(s))[0]]


def ndim(a: Any) -> int:
    """The rank of `a`: a Python int."""
    return len(shape_of(a))


def shape(a: Any) -> tuple[int, ...]:
    """The shape of `a`: a tuple of Python ints."""
    return tuple(shape_of(a))


def isscalar(element: Any) -> bool:
    """True for Python and numpy scalars and for 0-d arrays and traced values, as
    jax.numpy.isscalar (numpy's says False for 0-d arrays)."""
    if isinstance(element, (bool, int, float, complex, np.generic)):
        return True
    return isinstance(element, (np.ndarray, Tracer)) and element.ndim == 0
