"""Array construction, shape manipulation and stacking with numpy's names: eye,
tri/tril/triu, linspace, full_like, ravel, moveaxis, atleast_*d, the *stack family,
split/array_split, tile, repeat, flip, roll, meshgrid, diag/diagonal (the small products are in
`products`).

All are static in shape (sections, repeats, shifts are Python ints) and built from `nn`
data-movement ops (slice, pad, concatenate, reshape, broadcast_in_dim, transpose, gather with a
constant index) plus iota masks and `select`, so they are exact for every dtype and their
derivatives are the data movement's adjoints: every element's cotangent goes back to the
element it was copied from (summed over copies, for tile, repeat, broadcast).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax

from irgrad.numpy import basic as np_api, shape as shape_api
from irgrad.numpy.support import api, broadcast_to, lift, normalize_axes, operands, result_dtype
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import ShapeError, user_site

__all__ = [
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "column_stack",
    "diag",
    "diagonal",
    "dstack",
    "empty",
    "empty_like",
    "eye",
    "flip",
    "full_like",
    "hstack",
    "identity",
    "linspace",
    "meshgrid",
    "moveaxis",
    "ravel",
    "repeat",
    "roll",
    "split",
    "tile",
    "tri",
    "tril",
    "triu",
    "vstack",
]


def _int(op_name: str, what: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{op_name}: {what} must be an int, got {v!r}{user_site()}")
    return int(v)


def _one_axis(op_name: str, axis: Any, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op_name}: axis must be an int, got {axis!r}{user_site()}")
    return normalize_axes(op_name, int(axis), ndim)[0]


def _dtype(dtype: Any, default: np.dtype = dtypes.float32) -> np.dtype:
    return dtypes.canonical(dtype) if dtype is not None else default


# ---------------------------------------------------------------------------------------------
# Construction
# ---------------------------------------------------------------------------------------------


def _band(op_name: str, n: int, m: int | None, k: int, keep: str) -> Tracer:
    """Bool (n, m) mask of `col - row <keep> k` ("eq" for eye, "le" for tri/tril, "ge" for triu)."""
    n = _int(op_name, "N", n)
    m = n if m is None else _int(op_name, "M", m)
    k = _int(op_name, "k", k)
    if n < 0 or m < 0:
        raise ShapeError(f"{op_name}: negative dimensions ({n}, {m}){user_site()}")
    shape = (n, m)
    diff = lax.iota(shape, 1, dtypes.int64) - lax.iota(shape, 0, dtypes.int64)
    return lax.compare(keep, diff, full(shape, k, dtypes.int64))


@api
def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = dtypes.float32) -> Tracer:  # noqa: N803
    """Ones on the k-th diagonal (k > 0 above the main one), zeros elsewhere; float32 by
    default, as jnp.eye."""
    return lax.convert(_band("eye", N, M, k, "eq"), _dtype(dtype))


@api
def identity(n: int, dtype: Any = dtypes.float32) -> Tracer:
    """The n x n identity."""
    return eye(n, dtype=dtype)


@api
def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = dtypes.float32) -> Tracer:  # noqa: N803
    """Ones at and below the k-th diagonal."""
    return lax.convert(_band("tri", N, M, k, "le"), _dtype(dtype))


def _triangle(op_name: str, m: Any, k: int, keep: str) -> Tracer:
    t = lift(m)
    if t.ndim == 0:
        raise ShapeError(f"{op_name}: input must be at least 1-D, got a scalar{user_site()}")
    if t.ndim == 1:  # numpy: a 1-D input is read as a row repeated
        t = broadcast_to(t, (t.shape[0], t.shape[0]))
    mask = broadcast_to(_band(op_name, t.shape[-2], t.shape[-1], k, keep), t.shape)
    return lax.select(mask, t, full(t.shape, 0, t.dtype))


@api
def tril(m: Any, k: int = 0) -> Tracer:
    """The lower triangle of the last two axes (at and below diagonal k), zeros above."""
    return _triangle("tril", m, k, "le")


@api
def triu(m: Any, k: int = 0) -> Tracer:
    """The upper triangle of the last two axes (at and above diagonal k), zeros below."""
    return _triangle("triu", m, k, "ge")


@api
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0) -> Any:  # fmt: skip
    """`num` evenly spaced values from start to stop (included if `endpoint`), computed as
    numpy does (`start + i * step`, the last one set to `stop` exactly). start and stop may be
    arrays (broadcast; the new axis goes at `axis`). The default dtype is float32 for Python
    numbers and integers (as JAX), else the inputs' float type; an integer dtype floors, as
    numpy does. `retstep=True` also returns the step (NaN when num - endpoint is 0)."""
    num = _int("linspace", "num", num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative{user_site()}")
    in_dtype = result_dtype(start, stop)
    if not dtypes.is_float(in_dtype):
        in_dtype = dtypes.float32
    out_dtype = _dtype(dtype, in_dtype)
    compute = out_dtype if dtypes.is_float(out_dtype) else dtypes.float64
    (a, b), _ = operands("linspace", start, stop, dtype=compute)
    div = num - 1 if endpoint else num
    shape = (num, *a.shape)
    i = lax.convert(lax.iota(shape, 0, dtypes.int32), compute)
    a_b, b_b = broadcast_to(a, shape), broadcast_to(b, shape)
    delta = b - a
    if div > 0:
        step = delta / float(div)
        y = i * broadcast_to(step, shape) + a_b
        if endpoint and num > 1:
            last = lax.compare("eq", lax.iota(shape, 0, dtypes.int32), full(shape, num - 1, dtypes.int32))
            y = lax.select(last, b_b, y)
    else:
        step = full(a.shape, float("nan"), compute)
        y = i * broadcast_to(delta, shape) + a_b
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if dtypes.is_int(out_dtype):
        y = np_api.floor(y)
    y = lax.convert(y, out_dtype)
    return (y, step) if retstep else y


@api
def full_like(a: Any, fill_value: Any, dtype: Any = None) -> Tracer:
    """An array of a's shape (and dtype, unless given) filled with `fill_value` (broadcast)."""
    t = lift(a)
    return np_api.full(t.shape, fill_value, dtype if dtype is not None else t.dtype)


