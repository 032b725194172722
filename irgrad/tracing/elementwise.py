"""The elementwise functions with numpy's semantics that the tracing core's own numpy-style
code needs: `add`, `subtract`, `multiply`, `divide`, `remainder`, `floor`, `compare`, `where`,
`bitwise_and`, `bitwise_not`, `isfinite`. Operands broadcast and promote as in JAX (irgrad/tracing/broadcasting.py),
then one or a few `nn` ops are emitted.

Why here: a pass's reference code (irgrad/tracing/reference_loops.py) is numpy-style code on
the tracing core; irgrad/numpy/basic.py, bitwise.py and numerics.py build their public,
eager-capable functions on these (the same IR either way).
"""

from __future__ import annotations

from typing import Any

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.broadcasting import (
    broadcast_shapes, broadcast_to, is_scalar, lift, operands, result_dtype, shape_of,
)
from irgrad.tracing.errors import DTypeError, user_site
from irgrad.tracing.tracer import Tracer, full


def binary(op_name: str, op_class: type[nn.ElementwiseBinaryOp], x: Any, y: Any) -> Tracer:
    """`op_class` on the promoted and broadcast operands (add, sub, mul, div refuse bool)."""
    (a, b), d = operands(op_name, x, y)
    if d == dtypes.bool_ and op_class in (nn.AddOp, nn.SubOp, nn.MulOp, nn.DivOp):
        raise DTypeError(f"{op_name}: not defined on bool arrays; convert with .astype(){user_site()}")
    return lax.binary(op_class, a, b)


def add(x: Any, y: Any) -> Tracer:
    return binary("add", nn.AddOp, x, y)


def subtract(x: Any, y: Any) -> Tracer:
    return binary("subtract", nn.SubOp, x, y)


def multiply(x: Any, y: Any) -> Tracer:
    return binary("multiply", nn.MulOp, x, y)


def divide(x: Any, y: Any) -> Tracer:
    """True division: integer operands give float32, as jnp.divide."""
    d = result_dtype(x, y)
    if not dtypes.is_inexact(d):
        d = dtypes.float32
    (a, b), _ = operands("divide", x, y, dtype=d)
    return lax.binary(nn.DivOp, a, b)


def floor(x: Any) -> Tracer:
    """floor(x) = x - mod(x, 1) would be inexact; built from convert (truncation) and a fix-up."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return t
    truncated = lax.convert(lax.convert(t, dtypes.int64), t.dtype)
    fix = lax.compare("gt", truncated, t)
    one = full(t.shape, 1.0, t.dtype)
    zero = full(t.shape, 0.0, t.dtype)
    result = lax.binary(nn.SubOp, truncated, lax.select(fix, one, zero))
    # A zero keeps x's sign (floor(-0.0) is -0.0, as numpy); values too large for int64 are
    # already integral; NaN and inf pass through.
    result = lax.select(lax.compare("eq", result, zero), lax.binary(nn.MulOp, t, zero), result)
    big = lax.compare("ge", lax.unary(nn.AbsOp, t), full(t.shape, 2.0**52, t.dtype))
    return lax.select(big, t, lax.select(lax.compare("ne", t, t), t, result))


def is_inf(t: Tracer) -> Tracer:
    """|t| == inf, as a compare (no abs: -inf and inf checked apart)."""
    pos = lax.compare("eq", t, full(t.shape, float("inf"), t.dtype))
    neg = lax.compare("eq", t, full(t.shape, float("-inf"), t.dtype))
    return lax.select(pos, pos, neg)


def remainder(x: Any, y: Any) -> Tracer:
    """`x % y` as numpy and Python define it: the result has the divisor's sign (see
    irgrad/numpy/basic.py's `remainder` for the rules at zero and the infinities)."""
    (a, b), d = operands("remainder", x, y)
    zero = full(a.shape, 0, d)
    if dtypes.is_float(d):
        r = lax.binary(nn.SubOp, a, lax.binary(nn.MulOp, floor(lax.binary(nn.DivOp, a, b)), b))
        # A finite x over an infinite y: x itself (then the sign rule below makes it +-inf
        # where the signs differ), as numpy; x - floor(x / y) * y would be 0 * inf = NaN.
        finite_over_inf = lax.select(is_inf(b), lax.compare("eq", lax.binary(nn.SubOp, a, a), zero), is_inf(b))
        r = lax.select(finite_over_inf, a, r)
    else:
        q = lax.binary(nn.DivOp, a, b)
        r = lax.binary(nn.SubOp, a, lax.binary(nn.MulOp, q, b))
        r = lax.select(lax.compare("eq", b, zero), zero, r)  # nn.div divides by 1 there
    nonzero = lax.compare("ne", r, zero)
    signs_differ = lax.compare("ne", lax.compare("lt", r, zero), lax.compare("lt", b, zero))
    r = lax.select(lax.select(nonzero, signs_differ, nonzero), lax.binary(nn.AddOp, r, b), r)
    if dtypes.is_float(d):
        # Rounding can land exactly on |y|: numpy's result is then 0 with y's sign... or y - ulp;
        # keep it inside the half-open interval. A zero result takes y's sign, as numpy's.
        at_y = lax.compare("eq", r, b)
        at_y = lax.select(is_inf(b), lax.compare("ne", b, b), at_y)  # +-inf is the answer there
        signed_zero = lax.select(lax.compare("lt", b, zero), full(a.shape, -0.0, d), zero)
        r = lax.select(at_y, signed_zero, r)
        r = lax.select(lax.compare("eq", r, zero), signed_zero, r)
    return r


