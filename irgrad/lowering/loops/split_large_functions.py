"""`split-large-functions{max-ops=1500 chunk-ops=500}`: a large function as calls of smaller ones.

Why: LLVM's function passes (the loop vectorizer, induction-variable simplification) recompute
their analyses for the whole function after each loop they change, so their time grows about
quadratically in the size of one function, and a traced training step is one function. Cut
into functions of about `chunk-ops` ops, the optimizer's time is linear in the program
(figures: docs/design/cpu-backend.md, "Measured").

Input: stage "loops" (memrefs, scf loops). A `func.func` with one block and more than `max-ops`
ops (nested ones included) has its top-level ops grouped, in order, into chunks of about
`chunk-ops` ops; each chunk becomes a private function (`no_inline`, so LLVM keeps it apart)
called where the chunk ended. Ops that produce memrefs are hoisted above the call, deallocs
sunk below it, constants cloned into each chunk; a chunk's scalar results that later ops use
are returned by its function. Memref arguments get `llvm.noalias` where that is provably true
(distinct fresh allocations, or both only read in the chunk).

Output: the same ops in the same order of effects, in more functions. Smaller chunks than a
quarter of `chunk-ops` are left in place.
Details: docs/design/cpu-pipeline.md, "irgrad/lowering/loops/split_large_functions.py".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import ConstantLike, IsTerminator

from irgrad.diagnostics import PassError
from irgrad.lowering.ir_queries import VIEW_OPS, may_alias, root
from irgrad.lowering.rewriting import walk_ops

NOALIAS = "llvm.noalias"
"""The argument attribute (MLIR's spelling) that convert-func-to-llvm passes on to LLVM."""

NO_INLINE = "no_inline"
"""The function attribute (MLIR's spelling) that makes convert-func-to-llvm mark it `noinline`."""

_HOISTABLE = (memref.AllocOp, memref.AllocaOp, memref.GetGlobalOp, *VIEW_OPS)
_CLONED = (memref.GetGlobalOp, *VIEW_OPS)
"""Caller ops a chunk clones rather than takes as arguments (they have no effect)."""


def op_count(op: Operation) -> int:
    """`op` and the ops nested in it."""
    return len(walk_ops(op))


@dataclass(frozen=True)
class SplitLargeFunctionsPass(ModulePass):
    """Outline chunks of the top-level ops of large functions into private functions."""

    name = "split-large-functions"

    max_ops: int = 1500
    chunk_ops: int = 500

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for option, value in (("max-ops", self.max_ops), ("chunk-ops", self.chunk_ops)):
            if value < 1:
                raise PassError(f"{self.name}: {option} must be positive, got {value}")
        names = _SymbolNames(op)
        for f in list(op.ops):
            if (
                isinstance(f, func.FuncOp)
                and len(f.body.blocks) == 1
                and op_count(f) > self.max_ops
            ):
                _split(f, self.chunk_ops, names)


class _SymbolNames:
    """Fresh names `<function>_part<k>`, unique in the module."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.taken = {
            o.sym_name.data for o in module.ops if isinstance(getattr(o, "sym_name", None), StringAttr)
        }

    def fresh(self, base: str) -> str:
        k = 0
        while f"{base}_part{k}" in self.taken:
            k += 1
        name = f"{base}_part{k}"
        self.taken.add(name)
        return name


def _split(f: func.FuncOp, chunk_ops: int, names: _SymbolNames) -> None:
    block = f.body.block
    chunk: list[Operation] = []
    produced: set[SSAValue] = set()  # top-level results of the current chunk's ops
    size = 0
    for op in list(block.ops):
        if op is block.last_op and op.has_trait(IsTerminator):
            break
        if op.has_trait(ConstantLike) or isinstance(op, memref.DeallocOp):
            continue  # constants are cloned, deallocs sunk: neither ends a chunk
        if any(isinstance(r.type, MemRefType) for r in op.results):
            if isinstance(op, _HOISTABLE) and not any(v in produced for v in op.operands):
                continue  # stays above the call
            _outline(f, chunk, size, chunk_ops, names)
            chunk, produced, size = [], set(), 0
            continue
        chunk.append(op)
        produced.update(op.results)
        size += op_count(op)
        if size >= chunk_ops:
            _outline(f, chunk, size, chunk_ops, names)
            chunk, produced, size = [], set(), 0
    _outline(f, chunk, size, chunk_ops, names)


def _outline(f: func.FuncOp, chunk: Sequence[Operation], size: int, chunk_ops: int, names: _SymbolNames) -> None:
    """Move `chunk` (top-level ops of `f`, in order) into a new private function, called where
    the last of them was; the caller's ops between them stay, deallocs below the call."""
    if not chunk or size < max(1, chunk_ops // 4):
        return
    block = f.body.block
    inside: set[Operation] = set()
    for op in chunk:
        inside.update(op.walk())

    inputs, clones_needed = _interface(chunk, inside)
    outputs = [
        r for op in chunk for r in op.results if any(use.operation not in inside for use in r.uses)
    ]

    first, last = chunk[0], chunk[-1]
    sink = [
        op
        for op in _between(first, last)
        if isinstance(op, memref.DeallocOp) and op not in inside
    ]
    anchor = last.next_op  # the call goes where the chunk ended

    name = names.fresh(f.sym_name.data)
    body = Block(arg_types=[v.type for v in inputs])
    callee = func.FuncOp(
        name,
        FunctionType.from_lists([v.type for v in inputs], [v.type for v in outputs]),
        Region(body),
        visibility="private",
    )
    callee.attributes[NO_INLINE] = UnitAttr()
    clones: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
    for c in clones_needed:
        copy = c.clone(value_mapper=dict(clones))
        body.add_op(copy)
        clones.update(zip(c.results, copy.results))
    for op in chunk:
        op.detach()
        body.add_op(op)
    for op in chunk:
        for inner in op.walk():
            for k, value in enumerate(inner.operands):
                replacement = clones.get(value)
                if replacement is not None:
                    inner.operands[k] = replacement
    callee.arg_attrs = _argument_attributes(inputs, body.args)

    call = func.CallOp(name, inputs, [v.type for v in outputs])
    if anchor is None:
        block.add_op(call)
    else:
        block.insert_op_before(call, anchor)
    for old, new in zip(outputs, call.results):
        for use in list(old.uses):
            if use.operation not in inside:
                use.operation.operands[use.index] = new
    body.add_op(func.ReturnOp(*outputs))
    for op in sink:
        op.detach()
        block.insert_op_after(op, call)
    f.parent_block().insert_op_before(callee, f)  # type: ignore[union-attr]


def _interface(chunk: Sequence[Operation], inside: set[Operation]) -> tuple[list[SSAValue], list[Operation]]:
    """The chunk's arguments, and the caller's ops it clones (in order): constants, and views
    with what they view, so that an argument is a whole buffer and two views of one buffer
    are views of one argument (LLVM then sees how they overlap, as it did in one function)."""
    inputs: list[SSAValue] = []
    cloned: list[Operation] = []
    visited: set[SSAValue] = set()

    def visit(value: SSAValue) -> None:
        if value in visited or _defined_inside(value, inside):
            return
        visited.add(value)
        owner = value.owner
        if isinstance(owner, Operation) and not owner.regions and (
            owner.has_trait(ConstantLike) or isinstance(owner, _CLONED)
        ):
            for operand in owner.operands:
                visit(operand)
            if owner not in cloned:
                cloned.append(owner)
        else:
            inputs.append(value)

    for op in chunk:
        for inner in op.walk():
            for value in inner.operands:
                visit(value)
    return inputs, cloned


def _between(first: Operation, last: Operation) -> list[Operation]:
    ops, op = [], first
    while op is not None:
        ops.append(op)
        if op is last:
            break
        op = op.next_op
    return ops


def _defined_inside(value: SSAValue, inside: set[Operation]) -> bool:
    if isinstance(value, BlockArgument):
        return value.block.parent_op() in inside
    return value.owner in inside


def _argument_attributes(
    inputs: Sequence[SSAValue], arguments: Sequence[BlockArgument]
) -> ArrayAttr[DictionaryAttr]:
    """`llvm.noalias` on the memref arguments no other argument may overlap (see the module
    doc): `inputs` are the caller's values, `arguments` the callee's."""
    memrefs = [k for k, v in enumerate(inputs) if isinstance(v.type, MemRefType)]
    roots = {k: root(inputs[k]) for k in memrefs}
    read_only = {k: _only_read(arguments[k]) for k in memrefs}
    attributes = []
    for k in range(len(inputs)):
        noalias = k in roots and all(
            not may_alias(roots[k], roots[j]) or (read_only[k] and read_only[j])
            for j in memrefs
            if j != k
        )
        attributes.append(DictionaryAttr({NOALIAS: UnitAttr()} if noalias else {}))
    return ArrayAttr(attributes)


def _only_read(value: SSAValue) -> bool:
    """Whether `value` (and every view of it) is only loaded from (any other use may write)."""
    for use in value.uses:
        op = use.operation
        if isinstance(op, VIEW_OPS) and use.index == 0:
            if not _only_read(op.results[0]):
                return False
        elif not (isinstance(op, memref.LoadOp) or (isinstance(op, memref.CopyOp) and use.index == 0)):
            return False
    return True