@api
def empty(shape: int | Sequence[int], dtype: Any = dtypes.float32) -> Tracer:
    """As numpy's empty, but zeros (a traced program has no uninitialized memory to give)."""
    return np_api.zeros(shape, dtype)


@api
def empty_like(a: Any, dtype: Any = None) -> Tracer:
    """Zeros of a's shape and dtype (see `empty`)."""
    return np_api.zeros_like(a, dtype)


# ---------------------------------------------------------------------------------------------
# Shape
# ---------------------------------------------------------------------------------------------


@api
def ravel(a: Any) -> Tracer:
    """The flattened array (row-major)."""
    t = lift(a)
    return lax.reshape(t, (t.size,))


@api
def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Tracer:
    """Axes `source` moved to positions `destination`, the others keeping their order."""
    t = lift(a)
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise ValueError(
            f"moveaxis: source {source!r} and destination {destination!r} must have the same number of "
            f"elements{user_site()}"
        )
    src = [normalize_axes("moveaxis", s, t.ndim)[0] for s in src]
    dst = [normalize_axes("moveaxis", d, t.ndim)[0] for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"moveaxis: repeated axis in {source!r} or {destination!r}{user_site()}")
    order = [i for i in range(t.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(t, order)


def _atleast(arys: tuple[Any, ...], fn: Any) -> Any:
    out = [fn(lift(a)) for a in arys]
    return out[0] if len(out) == 1 else out


@api
def atleast_1d(*arys: Any) -> Any:
    """Each input with at least one dimension (a scalar becomes shape (1,)); a list for several."""
    return _atleast(arys, lambda t: lax.reshape(t, (1,)) if t.ndim == 0 else t)


@api
def atleast_2d(*arys: Any) -> Any:
    """Each input with at least two dimensions: () -> (1, 1), (n,) -> (1, n)."""
    return _atleast(arys, lambda t: lax.reshape(t, (1,) * (2 - t.ndim) + t.shape) if t.ndim < 2 else t)


def _to_3d(t: Tracer) -> Tracer:
    if t.ndim == 0:
        return lax.reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return lax.reshape(t, (1, t.shape[0], 1))
    if t.ndim == 2:
        return lax.reshape(t, (*t.shape, 1))
    return t


@api
def atleast_3d(*arys: Any) -> Any:
    """Each input with at least three dimensions: () -> (1, 1, 1), (n,) -> (1, n, 1),
    (m, n) -> (m, n, 1), as numpy."""
    return _atleast(arys, _to_3d)


def _sequence(op_name: str, tup: Any) -> list[Any]:
    if isinstance(tup, (np.ndarray, Tracer)) or not isinstance(tup, (list, tuple)):
        raise TypeError(f"{op_name}: arrays to stack must be passed as a list or tuple{user_site()}")
    if not tup:
        raise ValueError(f"{op_name}: needs at least one array to concatenate{user_site()}")
    return list(tup)


@api
def vstack(tup: Sequence[Any]) -> Tracer:
    """Rows stacked: 1-D inputs become rows (atleast_2d), then concatenated along axis 0."""
    arrays = [atleast_2d(a) for a in _sequence("vstack", tup)]
    return shape_api.concatenate(arrays, axis=0)


@api
def hstack(tup: Sequence[Any]) -> Tracer:
    """Concatenated along axis 1, or axis 0 for 1-D inputs (numpy's rule)."""
    arrays = [atleast_1d(a) for a in _sequence("hstack", tup)]
    return shape_api.concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1)


@api
def dstack(tup: Sequence[Any]) -> Tracer:
    """Concatenated along the third axis after atleast_3d."""
    arrays = [atleast_3d(a) for a in _sequence("dstack", tup)]
    return shape_api.concatenate(arrays, axis=2)


@api
def column_stack(tup: Sequence[Any]) -> Tracer:
    """1-D inputs as columns (n,) -> (n, 1), 2-D as they are, concatenated along axis 1."""
    arrays = []
    for a in _sequence("column_stack", tup):
        t = lift(a)
        if t.ndim < 2:
            t = lax.reshape(t, (t.size, 1))
        arrays.append(t)
    return shape_api.concatenate(arrays, axis=1)


def _slice_axis(t: Tracer, axis: int, start: int, stop: int, step: int = 1) -> Tracer:
    begin, end = [0] * t.ndim, list(t.shape)
    strides = [1] * t.ndim
    begin[axis], end[axis], strides[axis] = start, stop, step
    return lax.slice(t, begin, end, strides)


def _split_points(op_name: str, n: int, sections: Any, even: bool) -> list[tuple[int, int]]:
    if isinstance(sections, (int, np.integer)) and not isinstance(sections, bool):
        k = int(sections)
        if k <= 0:
            raise ValueError(f"{op_name}: number of sections must be larger than 0, got {k}{user_site()}")
        if even and n % k:
            raise ValueError(
                f"{op_name}: array split does not result in an equal division ({n} into {k} sections){user_site()}"
            )
        size, extra = divmod(n, k)
        bounds = np.cumsum([0] + [size + 1] * extra + [size] * (k - extra)).tolist()
        return list(zip(bounds[:-1], bounds[1:]))
    if isinstance(sections, Tracer):
        raise TypeError(f"{op_name}: split indices must be static ints, not a traced value{user_site()}")
    points = [_int(op_name, "a split index", p) for p in np.asarray(sections).tolist()]
    # numpy slices a[i:j] for consecutive points, so negatives count from the end and clip.
    bounds = [0, *points, n]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        a0, b0, _ = builtins.slice(a, b).indices(n)
        out.append((a0, builtins.max(a0, b0)))
    return out


def _split(op_name: str, ary: Any, sections: Any, axis: int, even: bool) -> list[Tracer]:
    t = lift(ary)
    if t.ndim == 0:
        raise ShapeError(f"{op_name}: cannot split a scalar{user_site()}")
    ax = _one_axis(op_name, axis, t.ndim)
    return [_slice_axis(t, ax, a, b) for a, b in _split_points(op_name, t.shape[ax], sections, even)]


@api
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tracer]:
    """A list of sub-arrays along `axis`: an int k gives k equal parts (ValueError unless the
    axis divides), a sequence of indices the pieces between them (numpy's rules)."""
    return _split("split", ary, indices_or_sections, axis, even=True)


