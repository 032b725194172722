"""`convert-linalg-to-blas`: large `linalg.matmul`s on memrefs to `blas.gemm` (a BLAS call).

Why: a GEMM is where a training step spends its time, and a tuned BLAS (packing, register
blocking, AVX-512 kernels, its own threads) runs it at several times the speed LLVM gets from
the generic loop nest. Below `min-flops` (2*m*n*k) the loop nest stays: the call costs about a
microsecond and small products vectorize well enough.

Input invariant: stage "bufferized" (linalg ops on memrefs with static shapes).
Output IR: the same, with each eligible `linalg.matmul` replaced by a `blas.gemm`:
- eligible: f32 or f64 in all three operands, every operand 2-D with unit stride in its last
  dimension (the identity layout, or a strided one like a row slice of a matrix);
- the zero fill of the output that bufferization puts right before the matmul becomes
  `beta = 0` (and goes away) when nothing between the two touches the output's buffer;
  otherwise `beta = 1` accumulates into the output, the matmul's own semantics;
- an operand that is a transposed copy (a `linalg.generic` whose body only yields its input,
  read through `(d0, d1) -> (d1, d0)`, written to a fresh buffer) is replaced by the copy's
  source with the gemm's transpose flag, when nothing between the copy and the matmul writes
  the source's buffer; the copy, its buffer and its dealloc go once nothing else reads them.
  This is the backward pass's `x^T @ dy` and `dy @ W^T`: no transposed copy is made.
Anything else (integer matmuls, f16/bf16 contractions which are generics, batched matmuls)
is left to convert-linalg-to-parallel-loops.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import AffineMapAttr, Float32Type, Float64Type, FloatAttr, MemRefType, ModuleOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass

from irgrad.dialects.blas import GemmOp, unit_strides_last
from irgrad.lowering.gpu_common import root

TRANSPOSE_MAP = AffineMap.from_callable(lambda d0, d1: (d1, d0))
IDENTITY_MAP = AffineMap.identity(2)


def is_blas_memref(t: Attribute) -> bool:
    """A 2-D f32/f64 memref with a static shape and unit stride in its last dimension."""
    return (
        isinstance(t, MemRefType)
        and isinstance(t.get_element_type(), Float32Type | Float64Type)
        and t.get_num_dims() == 2
        and all(d >= 0 for d in t.get_shape())
        and unit_strides_last(t) is not None
    )


def ops_between(first: Operation, last: Operation) -> list[Operation]:
    """The ops strictly between `first` and `last`, which are in the same block."""
    between: list[Operation] = []
    op = first.next_op
    while op is not None and op is not last:
        between.append(op)
        op = op.next_op
    return between


def touches(ops: list[Operation], buffer: SSAValue, *, writes_only: bool) -> bool:
    """Whether any of `ops` (or an op nested in them) may access `buffer`'s memory.

    With `writes_only`, an op that only reads it (a linalg input, a load) does not count.
    Conservative: a use through a view, or by an op it does not know, counts.
    """
    for top in ops:
        for op in top.walk():
            for operand in op.operands:
                if not isinstance(operand.type, MemRefType) or root(operand) is not buffer:
                    continue
                if not writes_only:
                    return True
                if isinstance(op, memref.LoadOp):
                    continue
                if isinstance(op, linalg.GenericOp | linalg.NamedOperation) and operand in op.inputs:
                    continue
                return True
    return False


def zero_fill_before(matmul: Operation, out: SSAValue) -> Operation | None:
    """The `linalg.fill` of 0.0 into `out` that `matmul` accumulates onto, if it can go."""
    op = matmul.prev_op
    skipped: list[Operation] = []
    while op is not None:
        if isinstance(op, linalg.FillOp) and op.outputs[0] is out:
            value = op.inputs[0].owner
            if (
                isinstance(value, arith.ConstantOp)
                and isinstance(value.value, FloatAttr)
                and value.value.value.data == 0.0
                and not touches(skipped, root(out), writes_only=False)
            ):
                return op
            return None
        skipped.append(op)
        op = op.prev_op
    return None


def transposed_copy_source(
    operand: SSAValue, user: Operation
) -> tuple[SSAValue, Operation, list[Operation]] | None:
    """(source, copy, deallocs) when `operand` is a fresh buffer holding source^T, copied in
    `user`'s block before `user`, and the source is neither written nor freed between the copy
    and `user` except by `deallocs` (the source's own deallocs there, which the caller moves
    after the op that now reads the source)."""
    alloc = operand.owner
    if not isinstance(alloc, memref.AllocOp):
        return None
    copies = [
        use.operation
        for use in operand.uses
        if isinstance(use.operation, linalg.GenericOp) and operand in use.operation.outputs
    ]
    if len(copies) != 1:
        return None
    copy = copies[0]
    if copy.parent is not user.parent or not is_transpose_copy(copy):
        return None
    source = copy.inputs[0]
    if not is_blas_memref(source.type):
        return None
    # The copy must come before the use, with no other writer of `operand` in between.
    between: list[Operation] = []
    op = copy.next_op
    while op is not None and op is not user:
        between.append(op)
        op = op.next_op
    if op is None:
        return None
    deallocs = [op for op in between if isinstance(op, memref.DeallocOp) and op.memref is source]
    rest = [op for op in between if op not in deallocs]
    if touches(rest, root(source), writes_only=True) or touches(rest, operand, writes_only=True):
        return None
    return source, copy, deallocs


def is_transpose_copy(op: linalg.GenericOp) -> bool:
    """A 2-D generic whose body yields its one input, read transposed, written in order."""
    if len(op.inputs) != 1 or len(op.outputs) != 1 or op.res:
        return False
    maps = [m.data for m in op.indexing_maps.data if isinstance(m, AffineMapAttr)]
    if maps != [TRANSPOSE_MAP, IDENTITY_MAP]:
        return False
    block: Block = op.body.block
    yielded = block.last_op
    return (
        block.first_op is yielded
        and isinstance(yielded, linalg.YieldOp)
        and len(yielded.operands) == 1
        and yielded.operands[0] is block.args[0]
    )


def erase_dead_copy(copy: Operation) -> None:
    """Erase a transposed copy, its buffer and the buffer's deallocs once nothing reads it."""
    buffer = copy.outputs[0]  # type: ignore[attr-defined]
    users = [use.operation for use in buffer.uses]
    if any(u is not copy and not isinstance(u, memref.DeallocOp) for u in users):
        return
    for u in users:
        if u is not copy:
            u.detach()
            u.erase()
    copy.detach()
    copy.erase()
    alloc = buffer.owner
    alloc.detach()
    alloc.erase()


