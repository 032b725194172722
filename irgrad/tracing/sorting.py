"""The bitonic sorting network that `ig.argsort`, `ig.sort`, `ig.median`,
`ig.random.permutation` and the reference loops of eigh and svd (irgrad/tracing/reference_loops.py)
share; on the tracing core so that a pass may trace it.

It sorts along the last axis, whose length must be a power of two (callers pad), and returns the
permutation (int32 indices), never the values: callers gather with it, so the derivative of a
sort is that of a gather (the cotangent follows the permutation; docs/autodiff.md, Contracts).
The network is one `scf.for` over its (log2 n)(log2 n + 1)/2 stages; each stage is a vector
compare-exchange of every element with its partner `i ^ distance` (gathers and selects,
parallel on every backend, batched over the leading axes). Ties are broken by the original
index, which makes the sort stable (numpy's kind="stable"); a float NaN counts as larger than
every number and equal to every other NaN, so NaNs sort last, in their original order.
"""

from __future__ import annotations

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.broadcasting import broadcast_to, lift
from irgrad.tracing.loops import fori_loop
from irgrad.tracing.tracer import Tracer, full


def bitonic_stages(size: int) -> tuple[np.ndarray, np.ndarray]:
    """(block, distance) of each compare-exchange stage of a bitonic sort of `size` (a power of
    two) elements: block 2, 4, ..., size; distance block/2, block/4, ..., 1 within each."""
    blocks, distances = [], []
    block = 2
    while block <= size:
        distance = block // 2
        while distance >= 1:
            blocks.append(block)
            distances.append(distance)
            distance //= 2
        block *= 2
    return np.array(blocks, np.int32), np.array(distances, np.int32)


def less_and_equal(a: Tracer, b: Tracer) -> tuple[Tracer, Tracer]:
    """(a < b, a == b) elementwise in the sort's total order (NaN last, all NaNs equal)."""
    less, equal = lax.compare("lt", a, b), lax.compare("eq", a, b)
    if dtypes.is_float(a.dtype):
        a_nan, b_nan = lax.compare("ne", a, a), lax.compare("ne", b, b)
        a_number = lax.compare("eq", a, a)
        less = lax.binary(nn.OrOp, less, lax.binary(nn.AndOp, b_nan, a_number))
        equal = lax.binary(nn.OrOp, equal, lax.binary(nn.AndOp, a_nan, b_nan))
    return less, equal


def sort_order(keys: Tracer) -> Tracer:
    """The indices 0..N-1 along the last axis of `keys` (N a power of two), ordered by the keys,
    ties by index (a stable ascending sort), for every index of the leading axes: int32, the
    shape of `keys`. Keys are int32, int64 or float (bool: convert first)."""
    shape = keys.shape
    size = shape[-1]
    i32, last = dtypes.int32, len(shape) - 1
    blocks, distances = bitonic_stages(size)
    position = lax.iota((size,), 0, i32)
    zero = full((size,), 0, i32)
    block_table, distance_table = lift(blocks), lift(distances)

    def stage(t: Tracer, carry: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
        values, order = carry

        def spread(table: Tracer) -> Tracer:
            return broadcast_to(lax.reshape(lax.dynamic_slice(table, [t], [1]), ()), (size,))

        partner = lax.binary(nn.XorOp, position, spread(distance_table))
        other, other_order = lax.gather(values, partner, last), lax.gather(order, partner, last)
        # (other, other_order) < (value, order): pairs are distinct, since orders are.
        less, equal = less_and_equal(other, values)
        other_less = lax.binary(nn.OrOp, less, lax.binary(nn.AndOp, equal, lax.compare("lt", other_order, order)))
        lower = lax.compare("lt", position, partner)
        ascending = lax.compare("eq", lax.binary(nn.AndOp, position, spread(block_table)), zero)
        keep_min = broadcast_to(lax.compare("eq", lax.convert(lower, i32), lax.convert(ascending, i32)), shape)
        take_other = lax.compare("eq", lax.convert(keep_min, i32), lax.convert(other_less, i32))
        return lax.select(take_other, other, values), lax.select(take_other, other_order, order)

    if size <= 1:
        return lax.iota(shape, last, i32)
    _, order = fori_loop(0, len(blocks), stage, (keys, lax.iota(shape, last, i32)))
    return order


def argsort_last(keys: Tracer) -> Tracer:
    """A stable ascending argsort along the last axis of any length (int32 indices): the keys
    are padded to a power of two with values that sort after every real one (NaN for floats,
    the largest integer otherwise; padding comes after them by the index tie-break)."""
    if keys.dtype == dtypes.bool_:
        keys = lax.convert(keys, dtypes.int32)
    n = keys.shape[-1]
    if n <= 1:
        return lax.iota(keys.shape, keys.ndim - 1, dtypes.int32)
    size = 1 << (n - 1).bit_length()
    if size > n:
        fill = float("nan") if dtypes.is_float(keys.dtype) else int(np.iinfo(keys.dtype).max)
        zeros = [0] * keys.ndim
        keys = lax.pad(keys, full((), fill, keys.dtype), zeros, [*zeros[:-1], size - n])
    order = sort_order(keys)
    if size > n:
        order = lax.slice(order, [0] * keys.ndim, [*keys.shape[:-1], n], [1] * keys.ndim)
    return order
