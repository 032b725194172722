"""irgrad/xdsl_patches/dense_array_values.py: values unpacked once, equal to xDSL's."""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, i64

import irgrad  # noqa: F401  (applies the patches)
from irgrad.xdsl_patches.patching import is_patched


def test_values_are_xdsls_and_kept():
    assert is_patched(DenseArrayBase.get_values)
    array = DenseArrayBase.from_list(i64, [3, -1, 7])
    first = array.get_values()
    assert first == DenseArrayBase.get_values._irgrad_original(array) == (3, -1, 7)
    assert array.get_values() is first


def test_the_kept_values_change_neither_equality_nor_hash_nor_print():
    a, b = DenseArrayBase.from_list(i64, [1, 2]), DenseArrayBase.from_list(i64, [1, 2])
    a.get_values()
    assert a == b and hash(a) == hash(b) and str(a) == str(b)
