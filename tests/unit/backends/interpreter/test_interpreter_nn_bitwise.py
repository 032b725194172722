"""The reference interpreter on nn's bitwise ops: and, or, xor, shift_left, shift_right_logical.

and/or/xor run against numpy's bitwise functions; the shifts against a Python-int reference
that works on the two's complement bit pattern, so the out-of-range rule (amount < 0 or
>= width gives 0) and the logical right shift of negative numbers are checked independently of
numpy's own shifts.
"""

from __future__ import annotations

import numpy as np
import pytest

from _interpreter_util import assert_same, run1, run_text
from irgrad.dialects import nn


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def random_ints(dtype, shape, seed: int) -> np.ndarray:
    info = np.iinfo(dtype)
    x = rng(seed).integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    # The extremes and the small values where sign handling goes wrong first.
    edge = np.array([0, 1, -1, info.min, info.max, info.min + 1], dtype=dtype)
    return np.concatenate([x.ravel(), edge])


# ---------------------------------------------------------------------------------------------
# and, or, xor
# ---------------------------------------------------------------------------------------------

LOGICAL = [(nn.AndOp, np.bitwise_and), (nn.OrOp, np.bitwise_or), (nn.XorOp, np.bitwise_xor)]


@pytest.mark.parametrize("op, ref", LOGICAL, ids=lambda v: getattr(v, "name", ""))
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_logical_on_integers(op, ref, dtype):
    x, y = random_ints(dtype, (40,), 1), random_ints(dtype, (40,), 2)
    assert_same(run1(op, x, y), ref(x, y))


@pytest.mark.parametrize("op, ref", LOGICAL, ids=lambda v: getattr(v, "name", ""))
def test_logical_on_booleans(op, ref):
    x = np.array([False, False, True, True])
    y = np.array([False, True, False, True])
    assert_same(run1(op, x, y), ref(x, y))


@pytest.mark.parametrize("op, ref", LOGICAL, ids=lambda v: getattr(v, "name", ""))
def test_logical_rank0_and_empty(op, ref):
    a, b = np.array(-6, np.int32), np.array(11, np.int32)
    assert_same(run1(op, a, b), ref(a, b))
    e = np.zeros((0, 3), np.int64)
    assert_same(run1(op, e, e), e)


# ---------------------------------------------------------------------------------------------
# Shifts
# ---------------------------------------------------------------------------------------------


def _signed(bits: int, width: int) -> int:
    return bits - (1 << width) if bits >> (width - 1) else bits


def reference_shift(x: np.ndarray, n: np.ndarray, left: bool) -> np.ndarray:
    """Shifts of the two's complement pattern in Python ints; 0 for amounts outside 0..width-1."""
    width = x.dtype.itemsize * 8
    mask = (1 << width) - 1
    out = []
    for value, amount in zip(x.ravel().tolist(), n.ravel().tolist()):
        if not 0 <= amount < width:
            out.append(0)
            continue
        bits = value & mask
        bits = (bits << amount) & mask if left else bits >> amount
        out.append(_signed(bits, width))
    return np.array(out, dtype=x.dtype).reshape(x.shape)


SHIFTS = [(nn.ShiftLeftOp, True), (nn.ShiftRightLogicalOp, False)]


@pytest.mark.parametrize("op, left", SHIFTS, ids=["shift_left", "shift_right_logical"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_shift_against_bit_pattern_reference(op, left, dtype):
    width = np.dtype(dtype).itemsize * 8
    x = random_ints(dtype, (80,), 3)
    # Amounts cover every in-range value and both sides of the range.
    n = rng(4).integers(-3, width + 4, size=x.shape).astype(dtype)
    n[: width + 3] = np.arange(-1, width + 2, dtype=dtype)
    assert_same(run1(op, x, n), reference_shift(x, n, left))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_shift_amounts_out_of_range_give_zero(dtype):
    info = np.iinfo(dtype)
    width = np.dtype(dtype).itemsize * 8
    x = np.array([-1, 1, info.min, info.max, 12345], dtype=dtype)
    for amount in (width, width + 1, -1, -width, info.min, info.max):
        n = np.full(x.shape, amount, dtype=dtype)
        assert_same(run1(nn.ShiftLeftOp, x, n), np.zeros_like(x))
        assert_same(run1(nn.ShiftRightLogicalOp, x, n), np.zeros_like(x))


def test_shift_right_logical_fills_with_zeros():
    # -1 is all ones: a logical shift by 28 leaves the low 4 bits; an arithmetic one would give -1.
    x = np.array([-1, -1, np.iinfo(np.int32).min, -16], dtype=np.int32)
    n = np.array([28, 0, 31, 2], dtype=np.int32)
    assert_same(run1(nn.ShiftRightLogicalOp, x, n), np.array([15, -1, 1, 0x3FFFFFFC], dtype=np.int32))


def test_shift_left_drops_high_bits():
    x = np.array([1, 3, 0x40000000, -1], dtype=np.int32)
    n = np.array([31, 31, 1, 4], dtype=np.int32)
    expected = np.array([np.iinfo(np.int32).min, np.iinfo(np.int32).min, np.iinfo(np.int32).min, -16], np.int32)
    assert_same(run1(nn.ShiftLeftOp, x, n), expected)


def test_shifts_rank0_from_text():
    text = """
    func.func @main(%x: tensor<i64>, %n: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
      %l = nn.shift_left %x, %n : tensor<i64>
      %r = nn.shift_right_logical %x, %n : tensor<i64>
      func.return %l, %r : tensor<i64>, tensor<i64>
    }
    """
    left, right = run_text(text, np.array(-2, np.int64), np.array(62, np.int64))
    assert_same(left, np.array(-(2**63), np.int64))
    assert_same(right, np.array(3, np.int64))
