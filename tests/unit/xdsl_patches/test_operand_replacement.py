"""irgrad/xdsl_patches/operand_replacement.py: one operand replaced, its uses moved, as before."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import f32
from xdsl.ir import Block
from xdsl.ir.core import OpOperands, SSAValues

import irgrad  # noqa: F401  (applies the patches)
from irgrad.xdsl_patches.patching import is_patched


def _op_and_values():  # type: ignore[no-untyped-def]
    block = Block(arg_types=[f32] * 4)
    a, b, c, d = block.args
    return func.ReturnOp(a, b, c), (a, b, c, d)


def _state(op, values):  # type: ignore[no-untyped-def]
    return (
        [values.index(v) for v in op.operands],
        [sorted((u.index for u in v.uses)) for v in values],
        type(op._operands),
    )


def test_the_patch_is_installed():
    assert is_patched(OpOperands.__setitem__)


@pytest.mark.parametrize("idx", [0, 1, 2, -1, -3])
def test_a_replacement_is_xdsls(idx):  # type: ignore[no-untyped-def]
    op, values = _op_and_values()
    op.operands[idx] = values[3]
    want_op, want_values = _op_and_values()
    OpOperands.__setitem__._irgrad_original(want_op.operands, idx, want_values[3])
    assert _state(op, values) == _state(want_op, want_values)
    assert type(op._operands) is SSAValues


def test_the_same_value_twice():
    op, (a, b, c, d) = _op_and_values()
    op.operands[0] = c
    assert list(op.operands) == [c, b, c]
    assert sorted(u.index for u in c.uses) == [0, 2] and not a.uses


def test_out_of_range_is_the_same_error():
    op, values = _op_and_values()
    with pytest.raises(IndexError) as got:
        op.operands[3] = values[3]
    want_op, want_values = _op_and_values()
    with pytest.raises(IndexError) as want:
        OpOperands.__setitem__._irgrad_original(want_op.operands, 3, want_values[3])
    assert str(got.value) == str(want.value)
