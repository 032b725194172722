"""irgrad/xdsl_patches/isa_constraint_cache.py: one constraint per hint, the same answers."""

from __future__ import annotations

import xdsl.irdl
from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr
from xdsl.utils.hints import isa

import irgrad  # noqa: F401  (applies the patches)
from irgrad.xdsl_patches.patching import is_patched


def test_the_constraint_of_a_hint_is_built_once():
    assert is_patched(xdsl.irdl.irdl_to_attr_constraint)
    hint = ArrayAttr[IntAttr]
    assert xdsl.irdl.irdl_to_attr_constraint(hint) is xdsl.irdl.irdl_to_attr_constraint(hint)


def test_isa_answers_as_before():
    ints = ArrayAttr([IntAttr(1), IntAttr(2)])
    mixed = ArrayAttr([IntAttr(1), StringAttr("x")])
    for _ in range(2):  # the second time from the cache
        assert isa(ints, ArrayAttr[IntAttr]) and not isa(mixed, ArrayAttr[IntAttr])


def test_an_unhashable_hint_is_still_converted():
    original = xdsl.irdl.irdl_to_attr_constraint._irgrad_original
    assert xdsl.irdl.irdl_to_attr_constraint(IntAttr) == original(IntAttr)
