"""Property tests of the reference interpreter's index arithmetic and conversions.

Random slices (either stride sign), dynamic-slice starts anywhere on the integer line, and
float-to-int conversions of arbitrary doubles, each against a definition written out here.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import IntegerType, i32

from _interpreter_util import index, run1
from irgrad.dialects import nn

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def slices(draw: st.DrawFn) -> tuple[int, int, int, int]:
    """(n, start, limit, stride) that nn.slice accepts on a dimension of size n."""
    n = draw(st.integers(1, 9))
    stride = draw(st.integers(1, 4)) * draw(st.sampled_from([1, -1]))
    start = draw(st.integers(0, n - 1))
    count = draw(st.integers(0, n))
    # The longest run of at most `count` indices that stays inside 0..n-1.
    length = max(k for k in range(count + 1) if k == 0 or 0 <= start + (k - 1) * stride < n)
    limit = start + length * stride
    if length > 0:  # any limit past the last index and not past the next one
        limit -= draw(st.integers(0, abs(stride) - 1)) * (1 if stride > 0 else -1)
    return n, start, limit, stride


@SETTINGS
@given(slices(), slices())
def test_slice_reads_start_plus_multiples_of_stride(dim0, dim1):
    (n0, s0, l0, k0), (n1, s1, l1, k1) = dim0, dim1
    x = np.arange(n0 * n1, dtype=np.int32).reshape(n0, n1)
    y = run1(lambda v: nn.SliceOp(v, [s0, s1], [l0, l1], [k0, k1]), x)
    rows = [s0 + i * k0 for i in range(nn.slice_length(s0, l0, k0))]
    cols = [s1 + j * k1 for j in range(nn.slice_length(s1, l1, k1))]
    expected = x[np.ix_(rows, cols)] if rows and cols else np.zeros((len(rows), len(cols)), np.int32)
    np.testing.assert_array_equal(y, expected)
    assert y.shape == expected.shape


@SETTINGS
@given(st.integers(1, 8), st.integers(0, 8), st.integers(-(2**62), 2**62))
def test_dynamic_slice_start_is_clamped(n, size, start):
    size = min(size, n)
    x = np.arange(n, dtype=np.float32)
    y = run1(lambda v, i: nn.DynamicSliceOp(v, [i], [size]), x, index(start))
    begin = min(max(start, 0), n - size)
    np.testing.assert_array_equal(y, x[begin : begin + size])


def saturated(value: float, bits: int) -> int:
    """nn.convert's float -> int: truncate toward zero, clamp to the type, NaN -> 0."""
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return hi if value > 0 else lo
    return min(max(math.trunc(value), lo), hi)


@SETTINGS
@given(st.floats(allow_nan=True, allow_infinity=True, width=64))
def test_float_to_int_conversion_saturates(value):
    for element_type, bits in ((i32, 32), (IntegerType(64), 64)):
        y = run1(lambda v: nn.ConvertOp(v, element_type), np.array([value]))
        assert int(y[0]) == saturated(value, bits), (value, bits, y)
