"""jax.lax's structured operations beyond the `nn` ops: all composites of existing ops (no new IR, no new derivative
rules), so autodiff, `ig.vmap`, `ig.jit` and every backend cover them.

- `switch(index, branches, *operands)`: `index` clamped, as JAX; a traced index is a balanced tree
  of `ig.cond`s (`scf.if`).
- `map(f, xs, batch_size=None)`: `lax.map`, an `ig.scan` over the leading axis with no carry;
  with `batch_size`, a scan of `ig.vmap(f)` over blocks.
- `associative_scan(fn, elems, reverse=False, axis=0)`: Hillis-Steele, ceil(log2 n) static steps.
- `dynamic_slice`, `dynamic_update_slice` and their `_in_dim` / `_index_in_dim` forms: starts are
  Python ints or traced integer scalars, negative from the end, then clamped so the slice fits (JAX).
- `top_k(operand, k)`: the k largest along the last axis, descending, ties in index order, NaN
  largest; indices int32 (a stable bitonic sort, irgrad/tracing/sorting.py, then a gather).
- `clamp(min, x, max)`, `select_n(which, *cases)`, `integer_pow(x, y)` (exact repeated squaring).

Derivatives all come from the ops the composites are made of, and match JAX's: switch and select_n
through the chosen branch or case only, dynamic slices to the elements actually read or written,
top_k through its gather, clamp where min < x < max strictly.
Details: docs/api/python.md, "irgrad/lax/structured.py".
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax

from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, broadcast_to, is_scalar, lift
from irgrad.tracing.tracer import Tracer, full
from irgrad.numpy.control_flow import cond, scan
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.numpy.arrays import flip, moveaxis
from irgrad.tracing.pytree import tree_flatten, tree_unflatten
from irgrad.numpy.shape import expand_dims, squeeze, take_along_axis
from irgrad.numpy.data_dependent import is_int, slice_axis, static_int
from irgrad.tracing.sorting import argsort_last

__all__ = [
    "associative_scan",
    "clamp",
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "integer_pow",
    "select_n",
    "switch",
    "top_k",
]
# Also here, for ig.lax only (their names mean something else at the top level / in numpy):
# map, select, cumsum, cumprod, cummax, cummin.

_I32 = dtypes.int32


def _axis(op_name: str, axis: Any, ndim: int) -> int:
    a = static_int(op_name, "axis", axis)
    if not -ndim <= a < ndim:
        raise ShapeError(f"{op_name}: axis {a} is out of range for an array of rank {ndim}{user_site()}")
    return a % ndim


# ---------------------------------------------------------------------------------------------
# switch, map, associative_scan
# ---------------------------------------------------------------------------------------------


@api
def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """`branches[clamp(index, 0, len(branches) - 1)](*operands)`, as `jax.lax.switch`; a traced
    index becomes a balanced tree of `ig.cond`s (only the taken branch runs and is differentiated)."""
    branches = list(branches)
    if not branches:
        raise ValueError(f"switch: branches must be a non-empty sequence of callables{user_site()}")
    for b in branches:
        if not callable(b):
            raise TypeError(f"switch: every branch must be callable, got {b!r}{user_site()}")
    if isinstance(index, (bool, np.bool_)):
        raise DTypeError(f"switch: the index must be an integer scalar, got a bool{user_site()}")
    if is_int(index):
        return branches[builtins.min(builtins.max(int(index), 0), len(branches) - 1)](*operands)
    i = lift(index)
    if i.shape != ():
        raise ShapeError(f"switch: the index must be a scalar, got shape {i.shape}{user_site()}")
    if not dtypes.is_int(i.dtype):
        raise DTypeError(f"switch: the index must be an integer scalar, got dtype {i.dtype}{user_site()}")
    return _switch_tree(i, branches, operands)


def _switch_tree(i: Tracer, branches: list[Callable[..., Any]], operands: Sequence[Any], offset: int = 0) -> Any:
    """`branches[i - offset]`, i clamped: a cond on the middle, then each half."""
    if len(branches) == 1:
        return branches[0](*operands)
    mid = len(branches) // 2
    low, high = branches[:mid], branches[mid:]
    return cond(
        i < offset + mid,
        lambda *ops: _switch_tree(i, low, ops, offset),
        lambda *ops: _switch_tree(i, high, ops, offset + mid),
        *operands,
    )


def _leading(op_name: str, xs: Any) -> tuple[list[Tracer], Any, int]:
    leaves, tree = tree_flatten(xs)
    ts = [lift(x) for x in leaves]
    if not ts:
        raise ValueError(f"{op_name}: xs has no arrays to map over{user_site()}")
    lengths = {t.shape[0] if t.ndim else None for t in ts}
    if None in lengths or len(lengths) != 1:
        raise ShapeError(
            f"{op_name}: every leaf of xs needs the same leading axis, got shapes {[t.shape for t in ts]}{user_site()}"
        )
    return ts, tree, lengths.pop()


@api
def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """`jax.lax.map`: `f` applied to each slice of `xs` (a pytree) along its leading axis, the
    results stacked: an `ig.scan` with no carry. With `batch_size`, `ig.vmap(f)` is scanned over
    blocks of that many slices (the remainder is one more `vmap(f)`)."""
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    from irgrad.frontend.vmap import vmap

    bs = static_int("map", "batch_size", batch_size)
    if bs <= 0:
        raise ValueError(f"map: batch_size must be positive, got {bs}{user_site()}")
    ts, tree, n = _leading("map", xs)
    blocks, rest = divmod(n, bs)
    parts = []
    if blocks:
        stacked = [lax.reshape(slice_axis(t, 0, 0, blocks * bs), (blocks, bs, *t.shape[1:])) for t in ts]
        _, ys = scan(lambda _, x: ((), vmap(f)(x)), (), tree_unflatten(tree, stacked))
        y_leaves, y_tree = tree_flatten(ys)
        parts.append(([lax.reshape(lift(y), (blocks * bs, *lift(y).shape[2:])) for y in y_leaves], y_tree))
    if rest:
        tail = tree_unflatten(tree, [slice_axis(t, 0, blocks * bs, n) for t in ts])
        y_leaves, y_tree = tree_flatten(vmap(f)(tail))
        parts.append(([lift(y) for y in y_leaves], y_tree))
    if len(parts) == 1:
        return tree_unflatten(parts[0][1], parts[0][0])
    (a, a_tree), (b, _) = parts
    return tree_unflatten(a_tree, [lax.concatenate([x, y], 0) for x, y in zip(a, b)])


@api
def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """`jax.lax.associative_scan`: the inclusive scan of `elems` (a pytree of arrays with one
    length along `axis`) under the associative `fn(a, b)`, which gets and returns pytrees of
    arrays with that axis (it must be vectorized over it). Hillis-Steele: ceil(log2 n) static
    steps `x[d:] = fn(x[:-d], x[d:])`, the earlier operand first."""
    if not callable(fn):
        raise TypeError(f"associative_scan: fn must be callable, got {fn!r}{user_site()}")
    leaves, tree = tree_flatten(elems)
    xs = [lift(x) for x in leaves]
    if not xs:
        raise ValueError(f"associative_scan: elems holds no arrays{user_site()}")
    if xs[0].ndim == 0:
        raise ShapeError(f"associative_scan: elems must have an axis {axis}, got a scalar{user_site()}")
    ax = _axis("associative_scan", axis, xs[0].ndim)
    if any(t.ndim <= ax or t.shape[ax] != xs[0].shape[ax] for t in xs):
        raise ShapeError(
            f"associative_scan: every array of elems needs the same length along axis {ax}, got shapes "
            f"{[t.shape for t in xs]}{user_site()}"
        )
    n = xs[0].shape[ax]
    if reverse:
        xs = [flip(t, ax) for t in xs]
    d = 1
    while d < n:
        a = tree_unflatten(tree, [slice_axis(t, ax, 0, n - d) for t in xs])
        b = tree_unflatten(tree, [slice_axis(t, ax, d, n) for t in xs])
        c_leaves, c_tree = tree_flatten(fn(a, b))
        if c_tree != tree:
            raise ShapeError(f"associative_scan: fn returned structure {c_tree!r}, expected {tree!r}{user_site()}")
        combined = []
        for k, (c, t) in enumerate(zip(c_leaves, xs)):
            c = lift(c, t.dtype) if is_scalar(c) else lift(c)
            want = (*t.shape[:ax], n - d, *t.shape[ax + 1 :])
            if c.shape != want:
                raise ShapeError(f"associative_scan: fn output {k} has shape {c.shape}, expected {want}{user_site()}")
            if c.dtype != t.dtype:
                raise DTypeError(f"associative_scan: fn output {k} has dtype {c.dtype}, expected {t.dtype}{user_site()}")
            combined.append(lax.concatenate([slice_axis(t, ax, 0, d), c], ax))
        xs = combined
        d *= 2
    if reverse:
        xs = [flip(t, ax) for t in xs]
    return tree_unflatten(tree, xs)


def _cumulative(name: str, combine: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def cumulative(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        return associative_scan(combine, operand, reverse=reverse, axis=axis)

    cumulative.__name__ = cumulative.__qualname__ = name
    cumulative.__doc__ = f"`jax.lax.{name}(operand, axis=0, reverse=False)`: an associative_scan of `{combine.__name__}`."
    return cumulative


cumsum = _cumulative("cumsum", np_api.add)
cumprod = _cumulative("cumprod", np_api.multiply)
cummax = _cumulative("cummax", np_api.maximum)
cummin = _cumulative("cummin", np_api.minimum)


# ---------------------------------------------------------------------------------------------
# dynamic slices
# ---------------------------------------------------------------------------------------------


def _starts(op_name: str, x: Tracer, start_indices: Any) -> list[Any]:
    """One start per dimension: a Python int or a traced integer scalar."""
    if isinstance(start_indices, Tracer) or (isinstance(start_indices, np.ndarray) and start_indices.ndim > 0):
        arr = lift(start_indices)
        if arr.ndim != 1:
            raise ShapeError(f"{op_name}: start_indices must be 1-D, got shape {arr.shape}{user_site()}")
        items: list[Any] = [lax.reshape(lax.slice(arr, [k], [k + 1], [1]), ()) for k in range(arr.shape[0])]
    elif isinstance(start_indices, (list, tuple)):
        items = list(start_indices)
    else:
        raise TypeError(f"{op_name}: start_indices must be a sequence of scalars or a 1-D array, got {start_indices!r}{user_site()}")
    if len(items) != x.ndim:
        raise ShapeError(
            f"{op_name}: {len(items)} start indices for an operand of rank {x.ndim} (shape {x.shape}){user_site()}"
        )
    out = []
    for s in items:
        if is_int(s):
            out.append(int(s))
            continue
        if isinstance(s, (bool, np.bool_)):
            raise DTypeError(f"{op_name}: start indices must be integers, got a bool{user_site()}")
        t = lift(s)
        if t.shape != ():
            raise ShapeError(f"{op_name}: each start index must be a scalar, got shape {t.shape}{user_site()}")
        if not dtypes.is_int(t.dtype):
            raise DTypeError(f"{op_name}: start indices must be integers, got dtype {t.dtype}{user_site()}")
        out.append(t)
    return out


def _fit(starts: list[Any], dims: Sequence[int], sizes: Sequence[int], negative: bool) -> list[Any]:
    """Negative starts count from the end (once), static ones are clamped so the box fits;
    traced ones are clamped by the dynamic-slice ops themselves."""
    out = []
    for s, n, size in zip(starts, dims, sizes):
        if isinstance(s, int):
            if negative and s < 0:
                s += n
            out.append(builtins.min(builtins.max(s, 0), n - size))
        else:
            out.append(np_api.where(s < 0, s + n, s) if negative else s)
    return out


@api
def dynamic_slice(operand: Any, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool = True) -> Tracer:  # fmt: skip
    """`jax.lax.dynamic_slice`: the box of `slice_sizes` at `start_indices` (ints or traced
    integer scalars, or a 1-D array); negative starts count from the end, then starts are
    clamped to [0, dim - size]. Static starts give an `nn.slice`, traced ones an `nn.dynamic_slice`."""
    x = lift(operand)
    starts = _starts("dynamic_slice", x, start_indices)
    sizes = [static_int("dynamic_slice", "slice_sizes", s) for s in slice_sizes]
    if len(sizes) != x.ndim:
        raise ShapeError(f"dynamic_slice: {len(sizes)} slice sizes for an operand of rank {x.ndim}{user_site()}")
    for s, n in zip(sizes, x.shape):
        if not 0 <= s <= n:
            raise ShapeError(f"dynamic_slice: slice_sizes {tuple(sizes)} do not fit in an operand of shape {x.shape}{user_site()}")
    starts = _fit(starts, x.shape, sizes, allow_negative_indices)
    if 0 in sizes:
        return full(sizes, 0, x.dtype)
    if all(isinstance(s, int) for s in starts):
        if sizes == list(x.shape):
            return x
        return lax.slice(x, starts, [s + k for s, k in zip(starts, sizes)], [1] * x.ndim)
    return lax.dynamic_slice(x, starts, sizes)


@api
def dynamic_update_slice(operand: Any, update: Any, start_indices: Any, *,
                         allow_negative_indices: bool = True) -> Tracer:  # fmt: skip
    """`jax.lax.dynamic_update_slice`: `operand` with `update` written at `start_indices`
    (negative ones count from the end, then clamped so `update` fits): one `nn.dynamic_update_slice`."""
    x = lift(operand)
    u = lift(update, x.dtype) if is_scalar(update) else lift(update)
    if u.ndim != x.ndim:
        raise ShapeError(
            f"dynamic_update_slice: update of rank {u.ndim} (shape {u.shape}) for an operand of rank {x.ndim} "
            f"(shape {x.shape}){user_site()}"
        )
    if any(k > n for k, n in zip(u.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice: update of shape {u.shape} does not fit in operand of shape {x.shape}{user_site()}")
    if u.dtype != x.dtype:
        raise DTypeError(f"dynamic_update_slice: update has dtype {u.dtype}, operand {x.dtype}; they must match{user_site()}")
    starts = _fit(_starts("dynamic_update_slice", x, start_indices), x.shape, u.shape, allow_negative_indices)
    if u.size == 0:
        return x
    return lax.dynamic_update_slice(x, u, starts)


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int = 1, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Tracer:  # fmt: skip
    """`dynamic_slice` along one axis (the whole of the others)."""
    shape = np.shape(operand)
    ax = _axis("dynamic_slice_in_dim", axis, len(shape))
    starts: list[Any] = [0] * len(shape)
    sizes = list(shape)
    starts[ax], sizes[ax] = start_index, slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Tracer:  # fmt: skip
    """The slice at `index` along `axis` (clamped), that axis kept with size 1 or dropped."""
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    if keepdims:
        return out
    return squeeze(out, _axis("dynamic_index_in_dim", axis, np.ndim(out)))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Tracer:  # fmt: skip
    """`dynamic_update_slice` at `start_index` along `axis`, 0 along the others."""
    ndim = np.ndim(operand)
    ax = _axis("dynamic_update_slice_in_dim", axis, ndim)
    starts: list[Any] = [0] * ndim
    starts[ax] = start_index
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Tracer:  # fmt: skip
    """`dynamic_update_slice_in_dim` of one index; `update` may lack that axis."""
    ndim = np.ndim(operand)
    ax = _axis("dynamic_update_index_in_dim", axis, ndim)
    if np.ndim(update) == ndim - 1:
        update = expand_dims(update, ax)
    return dynamic_update_slice_in_dim(operand, update, index, ax, allow_negative_indices=allow_negative_indices)


# ---------------------------------------------------------------------------------------------
# top_k, clamp, select_n, integer_pow
# ---------------------------------------------------------------------------------------------


@api
def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Tracer, Tracer]:
    """`jax.lax.top_k`: the `k` largest entries along `axis` (the last by default), descending,
    and their int32 indices; equal entries in index order, NaN largest. Values are a gather at
    the indices, so the gradient goes to the chosen positions."""
    from irgrad.numpy.custom_derivatives import stop_gradient

    x = lift(operand)
    if x.ndim == 0:
        raise ShapeError(f"top_k: the operand must have at least one axis, got a scalar{user_site()}")
    ax = _axis("top_k", axis, x.ndim)
    k = static_int("top_k", "k", k)
    if ax != x.ndim - 1:
        values, indices = top_k(moveaxis(x, ax, -1), k)
        return moveaxis(values, -1, ax), moveaxis(indices, -1, ax)
    n = x.shape[-1]
    if not 0 <= k <= n:
        raise ValueError(f"top_k: k={k} must be in [0, {n}] for an operand of shape {x.shape}{user_site()}")
    out_shape = (*x.shape[:-1], k)
    if k == 0:
        return full(out_shape, 0, x.dtype), full(out_shape, 0, _I32)
    keys = stop_gradient(x) if dtypes.is_float(x.dtype) else x
    # A stable ascending sort of the reversed row, read backwards: descending, equal values in
    # increasing original index, NaN (sorted last) first.
    order = argsort_last(flip(keys, -1))
    last = x.ndim - 1
    top = flip(slice_axis(order, last, n - k, n), -1)
    indices = full(out_shape, n - 1, _I32) - top
    return take_along_axis(x, indices, -1), indices


def _bound(name: str, b: Any, x: Tracer) -> Tracer:
    t = lift(b, x.dtype) if is_scalar(b) else lift(b)
    if t.dtype != x.dtype:
        raise DTypeError(f"clamp: {name} has dtype {t.dtype} and x {x.dtype}; they must match (as lax.clamp){user_site()}")
    if t.shape not in ((), x.shape):
        raise ShapeError(f"clamp: {name} has shape {t.shape}; it must be a scalar or x's shape {x.shape}{user_site()}")
    return broadcast_to(t, x.shape)


@api
def clamp(min: Any, x: Any, max: Any) -> Tracer:  # noqa: A002
    """`jax.lax.clamp(min, x, max)` = minimum(maximum(x, min), max), NaN in x kept. Gradient
    as JAX's: to x strictly inside (min, max), to min where min > x, to max where max < x."""
    from irgrad.numpy.custom_derivatives import stop_gradient

    t = lift(x)
    lo, hi = _bound("min", min, t), _bound("max", max, t)
    value = np_api.minimum(np_api.maximum(t, lo), hi)
    inside = (t > lo) & (t < hi)
    low_wins = (lo > t) & (lo < hi)
    high_wins = hi < t
    return np_api.where(inside, t, np_api.where(low_wins, lo, np_api.where(high_wins, hi, stop_gradient(value))))


