"""Queries on IR that the CPU and GPU passes share: which buffer a memref value views,
whether two buffers may alias, the enclosing op of a kind.

A memref value's *root* is the buffer it views (through subview, reshapes and casts): a
`memref.alloc`/`memref.alloca`/`memref.get_global` result or a block argument (a function
argument, a loop-carried buffer). Two roots may alias unless one of them is a fresh
allocation (or a global) distinct from the other. Shared by the CPU's BLAS conversion and the
GPU passes; kept apart from `gpu_common` so that the CPU pipeline does not load the gpu
dialect (a cost on every cold compile).
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Operation, SSAValue

VIEW_OPS = (
    memref.SubviewOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
    memref.CastOp,
    memref.ReinterpretCastOp,
)
"""Ops whose result views (part of) their first operand's buffer."""


def root(value: SSAValue) -> SSAValue:
    """The buffer `value` views (see the module doc)."""
    while isinstance(value.owner, VIEW_OPS):
        value = value.owner.operands[0]
    return value


def is_fresh(buffer: SSAValue) -> bool:
    return isinstance(buffer.owner, memref.AllocOp | memref.AllocaOp | memref.GetGlobalOp)


def may_alias(a: SSAValue, b: SSAValue) -> bool:
    """Whether two roots may be the same memory."""
    if a is b:
        return True
    return not (is_fresh(a) or is_fresh(b))


def enclosing(op: Operation, kind: type[Operation] | tuple[type[Operation], ...]) -> Operation | None:
    """The nearest op of `kind` that contains `op`, or None."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, kind):
        parent = parent.parent_op()
    return parent
