"""Helpers the `ig.linalg` modules share: argument checks that raise located errors
(`_float_array`, `_square`, `_matrix_arg`, `_matrix_rhs`, `_trans_code`, `_static_bool`,
`_static_float`), and the index and mask builders the factorizations, their reference loops
and their derivative rules are written with (`_mT`, `_iota`, `_where`, `_triangle`,
`_diagonal`, `_row`, `_col`, `_elem`, `_permute_rows`, ...).

Package-private (underscored): what the rest of irgrad uses are the sibling modules' public
functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.numpy import basic as np_api
from irgrad.numpy.shape import take_along_axis
from irgrad.numpy.support import broadcast_shapes, broadcast_to, lift, require_float
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.tracing.tracer import Tracer, full


_SUPPORTED = (dtypes.float32, dtypes.float64)


def _float_array(op_name: str, x: Any) -> Tracer:
    """Integers and bools become float32 (as JAX); float16 and bfloat16 are refused."""
    t = require_float(op_name, lift(x))
    if t.dtype not in _SUPPORTED:
        raise DTypeError(f"{op_name}: dtype {t.dtype} is not supported; use float32 or float64{user_site()}")
    return t


def _square(op_name: str, x: Any) -> Tracer:
    t = _float_array(op_name, x)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ShapeError(
            f"{op_name}: expected a square matrix or a stack of them, shape (..., n, n), got {t.shape}{user_site()}"
        )
    return t


def _matrix_arg(op_name: str, x: Any) -> Tracer:
    t = _float_array(op_name, x)
    if t.ndim < 2:
        raise ShapeError(f"{op_name}: expected a matrix or a stack of them, shape (..., m, n), got {t.shape}{user_site()}")
    return t


def _matrix_rhs(op_name: str, a: Tracer, b: Any, vector: bool | None) -> tuple[Tracer, Tracer, bool]:
    """a (..., n, n) and b as a (..., n, k) matrix, both broadcast to one batch shape and dtype;
    `vector` None: b is a vector iff b.ndim == a.ndim - 1 (jax.scipy's rule)."""
    bt = _float_array(op_name, b)
    d = dtypes.promote(a.dtype, bt.dtype)
    a, bt = lax.convert(a, d), lax.convert(bt, d)
    n = a.shape[-1]
    if vector is None:
        vector = bt.ndim == a.ndim - 1
    if bt.ndim < 1 or (not vector and bt.ndim < 2):
        raise ShapeError(f"{op_name}: b must be at least 1-D, got shape {bt.shape}{user_site()}")
    if vector:
        bt = lax.reshape(bt, (*bt.shape, 1))
    if bt.shape[-2] != n:
        raise ShapeError(
            f"{op_name}: a has shape {a.shape} but b has shape {tuple(bt.shape[:-1]) if vector else bt.shape}: "
            f"b's {'length' if vector else 'rows'} must be {n}{user_site()}"
        )
    batch = broadcast_shapes(op_name, a.shape[:-2], bt.shape[:-2])
    return broadcast_to(a, (*batch, n, n)), broadcast_to(bt, (*batch, *bt.shape[-2:])), vector


def _trans_code(op_name: str, trans: Any) -> int:
    codes = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}
    if isinstance(trans, bool) or trans not in codes:
        raise ValueError(f"{op_name}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}{user_site()}")
    return codes[trans]


def _static_bool(op_name: str, what: str, v: Any) -> bool:
    if isinstance(v, Tracer):
        raise TypeError(f"{op_name}: {what} must be a Python bool, not a traced value{user_site()}")
    return bool(np.asarray(v))


def _static_float(op_name: str, what: str, v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, Tracer) or np.ndim(v) != 0:
        raise TypeError(f"{op_name}: {what} must be None or a Python float, not an array or a traced value{user_site()}")
    return float(v)


# --- index and mask builders ------------------------------------------------------------------


def _mT(x: Tracer) -> Tracer:
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return lax.transpose(x, perm)


