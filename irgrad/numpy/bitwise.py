"""Bitwise functions with numpy names and semantics: and, or, xor, not, shifts, bitwise_count.

Operands broadcast and promote as in `numpy_api` (JAX's rules); bool and integer dtypes only.
Integers are two's complement. The shifts follow numpy on signed integers: `left_shift` by an
amount outside 0 .. width - 1 gives 0, and `right_shift` is arithmetic (the sign fills from the
left; an amount outside the range gives 0 or -1 by sign). `nn` has only the logical right shift,
so the arithmetic one is built from it: `((x ^ s) >>> n) ^ s` where `s` is all ones for
negative `x` and 0 otherwise (flipping a negative number makes it non-negative, where the two
shifts agree). `bitwise_count` is the population count of |x| by the classic shift-and-add
reduction of bit fields (no multiply); its result is int32, irgrad's narrowest integer (numpy
and jnp give uint8).
"""

from __future__ import annotations

from typing import Any

from irgrad.dialects import nn
from irgrad.tracing import dtypes, elementwise, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, lift, operands
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import DTypeError, user_site


def _shift_operands(op_name: str, x: Any, n: Any) -> tuple[Tracer, Tracer]:
    (a, b), d = operands(op_name, x, n)
    if not dtypes.is_int(d):
        raise DTypeError(f"{op_name}: needs integer operands (int32 or int64), got dtype {d}{user_site()}")
    return a, b


@api
def bitwise_and(x: Any, y: Any) -> Tracer:
    return elementwise.bitwise_and(x, y)


@api
def bitwise_or(x: Any, y: Any) -> Tracer:
    return elementwise.bitwise("bitwise_or", nn.OrOp, x, y)


@api
def bitwise_xor(x: Any, y: Any) -> Tracer:
    return elementwise.bitwise("bitwise_xor", nn.XorOp, x, y)


@api
def bitwise_not(x: Any) -> Tracer:
    """`~x`: all bits flipped (`-x - 1` on integers, logical not on bool)."""
    return elementwise.bitwise_not(x)


invert = bitwise_not


@api
def left_shift(x: Any, n: Any) -> Tracer:
    """`x << n`; 0 where `n` is negative or at least the bit width."""
    a, b = _shift_operands("left_shift", x, n)
    return lax.binary(nn.ShiftLeftOp, a, b)


@api
def right_shift(x: Any, n: Any) -> Tracer:
    """Arithmetic `x >> n` (numpy's on signed integers); -1 or 0 by sign where `n` is out of range."""
    a, b = _shift_operands("right_shift", x, n)
    zero = full(a.shape, 0, a.dtype)
    sign_fill = lax.select(lax.compare("lt", a, zero), full(a.shape, -1, a.dtype), zero)
    flipped = lax.binary(nn.XorOp, a, sign_fill)
    return lax.binary(nn.XorOp, lax.binary(nn.ShiftRightLogicalOp, flipped, b), sign_fill)



@api
def bitwise_count(x: Any) -> Tracer:
    """The number of 1 bits in |x| (numpy 2's and jnp's bitwise_count; bool counts as 0 or 1;
    abs of the most negative integer wraps to itself, whose count is 1, as numpy). The result
    is int32, where numpy and jnp give uint8 (irgrad has no unsigned dtype); the values agree."""
    t = lift(x)
    if dtypes.is_float(t.dtype):
        raise DTypeError(f"bitwise_count: needs an integer or bool operand, got dtype {t.dtype}{user_site()}")
    if t.dtype == dtypes.bool_:
        return lax.convert(t, dtypes.int32)
    t = np_api.abs(t)
    width = 64 if t.dtype == dtypes.int64 else 32

    def c(value: int) -> Tracer:
        return full(t.shape, value, t.dtype)

    def shr(v: Tracer, n: int) -> Tracer:
        return lax.binary(nn.ShiftRightLogicalOp, v, c(n))

    def mask(v: Tracer, pattern: int) -> Tracer:
        return lax.binary(nn.AndOp, v, c(int(format(pattern, "02x") * (width // 8), 16)))

    v = t - mask(shr(t, 1), 0x55)
    v = mask(v, 0x33) + mask(shr(v, 2), 0x33)
    v = mask(v + shr(v, 4), 0x0F)
    for n in (8, 16, 32)[: 2 if width == 32 else 3]:
        v = v + shr(v, n)
    v = lax.binary(nn.AndOp, v, c(0x7F))
    return v if v.dtype == dtypes.int32 else lax.convert(v, dtypes.int32)
