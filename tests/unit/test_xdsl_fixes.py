"""irgrad.xdsl_fixes: each patched xDSL behaviour, checked directly."""

from __future__ import annotations

import time

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import Block, Region

import irgrad  # noqa: F401  (applies the fixes)


def _block_of_constants(count: int) -> tuple[Block, list[arith.ConstantOp]]:
    ops = [arith.ConstantOp.from_int_and_width(k, i32) for k in range(count)]
    block = Block(ops)
    return block, ops


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


def test_split_before_takes_constant_time_in_the_number_of_blocks():
    """Splitting each of n blocks (one op moved each time) was O(n^2): every split looked up its
    block's index among the region's blocks, and walked them again to insert."""

    def split_many(n: int) -> float:
        pairs = [_block_of_constants(2) for _ in range(n)]
        fn = func.FuncOp("f", ((), ()), Region([block for block, _ in pairs]))
        ModuleOp([fn])
        start = time.perf_counter()
        for block, ops in pairs:
            block.split_before(ops[1])
        elapsed = time.perf_counter() - start
        assert len(list(fn.body.blocks)) == 2 * n
        return elapsed

    small, large = split_many(500), split_many(4000)
    assert large < 30 * small  # linear: about 8x; quadratic would be about 64x
