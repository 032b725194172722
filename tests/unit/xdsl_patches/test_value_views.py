"""irgrad/xdsl_patches/value_views.py: the same item reads as xDSL's."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import f32
from xdsl.ir import Block
from xdsl.ir.core import SSAValues

import irgrad  # noqa: F401  (applies the patches)
from irgrad.xdsl_patches.patching import is_patched


def _op():  # type: ignore[no-untyped-def]
    block = Block(arg_types=[f32] * 3)
    return func.ReturnOp(*block.args), block.args


def test_the_patch_is_installed():
    assert is_patched(SSAValues.__getitem__)


def test_operands_read_through_the_view():
    op, args = _op()
    assert op.operands[1] is args[1] and op.results[:] == SSAValues(())
    op.operands[0] = args[2]
    assert op.operands[0] is args[2]


@pytest.mark.parametrize("idx", [0, 2, -1, slice(1, None), slice(None, None, -1), True])
def test_item_reads_are_xdsls(idx):  # type: ignore[no-untyped-def]
    _, args = _op()
    values = SSAValues(args)
    got, want = values[idx], SSAValues.__getitem__._irgrad_original(values, idx)
    assert got == want and type(got) is type(want)


def test_an_index_out_of_range_is_the_same_error():
    values = SSAValues(_op()[1])
    with pytest.raises(IndexError) as got:
        values[5]
    with pytest.raises(IndexError) as want:
        SSAValues.__getitem__._irgrad_original(values, 5)
    assert str(got.value) == str(want.value)
