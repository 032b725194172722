"""Small products with numpy's names: outer, inner, vdot, tensordot, kron, cross.

Static in shape and built from `nn` ops (broadcast_in_dim, reshape, slice, concatenate) and
`einsum` for tensordot, so their derivatives are those ops' adjoints. Bool operands are
refused (convert them to a number type first).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax

from irgrad.numpy import basic as np_api, support
from irgrad.numpy.arrays import _one_axis, _slice_axis, moveaxis, ravel
from irgrad.numpy.support import api, broadcast_to, lift, normalize_axes, result_dtype
from irgrad.tracing.tracer import Tracer, full
from irgrad.numpy.einsum import einsum
from irgrad.tracing.errors import DTypeError, ShapeError, user_site

__all__ = [
    "cross",
    "inner",
    "kron",
    "outer",
    "tensordot",
    "vdot",
]


def _numeric(op_name: str, *xs: Any) -> list[Tracer]:
    d = result_dtype(*xs)
    if d == dtypes.bool_:
        raise DTypeError(f"{op_name}: bool operands are not supported (convert them to a number type){user_site()}")
    return [lift(x, d) for x in xs]


@api
def outer(a: Any, b: Any) -> Tracer:
    """a.ravel()[:, None] * b.ravel()[None, :]."""
    x, y = _numeric("outer", a, b)
    shape = (x.size, y.size)
    return lax.broadcast_in_dim(ravel(x), shape, [0]) * lax.broadcast_in_dim(ravel(y), shape, [1])


@api
def inner(a: Any, b: Any) -> Tracer:
    """Sum over the last axes of a and b (a scalar operand multiplies); result shape
    a.shape[:-1] + b.shape[:-1]."""
    x, y = _numeric("inner", a, b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if x.shape[-1] != y.shape[-1]:
        raise ShapeError(f"inner: last dimensions differ: {x.shape} and {y.shape}{user_site()}")
    return tensordot(x, y, axes=([-1], [-1]))


@api
def vdot(a: Any, b: Any) -> Tracer:
    """The dot product of the flattened arrays (real: no conjugation needed)."""
    x, y = _numeric("vdot", a, b)
    if x.size != y.size:
        raise ShapeError(f"vdot: arrays of shapes {x.shape} and {y.shape} have different sizes{user_site()}")
    return np_api.sum(ravel(x) * ravel(y)) if x.size else full((), 0, x.dtype)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@api
def dot(a: Any, b: Any) -> Tracer:
    """numpy's dot: a product with a scalar; matmul for vectors and matrices; otherwise the
    sum over a's last axis and b's second-to-last, the free axes of a then of b (not
    matmul's batching: dot((5, 2), (3, 2, 4)) is (5, 3, 4))."""
    x, y = _numeric("dot", a, b)
    if x.ndim == 0 or y.ndim == 0:
        return np_api.multiply(x, y)
    if x.ndim == 1 or y.ndim == 1 or (x.ndim == 2 and y.ndim == 2):
        return np_api.matmul(x, y)
    return tensordot(x, y, axes=([x.ndim - 1], [y.ndim - 2]))


@api
def tensordot(a: Any, b: Any, axes: int | Sequence[Any] = 2) -> Tracer:
    """Sum over the last `axes` axes of a and the first of b (an int), or over the pairs
    `axes = (a_axes, b_axes)`; the free axes of a then of b, in order (via `einsum`)."""
    x, y = _numeric("tensordot", a, b)
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > x.ndim or n > y.ndim:
            raise ShapeError(f"tensordot: cannot contract {n} axes of shapes {x.shape} and {y.shape}{user_site()}")
        ax_a, ax_b = list(range(x.ndim - n, x.ndim)), list(range(n))
    else:
        try:
            pa, pb = axes
        except (TypeError, ValueError):
            raise ValueError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}{user_site()}") from None
        pa = [pa] if isinstance(pa, (int, np.integer)) else list(pa)
        pb = [pb] if isinstance(pb, (int, np.integer)) else list(pb)
        if len(pa) != len(pb):
            raise ValueError(f"tensordot: axes {axes!r} pair {len(pa)} axes of a with {len(pb)} of b{user_site()}")
        ax_a = [normalize_axes("tensordot", i, x.ndim)[0] for i in pa]
        ax_b = [normalize_axes("tensordot", i, y.ndim)[0] for i in pb]
        if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b):
            raise ValueError(f"tensordot: repeated axis in {axes!r}{user_site()}")
    for i, j in zip(ax_a, ax_b):
        if x.shape[i] != y.shape[j]:
            raise ShapeError(
                f"tensordot: shape mismatch for sum: axis {i} of {x.shape} vs axis {j} of {y.shape}{user_site()}"
            )
    if x.ndim + y.ndim - len(ax_a) > len(_LETTERS):
        raise ShapeError(f"tensordot: too many dimensions{user_site()}")
    la = list(_LETTERS[: x.ndim])
    lb = list(_LETTERS[x.ndim : x.ndim + y.ndim])
    for i, j in zip(ax_a, ax_b):
        lb[j] = la[i]
    out = [la[i] for i in range(x.ndim) if i not in ax_a] + [lb[j] for j in range(y.ndim) if j not in ax_b]
    return einsum(f"{''.join(la)},{''.join(lb)}->{''.join(out)}", x, y)