@api
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tracer]:
    """As `split`, but k need not divide the axis: the first n % k parts get one more."""
    return _split("array_split", ary, indices_or_sections, axis, even=False)


@api
def tile(A: Any, reps: int | Sequence[int]) -> Tracer:  # noqa: N803
    """A repeated `reps` times along each axis (numpy's rules for unequal lengths: the shorter of
    A.ndim and len(reps) is padded with leading ones), as one broadcast and one reshape."""
    t = lift(A)
    reps_t = [reps] if isinstance(reps, (int, np.integer)) else list(reps)
    reps_t = [_int("tile", "reps", r) for r in reps_t]
    if builtins.any(r < 0 for r in reps_t):
        raise ValueError(f"tile: negative repetitions {tuple(reps_t)}{user_site()}")
    d = builtins.max(t.ndim, len(reps_t))
    reps_t = [1] * (d - len(reps_t)) + reps_t
    t = lax.reshape(t, (1,) * (d - t.ndim) + t.shape)
    interleaved = [x for pair in zip(reps_t, t.shape) for x in pair]
    b = lax.broadcast_in_dim(t, interleaved, list(range(1, 2 * d, 2)))
    return lax.reshape(b, [r * s for r, s in zip(reps_t, t.shape)])


@api
def repeat(a: Any, repeats: int | Sequence[int], axis: int | None = None) -> Tracer:
    """Each element repeated (along `axis`; of the flattened array for None). An int repeats
    every element as often (a broadcast and a reshape); a sequence gives each its own count
    (a gather with a constant index). A 0-d array is read as 1-D, as numpy and JAX do, so
    axis 0 (or -1) repeats it too."""
    t = lift(a)
    if axis is None or t.ndim == 0:
        t = lax.reshape(t, (t.size,))
        axis = 0 if axis is None else axis
    ax = _one_axis("repeat", axis, t.ndim)
    n = t.shape[ax]
    if isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):
        r = int(repeats)
        if r < 0:
            raise ValueError(f"repeat: negative repeats {r}{user_site()}")
        shape = (*t.shape[: ax + 1], r, *t.shape[ax + 1 :])
        dims = [i if i <= ax else i + 1 for i in range(t.ndim)]
        b = lax.broadcast_in_dim(t, shape, dims)
        return lax.reshape(b, (*t.shape[:ax], n * r, *t.shape[ax + 1 :]))
    counts = np.asarray(repeats)
    if counts.ndim != 1 or counts.dtype.kind not in "iu":
        raise TypeError(f"repeat: repeats must be an int or a sequence of ints, got {repeats!r}{user_site()}")
    if counts.shape[0] == 1:
        return repeat(t, int(counts[0]), ax)
    if counts.shape[0] != n:
        raise ValueError(
            f"repeat: {counts.shape[0]} repeats for axis {ax} of shape {t.shape} (length {n}){user_site()}"
        )
    if (counts < 0).any():
        raise ValueError(f"repeat: negative repeats{user_site()}")
    index = np.repeat(np.arange(n, dtype=np.int32), counts)
    if index.size == 0:
        return full((*t.shape[:ax], 0, *t.shape[ax + 1 :]), 0, t.dtype)
    return lax.gather(t, lift(index), ax)