@api
def select_n(which: Any, *cases: Any) -> Tracer:
    """`jax.lax.select_n`: `cases[which]` elementwise. `which` is bool (at most two cases: case 1
    where true) or integer, a scalar or of the cases' shape; cases share shape and dtype.
    The gradient goes to the selected case only."""
    if not cases:
        raise ValueError(f"select_n: needs at least one case{user_site()}")
    arrays = [c for c in cases if not is_scalar(c)]
    d = lift(arrays[0]).dtype if arrays else lift(cases[0]).dtype
    cs = [lift(c, d) if is_scalar(c) else lift(c) for c in cases]
    for c in cs:
        if c.shape != cs[0].shape:
            raise ShapeError(f"select_n: cases have shapes {[c.shape for c in cs]}; they must match{user_site()}")
        if c.dtype != cs[0].dtype:
            raise DTypeError(f"select_n: cases have dtypes {[str(c.dtype) for c in cs]}; they must match{user_site()}")
    w = lift(which)
    if w.shape not in ((), cs[0].shape):
        raise ShapeError(f"select_n: which has shape {w.shape}; it must be a scalar or the cases' shape {cs[0].shape}{user_site()}")
    if w.dtype == dtypes.bool_:
        if len(cs) > 2:
            raise DTypeError(f"select_n: a bool which selects between at most 2 cases, got {len(cs)}{user_site()}")
    elif not dtypes.is_int(w.dtype):
        raise DTypeError(f"select_n: which must be bool or integer, got {w.dtype}{user_site()}")
    if len(cs) == 1:
        return cs[0]
    w = broadcast_to(w, cs[0].shape)
    if w.dtype == dtypes.bool_:
        return lax.select(w, cs[1], cs[0])

    def pick(lo: int, hi: int) -> Tracer:
        if hi - lo == 1:
            return cs[lo]
        mid = (lo + hi) // 2
        return lax.select(w < mid, pick(lo, mid), pick(mid, hi))

    return pick(0, len(cs))


