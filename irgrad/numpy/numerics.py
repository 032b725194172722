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
The cores of isfinite/isinf, all/any and argmax/argmin are the tracing core's
(irgrad/tracing/elementwise.py, reductions.py), which a pass's reference code uses too.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, elementwise, primitives as lax, reductions
from irgrad.numpy.support import api, lift, normalize_axes, operands, require_float
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import user_site
from irgrad.numpy import reduction_keywords as keywords

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


@api
def isfinite(x: Any) -> Tracer:
    """Neither infinite nor NaN (bool): |x| < inf, false for NaN."""
    return elementwise.magnitude_vs_inf(x, "lt", True)


@api
def isinf(x: Any) -> Tracer:
    """+inf or -inf (bool)."""
    return elementwise.magnitude_vs_inf(x, "eq", False)


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


@api
def all(x: Any, axis: Axis = None, keepdims: bool = False, *, out: None = None, where: Any = None) -> Tracer:  # noqa: A001
    """Whether every element (along `axis`) is true (nonzero); true over no elements and over
    the elements `where=` leaves out."""
    _no_out("all", out)
    t = lift(x)
    mask = keywords.selection("all", t, where)
    if mask is not None:
        t = keywords.masked(reductions.as_bool(t), mask, True)
    return reductions.bool_reduce("all", nn.ReduceMinOp, True, t, axis, keepdims)


@api
def any(x: Any, axis: Axis = None, keepdims: bool = False, *, out: None = None, where: Any = None) -> Tracer:  # noqa: A001
    """Whether some element (along `axis`) is true (nonzero); false over no elements and over
    the elements `where=` leaves out."""
    _no_out("any", out)
    t = lift(x)
    mask = keywords.selection("any", t, where)
    if mask is not None:
        t = keywords.masked(reductions.as_bool(t), mask, False)
    return reductions.bool_reduce("any", nn.ReduceMaxOp, False, t, axis, keepdims)


def _no_out(op_name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"{op_name}: out= is not supported (arrays are immutable){user_site()}")


@api
def argmax(x: Any, axis: int | None = None, keepdims: bool = False) -> Tracer:
    """Index of the first maximum along `axis` (of the flattened array for None), int32."""
    return reductions.arg_extreme("argmax", nn.ReduceMaxOp, x, axis, keepdims)


@api
def argmin(x: Any, axis: int | None = None, keepdims: bool = False) -> Tracer:
    """Index of the first minimum along `axis` (of the flattened array for None), int32."""
    return reductions.arg_extreme("argmin", nn.ReduceMinOp, x, axis, keepdims)


@api
def var(x: Any, axis: Axis = None, ddof: int = 0, keepdims: bool = False, *, dtype: Any = None,
        out: None = None, where: Any = None, correction: int | None = None) -> Tracer:  # fmt: skip
    """Mean squared deviation from the mean, divided by `N - ddof` instead of N (by 0 where
    N - ddof <= 0, as numpy: inf, or NaN for no deviation; numpy also warns). `correction`
    is the array API's name for ddof; with `where=`, N counts the selected elements only."""
    _no_out("var", out)
    ddof = _correction("var", ddof, correction)
    t = lift(x)
    mask = keywords.selection("var", t, where)
    if dtype is not None:
        t = lax.convert(t, dtypes.canonical(dtype))
    t = require_float("var", t)
    axes = normalize_axes("var", axis, t.ndim)
    t = keywords.masked(t, mask, 0.0)
    if mask is None:
        count: Any = full(_kept(t.shape, axes, True), float(np.prod([t.shape[a] for a in axes], dtype=np.int64)), t.dtype)
    else:
        count = lax.reduce(nn.ReduceSumOp, lax.convert(mask, t.dtype), axes, True)
    total = lax.reduce(nn.ReduceSumOp, t, axes, True)
    mean = lax.binary(nn.DivOp, total, count)
    deviation = lax.binary(nn.SubOp, t, lax.broadcast_in_dim(mean, t.shape, list(range(t.ndim))))
    deviation = keywords.masked(deviation, mask, 0.0)
    squares = lax.reduce(nn.ReduceSumOp, lax.binary(nn.MulOp, deviation, deviation), axes, keepdims)
    count = lax.reshape(count, squares.shape)
    divisor = lax.binary(nn.SubOp, count, full(count.shape, float(ddof), t.dtype))
    zero = full(count.shape, 0.0, t.dtype)
    divisor = lax.select(lax.compare("gt", divisor, zero), divisor, zero)
    return lax.binary(nn.DivOp, squares, divisor)


def _kept(shape: tuple[int, ...], axes: list[int], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _correction(op_name: str, ddof: int, correction: int | None) -> int:
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"{op_name}: ddof and correction can't be provided simultaneously{user_site()}")
    return correction


@api
def std(x: Any, axis: Axis = None, ddof: int = 0, keepdims: bool = False, *, dtype: Any = None,
        out: None = None, where: Any = None, correction: int | None = None) -> Tracer:  # fmt: skip
    """Square root of `var`. Where the variance is 0 the value is 0 and the gradient 0 (a
    subgradient), not NaN as sqrt'(0) * 0 would give (JAX and PyTorch give NaN there): the
    square root reads 1 instead of 0 on the branch not taken ("double where")."""
    v = var(x, axis=axis, ddof=ddof, keepdims=keepdims, dtype=dtype, out=out, where=where, correction=correction)
    zero, one = full(v.shape, 0.0, v.dtype), full(v.shape, 1.0, v.dtype)
    spread = lax.compare("ne", v, zero)  # NaN and inf stay on the sqrt branch
    return lax.select(spread, lax.unary(nn.SqrtOp, lax.select(spread, v, one)), zero)


__all__ = ["all", "any", "argmax", "argmin", "clip", "isfinite", "isinf", "isnan", "std", "var"]
