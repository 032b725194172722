"""Bufferizing `scf` control flow and `func` calls and returns: where ownership moves.

- `scf.for`/`scf.while` inits move into the loop (the root itself when it is dead after the
  loop and owned by the loop's block, else a copy); each region argument owns its buffer.
- `scf.yield`/`scf.condition` move each yielded buffer out of its block (a copy when the
  block does not own it, or when it moves twice); the op's results are owned by its block.
- `func.call`: the caller allocates one buffer per tensor result and passes it after the
  arguments (identity layout: a strided view is copied first).
- `func.return`: a result whose root is an allocation of the entry block is computed in the
  out-parameter from the start (the alloc is replaced by it); anything else is copied in.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, Region, SSAValue

from irgrad.diagnostics import PassError
from irgrad.lowering.bufferization.core import BufferizerCore
from irgrad.lowering.bufferization.model import (
    CONTRACT,
    Root,
    RootKind,
    erase_op,
    is_tensor,
    memref_type,
)


class ControlFlow(BufferizerCore):
    """Conversions of scf and func ops (see the module docstring)."""

    def move_inits(self, values: Sequence[SSAValue], op: Operation) -> list[SSAValue]:
        moved: set[Root] = set()
        return [
            self.move(v, op, moved, check_liveness=True) if is_tensor(v) else v for v in values
        ]

    def convert_for(self, op: scf.ForOp) -> None:
        inits = self.move_inits(op.iter_args, op)
        new = scf.ForOp(op.lb, op.ub, op.step, inits, Region())
        op.body.move_blocks(new.body)
        self.replace_region_op(op, new)
        block = new.body.block
        for arg in [a for a in block.args[1:] if is_tensor(a)]:
            self.region_argument(arg)
        self.convert_block(block)
        self.region_results(op, new)

    def convert_if(self, op: scf.IfOp) -> None:
        types = [memref_type(t) if isinstance(t, TensorType) else t for t in op.result_types]
        new = scf.IfOp(op.cond, types, Region(), Region())
        op.true_region.move_blocks(new.true_region)
        op.false_region.move_blocks(new.false_region)
        self.replace_region_op(op, new)
        for region in new.regions:
            for block in region.blocks:
                self.convert_block(block)
        self.region_results(op, new)

    def convert_while(self, op: scf.WhileOp) -> None:
        inits = self.move_inits(op.arguments, op)
        types = [memref_type(t) if isinstance(t, TensorType) else t for t in op.result_types]
        new = scf.WhileOp(inits, types, Region(), Region())
        op.before_region.move_blocks(new.before_region)
        op.after_region.move_blocks(new.after_region)
        self.replace_region_op(op, new)
        for region in new.regions:
            block = region.block
            for arg in [a for a in block.args if is_tensor(a)]:
                self.region_argument(arg)
            self.convert_block(block)
        self.region_results(op, new)

    def convert_region_terminator(self, op: scf.YieldOp | scf.ConditionOp) -> None:
        moved: set[Root] = set()
        values = op.args if isinstance(op, scf.ConditionOp) else op.arguments
        new_values = [
            self.move(v, op, moved, check_liveness=False) if is_tensor(v) else v for v in values
        ]
        if isinstance(op, scf.ConditionOp):
            new: Operation = scf.ConditionOp(op.condition, *new_values)
        else:
            new = scf.YieldOp(*new_values)
        self.insert(new, op)
        self.dead_ops.append(op)

    def convert_call(self, op: func.CallOp) -> None:
        signature = self.signatures.get(op.callee.string_value())
        if signature is None:
            raise PassError(f"calls {op.callee}, which is not a function of the module", op)
        args: list[SSAValue] = []
        for v in op.arguments:
            memref = self.read_contiguous(v, op).memref if is_tensor(v) else v
            assert memref is not None
            args.append(memref)
        outs = [self.alloc(r.type, op) for r in op.results if is_tensor(r)]
        out_values = [o.memref for o in outs if o.memref is not None]
        scalar_types = [r.type for r in op.results if not is_tensor(r)]
        new = self.insert(func.CallOp(op.callee, [*args, *out_values], scalar_types), op)
        new.location = op.location
        out_iter, scalar_iter = iter(outs), iter(new.results)
        for r in op.results:
            if is_tensor(r):
                self.bind(r, next(out_iter))
            else:
                r.replace_all_uses_with(next(scalar_iter))
        self.dead_ops.append(op)

    def convert_return(self, op: func.ReturnOp) -> None:
        if op.parent_op() is not self.function:
            raise PassError("outside its function's body " + CONTRACT, op)
        entry = self.function.body.block
        outs = iter(self.out_params)
        taken: dict[Root, SSAValue] = {}
        scalars: list[SSAValue] = []
        for v in op.arguments:
            if not is_tensor(v):
                scalars.append(v)
                continue
            out = next(outs)
            b = self.buffer(v)
            root = b.root
            if b.memref is None:
                continue  # a tensor.empty: its contents are unspecified
            if (
                b.is_root
                and root.kind is RootKind.ALLOC
                and root.writable
                and root.owner is entry
                and root not in taken
                and root.alloc is not None
            ):
                taken[root] = out  # computed in the caller's buffer from the start (below)
            else:
                self.copy(b.memref, out, op)
        # After the copies, which may read a root that becomes an out-parameter.
        for root, out in taken.items():
            assert root.alloc is not None
            root.alloc.memref.replace_all_uses_with(out)
            erase_op(root.alloc)
            root.alloc = None
            root.buffer = out
            root.moved = True
        new = self.insert(func.ReturnOp(*scalars), op)
        new.location = op.location
        self.dead_ops.append(op)