_COMPARISON_NAMES = {
    "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
}


def compare(direction: str, x: Any, y: Any) -> Tracer:
    """`x <direction> y` (eq, ne, lt, le, gt, ge) on the promoted and broadcast operands."""
    (a, b), _ = operands(_COMPARISON_NAMES[direction], x, y)
    return lax.compare(direction, a, b)


def where(condition: Any, x: Any, y: Any) -> Tracer:
    """`condition ? x : y` elementwise, broadcasting all three (numpy's three-argument where)."""
    c = lift(condition)
    if c.dtype != dtypes.bool_:
        c = lax.convert(c, dtypes.bool_)
    shape = broadcast_shapes("where", c.shape, shape_of(x), shape_of(y))
    (a, b), _ = operands("where", _bcast(x, shape), _bcast(y, shape))
    return lax.select(broadcast_to(c, shape), broadcast_to(a, shape), broadcast_to(b, shape))


def _bcast(x: Any, shape: tuple[int, ...]) -> Any:
    return x if is_scalar(x) else broadcast_to(lift(x), shape)


def bitwise(op_name: str, op_class: type[nn.ElementwiseBinaryOp], x: Any, y: Any) -> Tracer:
    """A bitwise `op_class` (and, or, xor) on promoted and broadcast bool or integer operands."""
    (a, b), d = operands(op_name, x, y)
    if dtypes.is_float(d):
        raise DTypeError(f"{op_name}: needs integer or bool operands, got dtype {d}{user_site()}")
    return lax.binary(op_class, a, b)


def bitwise_and(x: Any, y: Any) -> Tracer:
    return bitwise("bitwise_and", nn.AndOp, x, y)


def bitwise_not(x: Any) -> Tracer:
    """`~x`: all bits flipped (`-x - 1` on integers, logical not on bool)."""
    t = lift(x)
    if dtypes.is_float(t.dtype):
        raise DTypeError(f"bitwise_not: needs an integer or bool operand, got dtype {t.dtype}{user_site()}")
    ones = full(t.shape, True if t.dtype == dtypes.bool_ else -1, t.dtype)
    return lax.binary(nn.XorOp, t, ones)


def magnitude_vs_inf(x: Any, direction: str, integers: bool) -> Tracer:
    """`|x| <direction> inf` for a float x; `integers` (bool) for integer and bool x, which
    are always finite."""
    t = lift(x)
    if not dtypes.is_float(t.dtype):
        return full(t.shape, integers, dtypes.bool_)
    m = lax.unary(nn.AbsOp, t)
    return lax.compare(direction, m, full(m.shape, float("inf"), m.dtype))


def isfinite(x: Any) -> Tracer:
    """Neither infinite nor NaN (bool): |x| < inf, false for NaN."""
    return magnitude_vs_inf(x, "lt", True)
