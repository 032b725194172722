"""jax.lax's structural ops with lax's signatures: `slice`, `rev`, `pad` (with interior
padding and negative edges), `dot_general`, `sort` (several operands, `num_keys`) and
`sort_key_val`.

All are composites of `nn` ops irgrad already differentiates, batches and lowers (slice, pad,
reshape, concatenate, einsum's contractions, argsort + take_along_axis), so each has the
derivative JAX gives it: slice/rev/pad move cotangents back to the elements they took (pad's
value gets the sum of the padding's cotangents), dot_general's are the transposed
contractions, and sort's is the inverse permutation of the cotangent (ties broken stably, as
lax.sort with is_stable=True; NaNs sort last, as numpy and lax).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from irgrad.numpy.arrays import flip
from irgrad.numpy.einsum import einsum
from irgrad.numpy.reductions import argsort
from irgrad.numpy.shape import take_along_axis
from irgrad.numpy.support import api, lift
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.tracer import Tracer


def _ints(op_name: str, what: str, values: Sequence[Any], count: int) -> list[int]:
    values = list(values)
    if len(values) != count:
        raise ShapeError(f"lax.{op_name}: {what} has {len(values)} entries for an operand of rank {count}{user_site()}")
    return [int(v) for v in values]


@api
def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Tracer:  # fmt: skip
    """`operand[start:limit:stride]` on every axis (static bounds, as lax.slice)."""
    x = lift(operand)
    start = _ints("slice", "start_indices", start_indices, x.ndim)
    limit = _ints("slice", "limit_indices", limit_indices, x.ndim)
    stride = [1] * x.ndim if strides is None else _ints("slice", "strides", strides, x.ndim)
    for axis, (s, l, k, n) in enumerate(zip(start, limit, stride, x.shape)):
        if not (0 <= s <= l <= n) or k < 1:
            raise ShapeError(
                f"lax.slice: axis {axis}: start {s}, limit {l}, stride {k} do not fit a dimension of "
                f"size {n} (0 <= start <= limit <= size, stride >= 1){user_site()}"
            )
    if start == [0] * x.ndim and limit == list(x.shape) and stride == [1] * x.ndim:
        return x
    return lax.slice(x, start, limit, stride)


@api
def rev(operand: Any, dimensions: Sequence[int]) -> Tracer:
    """`operand` reversed along `dimensions`."""
    x = lift(operand)
    dims = [int(d) for d in dimensions]
    if any(not 0 <= d < x.ndim for d in dims) or len(set(dims)) != len(dims):
        raise ShapeError(f"lax.rev: dimensions {dims} are not distinct axes of an operand of rank {x.ndim}{user_site()}")
    return flip(x, axis=tuple(dims)) if dims else x


@api
def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Tracer:
    """lax.pad: per axis `(low, high, interior)`: `interior` copies of `padding_value` between
    neighbouring elements, then `low`/`high` at the edges (negative ones cut elements off)."""
    x = lift(operand)
    config = [tuple(int(c) for c in entry) for entry in padding_config]
    if len(config) != x.ndim or any(len(c) != 3 for c in config):
        raise ShapeError(
            f"lax.pad: padding_config needs one (low, high, interior) per axis of an operand of rank "
            f"{x.ndim}, got {padding_config!r}{user_site()}"
        )
    value = lift(padding_value, x.dtype)
    if value.shape != ():
        raise ShapeError(f"lax.pad: padding_value must be a scalar, got shape {value.shape}{user_site()}")
    for axis, (_, _, interior) in enumerate(config):
        if interior < 0:
            raise ShapeError(f"lax.pad: interior padding {interior} of axis {axis} is negative{user_site()}")
        if interior and x.shape[axis] > 1:
            x = _interior(x, value, axis, interior)
    low = [builtins.max(c[0], 0) for c in config]
    high = [builtins.max(c[1], 0) for c in config]
    if any(low) or any(high):
        x = lax.pad(x, value, low, high)
    start = [-builtins.min(c[0], 0) for c in config]
    limit = [n + builtins.min(c[1], 0) for n, c in zip(x.shape, config)]
    if any(s > l for s, l in zip(start, limit)):
        raise ShapeError(f"lax.pad: negative padding {padding_config!r} removes more than the axis holds{user_site()}")
    if any(start) or limit != list(x.shape):
        x = lax.slice(x, start, limit, [1] * x.ndim)
    return x


def _interior(x: Tracer, value: Tracer, axis: int, interior: int) -> Tracer:
    """`interior` copies of `value` after every element of `axis` but the last: each element
    gets a row of padding beside it (a new axis), the two axes merge, the tail is cut."""
    n = x.shape[axis]
    moved = x.shape[: axis + 1] + (1,) + x.shape[axis + 1 :]
    column = lax.reshape(x, moved)
    filler = lax.broadcast_in_dim(value, moved[: axis + 1] + (interior,) + moved[axis + 2 :], [])
    joined = lax.concatenate([column, filler], axis + 1)
    merged = lax.reshape(joined, x.shape[:axis] + (n * (interior + 1),) + x.shape[axis + 1 :])
    limit = list(merged.shape)
    limit[axis] = n + (n - 1) * interior
    return lax.slice(merged, [0] * merged.ndim, limit, [1] * merged.ndim)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@api
def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Tracer:  # fmt: skip
    """lax.dot_general: `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`; the
    result's axes are the batch axes, then lhs's free axes, then rhs's (lax's order).
    `precision` is accepted and ignored (the CPU computes at the operands' precision);
    `preferred_element_type` converts the result."""
    a, b = lift(lhs), lift(rhs)
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise ShapeError(
            f"lax.dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}{user_site()}"
        ) from None
    lc, rc, lb, rb = ([int(d) for d in dims] for dims in (lc, rc, lb, rb))
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"lax.dot_general: contracting {lc}/{rc} or batch {lb}/{rb} dimensions differ in number{user_site()}")
    for d, e in [*zip(lc, rc), *zip(lb, rb)]:
        if not (0 <= d < a.ndim and 0 <= e < b.ndim) or a.shape[d] != b.shape[e]:
            raise ShapeError(
                f"lax.dot_general: lhs axis {d} and rhs axis {e} do not pair up (shapes {a.shape} and "
                f"{b.shape}){user_site()}"
            )
    letters = iter(_LETTERS)
    left = [""] * a.ndim
    right = [""] * b.ndim
    for d, e in [*zip(lb, rb), *zip(lc, rc)]:
        left[d] = right[e] = next(letters)
    for i in range(a.ndim):
        left[i] = left[i] or next(letters)
    for i in range(b.ndim):
        right[i] = right[i] or next(letters)
    out = [left[d] for d in lb]
    out += [left[i] for i in range(a.ndim) if i not in lb and i not in lc]
    out += [right[i] for i in range(b.ndim) if i not in rb and i not in rc]
    r = einsum(f"{''.join(left)},{''.join(right)}->{''.join(out)}", a, b)
    if preferred_element_type is not None:
        r = lax.convert(r, dtypes.canonical(preferred_element_type))
    return r


@api
def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """lax.sort: one array sorted along `dimension`, or a sequence of same-shape arrays sorted
    together by the first `num_keys` of them (lexicographically), returned as a tuple."""
    single = not isinstance(operand, (tuple, list))
    xs = [lift(operand)] if single else [lift(o) for o in operand]
    if any(x.shape != xs[0].shape for x in xs):
        raise ShapeError(f"lax.sort: operands have different shapes {[x.shape for x in xs]}{user_site()}")
    if not 1 <= num_keys <= len(xs):
        raise ValueError(f"lax.sort: num_keys={num_keys} must be between 1 and the {len(xs)} operands{user_site()}")
    ndim = xs[0].ndim
    if not -ndim <= dimension < builtins.max(ndim, 1):
        raise ShapeError(f"lax.sort: dimension {dimension} is out of range for rank {ndim}{user_site()}")
    axis = dimension % builtins.max(ndim, 1)
    if ndim == 0:
        return xs[0] if single else tuple(xs)
    # Lexicographic: stable argsorts from the last key to the first, each of the permuted keys.
    order = lax.iota(xs[0].shape, axis, dtypes.int32)
    for key in reversed(xs[:num_keys]):
        step = argsort(take_along_axis(key, order, axis), axis=axis, stable=True)
        order = take_along_axis(order, step, axis)
    out = [take_along_axis(x, order, axis) for x in xs]
    return out[0] if single else tuple(out)


@api
def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True) -> tuple[Tracer, Tracer]:
    """`keys` sorted along `dimension` and `values` permuted alike (lax.sort_key_val)."""
    return sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)


__all__ = ["dot_general", "pad", "rev", "slice", "sort", "sort_key_val"]
