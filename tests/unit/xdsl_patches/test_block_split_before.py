"""irgrad/xdsl_patches/block_split_before.py: the split links the new block in right after."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import i32
from xdsl.ir import Block, Region

import irgrad  # noqa: F401  (applies the patches)
from irgrad.xdsl_patches.patching import is_patched


def _block_of_constants(count: int) -> tuple[Block, list[arith.ConstantOp]]:
    ops = [arith.ConstantOp.from_int_and_width(k, i32) for k in range(count)]
    return Block(ops), ops


def test_import_irgrad_applies_it():
    assert is_patched(Block.split_before)


def test_split_before_moves_the_tail_into_a_new_block_right_after():
    first, ops = _block_of_constants(4)
    last = Block()
    region = Region([first, last])
    new = first.split_before(ops[2])
    assert list(region.blocks) == [first, new, last]
    assert list(first.ops) == ops[:2] and list(new.ops) == ops[2:]
    assert all(op.parent is new for op in ops[2:]) and ops[1].next_op is None and ops[2].prev_op is None
    # Splitting before the first op moves everything.
    whole = new.split_before(ops[2])
    assert list(new.ops) == [] and list(whole.ops) == ops[2:]
    assert list(region.blocks) == [first, new, whole, last]


def test_split_before_gives_what_xdsl_gives():
    """The patched split and xDSL's own agree on blocks, ops, parents and links."""
    original = Block.split_before._irgrad_original
    shapes = []
    for split in (Block.split_before, original):
        first, ops = _block_of_constants(5)
        region = Region([first, Block()])
        new = split(first, ops[3], arg_types=(i32,))
        shapes.append((
            [len(list(b.ops)) for b in region.blocks],
            [list(b.ops).index(op) for b in region.blocks for op in ops if op.parent is b],
            [a.type for a in new.args],
            list(region.blocks).index(new),
        ))
    assert shapes[0] == shapes[1]


def test_split_before_rejects_an_op_of_another_block():
    first, _ = _block_of_constants(1)
    other, ops = _block_of_constants(1)
    Region([first, other])
    try:
        first.split_before(ops[0])
    except ValueError as err:
        assert "outside of the block" in str(err)
    else:
        raise AssertionError("no error")
