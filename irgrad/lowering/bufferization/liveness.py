"""Is a tensor value still needed after an op?  The question every in-place write asks.

`bufferize` writes into a tensor's buffer only when no later computation can read the old
contents. With structured control flow (single-block regions, SSA), "later" means:

- a use in the same block after the op (a use nested in a later op counts at that op);
- any loop (`scf.for`, `scf.while`, `scf.parallel`) that encloses the op but not the
  value's definition: the next iteration may read the value again (conservatively, the
  value counts as live whether or not the loop reads it);
- a use nested inside the op itself (a `linalg.generic` body that `tensor.extract`s from the
  value reads it at arbitrary indices while the op writes).

Uses in the other region of an `scf.if` are not later: only one branch runs. Direct operand
uses at the op itself are not later either (the caller checks the operand-level hazards).

Ops are compared by their position in their block, taken once before the pass rewrites
anything (`OpOrder`); an op that replaces another (a new `scf.for` that took over the old
one's body) is registered at the old one's position.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

LOOP_OPS = (scf.ForOp, scf.WhileOp, scf.ParallelOp)


class OpOrder:
    """Positions of ops in their blocks, frozen at construction (new ops borrow a position)."""

    def __init__(self, root: Operation) -> None:
        self._position: dict[Operation, int] = {}
        for op in root.walk():
            for region in op.regions:
                for block in region.blocks:
                    for index, child in enumerate(block.ops):
                        self._position[child] = index

    def same_position(self, new: Operation, old: Operation) -> None:
        """`new` stands where `old` stood (it replaces it)."""
        self._position[new] = self._position[old]

    def position(self, op: Operation) -> int:
        return self._position[op]


def _ancestors_by_block(op: Operation) -> dict[Block, Operation]:
    """For each block enclosing `op`: the op of that block that is or contains `op`."""
    result: dict[Block, Operation] = {}
    current: Operation | None = op
    while current is not None and (block := current.parent_block()) is not None:
        result[block] = current
        current = block.parent_op()
    return result


def _defined_inside(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined inside a region of `op` (so a fresh one per iteration)."""
    if isinstance(value, OpResult):
        owner = value.op.parent_op()
    else:
        assert isinstance(value, BlockArgument)
        owner = value.block.parent_op()
    while owner is not None:
        if owner is op:
            return True
        owner = owner.parent_op()
    return False


def is_live_after(value: SSAValue, op: Operation, order: OpOrder) -> bool:
    """Whether `value` may be read after `op` runs (see the module docstring)."""
    ancestors = _ancestors_by_block(op)
    for ancestor in ancestors.values():
        # A loop around `op` that does not define `value` runs `op` again with the same value.
        if ancestor is not op and isinstance(ancestor, LOOP_OPS):
            if not _defined_inside(value, ancestor):
                return True
    for use in value.uses:
        user = use.operation
        if user is op:
            continue
        current: Operation | None = user
        block: Block | None = None
        while current is not None:
            block = current.parent_block()
            if block is None or block in ancestors:
                break
            current = block.parent_op()
        if current is None or block is None:
            continue  # not in the same function: cannot run after `op`
        mine = ancestors[block]
        if current is mine:
            # The use is inside `op` itself, or in a sibling region of an op enclosing both
            # (an scf.if's other branch: never both) -- or in `op`'s own regions.
            if mine is op:
                return True
            continue
        if order.position(current) > order.position(mine):
            return True
    return False
