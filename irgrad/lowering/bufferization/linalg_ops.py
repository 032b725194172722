"""Bufferizing linalg ops: each output is written into a buffer chosen by three rules.

For output k, in order of preference:
1. its init's own buffer, when that covers a writable root, no other operand touches the
   root (except inputs read at the very element written: same indexing map, a permutation,
   all loops parallel), and every tensor of the root is dead after the op (a reduction's
   `linalg.fill` accumulator, typically);
2. for an elementwise op (a `linalg.generic` or named elementwise op, all loops parallel)
   whose init is not read (a `tensor.empty`, typically): one of its *inputs*' buffers, under
   the in-place rule of irgrad/lowering/bufferization/bufferize.py (same tensor type, same permutation map,
   writable covering root, no other operand in the root, dead after the op);
   (1 and 2 skip a buffer owned by an enclosing block when the result is yielded: it would be
   copied to leave the block, where a fresh buffer moves out for free;)
   2b. for such an op whose input is a window `extract_slice` of a tensor D and whose result
   is inserted right back into D at the same place by the next op: that window's subview of
   D's buffer, the insert then copying nothing (`_window_update`);
3. a fresh `memref.alloc`, holding a copy of the init when the op reads its init.
The op is then rebuilt on memrefs with the same attributes and body; a body that reads other
tensors (a gather's `tensor.extract`) is converted too.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import tensor
from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import (
    ConvOperation,
    ElementwiseOperation,
    LinalgStructuredOperation,
    PoolingOperation,
)
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from irgrad.diagnostics import PassError
from irgrad.lowering.bufferization.core import BufferizerCore
from irgrad.lowering.bufferization.model import CONTRACT, Buffer, Root, is_permutation, is_tensor

LINALG_OPS = (LinalgStructuredOperation, linalg.BroadcastOp, linalg.ReduceOp)
"""The linalg ops with operands and outputs (`linalg.yield` and `linalg.index` are not)."""


def linalg_operands(op: Operation) -> tuple[Sequence[SSAValue], Sequence[SSAValue]]:
    """Inputs and outputs of a linalg op, broadcast and reduce included."""
    if isinstance(op, linalg.BroadcastOp | linalg.ReduceOp):
        return (op.input,), (op.init,)
    assert isinstance(op, LinalgStructuredOperation)
    return op.inputs, op.outputs


def _rank(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType | MemRefType)
    return len(t.get_shape())


def linalg_maps(op: Operation) -> list[AffineMap]:
    """Indexing maps of a linalg op's operands, broadcast and reduce included."""
    if isinstance(op, LinalgStructuredOperation):
        return [m.data for m in op.get_indexing_maps()]
    if isinstance(op, linalg.BroadcastOp):
        rank = _rank(op.init)
        added = set(op.dimensions.get_values())
        kept = tuple(AffineDimExpr(d) for d in range(rank) if d not in added)
        return [AffineMap(rank, 0, kept), AffineMap.identity(rank)]
    assert isinstance(op, linalg.ReduceOp)
    rank = _rank(op.input)
    reduced = set(op.dimensions.get_values())
    kept = tuple(AffineDimExpr(d) for d in range(rank) if d not in reduced)
    return [AffineMap.identity(rank), AffineMap(rank, 0, kept)]


def _all_parallel(op: Operation) -> bool:
    if isinstance(op, LinalgStructuredOperation):
        return all("parallel" in str(t.data) for t in op.get_iterator_types())
    return isinstance(op, linalg.BroadcastOp)


def _reads_output(op: Operation, n_inputs: int, k: int) -> bool:
    """Whether the op reads the current contents of its `k`th output."""
    if isinstance(op, PoolingOperation | ConvOperation):
        return True  # xDSL's hidden pooling region ignores its accumulator; the op does not
    body = op.regions[0].block
    return bool(body.args[n_inputs + k].uses)


