"""The reference interpreter on nn's data-movement ops.

broadcast_in_dim, reshape, transpose, slice (negative strides), dynamic_slice and
dynamic_update_slice (clamped starts), concatenate, pad, gather (negative and out-of-range
indices), scatter_add (repeated indices), each against numpy or a naive loop.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import IndexType, IntegerAttr, i32, i64

from _interpreter_util import Scalar, assert_same, index, run1, run_ops, run_text
from irgrad.dialects import nn

BF16 = np.dtype(ml_dtypes.bfloat16)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------------------
# broadcast_in_dim, reshape, transpose
# ---------------------------------------------------------------------------------------------


def test_broadcast_in_dim_adds_and_expands_dimensions():
    x = rng(0).standard_normal((3, 1)).astype(np.float32)
    y = run1(lambda v: nn.BroadcastInDimOp(v, [2, 3, 4], [1, 2]), x)
    assert_same(y, np.broadcast_to(x[None, :, :], (2, 3, 4)))


def test_broadcast_in_dim_with_unsorted_dims_transposes():
    x = rng(1).standard_normal((2, 3))
    y = run1(lambda v: nn.BroadcastInDimOp(v, [3, 5, 2], [2, 0]), x)
    expected = np.broadcast_to(x.T[:, None, :], (3, 5, 2))
    assert_same(y, expected)


def test_broadcast_scalar_and_zero_size():
    s = np.array(2.5, np.float16)
    assert_same(run1(lambda v: nn.BroadcastInDimOp(v, [2, 2], []), s), np.full((2, 2), 2.5, np.float16))
    z = np.zeros((0, 1), np.int32)
    assert_same(run1(lambda v: nn.BroadcastInDimOp(v, [0, 4], [0, 1]), z), np.zeros((0, 4), np.int32))


def test_reshape_and_transpose():
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    assert_same(run1(lambda v: nn.ReshapeOp(v, [4, 6]), x), x.reshape(4, 6))
    assert_same(run1(lambda v: nn.TransposeOp(v, [2, 0, 1]), x), x.transpose(2, 0, 1))
    e = np.zeros((0, 5), BF16)
    assert_same(run1(lambda v: nn.TransposeOp(v, [1, 0]), e), e.T)


# ---------------------------------------------------------------------------------------------
# slice
# ---------------------------------------------------------------------------------------------


SLICES = [
    # (start, limit, stride) per dimension of a 5x6 operand, and the numpy spelling
    (([0, 0], [5, 6], [1, 1]), np.s_[0:5, 0:6]),
    (([4, 5], [-1, -1], [-1, -1]), np.s_[::-1, ::-1]),
    (([1, 5], [5, 0], [2, -2]), np.s_[1:5:2, 5:0:-2]),
    (([3, 2], [0, 2], [-1, 1]), np.s_[3:0:-1, 2:2]),
    (([4, 0], [-1, 6], [-3, 4]), np.s_[4::-3, 0:6:4]),
    (([2, 1], [2, 3], [1, 1]), np.s_[2:2, 1:3]),
]


@pytest.mark.parametrize("params, np_index", SLICES)
def test_slice(params, np_index):
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    start, limit, stride = params
    y = run1(lambda v: nn.SliceOp(v, start, limit, stride), x)
    assert_same(y, x[np_index])


def test_slice_from_text_negative_stride():
    text = """
    func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %y = nn.slice %x start = [0, 2] limit = [2, -1] stride = [1, -1] : tensor<2x3xf32> -> tensor<2x3xf32>
      func.return %y : tensor<2x3xf32>
    }
    """
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = run_text(text, x)
    assert_same(y, x[:, ::-1])


# ---------------------------------------------------------------------------------------------
# dynamic_slice, dynamic_update_slice
# ---------------------------------------------------------------------------------------------


def xla_clamp(start: int, size: int, dim: int) -> int:
    return min(max(start, 0), dim - size)


@pytest.mark.parametrize("i, j", [(0, 0), (1, 2), (-5, 1), (3, 100), (2, -1), (10**6, -(10**6))])
def test_dynamic_slice_clamps_starts(i, j):
    x = np.arange(20, dtype=np.float64).reshape(4, 5)
    y = run1(
        lambda v, a, b: nn.DynamicSliceOp(v, [a, b], [2, 3]), x, index(i), index(j)
    )
    ci, cj = xla_clamp(i, 2, 4), xla_clamp(j, 3, 5)
    assert_same(y, x[ci : ci + 2, cj : cj + 3])


def test_dynamic_slice_with_integer_starts_and_full_size():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = run1(
        lambda v, a, b: nn.DynamicSliceOp(v, [a, b], [2, 3]),
        x,
        Scalar(np.int32(7), i32),
        Scalar(-3, i64),
    )
    assert_same(y, x)
    z = run1(lambda v, a, b: nn.DynamicSliceOp(v, [a, b], [0, 2]), x, index(5), index(1))
    assert_same(z, np.zeros((0, 2), np.int32))


@pytest.mark.parametrize("i, j", [(0, 0), (3, 1), (-2, 4), (9, 9)])
def test_dynamic_update_slice_clamps_starts(i, j):
    x = np.zeros((4, 5), np.float32)
    u = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    y = run1(lambda v, w, a, b: nn.DynamicUpdateSliceOp(v, w, [a, b]), x, u, index(i), index(j))
    expected = x.copy()
    ci, cj = xla_clamp(i, 2, 4), xla_clamp(j, 3, 5)
    expected[ci : ci + 2, cj : cj + 3] = u
    assert_same(y, expected)
    assert not x.any()  # the operand is not modified


# ---------------------------------------------------------------------------------------------
# concatenate, pad
# ---------------------------------------------------------------------------------------------


def test_concatenate():
    g = rng(2)
    a, b, c = (g.standard_normal(s).astype(np.float32) for s in [(2, 3), (0, 3), (4, 3)])
    y = run_ops(lambda x, y, z: nn.ConcatenateOp([x, y, z], 0), a, b, c)[0]
    assert_same(y, np.concatenate([a, b, c], axis=0))
    y1 = run_ops(lambda x, y: nn.ConcatenateOp([x, y], 1), a, a)[0]
    assert_same(y1, np.concatenate([a, a], axis=1))


def test_pad():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    pad = np.array(-1, np.int32)
    y = run_ops(lambda v, p: nn.PadOp(v, p, [1, 0], [2, 3]), x, pad)[0]
    assert_same(y, np.pad(x, ((1, 2), (0, 3)), constant_values=-1))
    e = np.zeros((0, 2), BF16)
    y2 = run_ops(lambda v, p: nn.PadOp(v, p, [1, 1], [0, 0]), e, np.array(3, BF16))[0]
    assert_same(y2, np.full((1, 3), 3, BF16))


# ---------------------------------------------------------------------------------------------
# gather, scatter_add
# ---------------------------------------------------------------------------------------------


def reference_indices(indices: np.ndarray, size: int) -> np.ndarray:
    wrapped = np.where(indices < 0, indices + size, indices)
    return np.clip(wrapped, 0, size - 1)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_matches_take(axis):
    g = rng(3)
    x = g.standard_normal((4, 5, 3)).astype(np.float32)
    idx = g.integers(0, x.shape[axis], size=(2, 3)).astype(np.int32)
    y = run_ops(lambda v, i: nn.GatherOp(v, i, axis), x, idx)[0]
    assert_same(y, np.take(x, idx, axis=axis))


def test_gather_wraps_negative_indices_once_then_clamps():
    x = np.arange(5, dtype=np.int64) * 10
    idx = np.array([-1, -5, -6, -100, 4, 5, 99, 0], np.int64)
    y = run_ops(lambda v, i: nn.GatherOp(v, i, 0), x, idx)[0]
    assert_same(y, np.array([40, 0, 0, 0, 40, 40, 40, 0], np.int64))


def test_gather_empty():
    x = np.zeros((0, 3), np.float32)
    idx = np.zeros((0,), np.int32)
    assert_same(run_ops(lambda v, i: nn.GatherOp(v, i, 0), x, idx)[0], np.zeros((0, 3), np.float32))


def naive_scatter_add(x: np.ndarray, idx: np.ndarray, updates: np.ndarray, axis: int) -> np.ndarray:
    out = x.astype(np.float64)
    n = x.shape[axis]
    for pos in itertools.product(*(range(d) for d in updates.shape)):
        before = pos[:axis]
        i = pos[axis : axis + idx.ndim]
        after = pos[axis + idx.ndim :]
        target = int(reference_indices(np.array(idx[i]), n))
        out[(*before, target, *after)] += updates[pos]
    return out.astype(x.dtype)


@pytest.mark.parametrize("axis", [0, 1])
def test_scatter_add_accumulates_repeated_indices(axis):
    g = rng(4)
    x = g.standard_normal((4, 3)).astype(np.float64)
    idx = np.array([[1, 1], [-1, 7], [0, 1]], np.int32)  # repeats, negative, out of range
    shape = list(x.shape[:axis]) + list(idx.shape) + list(x.shape[axis + 1 :])
    updates = g.standard_normal(shape)
    y = run_ops(lambda v, i, u: nn.ScatterAddOp(v, i, u, axis), x, idx, updates)[0]
    np.testing.assert_allclose(y, naive_scatter_add(x, idx, updates, axis), rtol=1e-12)
    assert y.dtype == np.float64


def test_scatter_add_integers_and_bf16():
    x = np.zeros(3, np.int32)
    idx = np.array([2, 2, 2, 0], np.int64)
    u = np.array([1, 2, 3, 4], np.int32)
    assert_same(run_ops(lambda v, i, w: nn.ScatterAddOp(v, i, w, 0), x, idx, u)[0], np.array([4, 0, 6], np.int32))
    xb = np.zeros(2, BF16)
    ub = np.full(300, 1.0, BF16)  # a bf16 running sum would stop at 256
    ib = np.zeros(300, np.int32)
    y = run_ops(lambda v, i, w: nn.ScatterAddOp(v, i, w, 0), xb, ib, ub)[0]
    assert_same(y, np.array([300, 0], BF16))


def test_dynamic_slice_start_from_arith_constant():
    def body(v):
        c = ConstantOp(IntegerAttr(-4, IndexType()))
        return nn.DynamicSliceOp(v, [c.result], [2])

    x = np.arange(5, dtype=np.float32)
    assert_same(run1(body, x), x[:2])
