"""What training code asks of the numbers themselves: `clip`, `isfinite`/`isnan`/`isinf`,
`all`/`any`, `argmax`/`argmin`, `var`/`std`, with numpy's names and JAX's semantics.

All are compositions of `nn` ops, so their derivatives are those of the ops they are made of,
and that is their contract (docs/autodiff.md):
- `clip(x, lo, hi)` is `minimum(maximum(x, lo), hi)`, as `jnp.clip`: inside the bounds the
  gradient passes to x, outside it goes to the bound, and at a bound exactly it is split
  0.5 / 0.5 between x and the bound (the tie rule of maximum and minimum).
- The predicates and `argmax`/`argmin` have bool or integer results: no gradient flows
  through them (they are constants to autodiff, as in JAX).
- `var` is a mean of squared deviations; `std` its square root, whose gradient where the
  variance is 0 (a constant input) is decided as 0, not the NaN of sqrt'(0) * 0.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy.support import api, lift, normalize_axes, operands, require_float
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import ShapeError, user_site

Axis = int | Sequence[int] | None


# ---------------------------------------------------------------------------------------------
# clip
# ---------------------------------------------------------------------------------------------


@api
def clip(x: Any, min: Any = None, max: Any = None) -> Tracer:  # noqa: A002 (numpy's names)
    """`x` limited to `[min, max]` elementwise (`maximum` then `minimum`, as jnp.clip: where
    min > max the result is max). Either bound may be None; both broadcast with x."""
    if min is None and max is None:
        raise ValueError(f"clip: at least one of min and max must be given{user_site()}")
    t = lift(x)
    if min is not None:
        (t, low), _ = operands("clip", t, min)
        t = lax.binary(nn.MaximumOp, t, low)
    if max is not None:
        (t, high), _ = operands("clip", t, max)
        t = lax.binary(nn.MinimumOp, t, high)
    return t


# ---------------------------------------------------------------------------------------------
# Float predicates
# ---------------------------------------------------------------------------------------------


def _magnitude_vs_inf(x: Any, direction: str, integers: bool) -> Tracer:
    """`|x| <direction> inf` for a float x; `integers` (bool) for integer and bool x, which
    are always finite."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return full(t.shape, integers, dtypes.bool_)
    m = lax.unary(nn.AbsOp, t)
    return lax.compare(direction, m, full(m.shape, float("inf"), m.dtype))


@api
def isfinite(x: Any) -> Tracer:
    """Neither infinite nor NaN (bool): |x| < inf, false for NaN."""
    return _magnitude_vs_inf(x, "lt", True)


@api
def isinf(x: Any) -> Tracer:
    """+inf or -inf (bool)."""
    return _magnitude_vs_inf(x, "eq", False)