class LinalgOps(BufferizerCore):
    """Conversion of linalg ops (see the module docstring)."""

    def convert_linalg(self, op: Operation) -> None:
        ins, outs = linalg_operands(op)
        maps = linalg_maps(op)
        parallel = _all_parallel(op)
        n_in = len(ins)
        elementwise = parallel and isinstance(op, linalg.GenericOp | ElementwiseOperation)

        def root_of(v: SSAValue) -> Root | None:
            return self.buffer(v).root if is_tensor(v) else None

        def hazard_free(root: Root, k: int) -> bool:
            """No operand but output k, and inputs read at the element written, is in `root`."""
            for j, v in enumerate(ins):
                if root_of(v) is root:
                    same_point = parallel and maps[j] == maps[n_in + k] and is_permutation(maps[j])
                    if not (same_point and self.buffer(v).covers):
                        return False
            return all(root_of(o) is not root for i, o in enumerate(outs) if i != k)

        block = op.parent_block()
        terminator = block.last_op if block is not None else None

        def yielded(k: int) -> bool:
            return any(use.operation is terminator for use in op.results[k].uses)

        def reusable(b: Buffer, k: int, claimed: set[Root]) -> bool:
            # A buffer of an enclosing block would be copied to be yielded from this one: a
            # fresh buffer of this block moves out for free.
            if b.root.owner is not block and yielded(k):
                return False
            return (
                b.memref is not None
                and b.covers
                and b.root.writable
                and b.root not in claimed
                and hazard_free(b.root, k)
                and self.dead_after(b.root, op)
            )

        # Decide every destination before touching the IR: liveness reads the original op.
        dests: list[Buffer] = []
        claimed: set[Root] = set()
        for k, out in enumerate(outs):
            if not is_tensor(out):
                raise PassError("mixes tensor and buffer operands " + CONTRACT, op)
            init = self.buffer(out)
            reads = _reads_output(op, n_in, k)
            out_map = maps[n_in + k]
            dest: Buffer | None = None
            if reusable(init, k, claimed):
                dest = init
            elif elementwise and (init.memref is None or not reads) and is_permutation(out_map):
                for j, v in enumerate(ins):
                    if is_tensor(v) and v.type == out.type and maps[j] == out_map:
                        if reusable(candidate := self.buffer(v), k, claimed):
                            dest = candidate
                            break
            if dest is None and elementwise and not reads and is_permutation(out_map):
                dest = self._window_update(op, k, ins, maps, claimed)
            if dest is None:
                dest = self.alloc(out.type, op)
                if reads and init.memref is not None:
                    assert dest.memref is not None
                    self.copy(init.memref, dest.memref, op)
            claimed.add(dest.root)
            dests.append(dest)

        new_ins = [self.read(v, op) if is_tensor(v) else v for v in ins]
        new_outs = [d.memref for d in dests if d.memref is not None]
        regions = [op.detach_region(r) for r in list(op.regions)]
        new = type(op).create(
            operands=[*new_ins, *new_outs],
            result_types=[],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            regions=regions,
            location=op.location,
        )
        self.insert(new, op)
        self.order.same_position(new, op)
        for result, dest in zip(op.results, dests, strict=True):
            self.bind(result, dest)
        self.dead_ops.append(op)
        # A body may read other tensors (a gather's tensor.extract).
        for region in new.regions:
            for block in region.blocks:
                self.convert_block(block)

    def _window_update(
        self, op: Operation, k: int, ins: Sequence[SSAValue], maps: list[AffineMap], claimed: set[Root]
    ) -> Buffer | None:
        """Rule 2b: output k of elementwise `op` is `f(window, ...)` with `window` an
        `extract_slice` of tensor D, and its only use is the very next op, an `insert_slice`
        of it into D at the same offsets, sizes and strides (col2im's window updates, a
        read-modify-write of a strided piece of D): write it into the window's own subview
        of D's buffer and let the insert copy nothing. Legal when D covers a writable root,
        no other operand of `op` lies in that root, and no tensor of the root is read after
        the insert (which would then be in place anyway)."""
        result = op.results[k]
        uses = list(result.uses)
        if len(uses) != 1:
            return None
        insert = uses[0].operation
        if not isinstance(insert, tensor.InsertSliceOp) or insert is not op.next_op or insert.source is not result:
            return None
        n_in = len(ins)
        for j, v in enumerate(ins):
            window = v.owner
            if not (
                isinstance(window, tensor.ExtractSliceOp)
                and maps[j] == maps[n_in + k]
                and v.type == result.type
                and window.source is insert.dest
                and not window.offsets and not insert.offsets
                and window.static_offsets == insert.static_offsets
                and window.static_sizes == insert.static_sizes
                and window.static_strides == insert.static_strides
            ):
                continue
            whole, view = self.buffer(insert.dest), self.buffer(v)
            if whole.memref is None or view.memref is None or view.root is not whole.root:
                continue
            root = whole.root
            if not (whole.covers and root.writable) or root in claimed:
                continue
            if any(self.buffer(w).root is root for i, w in enumerate(ins) if i != j and is_tensor(w)):
                continue
            if not self.dead_after(root, insert):
                continue
            self.window_updates.add(insert)
            return view
        return None

