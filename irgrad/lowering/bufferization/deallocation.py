"""One `memref.dealloc` per owned buffer, in the block that owns it, after its last use.

Run once a function is converted (and the tensor ops are gone). A root that moved (into a
loop, out of a region, into an out-parameter) is freed by its new owner instead. The last
use counts the root's views (subview, collapse, expand) and lifts a use nested in a region
to the op holding the region, so the dealloc is on every path and after every reader.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.traits import IsTerminator

from irgrad.diagnostics import PassError
from irgrad.lowering.bufferization.model import Root, RootKind, ancestor_in, erase_op

VIEW_OPS = (memref.SubviewOp, memref.CollapseShapeOp, memref.ExpandShapeOp, memref.CastOp)


def memref_aliases(value: SSAValue) -> list[SSAValue]:
    """`value` and every view made of it, transitively."""
    result = [value]
    for v in result:
        for use in v.uses:
            if isinstance(use.operation, VIEW_OPS) and use.index == 0:
                result.extend(use.operation.results)
    return result


def place_deallocs(roots: Sequence[Root]) -> None:
    """Free every owned root that stays in its block after its last use there."""
    positions: dict[Block, dict[Operation, int]] = {}

    def position(op: Operation, block: Block) -> int:
        if block not in positions:
            positions[block] = {o: i for i, o in enumerate(block.ops)}
        return positions[block][op]

    for root in roots:
        if root.kind not in (RootKind.ALLOC, RootKind.OWNED) or root.moved:
            continue
        block, buffer = root.owner, root.buffer
        assert block is not None and buffer is not None
        last: Operation | None = None
        for alias in memref_aliases(buffer):
            for use in alias.uses:
                user = ancestor_in(use.operation, block)
                if user is None:
                    raise PassError(
                        "internal error: a buffer is used outside the block that owns it",
                        use.operation,
                    )
                if last is None or position(user, block) > position(last, block):
                    last = user
        dealloc = memref.DeallocOp.get(buffer)
        if last is None:
            if root.alloc is not None:
                erase_op(root.alloc)  # never used: never needed
            elif isinstance(buffer, OpResult):
                block.insert_op_after(dealloc, buffer.op)
            else:
                first = block.first_op
                assert first is not None
                block.insert_op_before(dealloc, first)
            continue
        if last.has_trait(IsTerminator):
            raise PassError(
                "internal error: a buffer that stays in its block reaches its terminator", last
            )
        block.insert_op_after(dealloc, last)
