"""Operands as numpy and JAX see them: lifting (`lift`), dtype promotion with weak Python
scalars (`result_dtype`), broadcasting (`broadcast_shapes`, `broadcast_to`, `operands`) and
axis arguments (`normalize_axes`).

Why here, under the library: the reference code a pass traces (irgrad/tracing/reference_loops.py)
mixes shapes and Python scalars as numpy code does, and must emit the same broadcasts and
conversions as the library, so both use these (irgrad/numpy/support.py re-exports them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.tracer import Tracer, as_tracer, current_frame, full


def is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def lift(x: Any, dtype: np.dtype | None = None) -> Tracer:
    """Any array-like (tracer, numpy array, Python scalar, nested list) as a tracer."""
    frame = current_frame()
    assert frame is not None
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    t = as_tracer(frame, x, dtype)
    if dtype is not None and t.dtype != dtype:
        t = lax.convert(t, dtype)
    return t


def dtype_of(x: Any) -> np.dtype:
    if isinstance(x, Tracer):
        return x.dtype
    if is_scalar(x):
        return dtypes.scalar_dtype(x)
    if isinstance(x, (list, tuple)):
        # A list of Python numbers is an array of the default dtypes (as `ig.asarray` and
        # jnp.asarray make it), not numpy's int64/float64: [1, 2] + an int32 array is int32.
        flat = np.asarray(x, dtype=object).ravel().tolist()
        if flat and all(is_scalar(v) for v in flat):
            d = dtypes.scalar_dtype(flat[0])
            for v in flat[1:]:
                d = dtypes.promote(d, dtypes.scalar_dtype(v))
            return d
    return dtypes.array_dtype_of(np.asarray(x))


def shape_of(x: Any) -> tuple[int, ...]:
    if isinstance(x, Tracer):
        return x.shape
    if is_scalar(x):
        return ()
    return np.shape(x)


def is_weak(x: Any) -> bool:
    """A Python scalar or a weakly typed tracer (`Tracer.weak`): it takes the other operands' dtype."""
    return is_scalar(x) or (isinstance(x, Tracer) and x.weak)


def _as_scalar_kind(x: Any) -> bool | int | float | complex:
    """A Python scalar of `x`'s kind, which is all that weak promotion looks at."""
    if is_scalar(x):
        return x
    if dtypes.is_complex(x.dtype):
        return 1j
    return 1.0 if dtypes.is_float(x.dtype) else True if x.dtype == dtypes.bool_ else 1


def result_dtype(*xs: Any) -> np.dtype:
    """JAX promotion over several operands: strong operands first, then weak ones (Python
    scalars and weakly typed tracers)."""
    strong = [dtype_of(x) for x in xs if not is_weak(x)]
    weak = [_as_scalar_kind(x) for x in xs if is_weak(x)]
    if not strong:
        # Only weak operands: the widest kind wins, at default width, or at full width
        # (float64, int64) where a weakly typed tracer takes part, so that it stays exact.
        kinds = [dtypes.scalar_dtype(x) for x in weak]
        d = kinds[0]
        for k in kinds[1:]:
            d = dtypes.promote(d, k)
        if any(isinstance(x, Tracer) for x in xs):
            d = (
                dtypes.float64 if dtypes.is_float(d)
                else dtypes.complex128 if dtypes.is_complex(d)
                else dtypes.int64 if d in dtypes.INTS
                else d
            )
        return d
    d = strong[0]
    for s in strong[1:]:
        d = dtypes.promote(d, s)
    for w in weak:
        d = dtypes.promote_weak(d, w)
    return d


def broadcast_shapes(op_name: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(
            f"{op_name}: shapes {', '.join(str(tuple(s)) for s in shapes)} do not broadcast"
            f"{user_site()}"
        ) from None


def broadcast_to(x: Tracer, shape: Sequence[int]) -> Tracer:
    """numpy broadcasting as one explicit `nn.broadcast_in_dim` (or nothing if not needed)."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    if any(d < 0 for d in shape):
        raise ShapeError(f"broadcast_to: negative dimension in shape {shape}{user_site()}")
    offset = len(shape) - x.ndim
    if offset < 0:
        raise ShapeError(f"broadcast_to: cannot broadcast {x.shape} to {shape}{user_site()}")
    for i, d in enumerate(x.shape):
        if d != 1 and d != shape[offset + i]:
            raise ShapeError(f"broadcast_to: cannot broadcast {x.shape} to {shape}{user_site()}")
    return lax.broadcast_in_dim(x, shape, list(range(offset, len(shape))))


def operands(op_name: str, *xs: Any, dtype: np.dtype | None = None) -> tuple[list[Tracer], np.dtype]:
    """Lifts, promotes and broadcasts operands of an elementwise op to one shape and dtype."""
    d = dtype if dtype is not None else result_dtype(*xs)
    shape = broadcast_shapes(op_name, *[shape_of(x) for x in xs])
    all_weak = dtype is None and all(is_weak(x) for x in xs)
    out: list[Tracer] = []
    for x in xs:
        if is_scalar(x):
            out.append(full(shape, x, d))
        else:
            t = lift(x, d)
            if all_weak and is_weak(x) and not t.weak:
                t.frame.mark_weak(t)  # converted to the operands' common kind, still weak
            b = broadcast_to(t, shape)
            if not all_weak and b.weak and b.value is not t.value:
                # Promoted next to a strong operand, the weak value is strong from here on
                # (jnp's promote_dtypes), also where it is used alone (copysign's |x1|).
                b.frame.weak_values.discard(b.value)
            out.append(b)
    return out, d


def normalize_axes(op_name: str, axis: int | Sequence[int] | None, ndim: int) -> list[int]:
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        axes = [axis]
    elif isinstance(axis, (tuple, list)) and all(
        isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axis
    ):
        axes = list(axis)
    else:
        raise TypeError(f"{op_name}: axis must be an int or a tuple of ints, got {axis!r}{user_site()}")
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise ShapeError(f"{op_name}: axis {a} is out of range for an array of rank {ndim}{user_site()}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ShapeError(f"{op_name}: repeated axis in {axis}{user_site()}")
    return sorted(out)