def select(pred: Any, on_true: Any, on_false: Any) -> Tracer:
    """`jax.lax.select(pred, on_true, on_false)` (no broadcasting beyond a scalar `pred`)."""
    return select_n(pred, on_false, on_true)


@api
def integer_pow(x: Any, y: int) -> Tracer:
    """`x ** y` for a static Python int `y`, by exact repeated squaring ((1/x)**|y| for y < 0,
    ones for y == 0), so its gradient is the products' own: y x**(y-1), exact at x = 0."""
    if isinstance(y, Tracer) or not is_int(y):
        raise TypeError(f"integer_pow: y must be a Python int, got {y!r}{user_site()}")
    y = int(y)
    t = lift(x)
    if t.dtype == dtypes.bool_:
        raise DTypeError(f"integer_pow: x must be a number, got bool{user_site()}")
    if y < 0 and not dtypes.is_float(t.dtype):
        raise ValueError(f"integer_pow: integers cannot be raised to a negative power ({y}){user_site()}")
    if y == 0:
        return full(t.shape, 1, t.dtype)
    acc: Tracer | None = None
    # y < 0: powers of 1/x (as JAX's derivative y * x**(y-1): -inf, not NaN, at x = 0).
    base, e = (full(t.shape, 1, t.dtype) / t if y < 0 else t), abs(y)
    while e:
        if e & 1:
            acc = base if acc is None else acc * base
        e >>= 1
        if e:
            base = base * base
    assert acc is not None
    return acc
