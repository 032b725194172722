"""The index and mask builders that matrix code is written with, over the last two axes of
batched tracers: `mT`, `iota`, `where` (elementwise.py's), `triangle`, `symmetric_from`,
`diagonal`, `eye_like`, `trace`, `row`, `col`, `elem` (dynamic slices at a traced index),
`row_vec`, `permute_rows`, `inverse_permutation`, `sort_columns`, `safe_sqrt`.

Why here: the factorizations' reference loops (irgrad/tracing/reference_loops.py), which a pass
traces, and the library's factorizations and their derivative rules (irgrad/numpy/linalg/) share
them; the library imports them from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.broadcasting import broadcast_to
from irgrad.tracing.elementwise import add, compare, subtract, where
from irgrad.tracing.gathers import take_along_axis
from irgrad.tracing.tracer import Tracer, full


def mT(x: Tracer) -> Tracer:
    """x with its last two axes swapped."""
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return lax.transpose(x, perm)


def iota(shape: Sequence[int], dim: int) -> Tracer:
    """int32 indices along `dim` of `shape`."""
    return lax.iota(tuple(shape), dim, dtypes.int32)


def triangle(x: Tracer, lower: bool, k: int = 0) -> Tracer:
    """tril(x, k) if lower else triu(x, -k), over the last two axes."""
    n, m = x.shape[-2:]
    diff = subtract(iota((n, m), 1), iota((n, m), 0))
    keep = compare("le", diff, k) if lower else compare("ge", diff, -k)
    return where(keep, x, full((), 0, x.dtype))


def symmetric_from(a: Tracer, lower: bool) -> Tracer:
    """The symmetric matrix whose `lower` (else upper) triangle is a's."""
    return add(triangle(a, lower), mT(triangle(a, lower, -1)))


def diagonal(x: Tracer) -> Tracer:
    """The main diagonal of the last two (square) axes: a strided slice of the flattened matrix."""
    n = x.shape[-1]
    batch = list(x.shape[:-2])
    flat = lax.reshape(x, (*batch, n * n))
    return lax.slice(flat, [0] * len(batch) + [0], batch + [n * n], [1] * len(batch) + [n + 1])


def eye_like(x: Tracer) -> Tracer:
    """The identity of x's dtype and (batched, square) shape."""
    n = x.shape[-1]
    e = lax.convert(lax.compare("eq", iota((n, n), 0), iota((n, n), 1)), x.dtype)
    return broadcast_to(e, x.shape)


def trace(x: Tracer) -> Tracer:
    """The sum of the main diagonal (x a non-bool matrix or a stack of them)."""
    d = diagonal(x)
    return lax.reduce(nn.ReduceSumOp, d, [d.ndim - 1], False)


def row(x: Tracer, i: Any) -> Tracer:
    """x[..., i:i+1, :] for a traced i."""
    return lax.dynamic_slice(x, [0] * (x.ndim - 2) + [i, 0], [*x.shape[:-2], 1, x.shape[-1]])


def col(x: Tracer, j: Any) -> Tracer:
    """x[..., :, j:j+1] for a traced j."""
    return lax.dynamic_slice(x, [0] * (x.ndim - 2) + [0, j], [*x.shape[:-1], 1])


def elem(x: Tracer, i: Any, j: Any) -> Tracer:
    """x[..., i:i+1, j:j+1]."""
    return lax.dynamic_slice(x, [0] * (x.ndim - 2) + [i, j], [*x.shape[:-2], 1, 1])


def row_vec(s: Tracer) -> Tracer:
    """s (..., n) as a row (..., 1, n)."""
    return lax.reshape(s, (*s.shape[:-1], 1, s.shape[-1]))


def permute_rows(x: Tracer, perm: Tracer) -> Tracer:
    """x[..., perm, :] per batch element: row i of the result is row perm[i] of x."""
    idx = broadcast_to(lax.reshape(perm, (*perm.shape, 1)), (*perm.shape, x.shape[-1]))
    return take_along_axis(x, idx, axis=-2)


def inverse_permutation(perm: Tracer) -> Tracer:
    """inv[..., perm[i]] = i, as a sum over a comparison (O(n^2) integer work)."""
    n = perm.shape[-1]
    hit = compare("eq", lax.reshape(perm, (*perm.shape, 1)), iota((n, n), 1))  # [i, j]: perm[i] == j
    picked = where(hit, iota((n, n), 0), 0)
    return lax.reduce(nn.ReduceSumOp, picked, [picked.ndim - 2], False)


def sort_columns(idx: Tracer, *xs: Tracer) -> list[Tracer]:
    """Each x[..., :, idx] (idx (..., n) over x's last axis)."""
    out = []
    for x in xs:
        i = broadcast_to(lax.reshape(idx, (*idx.shape[:-1], 1, idx.shape[-1])), x.shape)
        out.append(take_along_axis(x, i, axis=-1))
    return out


def safe_sqrt(s: Tracer) -> Tracer:
    """sqrt(s), reading 1 instead of s where s is 0 (so its derivative there is 0, not inf)."""
    zero = full(s.shape, 0.0, s.dtype)
    positive = lax.compare("ne", s, zero)
    return where(positive, lax.unary(nn.SqrtOp, where(positive, s, 1.0)), zero)