def gemm_for(matmul: linalg.MatmulOp) -> tuple[GemmOp, list[Operation]] | None:
    """The `blas.gemm` that replaces `matmul` and the ops it makes dead, or None."""
    a, b = matmul.inputs
    (c,) = matmul.outputs
    if matmul.res or not all(is_blas_memref(v.type) for v in (a, b, c)):
        return None
    if len({v.type.get_element_type() for v in (a, b, c)}) != 1:  # type: ignore[union-attr]
        return None
    copies: list[Operation] = []
    transposed = [False, False]
    operands = [a, b]
    for k, operand in enumerate(operands):
        found = transposed_copy_source(operand, matmul)
        if found is not None and root(found[0]) is not root(c):
            operands[k], copy, deallocs = found
            transposed[k] = True
            if copy not in copies:
                copies.append(copy)
            # The source is now read by the gemm: free it after that, not before.
            for dealloc in deallocs:
                dealloc.detach()
                block = matmul.parent
                assert block is not None
                block.insert_op_after(dealloc, matmul)
    fill = zero_fill_before(matmul, c)
    gemm = GemmOp(
        operands[0],
        operands[1],
        c,
        beta=0.0 if fill is not None else 1.0,
        transpose_a=transposed[0],
        transpose_b=transposed[1],
    )
    return gemm, ([fill] if fill is not None else []) + copies


def flops(matmul: linalg.MatmulOp) -> int:
    m, k = matmul.inputs[0].type.get_shape()  # type: ignore[union-attr]
    n = matmul.inputs[1].type.get_shape()[1]  # type: ignore[union-attr]
    return 2 * m * n * k


@dataclass(frozen=True)
class ConvertLinalgToBlasPass(ModulePass):
    """Replace linalg.matmul on f32/f64 memrefs of at least `min_flops` by blas.gemm,
    folding the output's zero fill (beta = 0) and transposed operand copies (transpose flags).

    Input invariant: stage "bufferized". Output IR: the same with blas.gemm ops.
    """

    name = "convert-linalg-to-blas"

    min_flops: int = 32768

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        matmuls = [m for m in op.walk() if isinstance(m, linalg.MatmulOp)]
        for matmul in matmuls:
            if not is_blas_memref(matmul.inputs[0].type) or flops(matmul) < self.min_flops:
                continue
            found = gemm_for(matmul)
            if found is None:
                continue
            gemm, dead = found
            block = matmul.parent
            assert block is not None
            block.insert_op_before(gemm, matmul)
            matmul.detach()
            matmul.erase()
            for dead_op in dead:
                if isinstance(dead_op, linalg.FillOp):
                    value = dead_op.inputs[0].owner
                    dead_op.detach()
                    dead_op.erase()
                    if isinstance(value, arith.ConstantOp) and not value.result.uses:
                        value.detach()
                        value.erase()
                else:
                    erase_dead_copy(dead_op)