def _iota(shape: Sequence[int], dim: int) -> Tracer:
    return lax.iota(tuple(shape), dim, dtypes.int32)


def _where(c: Any, x: Any, y: Any) -> Tracer:
    return np_api.where(c, x, y)


def _triangle(x: Tracer, lower: bool, k: int = 0) -> Tracer:
    """tril(x, k) if lower else triu(x, -k), over the last two axes."""
    n, m = x.shape[-2:]
    diff = _iota((n, m), 1) - _iota((n, m), 0)
    keep = diff <= k if lower else diff >= -k
    return _where(keep, x, full((), 0, x.dtype))


def _symmetric_from(a: Tracer, lower: bool) -> Tracer:
    """The symmetric matrix whose `lower` (else upper) triangle is a's."""
    return _triangle(a, lower) + _mT(_triangle(a, lower, -1))


def _diagonal(x: Tracer) -> Tracer:
    """The main diagonal of the last two (square) axes: a strided slice of the flattened matrix."""
    n = x.shape[-1]
    batch = list(x.shape[:-2])
    flat = lax.reshape(x, (*batch, n * n))
    return lax.slice(flat, [0] * len(batch) + [0], batch + [n * n], [1] * len(batch) + [n + 1])


def _eye_like(x: Tracer) -> Tracer:
    n = x.shape[-1]
    e = lax.convert(lax.compare("eq", _iota((n, n), 0), _iota((n, n), 1)), x.dtype)
    return broadcast_to(e, x.shape)


def _trace(x: Tracer) -> Tracer:
    return np_api.sum(_diagonal(x), axis=-1)


def _row(x: Tracer, i: Any) -> Tracer:
    """x[..., i:i+1, :] for a traced i."""
    return lax.dynamic_slice(x, [0] * (x.ndim - 2) + [i, 0], [*x.shape[:-2], 1, x.shape[-1]])


def _col(x: Tracer, j: Any) -> Tracer:
    """x[..., :, j:j+1] for a traced j."""
    return lax.dynamic_slice(x, [0] * (x.ndim - 2) + [0, j], [*x.shape[:-1], 1])


def _elem(x: Tracer, i: Any, j: Any) -> Tracer:
    """x[..., i:i+1, j:j+1]."""
    return lax.dynamic_slice(x, [0] * (x.ndim - 2) + [i, j], [*x.shape[:-2], 1, 1])


def _row_vec(s: Tracer) -> Tracer:
    return lax.reshape(s, (*s.shape[:-1], 1, s.shape[-1]))


def _permute_rows(x: Tracer, perm: Tracer) -> Tracer:
    """x[..., perm, :] per batch element: row i of the result is row perm[i] of x."""
    idx = broadcast_to(lax.reshape(perm, (*perm.shape, 1)), (*perm.shape, x.shape[-1]))
    return take_along_axis(x, idx, axis=-2)


def _inverse_permutation(perm: Tracer) -> Tracer:
    """inv[..., perm[i]] = i, as a sum over a comparison (O(n^2) integer work)."""
    n = perm.shape[-1]
    hit = lax.reshape(perm, (*perm.shape, 1)) == _iota((n, n), 1)  # [i, j]: perm[i] == j
    return np_api.sum(_where(hit, _iota((n, n), 0), 0), axis=-2)


def _sort_columns(idx: Tracer, *xs: Tracer) -> list[Tracer]:
    """Each x[..., :, idx] (idx (..., n) over x's last axis)."""
    out = []
    for x in xs:
        i = broadcast_to(lax.reshape(idx, (*idx.shape[:-1], 1, idx.shape[-1])), x.shape)
        out.append(take_along_axis(x, i, axis=-1))
    return out


def _safe_sqrt(s: Tracer) -> Tracer:
    zero = full(s.shape, 0.0, s.dtype)
    positive = lax.compare("ne", s, zero)
    return np_api.where(positive, np_api.sqrt(np_api.where(positive, s, 1.0)), zero)
