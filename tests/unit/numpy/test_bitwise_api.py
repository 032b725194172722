"""`ig.bitwise_and, bitwise_or, bitwise_xor, bitwise_not, left_shift, right_shift` and the Tracer
operators `& | ^ ~ << >>`, eager and traced, against numpy (dtype included).

numpy defines every shift amount on signed integers: left shifts by an amount outside
0 .. width - 1 give 0, and right shifts are arithmetic, giving 0 or -1 by sign for such amounts;
so numpy itself is the oracle, out-of-range amounts included.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import check, check_traced

INT_DTYPES = [np.int32, np.int64]


def ints(dtype, *shape: int, seed: int = 0) -> np.ndarray:
    info = np.iinfo(dtype)
    x = np.random.default_rng(seed).integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    edge = np.array([0, 1, -1, info.min, info.max, -100], dtype=dtype)
    x.ravel()[: edge.size] = edge[: x.size]
    return x


def amounts(dtype, *shape: int, seed: int = 1) -> np.ndarray:
    width = np.dtype(dtype).itemsize * 8
    n = np.random.default_rng(seed).integers(-4, width + 4, size=shape).astype(dtype)
    n.ravel()[:6] = np.array([0, width - 1, width, -1, width + 10, 1], dtype=dtype)[: n.size]
    return n


@pytest.mark.parametrize("fn, ref", [
    (ig.bitwise_and, np.bitwise_and),
    (ig.bitwise_or, np.bitwise_or),
    (ig.bitwise_xor, np.bitwise_xor),
], ids=["and", "or", "xor"])
@pytest.mark.parametrize("dtype", [*INT_DTYPES, np.bool_])
def test_logical(fn, ref, dtype):
    if dtype is np.bool_:
        x = np.array([[False, True], [True, True]])
        y = np.array([False, True])
    else:
        x, y = ints(dtype, 4, 5, seed=1), ints(dtype, 5, seed=2)  # broadcast (4, 5) with (5,)
    check(fn, ref, x, y)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_shifts(dtype):
    x, n = ints(dtype, 3, 16), amounts(dtype, 3, 16)
    check(ig.left_shift, np.left_shift, x, n)
    check(ig.right_shift, np.right_shift, x, n)


def test_right_shift_is_arithmetic():
    x = np.array([-16, -1, 16, np.iinfo(np.int32).min], np.int32)
    n = np.array([2, 5, 2, 31], np.int32)
    check(ig.right_shift, np.array([-4, -1, 4, -1], np.int32), x, n)


def test_python_scalars_are_weakly_typed():
    x = ints(np.int64, 8)
    check(lambda a: ig.bitwise_and(a, 0xFF), lambda a: a & 0xFF, x)
    check(lambda a: ig.left_shift(a, 3), lambda a: a << 3, x)
    check(lambda a: ig.right_shift(a, 60), lambda a: a >> 60, x)
    y = ints(np.int32, 8)
    check(lambda a: ig.bitwise_xor(a, -1), lambda a: a ^ np.int32(-1), y)


def test_mixed_dtypes_promote():
    a, b = ints(np.int32, 6), ints(np.int64, 6, seed=3)
    check(ig.bitwise_or, lambda x, y: np.bitwise_or(x.astype(np.int64), y), a, b)
    p = np.array([True, False, True, False, True, False])
    check(ig.bitwise_and, lambda x, y: np.bitwise_and(x.astype(np.int32), y), p, a)


@pytest.mark.parametrize("dtype", [*INT_DTYPES, np.bool_])
def test_bitwise_not(dtype):
    x = np.array([True, False]) if dtype is np.bool_ else ints(dtype, 7)
    check(ig.bitwise_not, np.invert, x)
    assert ig.invert is ig.bitwise_not


def test_operators_on_tracers():
    x, n = ints(np.int32, 10), amounts(np.int32, 10)
    check_traced(lambda a, b: (a & b) | (a ^ 7), lambda a, b: (a & b) | (a ^ 7), x, n)
    check_traced(lambda a, b: (a << b) ^ (a >> b), lambda a, b: (a << b) ^ (a >> b), x, n)
    check_traced(lambda a: ~a, np.invert, x)
    check_traced(lambda a: 1 << (a & 15), lambda a: 1 << (a & 15), x)
    p = np.array([True, False, True])
    check_traced(lambda a: ~a | (a & ~a), lambda a: ~a | (a & ~a), p)


def test_float_operands_are_rejected():
    f = np.ones(3, np.float32)
    with pytest.raises(ig.DTypeError, match="bitwise_and: needs integer or bool operands, got dtype float32"):
        ig.bitwise_and(f, f)
    with pytest.raises(ig.DTypeError, match="bitwise_or: needs integer or bool operands"):
        ig.bitwise_or(np.ones(3, np.int32), 1.5)
    with pytest.raises(ig.DTypeError, match="left_shift: needs integer operands"):
        ig.left_shift(f, 1)
    with pytest.raises(ig.DTypeError, match="right_shift: needs integer operands"):
        ig.right_shift(np.array([True]), np.array([True]))
    with pytest.raises(ig.DTypeError, match="bitwise_not: needs an integer or bool operand"):
        ig.bitwise_not(f)


def test_traced_ir_uses_the_bitwise_ops():
    x = np.zeros(4, np.int32)
    text = str(ig.trace(lambda a, b: ig.right_shift(ig.bitwise_and(a, b), b), x, x))
    assert "nn.and" in text and "nn.shift_right_logical" in text and "nn.xor" in text