@api
def isnan(x: Any) -> Tracer:
    """NaN (bool): the one value not equal to itself."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return full(t.shape, False, dtypes.bool_)
    return lax.compare("ne", t, t)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------


def _as_bool(x: Any) -> Tracer:
    t = lift(x)
    return t if t.dtype == dtypes.bool_ else lax.compare("ne", t, full(t.shape, 0, t.dtype))


def _bool_reduce(op_name: str, op_class: type[nn.ReduceOp], over_nothing: bool, x: Any, axis: Axis,
                 keepdims: bool) -> Tracer:  # fmt: skip
    """all (min) / any (max) of `x != 0` along `axis`; `over_nothing` for an empty reduction."""
    t = _as_bool(x)
    axes = normalize_axes(op_name, axis, t.ndim)
    if builtins.any(t.shape[a] == 0 for a in axes):
        return full(_reduced_shape(t.shape, axes, keepdims), over_nothing, dtypes.bool_)
    r = lax.reduce(op_class, lax.convert(t, dtypes.int32), axes, keepdims)
    return lax.compare("ne", r, full(r.shape, 0, dtypes.int32))


@api
def all(x: Any, axis: Axis = None, keepdims: bool = False) -> Tracer:  # noqa: A001
    """Whether every element (along `axis`) is true (nonzero); true over no elements."""
    return _bool_reduce("all", nn.ReduceMinOp, True, x, axis, keepdims)


@api
def any(x: Any, axis: Axis = None, keepdims: bool = False) -> Tracer:  # noqa: A001
    """Whether some element (along `axis`) is true (nonzero); false over no elements."""
    return _bool_reduce("any", nn.ReduceMaxOp, False, x, axis, keepdims)


def _reduced_shape(shape: tuple[int, ...], axes: list[int], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _arg_extreme(op_name: str, op_class: type[nn.ReduceOp], x: Any, axis: int | None, keepdims: bool) -> Tracer:
    """The first index of the extreme along `axis` (of the flattened array for None), int32; a
    NaN counts as the extreme, as in numpy: max/min propagate it, and the first NaN wins."""
    t = lift(x)
    if axis is None:
        flat = lax.reshape(t, (t.size,))
        r = _arg_extreme(op_name, op_class, flat, 0, False)
        return lax.reshape(r, (1,) * t.ndim) if keepdims else r
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ShapeError(f"{op_name}: axis must be an int or None, got {axis!r}{user_site()}")
    (ax,) = normalize_axes(op_name, axis, t.ndim)
    n = t.shape[ax]
    if n == 0:
        raise ShapeError(f"{op_name}: attempt to get {op_name} of an empty sequence (axis {ax} of shape {t.shape}){user_site()}")
    if n >= 2**31:
        raise ShapeError(f"{op_name}: axis {ax} of shape {t.shape} is too long for int32 indices{user_site()}")
    extreme = lax.reduce(op_class, t, [ax], True)
    hit = lax.compare("eq", t, lax.broadcast_in_dim(extreme, t.shape, list(range(t.ndim))))
    if dtypes.is_float(t.dtype):
        hit = lax.binary(nn.OrOp, hit, lax.compare("ne", t, t))
    position = lax.iota(t.shape, ax, dtypes.int32)
    candidates = lax.select(hit, position, full(t.shape, n, dtypes.int32))
    return lax.reduce(nn.ReduceMinOp, candidates, [ax], keepdims)


@api
def argmax(x: Any, axis: int | None = None, keepdims: bool = False) -> Tracer:
    """Index of the first maximum along `axis` (of the flattened array for None), int32."""
    return _arg_extreme("argmax", nn.ReduceMaxOp, x, axis, keepdims)


@api
def argmin(x: Any, axis: int | None = None, keepdims: bool = False) -> Tracer:
    """Index of the first minimum along `axis` (of the flattened array for None), int32."""
    return _arg_extreme("argmin", nn.ReduceMinOp, x, axis, keepdims)


@api
def var(x: Any, axis: Axis = None, ddof: int = 0, keepdims: bool = False) -> Tracer:
    """Mean squared deviation from the mean, divided by `N - ddof` instead of N (by 0 where
    N - ddof <= 0, as numpy: inf, or NaN for no deviation; numpy also warns)."""
    t = require_float("var", lift(x))
    axes = normalize_axes("var", axis, t.ndim)
    count = int(np.prod([t.shape[a] for a in axes], dtype=np.int64))
    total = lax.reduce(nn.ReduceSumOp, t, axes, True)
    mean = lax.binary(nn.DivOp, total, full(total.shape, float(count), t.dtype))
    deviation = lax.binary(nn.SubOp, t, lax.broadcast_in_dim(mean, t.shape, list(range(t.ndim))))
    squares = lax.reduce(nn.ReduceSumOp, lax.binary(nn.MulOp, deviation, deviation), axes, keepdims)
    divisor = float(builtins.max(count - ddof, 0))
    return lax.binary(nn.DivOp, squares, full(squares.shape, divisor, t.dtype))


@api
def std(x: Any, axis: Axis = None, ddof: int = 0, keepdims: bool = False) -> Tracer:
    """Square root of `var`. Where the variance is 0 the value is 0 and the gradient 0 (a
    subgradient), not NaN as sqrt'(0) * 0 would give (JAX and PyTorch give NaN there): the
    square root reads 1 instead of 0 on the branch not taken ("double where")."""
    v = var(x, axis=axis, ddof=ddof, keepdims=keepdims)
    zero, one = full(v.shape, 0.0, v.dtype), full(v.shape, 1.0, v.dtype)
    spread = lax.compare("ne", v, zero)  # NaN and inf stay on the sqrt branch
    return lax.select(spread, lax.unary(nn.SqrtOp, lax.select(spread, v, one)), zero)


__all__ = ["all", "any", "argmax", "argmin", "clip", "isfinite", "isinf", "isnan", "std", "var"]
