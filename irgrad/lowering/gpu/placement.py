"""Host or device: where the ops of a function run once its parallel loops are kernels.

After the loop nests became `gpu.launch` ops, a function still holds host-level ops that
touch memory (reduction initializations, scatter-add rows as an `scf.for`, small scalar
buffers). The contract of the pass output: every load and store of *device* memory is inside
a kernel, except a host-level `memref.load` that host code needs (a loop bound, a slice
offset, a returned scalar), which is a synchronous device-to-host read. This module
establishes it in three steps:

1. Host scalars: a small buffer (at most HOST_BUFFER_ELEMENTS elements) used only by host
   code, never holding a value computed from device memory, becomes a host `memref.alloca`.
2. Work moves into kernels: a host-level load of device memory, or scalar work on it, used
   only inside kernels is cloned into them (a load only when nothing between may write it).
3. Serial kernels: the remaining device work in host code is grouped into maximal runs of
   consecutive ops, each a one-thread `gpu.launch`; values crossing a run go through
   one-element device buffers.
What host code itself needs (a loop bound, a returned scalar) is read back from the device.
Details: docs/design/gpu-pipeline.md, "irgrad/lowering/gpu/placement.py".
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from xdsl.dialects import func, gpu, memref, scf
from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from irgrad.diagnostics import PassError
from irgrad.dialects.blas import GemmOp
from irgrad.lowering.gpu.common import (
    VIEW_OPS,
    Emitter,
    build_launch,
    captured_values,
    may_alias,
    root,
)

HOST_BUFFER_ELEMENTS = 16
"""Largest buffer that may become host memory (a scalar or a few indices)."""

_KERNEL_MEMREF_OPS = frozenset(
    {
        "memref.load",
        "memref.store",
        "memref.subview",
        "memref.collapse_shape",
        "memref.expand_shape",
        "memref.cast",
        "memref.reinterpret_cast",
        "memref.get_global",
        "memref.dim",
        "memref.rank",
        "memref.assume_alignment",
    }
)
_KERNEL_SCF_OPS = frozenset(
    {
        "scf.for",
        "scf.if",
        "scf.while",
        "scf.yield",
        "scf.condition",
        "scf.index_switch",
        "scf.parallel",
        "scf.reduce",
        "scf.reduce.return",
        "scf.execute_region",
    }
)


def is_pure(op: Operation) -> bool:
    """A scalar op without memory effects (every arith and math op)."""
    return op.dialect_name() in ("arith", "math") and not op.regions


def kernel_op(op: Operation) -> bool:
    """Whether `op` itself may run inside a kernel."""
    return (
        is_pure(op)
        or op.name in _KERNEL_MEMREF_OPS
        or op.name in _KERNEL_SCF_OPS
        or op.name in ("gpu.barrier", "gpu.terminator")
        or (isinstance(op, memref.AllocaOp) and _in_launch(op))
    )


def kernel_legal(op: Operation) -> bool:
    """Whether `op` and everything nested in it may run inside a kernel."""
    return all(kernel_op(inner) for inner in op.walk())


def _in_launch(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, gpu.LaunchOp):
            return True
        parent = parent.parent_op()
    return False


def host_blocks(function: func.FuncOp) -> Iterator[Block]:
    """The function body and, recursively, the blocks of its host control flow."""
    stack = list(function.body.blocks)
    while stack:
        block = stack.pop(0)
        yield block
        for op in block.ops:
            if op.regions and not isinstance(op, gpu.LaunchOp) and not kernel_legal(op):
                for region in op.regions:
                    stack.extend(region.blocks)


class Placement:
    """Host/device placement of one function (module doc)."""

    def __init__(self, function: func.FuncOp):
        self.function = function
        self.blocks = list(host_blocks(function))
        self.host_block_set = set(self.blocks)
        self._device: dict[SSAValue, bool] = {}
        self.host_roots: set[SSAValue] = set()
        """Allocations treated as host memory while deciding which become host scalars."""

    # -- classification -----------------------------------------------------------------

    def in_host_code(self, op: Operation) -> bool:
        return op.parent_block() in self.host_block_set

    def is_host_buffer(self, value: SSAValue) -> bool:
        base = root(value)
        if base in self.host_roots:
            return True
        return isinstance(base.owner, memref.AllocaOp) and not _in_launch(base.owner)

    def touches_device_memory(self, op: Operation) -> bool:
        for inner in op.walk():
            if isinstance(inner, memref.LoadOp | memref.StoreOp) and not self.is_host_buffer(
                inner.memref
            ):
                return True
        return False

    def is_device_value(self, value: SSAValue) -> bool:
        """Whether `value` is computed from device memory (memoized; loop-carried values
        are device values when their initial or yielded value is)."""
        cached = self._device.get(value)
        if cached is not None:
            return cached
        self._device[value] = False  # a cycle through a loop adds nothing
        result = self._compute_device(value)
        self._device[value] = result
        return result

    def _compute_device(self, value: SSAValue) -> bool:
        if isinstance(value, BlockArgument):
            owner = value.block.parent_op()
            if isinstance(owner, scf.ForOp) and value.index > 0:
                k = value.index - 1
                yielded = value.block.last_op
                return self.is_device_value(owner.iter_args[k]) or (
                    yielded is not None and self.is_device_value(yielded.operands[k])
                )
            if isinstance(owner, scf.WhileOp):
                return any(self.is_device_value(v) for v in owner.arguments)
            return False
        op = value.owner
        assert isinstance(op, Operation)
        if _in_launch(op):
            return True
        if isinstance(op, memref.LoadOp):
            return not self.is_host_buffer(op.memref)
        if is_pure(op):
            return any(self.is_device_value(v) for v in op.operands)
        if isinstance(op, scf.ForOp | scf.IfOp | scf.WhileOp | scf.IndexSwitchOp):
            if kernel_legal(op):
                return self.touches_device_memory(op) or any(
                    self.is_device_value(v) for v in captured_values(op)
                ) or any(self.is_device_value(v) for v in op.operands)
            index = value.index  # type: ignore[attr-defined]
            for block in (b for r in op.regions for b in r.blocks):
                last = block.last_op
                if isinstance(last, scf.YieldOp | scf.ConditionOp) and self.is_device_value(
                    last.operands[index + (1 if isinstance(last, scf.ConditionOp) else 0)]
                ):
                    return True
            return any(self.is_device_value(v) for v in op.operands)
        return False

    def reset(self) -> None:
        self._device.clear()

    # -- 1. host scalars ----------------------------------------------------------------

    def place_host_buffers(self) -> None:
        candidates = [
            op
            for block in self.blocks
            for op in block.ops
            if isinstance(op, memref.AllocOp) and self._host_candidate(op)
        ]
        # Loads from a candidate are host values; a candidate that stores a device value is
        # demoted; repeat until none is.
        while True:
            self.host_roots = {op.memref for op in candidates}
            self.reset()
            keep = [
                op
                for op in candidates
                if not any(
                    isinstance(use.operation, memref.StoreOp)
                    and self.is_device_value(use.operation.value)
                    for use in op.memref.uses
                )
            ]
            if len(keep) == len(candidates):
                break
            candidates = keep
        for op in candidates:
            t = op.memref.type
            assert isinstance(t, MemRefType)
            alloca = memref.AllocaOp.get(t.element_type, shape=t.get_shape())
            for use in list(op.memref.uses):
                if isinstance(use.operation, memref.DeallocOp):
                    use.operation.detach()
                    use.operation.erase()
            block = op.parent_block()
            assert block is not None
            block.insert_op_before(alloca, op)
            op.memref.replace_all_uses_with(alloca.memref)
            block.erase_op(op)
        self.host_roots = set()
        self.reset()

    def _host_candidate(self, op: memref.AllocOp) -> bool:
        t = op.memref.type
        if not isinstance(t, MemRefType) or math.prod(t.get_shape()) > HOST_BUFFER_ELEMENTS:
            return False
        for use in op.memref.uses:
            user = use.operation
            if not self.in_host_code(user):
                return False
            if isinstance(user, memref.DeallocOp):
                continue
            if isinstance(user, memref.LoadOp) and user.memref is op.memref:
                continue
            if isinstance(user, memref.StoreOp) and user.memref is op.memref and user.value is not op.memref:
                continue
            return False
        return True

    # -- 2. loads into kernels ------------------------------------------------------------

    def sink_into_launches(self, block: Block) -> None:
        """Clone device-dependent scalar work that only kernels use into those kernels.

        Candidates, last first (so a chain moves whole: a slice offset computed from a
        loaded index, then the arithmetic, then the load): loads of device memory, pure
        ops of device values, and views whose offsets are device values. Each moves when
        every use of its results is inside launches of this block (a load also needs that
        nothing up to each launch may write its buffer); each launch gets its own copy at
        the start of its body."""
        for op in reversed(list(block.ops)):
            if not self._sinkable(op):
                continue
            launches: list[gpu.LaunchOp] = []
            movable = True
            for result in op.results:
                for use in result.uses:
                    launch = _ancestor_in(use.operation, block)
                    if not isinstance(launch, gpu.LaunchOp) or launch is use.operation:
                        movable = False
                    elif launch not in launches:
                        launches.append(launch)
            if not movable or not launches:
                continue
            if isinstance(op, memref.LoadOp) and not all(
                self._can_move_to(op, launch) for launch in launches
            ):
                continue
            for launch in launches:
                body = launch.body.block
                assert body.first_op is not None
                copy = op.clone()
                body.insert_op_before(copy, body.first_op)
                for old, new in zip(op.results, copy.results):
                    old.replace_uses_with_if(new, lambda use, l=launch: l.is_ancestor(use.operation))
            block.erase_op(op)

    def _sinkable(self, op: Operation) -> bool:
        if isinstance(op, memref.LoadOp):
            return not self.is_host_buffer(op.memref)
        if is_pure(op):
            return any(self.is_device_value(v) for v in op.operands)
        if isinstance(op, VIEW_OPS):
            return any(
                self.is_device_value(v) for v in op.operands if not isinstance(v.type, MemRefType)
            )
        return False

    def _can_move_to(self, load: memref.LoadOp, target: Operation) -> bool:
        """No op after `load` up to `target` (in the same block), `target` included, may
        write its buffer: every thread of the kernel must read what the load would have."""
        buffer = root(load.memref)
        op = load.next_op
        while op is not None:
            if may_write(op, buffer):
                return False
            if op is target:
                return True
            op = op.next_op
        return False

    # -- 3. serial kernels ----------------------------------------------------------------

    def classify(self, op: Operation) -> str:
        """'device', 'neutral' (a pure host op), 'dealloc' or 'host'."""
        if isinstance(op, memref.StoreOp):
            return "host" if self.is_host_buffer(op.memref) else "device"
        if isinstance(op, memref.LoadOp):
            if self.is_host_buffer(op.memref):
                return "host"
            # A load only host code uses is a device-to-host read (of a rank-0 buffer:
            # other loads go through one); with a device user it runs in that user's kernel.
            t = op.memref.type
            if not (isinstance(t, MemRefType) and not t.get_shape() and isinstance(t.layout, NoneAttr)):
                return "device"
            for use in op.res.uses:
                if self._is_device_user(use.operation, op.parent_block()):
                    return "device"
            return "host"
        if isinstance(op, memref.DeallocOp):
            return "dealloc"
        if is_pure(op):
            return "device" if any(self.is_device_value(v) for v in op.operands) else "neutral"
        if op.regions and not isinstance(op, gpu.LaunchOp) and kernel_legal(op):
            if self.touches_device_memory(op) or any(
                self.is_device_value(v) for v in (*op.operands, *captured_values(op))
            ):
                if any(
                    isinstance(inner, memref.LoadOp | memref.StoreOp)
                    and self.is_host_buffer(inner.memref)
                    for inner in op.walk()
                ):
                    raise PassError(
                        "reads or writes host scalars and device memory in the same loop; "
                        "the GPU pipeline cannot place it",
                        op,
                    )
                return "device"
            return "neutral" if not self._has_memory_ops(op) else "host"
        return "host"

    @staticmethod
    def _has_memory_ops(op: Operation) -> bool:
        return any(isinstance(inner, memref.LoadOp | memref.StoreOp) for inner in op.walk())

    def _is_device_user(self, user: Operation, block: Block | None) -> bool:
        top = _ancestor_in(user, block) if block is not None else None
        if top is None or isinstance(top, gpu.LaunchOp):
            return False
        if isinstance(top, memref.StoreOp):
            return not self.is_host_buffer(top.memref) and top.value is not top.memref
        if is_pure(top):
            return True
        return bool(top.regions) and kernel_legal(top)

    def form_serial_kernels(self, block: Block) -> None:
        run: list[Operation] = []
        hoisted: list[Operation] = []
        deferred: list[Operation] = []
        for op in list(block.ops):
            kind = self.classify(op)
            if kind == "device":
                run.append(op)
            elif kind == "neutral" and run:
                hoisted.append(op)
            elif kind == "dealloc" and run and not any(
                root(op.operands[0]) is root(v) for r in run for v in _memrefs_used(r)
            ):
                deferred.append(op)
            elif kind in ("host", "dealloc"):
                self._close(block, run, hoisted, deferred)
                run, hoisted, deferred = [], [], []
        self._close(block, run, hoisted, deferred)

    def _close(
        self, block: Block, run: list[Operation], hoisted: list[Operation], deferred: list[Operation]
    ) -> None:
        if not run:
            return
        first = run[0]
        for op in hoisted:
            op.detach()
            block.insert_op_before(op, first)
        in_run = set(run)
        outputs: list[SSAValue] = []
        for op in run:
            for result in op.results:
                if any(_ancestor_in(use.operation, block) not in in_run for use in result.uses):
                    outputs.append(result)
        host = Emitter.before(first)
        spills = [host.add(memref.AllocOp.get(v.type, shape=[])) for v in outputs]

        def fill(e: Emitter, body: Block) -> None:
            for op in run:
                op.detach()
                e.add(op)
            for value, spill in zip(outputs, spills):
                e.add(memref.StoreOp.get(value, spill, []))

        launch = build_launch(host, 1, 1, fill)
        for op in deferred:
            op.detach()
        after = Emitter(InsertPoint.after(launch))
        for value, spill in zip(outputs, spills):
            loaded = after.add(memref.LoadOp.get(spill, []))
            value.replace_uses_with_if(loaded, lambda use: not launch.is_ancestor(use.operation))
        for op in deferred:
            after.add(op)
        terminator = block.last_op
        assert terminator is not None
        for spill in spills:
            block.insert_op_before(memref.DeallocOp.get(spill), terminator)
        self.reset()

    # -- driver -------------------------------------------------------------------------

    def run(self) -> None:
        self.place_host_buffers()
        for block in self.blocks:
            self.sink_into_launches(block)
            self.reset()
            self.form_serial_kernels(block)
            self.reset()
            self.sink_into_launches(block)
        self.check()

    def check(self) -> None:
        """Every op in a kernel may run there, no host code stores to device memory."""
        for op in self.function.walk():
            if isinstance(op, gpu.LaunchOp):
                for inner in op.body.walk():
                    if not kernel_op(inner):
                        raise PassError("cannot run inside a GPU kernel", inner)
            elif isinstance(op, memref.StoreOp) and not _in_launch(op):
                if not self.is_host_buffer(op.memref):
                    raise PassError("stores to device memory from host code", op)


def may_write(op: Operation, buffer: SSAValue) -> bool:
    """Whether `op` may write (or free) memory aliasing root `buffer`."""
    for inner in op.walk():
        if isinstance(inner, memref.StoreOp) and may_alias(root(inner.memref), buffer):
            return True
        if isinstance(inner, memref.CopyOp) and may_alias(root(inner.destination), buffer):
            return True
        if isinstance(inner, memref.DeallocOp) and may_alias(root(inner.memref), buffer):
            return True
        if isinstance(inner, GemmOp) and may_alias(root(inner.c), buffer):
            return True
        if isinstance(inner, func.CallOp) and any(
            isinstance(v.type, MemRefType) and may_alias(root(v), buffer) for v in inner.operands
        ):
            return True
    return False


def _memrefs_used(op: Operation) -> Iterator[SSAValue]:
    for inner in op.walk():
        for value in inner.operands:
            if isinstance(value.type, MemRefType):
                yield value


def _ancestor_in(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is `op` or contains it."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def place(function: func.FuncOp) -> None:
    """Establish the host/device contract of the module doc in `function`."""
    if function.body.blocks:
        Placement(function).run()


__all__ = ["HOST_BUFFER_ELEMENTS", "Placement", "kernel_legal", "kernel_op", "may_write", "place"]
