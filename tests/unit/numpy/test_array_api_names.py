"""numpy 2's names (irgrad/numpy/array_api_names.py) are the numpy 1 functions, and the two
new ones follow numpy."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig

ALIASES = [("acos", "arccos"), ("asin", "arcsin"), ("atan", "arctan"), ("atan2", "arctan2"), ("acosh", "arccosh"),
           ("asinh", "arcsinh"), ("atanh", "arctanh"), ("pow", "power"), ("bitwise_invert", "invert"),
           ("bitwise_left_shift", "left_shift"), ("bitwise_right_shift", "right_shift"), ("concat", "concatenate"),
           ("permute_dims", "transpose")]


@pytest.mark.parametrize("new, old", ALIASES)
def test_the_new_name_is_the_old_function(new, old):
    assert getattr(ig, new) is getattr(ig, old)


def test_matrix_transpose_swaps_the_last_two_axes():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.asarray(ig.matrix_transpose(x)), np.swapaxes(x, -1, -2))
    with pytest.raises(ig.ShapeError, match="at least 2 dimensions"):
        ig.matrix_transpose(np.ones(3))


@pytest.mark.parametrize("a, b", [([1, 2], [[1, 2], [1, 2]]), ([1, 2], [[1, 2], [1, 3]]), ([1, 2], [1, 2, 3]),
                                  ([[0.5]], [0.5, 0.5]), ([np.nan], [np.nan])])
def test_array_equiv_follows_numpy(a, b):
    assert bool(ig.array_equiv(a, b)) == np.array_equiv(a, b)
    assert bool(ig.jit(ig.array_equiv, backend="interp")(np.asarray(a, float), np.asarray(b, float))) == np.array_equiv(a, b)
