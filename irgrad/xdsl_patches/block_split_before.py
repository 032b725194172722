"""`Block.split_before` in constant time.

xDSL 0.75 finds the block's index by walking the region's blocks, then walks them again to
insert the new block there: O(blocks) per split, so lowering a function with n loops to cf
(each loop splits its block) is O(n^2). Blocks are a linked list: the new block is linked in
right after the split one, in O(1), with the same result. Upstream: not reported.
"""

from __future__ import annotations

from xdsl.ir.core import Block

from irgrad.xdsl_patches.patching import install, is_patched, require_source


def apply() -> None:
    original = Block.split_before
    if is_patched(original):
        return
    require_source(
        original,
        "a_index = parent.get_block_index(self)",
        "parent.insert_block(b, a_index + 1)",
        patch="block_split_before",
    )

    def split_before(self, b_first, *, arg_types=()):  # type: ignore[no-untyped-def]
        if b_first.parent is not self:
            raise ValueError("Cannot split block on operation outside of the block.")
        parent = self.parent
        if parent is None:
            raise ValueError("Cannot split block with no parent.")
        b_last = self._last_op
        a_last = b_first.prev_op
        self._first_op = None if a_last is None else self._first_op
        self._last_op = a_last
        b = Block(arg_types=arg_types)
        parent.insert_block_after(b, self)
        b._first_op = b_first
        b._last_op = b_last
        op = b_first
        while op is not None:
            op.parent = b
            op = op.next_op
        if a_last is not None:
            a_last._next_op = None
        b_first._prev_op = None
        return b

    install(Block, "split_before", split_before, original)
