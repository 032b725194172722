"""scf-split-reductions in the CPU pipeline: float sums in a fixed, documented order.

A sum of n values is 8 interleaved partial sums (lane j adds elements j, j + 8, ...), combined
pairwise, then the leftover elements: the compiled code must give exactly that (bit for bit,
no fast-math involved), and the order makes long f32 sums far more accurate than one chain.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LANES = 8


def split_sum_model(x: np.ndarray, init: float = 0.0) -> np.floating:
    """The pass's order in numpy: per-lane chains, pairwise combination, then the tail."""
    dtype = x.dtype.type
    whole = len(x) // LANES * LANES
    lanes = np.full(LANES, -0.0, dtype=x.dtype)
    lanes[0] = init
    for row in x[:whole].reshape(-1, LANES):
        lanes = lanes + row  # elementwise: each lane is its own sequential chain
    partial = list(lanes)
    while len(partial) > 1:
        partial = [dtype(a + b) for a, b in zip(partial[::2], partial[1::2])]
    total = partial[0]
    for v in x[whole:]:
        total = dtype(total + v)
    return total


@pytest.mark.parametrize("n", [16, 1027, 4099])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_sum_follows_the_split_order_exactly(n: int, dtype: type) -> None:
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    got = ig.jit(lambda x: x.sum())(x)
    assert got.tobytes() == np.asarray(split_sum_model(x), dtype=dtype).tobytes()


def test_row_sums_follow_the_split_order_exactly() -> None:
    m = np.random.default_rng(3).standard_normal((5, 333)).astype(np.float32)
    got = ig.jit(lambda m: m.sum(axis=1))(m)
    want = np.array([split_sum_model(row) for row in m], dtype=np.float32)
    assert got.tobytes() == want.tobytes()


def test_max_is_unchanged_bit_for_bit_nan_and_signed_zeros_included() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 1000)).astype(np.float32)
    x[1, 17] = np.nan
    x[2] = -0.0
    x[3, :] = -np.abs(x[3])
    x[3, 500] = 0.0
    x[3, 501] = -0.0
    got = ig.jit(lambda m: (ig.max(m, axis=1), ig.min(m, axis=1)))(x)
    np.testing.assert_array_equal(got[0], np.max(x, axis=1))
    np.testing.assert_array_equal(got[1], np.min(x, axis=1))
    assert np.isnan(got[0][1]) and np.isnan(got[1][1])
    assert np.signbit(got[0][2]) and not np.signbit(got[0][3])


def test_long_f32_sums_are_accurate() -> None:
    """One sequential chain of 2^22 positive f32 values drifts by ~4e-3 relative; the split
    order stays within 3e-4 (each lane's chain is 8 times shorter)."""
    x = np.random.default_rng(5).random(1 << 22).astype(np.float32)
    got = float(ig.jit(lambda x: (x * x).sum())(x))
    exact = float((x.astype(np.float64) ** 2).sum())
    assert abs(got - exact) / exact < 3e-4