@api
def flip(m: Any, axis: int | Sequence[int] | None = None) -> Tracer:
    """The order of elements reversed along `axis` (every axis for None): a slice of stride -1."""
    t = lift(m)
    axes = normalize_axes("flip", axis, t.ndim)
    if not axes or t.size == 0:
        return t
    start = [t.shape[i] - 1 if i in axes else 0 for i in range(t.ndim)]
    limit = [-1 if i in axes else t.shape[i] for i in range(t.ndim)]
    stride = [-1 if i in axes else 1 for i in range(t.ndim)]
    return lax.slice(t, start, limit, stride)


def _flat_shift(shift: Any) -> int:
    """roll's shift for axis=None: an int, or the sum of a 1-D sequence of ints (numpy's and
    JAX's reading: the flattened array rolled by each shift in turn)."""
    shifts = np.asarray(shift)
    if shifts.ndim > 1:
        raise ValueError(f"roll: shift must be an int or a 1-D sequence, got shape {shifts.shape}{user_site()}")
    if shifts.size and (shifts.dtype.kind not in "iu"):
        raise TypeError(f"roll: shift must be an int or a sequence of ints, got {shift!r}{user_site()}")
    return int(shifts.sum())


@api
def roll(a: Any, shift: int | Sequence[int], axis: int | Sequence[int] | None = None) -> Tracer:
    """Elements shifted by `shift` positions along `axis`, wrapping around (of the flattened
    array for None, by the sum of the shifts when `shift` is a sequence, as numpy and JAX);
    shift and axis may be sequences (broadcast against each other), shifts along a repeated
    axis add up. Two slices and a concatenate per axis."""
    t = lift(a)
    if axis is None:
        return lax.reshape(roll(lax.reshape(t, (t.size,)), _flat_shift(shift), 0), t.shape)
    shifts, axes = np.broadcast_arrays(np.asarray(shift), np.asarray(axis))
    if shifts.ndim > 1:
        raise ValueError(f"roll: shift and axis must be ints or 1-D sequences{user_site()}")
    total: dict[int, int] = {}
    for s, ax in zip(shifts.reshape(-1).tolist(), axes.reshape(-1).tolist()):
        ax = _one_axis("roll", ax, t.ndim)
        total[ax] = total.get(ax, 0) + int(s)
    for ax, s in total.items():
        n = t.shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        t = lax.concatenate([_slice_axis(t, ax, n - s, n), _slice_axis(t, ax, 0, n - s)], ax)
    return t