@api
def kron(a: Any, b: Any) -> Tracer:
    """The Kronecker product: blocks a[i, j] * b (both brought to the same rank with leading
    ones), as one broadcast multiply of interleaved axes and a reshape."""
    x, y = _numeric("kron", a, b)
    d = builtins.max(x.ndim, y.ndim)
    xs = (1,) * (d - x.ndim) + x.shape
    ys = (1,) * (d - y.ndim) + y.shape
    x, y = lax.reshape(x, xs), lax.reshape(y, ys)
    shape = [s for pair in zip(xs, ys) for s in pair]
    prod = lax.broadcast_in_dim(x, shape, list(range(0, 2 * d, 2))) * lax.broadcast_in_dim(y, shape, list(range(1, 2 * d, 2)))
    return lax.reshape(prod, [p * q for p, q in zip(xs, ys)])


@api
def cross(a: Any, b: Any, axis: int = -1) -> Tracer:
    """The cross product of 3-vectors along `axis` of a and b (other axes broadcast); the
    result has the vectors along that axis too. 2-vectors are not supported."""
    x, y = _numeric("cross", a, b)
    if x.ndim == 0 or y.ndim == 0:
        raise ShapeError(f"cross: operands must be arrays of 3-vectors, got shapes {x.shape} and {y.shape}{user_site()}")
    x = moveaxis(x, _one_axis("cross", axis, x.ndim), -1)
    y = moveaxis(y, _one_axis("cross", axis, y.ndim), -1)
    if x.shape[-1] != 3 or y.shape[-1] != 3:
        raise ShapeError(
            f"cross: vectors along axis {axis} must have 3 components, got shapes {x.shape} and {y.shape}"
            f" (axis moved last){user_site()}"
        )
    batch = support.broadcast_shapes("cross", x.shape[:-1], y.shape[:-1])
    x, y = broadcast_to(x, (*batch, 3)), broadcast_to(y, (*batch, 3))
    xc = [_slice_axis(x, x.ndim - 1, i, i + 1) for i in range(3)]
    yc = [_slice_axis(y, y.ndim - 1, i, i + 1) for i in range(3)]
    out = [xc[1] * yc[2] - xc[2] * yc[1], xc[2] * yc[0] - xc[0] * yc[2], xc[0] * yc[1] - xc[1] * yc[0]]
    r = lax.concatenate(out, len(batch))
    return moveaxis(r, -1, _one_axis("cross", axis, r.ndim))
