"""irgrad/xdsl_patches/unknown_location.py: new ops and block arguments get UNKNOWN_LOC."""

from __future__ import annotations

from xdsl.dialects import arith, builtin
from xdsl.dialects.builtin import f32
from xdsl.ir import Block, core

import irgrad  # noqa: F401  (applies the patches)
from irgrad.xdsl_patches.patching import is_patched


def test_the_patch_is_installed_and_answers_as_xdsl():
    assert is_patched(core._unknown_loc)
    assert core._unknown_loc() is core._unknown_loc._irgrad_original() is builtin.UNKNOWN_LOC


def test_ops_and_block_arguments_are_unknown_located():
    block = Block(arg_types=[f32])
    op = arith.AddfOp(block.args[0], block.args[0])
    assert op.location is builtin.UNKNOWN_LOC
    assert block.args[0].location is builtin.UNKNOWN_LOC
