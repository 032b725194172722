"""Helpers the `ig.linalg` modules share: argument checks that raise located errors
(`_float_array`, `_square`, `_matrix_arg`, `_matrix_rhs`, `_trans_code`, `_static_bool`,
`_static_float`). The index and mask builders the factorizations and their derivative rules
are written with (`mT`, `iota`, `where`, `triangle`, `diagonal`, `row`, ...) are the tracing
core's, irgrad/tracing/matrices.py, shared with the reference loops a pass traces.

Package-private (underscored): what the rest of irgrad uses are the sibling modules' public
functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.numpy.support import broadcast_shapes, broadcast_to, lift, require_float
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.tracing.tracer import Tracer


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
