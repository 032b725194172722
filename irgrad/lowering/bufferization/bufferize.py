"""`bufferize`: tensors to memrefs, in place where legal, every buffer freed when dead.

Input invariant: stage "linalg" of docs/design/cpu-pipeline.md (static shapes; linalg ops in
destination-passing style on tensors; tensor, scf, func, arith, math, mpi ops). Output IR:
stage "bufferized": no tensor value remains; memref ops (alloc, dealloc, copy, subview, load,
store, views, globals), linalg ops on memrefs, mpi ops' buffer forms (`mpi.alltoall_buffers`).
The pieces are in irgrad/lowering/bufferization/; this file holds the walk and the pass.

Every tensor SSA value gets a `Buffer`: a memref value and the `Root` (one piece of memory:
ALLOC, OWNED, ARGUMENT, GLOBAL or EMPTY) it lies in; views lie in their source's root. An op
that writes does so in place only when the root is writable, the buffer covers the whole root
and no tensor in that root can be read later; otherwise it writes a fresh `memref.alloc`. An
elementwise op may also write into one of its inputs under the same conditions.

Every ALLOC/OWNED root is owned by one block; ownership moves only through region boundaries,
and a root that does not move is freed by one `memref.dealloc` after its last use
(`contracts.check_buffer_ownership` checks this discipline).

Calling convention: tensor arguments become identity-layout memref arguments the callee only
reads; tensor results become trailing memref out-parameters the caller allocates.
Details: docs/design/cpu-pipeline.md, "irgrad/lowering/bufferization/bufferize.py".
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, TensorType
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from irgrad.diagnostics import PassError
from irgrad.dialects import debug, mpi
from irgrad.lowering.bufferization.control_flow import ControlFlow
from irgrad.lowering.bufferization.deallocation import place_deallocs
from irgrad.lowering.bufferization.linalg_ops import LINALG_OPS, LinalgOps
from irgrad.lowering.bufferization.liveness import OpOrder
from irgrad.lowering.bufferization.model import (
    CONTRACT,
    Buffer,
    Globals,
    RootKind,
    Signature,
    erase_op,
    is_tensor,
    memref_type,
    touches_tensors,
)
from irgrad.lowering.bufferization.tensor_ops import TensorOps


class FunctionBufferizer(TensorOps, LinalgOps, ControlFlow):
    """Bufferizes one function body: a walk in program order, one conversion per op."""

    def run(self) -> None:
        body = self.function.body
        if len(body.blocks) != 1:
            raise PassError(f"with {len(body.blocks)} blocks " + CONTRACT, self.function)
        block = body.block
        signature = self.signatures[self.function.sym_name.data]
        for arg in [a for a in block.args if is_tensor(a)]:
            new = block.insert_arg(memref_type(arg.type), arg.index)
            new.name_hint = arg.name_hint
            self.bind(arg, Buffer(new, self.new_root(RootKind.ARGUMENT, new, None)))
            self.dead_args.append(arg)
        for i in signature.tensor_results:
            out = block.insert_arg(memref_type(signature.outputs[i]), len(block.args))
            out.name_hint = "out" if len(signature.tensor_results) == 1 else f"out{i}"
            self.out_params.append(out)
        self.convert_block(block)
        for op in reversed(self.dead_ops):
            erase_op(op)
        for arg in self.dead_args:
            arg.block.erase_arg(arg)
        place_deallocs(self.roots)

    def convert_block(self, block: Block) -> None:
        for op in list(block.ops):
            self.convert(op)

    def convert(self, op: Operation) -> None:
        if not touches_tensors(op):
            for region in op.regions:
                for block in region.blocks:
                    self.convert_block(block)
            return
        match op:
            case _ if isinstance(op, LINALG_OPS):
                self.convert_linalg(op)
            case tensor.EmptyOp():
                self.convert_empty(op)
            case arith.ConstantOp():
                self.convert_constant(op)
            case tensor.ExtractOp():
                self.convert_extract(op)
            case tensor.InsertOp():
                self.convert_insert(op)
            case tensor.FromElementsOp():
                self.convert_from_elements(op)
            case tensor.ExtractSliceOp():
                self.convert_extract_slice(op)
            case tensor.InsertSliceOp():
                self.convert_insert_slice(op)
            case tensor.CollapseShapeOp() | tensor.ExpandShapeOp():
                self.convert_reshape_view(op)
            case tensor.ReshapeOp():
                self.convert_reshape(op)
            case scf.ForOp():
                self.convert_for(op)
            case scf.IfOp():
                self.convert_if(op)
            case scf.WhileOp():
                self.convert_while(op)
            case scf.YieldOp() | scf.ConditionOp():
                self.convert_region_terminator(op)
            case func.CallOp():
                self.convert_call(op)
            case func.ReturnOp():
                self.convert_return(op)
            case debug.PrintOp():
                self.convert_print(op)
            case _ if isinstance(op, mpi.DATA_MOVEMENT):
                self.convert_data_movement(op)
            case _:
                raise PassError(CONTRACT, op)

    def convert_print(self, op: debug.PrintOp) -> None:
        """`debug.print` reads its operands: each tensor becomes the buffer it lies in (which
        therefore stays alive, and unwritten, until the print has run)."""
        for k, value in enumerate(list(op.operands)):
            if is_tensor(value):
                buffer = self.read_contiguous(value, op).memref
                assert buffer is not None
                op.operands[k] = buffer

    def convert_data_movement(self, op: mpi.AllToAllOp | mpi.AllGatherOp) -> None:
        """`mpi.alltoall`/`allgather` read their input from a contiguous buffer (a strided
        view is copied first) and write a fresh one: `mpi.alltoall_buffers`/`allgather_buffers`."""
        send = self.read_contiguous(op.input, op).memref
        recv = self.alloc(op.result.type, op)
        assert send is not None and recv.memref is not None
        moved = self.insert(mpi.BUFFER_FORM[type(op)](send, recv.memref, op.comm), op)
        moved.location = op.location  # where a failed collective points
        self.bind(op.result, recv)
        self.dead_ops.append(op)


def bufferize_module(module: ModuleOp) -> None:
    """Bufferize every function of `module` in place (see the module docstring)."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    signatures = {
        f.sym_name.data: Signature(tuple(f.function_type.inputs), tuple(f.function_type.outputs))
        for f in functions
    }
    order = OpOrder(module)
    globals_ = Globals(module)
    for function in functions:
        if function.body.blocks:
            FunctionBufferizer(function, signatures, globals_, order).run()
    for function in functions:
        signature = signatures[function.sym_name.data]
        if not signature.has_tensors:
            continue
        n_outs = len(signature.tensor_results)
        function.function_type = signature.bufferized()
        if function.arg_attrs is not None:
            extra = [DictionaryAttr({})] * n_outs
            function.arg_attrs = ArrayAttr([*function.arg_attrs, *extra])
        if function.res_attrs is not None:
            kept = [
                a
                for a, t in zip(function.res_attrs, signature.outputs)
                if not isinstance(t, TensorType)
            ]
            function.res_attrs = ArrayAttr(kept) if kept else None


@dataclass(frozen=True)
class BufferizePass(ModulePass):
    """Convert tensors to memrefs: in-place writes where legal, every buffer freed when dead,
    tensor results written into caller-provided buffers.

    Input invariant: stage "linalg" (docs/design/cpu-pipeline.md). Output IR: stage
    "bufferized". See irgrad/lowering/bufferization/bufferize.py for the ownership and in-place rules.
    """

    name = "bufferize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        bufferize_module(op)


__all__ = ["BufferizePass", "FunctionBufferizer", "bufferize_module"]
