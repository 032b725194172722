"""ig.bitwise_count against numpy's (numpy 2 / jnp.bitwise_count): the population count of |x|
on int32, int64 (extremes included) and bool, eager, under jit and vmap; int32 results (numpy
and jnp give uint8, irgrad has no unsigned dtype)."""

import numpy as np
import pytest

import irgrad as ig


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_bitwise_count_matches_numpy(dtype):
    info = np.iinfo(dtype)
    special = np.array([0, 1, -1, 2, -2, 3, 255, -256, info.max, info.min, info.min + 1, 0x5555, -0x5555], dtype)
    random = np.random.default_rng(4).integers(info.min, info.max, size=100, dtype=dtype)
    x = np.concatenate([special, random, np.array([1], dtype) << np.arange(info.bits - 1, dtype=dtype)])
    want = np.bitwise_count(x).astype(np.int32)
    for got in (ig.bitwise_count(x), ig.jit(ig.bitwise_count)(x), ig.vmap(ig.bitwise_count)(x)):
        assert np.asarray(got).dtype == np.int32
        np.testing.assert_array_equal(got, want)
    assert int(ig.bitwise_count(dtype(info.min))) == 1  # |min| wraps to min, one bit, as numpy


def test_bitwise_count_of_bools_and_floats():
    np.testing.assert_array_equal(ig.bitwise_count(np.array([True, False, True])), [1, 0, 1])
    with pytest.raises(ig.DTypeError, match="bitwise_count: needs an integer or bool operand"):
        ig.bitwise_count(np.array([1.5]))
