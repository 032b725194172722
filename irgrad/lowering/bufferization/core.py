"""Per-function state of `bufferize`, and the decisions every conversion shares.

`BufferizerCore` maps tensor values to `Buffer`s and answers the three questions of the
strategy (irgrad/lowering/bufferization/bufferize.py): which buffer an op may write (`destination`), when
a buffer may change owner (`move`), and whether a root's tensors are dead (`dead_after`).
The conversions (`tensor_ops`, `linalg_ops`, `control_flow`) are mixins over it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue

from irgrad.diagnostics import PassError
from irgrad.lowering.bufferization.liveness import OpOrder, is_live_after
from irgrad.lowering.bufferization.model import (
    Buffer,
    Globals,
    Root,
    RootKind,
    Signature,
    ancestor_in,
    is_tensor,
    memref_type,
)


class BufferizerCore(ABC):
    """The state of one function's bufferization and the operations on it."""

    def __init__(
        self,
        function: func.FuncOp,
        signatures: dict[str, Signature],
        globals_: Globals,
        order: OpOrder,
    ) -> None:
        self.function = function
        self.signatures = signatures
        self.globals = globals_
        self.order = order
        self.buffers: dict[SSAValue, Buffer] = {}
        self.roots: list[Root] = []
        self.dead_ops: list[Operation] = []
        """Converted ops, erased (in reverse) once the whole function is converted."""
        self.dead_args: list[BlockArgument] = []
        self.out_params: list[BlockArgument] = []
        self.last_uses: dict[SSAValue, tuple[Block, int]] = {}
        self.window_updates: set[Operation] = set()
        """`tensor.insert_slice`s whose source was computed in place, in the very subview of
        the destination they insert into (linalg_ops.py, rule 2b): they copy nothing."""

    @abstractmethod
    def convert_block(self, block: Block) -> None:
        """Convert the ops of `block`, in order (the walk; see FunctionBufferizer)."""

    # ---- bookkeeping -------------------------------------------------------------------

    def bind(self, value: SSAValue, buffer: Buffer) -> None:
        self.buffers[value] = buffer
        buffer.root.tensors.append(value)

    def new_root(self, kind: RootKind, buffer: SSAValue | None, owner: Block | None) -> Root:
        root = Root(kind, buffer, owner)
        self.roots.append(root)
        return root

    def bind_empty(self, value: SSAValue) -> None:
        self.bind(value, Buffer(None, self.new_root(RootKind.EMPTY, None, None)))

    def buffer(self, value: SSAValue) -> Buffer:
        try:
            return self.buffers[value]
        except KeyError:
            owner = value.owner
            op = owner if isinstance(owner, Operation) else owner.parent_op()
            raise PassError(
                "uses a tensor that bufferize could not convert (from outside the function?)",
                op,
            ) from None

    def insert(self, op: Operation, before: Operation) -> Operation:
        block = before.parent_block()
        assert block is not None
        block.insert_op_before(op, before)
        return op

    def alloc(self, t: Attribute, before: Operation) -> Buffer:
        """A fresh identity-layout buffer for tensor type `t`, allocated just before `before`."""
        op = memref.AllocOp([], [], memref_type(t))
        self.insert(op, before)
        root = self.new_root(RootKind.ALLOC, op.memref, before.parent_block())
        root.alloc = op
        return Buffer(op.memref, root)

    def copy(self, source: SSAValue, target: SSAValue, before: Operation) -> None:
        self.insert(memref.CopyOp(source, target), before)

    def replace_region_op(self, old: Operation, new: Operation) -> None:
        """`new` (which took `old`'s regions) goes where `old` is; `old` dies."""
        self.insert(new, old)
        self.order.same_position(new, old)
        new.location = old.location
        self.dead_ops.append(old)

    def region_argument(self, arg: BlockArgument) -> None:
        """Give tensor block argument `arg` an owned memref argument next to it."""
        block = arg.block
        new = block.insert_arg(memref_type(arg.type), arg.index)
        new.name_hint = arg.name_hint
        self.bind(arg, Buffer(new, self.new_root(RootKind.OWNED, new, block)))
        self.dead_args.append(arg)

    def region_results(self, old: Operation, new: Operation) -> None:
        """Results of region op `new` stand for `old`'s; a memref result is owned by its block."""
        block = new.parent_block()
        for r_old, r_new in zip(old.results, new.results, strict=True):
            if is_tensor(r_old):
                self.bind(r_old, Buffer(r_new, self.new_root(RootKind.OWNED, r_new, block)))
            else:
                r_old.replace_all_uses_with(r_new)

    # ---- reading -----------------------------------------------------------------------

    def read(self, value: SSAValue, at: Operation) -> SSAValue:
        """A memref holding `value` for reading at `at` (an empty tensor gets fresh memory)."""
        b = self.buffer(value)
        if b.memref is None:
            fresh = self.alloc(value.type, at).memref
            assert fresh is not None
            return fresh
        return b.memref

    def read_contiguous(self, value: SSAValue, at: Operation) -> Buffer:
        """Like `read`, but copied into a fresh buffer when the layout is not the identity."""
        b = self.buffer(value)
        if b.memref is None:
            return self.alloc(value.type, at)
        t = b.memref.type
        assert isinstance(t, MemRefType)
        if isinstance(t.layout, NoneAttr):
            return b
        fresh = self.alloc(value.type, at)
        assert fresh.memref is not None
        self.copy(b.memref, fresh.memref, at)
        return fresh

    # ---- liveness ----------------------------------------------------------------------

    def dead_after(self, root: Root, op: Operation) -> bool:
        """No tensor lying in `root` can be read after `op` (the op being converted)."""
        # Prune the tensors whose last use the walk has passed: the walk visits ops in
        # program order, so they stay dead, and long in-place chains stay linear.
        live: list[SSAValue] = []
        for t in root.tensors:
            block, last = self.last_use(t)
            here = ancestor_in(op, block)
            if here is None or self.order.position(here) > last:
                continue
            live.append(t)
        root.tensors = live
        return not any(is_live_after(t, op, self.order) for t in live)

    def last_use(self, value: SSAValue) -> tuple[Block, int]:
        """The block defining `value`, and the position there of its last use (-1: none)."""
        if (cached := self.last_uses.get(value)) is not None:
            return cached
        if isinstance(value, BlockArgument):
            block = value.block
        else:
            assert isinstance(value, OpResult)
            parent = value.op.parent_block()
            assert parent is not None
            block = parent
        last = -1
        for use in value.uses:
            user = ancestor_in(use.operation, block)
            if user is not None:
                last = max(last, self.order.position(user))
        self.last_uses[value] = (block, last)
        return block, last

    # ---- writing and moving ------------------------------------------------------------

    def destination(
        self, value: SSAValue, op: Operation, *, reads: bool, avoid: Root | None = None
    ) -> Buffer:
        """The buffer `op` writes the new version of tensor `value` into.

        `value`'s own buffer when it covers a writable root whose tensors are all dead after
        `op` (and is not `avoid`); otherwise a fresh one, holding a copy of `value` when
        `reads` (the op reads the old contents).
        """
        b = self.buffer(value)
        if b.memref is None:
            return self.alloc(value.type, op)
        if b.covers and b.root.writable and b.root is not avoid and self.dead_after(b.root, op):
            return b
        fresh = self.alloc(value.type, op)
        if reads:
            assert fresh.memref is not None
            self.copy(b.memref, fresh.memref, op)
        return fresh

    def move(
        self, value: SSAValue, at: Operation, moved: set[Root], *, check_liveness: bool
    ) -> SSAValue:
        """A buffer holding `value` whose ownership leaves the block of `at` through `at`.

        The root itself when it is owned by that block, dead after `at` (when
        `check_liveness`; a terminator is last anyway) and not already moved by `at`
        (`moved`); otherwise a fresh copy.
        """
        b = self.buffer(value)
        block = at.parent_block()
        if (
            b.is_root
            and b.root.writable
            and b.root.owner is block
            and b.root not in moved
            and (not check_liveness or self.dead_after(b.root, at))
        ):
            moved.add(b.root)
            b.root.moved = True
            assert b.memref is not None
            return b.memref
        fresh = self.alloc(value.type, at)
        assert fresh.memref is not None
        if b.memref is not None:
            self.copy(b.memref, fresh.memref, at)
        fresh.root.moved = True
        return fresh.memref