@api
def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Tracer]:
    """Coordinate arrays from 1-D coordinate vectors (flattened if not 1-D): `indexing="xy"`
    (Cartesian, numpy's default: the first two axes swapped) or "ij" (matrix); `sparse=True`
    keeps each a broadcastable shape with ones elsewhere."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}{user_site()}")
    vs = [ravel(x) for x in xi]
    shape = [v.shape[0] for v in vs]
    dims = list(range(len(vs)))
    if indexing == "xy" and len(vs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
        dims[0], dims[1] = 1, 0
    out = []
    for v, d in zip(vs, dims):
        if sparse:
            s = [1] * len(vs)
            s[d] = v.shape[0]
            out.append(lax.reshape(v, s))
        else:
            out.append(lax.broadcast_in_dim(v, shape, [d]))
    return out


# ---------------------------------------------------------------------------------------------
# Diagonals
# ---------------------------------------------------------------------------------------------


@api
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tracer:
    """The diagonal `offset` of the (axis1, axis2) planes, as a last axis (numpy's diagonal).
    The planes are moved last and flattened, and the diagonal is one strided slice (stride
    columns + 1): exact for every dtype, NaN elsewhere in the matrix stays out."""
    t = lift(a)
    if t.ndim < 2:
        raise ShapeError(f"diagonal: needs an array of at least two dimensions, got shape {t.shape}{user_site()}")
    offset = _int("diagonal", "offset", offset)
    a1, a2 = _one_axis("diagonal", axis1, t.ndim), _one_axis("diagonal", axis2, t.ndim)
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same ({axis1}, {axis2}){user_site()}")
    rest = [i for i in range(t.ndim) if i not in (a1, a2)]
    t = lax.transpose(t, [*rest, a1, a2])
    batch, (rows, cols) = t.shape[:-2], t.shape[-2:]
    length = builtins.max(0, builtins.min(rows, cols - offset) if offset >= 0 else builtins.min(rows + offset, cols))
    if length == 0:
        return full((*batch, 0), 0, t.dtype)
    flat = lax.reshape(t, (*batch, rows * cols))
    first = offset if offset >= 0 else -offset * cols
    k = len(batch)
    return lax.slice(flat, [0] * k + [first], [*batch, first + (length - 1) * (cols + 1) + 1], [1] * k + [cols + 1])


@api
def diag(v: Any, k: int = 0) -> Tracer:
    """1-D v: a square matrix with v on diagonal k (v padded to the matrix size, broadcast along
    rows or columns, and masked). 2-D v: its diagonal k (see `diagonal`)."""
    t = lift(v)
    k = _int("diag", "k", k)
    if t.ndim == 2:
        return diagonal(t, k)
    if t.ndim != 1:
        raise ShapeError(f"diag: input must be 1-D or 2-D, got shape {t.shape}{user_site()}")
    n = t.shape[0] + builtins.abs(k)
    padded = lax.pad(t, full((), 0, t.dtype), [0], [builtins.abs(k)])
    # v[i] sits at row i (k >= 0) or column i (k < 0).
    values = lax.broadcast_in_dim(padded, (n, n), [0 if k >= 0 else 1])
    mask = _band("diag", n, n, k, "eq")
    return lax.select(mask, values, full((n, n), 0, t.dtype))
