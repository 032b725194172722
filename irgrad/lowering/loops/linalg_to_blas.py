"""`convert-linalg-to-blas`: large `linalg.matmul`s on memrefs to `blas.gemm` (a BLAS call).

Why: a GEMM is where a training step spends its time, and a tuned BLAS (packing, register
blocking, AVX-512 kernels, its own threads) runs it at several times the speed LLVM gets from
the generic loop nest. Below `min-flops` (2*m*n*k) the loop nest stays: the call has a fixed
cost and small products vectorize well enough.

Input invariant: stage "bufferized" (linalg ops on memrefs with static shapes).
Output IR: the same, with each eligible `linalg.matmul` replaced by a `blas.gemm`:
- eligible: f32 or f64 in all three operands, every operand 2-D with unit stride in its last
  dimension (the identity layout, or a strided one like a row slice of a matrix);
- the zero fill of the output right before the matmul becomes `beta = 0` when nothing between
  touches the output's buffer; otherwise `beta = 1`;
- an operand that is a transposed copy is replaced by the copy's source with the gemm's
  transpose flag (the backward pass's `x^T @ dy` and `dy @ W^T` make no transposed copy);
- a batched matmul `linalg.generic` of at least `min-flops` becomes an `scf.for` nest over the
  batch dimensions calling `blas.gemm` on 2-D subviews.
Anything else (integer matmuls, f16/bf16 contractions which are generics, contractions of
other shapes or bodies) is left to convert-linalg-to-parallel-loops. A linalg.matmul or
linalg.generic on tensors is outside the contract: a located error (run bufferize first).
Details: docs/design/cpu-pipeline.md, "irgrad/lowering/loops/linalg_to_blas.py".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    TensorType,
)
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.passes import ModulePass

from irgrad.diagnostics import PassError
from irgrad.dialects.blas import GemmOp, unit_strides_last
from irgrad.lowering.ir_queries import root

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
    and `user` except by `deallocs` (the deallocs there of the source or of the buffer it
    views, which the caller moves after the op that now reads the source)."""
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
    base = root(source)  # a view's buffer (a collapse_shape of a fresh transpose) is freed by its root
    deallocs = [op for op in between if isinstance(op, memref.DeallocOp) and op.memref in (source, base)]
    rest = [op for op in between if op not in deallocs]
    if touches(rest, base, writes_only=True) or touches(rest, operand, writes_only=True):
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



# ---------------------------------------------------------------------------------------------
# Batched matmuls: a generic (b..., m, n, k) -> an scf.for nest of gemms on 2-D subviews
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BatchedOperand:
    """How one operand of a batched matmul is sliced: for each of its leading (batch)
    dimensions, either the C batch position whose index it takes, or a constant index."""

    value: SSAValue
    positions: tuple[int | None, ...]  # C batch position, or None for a constant index
    constants: tuple[int, ...]  # the constant index where `positions` has None (else 0)
    transposed: bool


@dataclass(frozen=True)
class BatchedMatmul:
    """A batched-matmul generic, as sliced operands and C's batch sizes."""

    a: BatchedOperand
    b: BatchedOperand
    c: BatchedOperand
    batch_sizes: tuple[int, ...]  # C's leading dimensions, in order
    m: int
    n: int
    k: int

    @property
    def flops(self) -> int:
        total = 2 * self.m * self.n * self.k
        for size in self.batch_sizes:
            total *= size
        return total


MIN_GEMM_FLOPS = 4096
"""A batched product becomes gemm calls only when each call does at least this much (16^3)."""


def is_strided_blas_memref(t: Attribute) -> bool:
    """An f32/f64 memref of rank >= 2 with a static shape and static strides, the last 1."""
    return (
        isinstance(t, MemRefType)
        and isinstance(t.get_element_type(), Float32Type | Float64Type)
        and t.get_num_dims() >= 2
        and all(d >= 0 for d in t.get_shape())
        and unit_strides_last(t) is not None
    )


def is_multiply_accumulate(op: linalg.GenericOp, element: Attribute) -> bool:
    """The body is exactly `yield acc + a * b` (mulf then addf, either operand order), on
    block arguments (a, b, acc) of the element type."""
    block: Block = op.body.block
    if len(block.args) != 3 or any(arg.type != element for arg in block.args):
        return False
    a, b, acc = block.args
    ops = list(block.ops)
    if len(ops) != 3:
        return False
    mul, add, yielded = ops
    return (
        isinstance(mul, arith.MulfOp)
        and {id(mul.lhs), id(mul.rhs)} == {id(a), id(b)}
        and isinstance(add, arith.AddfOp)
        and {id(add.lhs), id(add.rhs)} == {id(acc), id(mul.result)}
        and isinstance(yielded, linalg.YieldOp)
        and len(yielded.operands) == 1
        and yielded.operands[0] is add.result
    )


def batched_matmul(op: linalg.GenericOp) -> BatchedMatmul | None:
    """The batched matmul `op` computes, or None when it is not one `blas.gemm` can run.

    C's map must be the loop dims other than k, each once, ending in (m, n); its leading
    dims are the batch. A and B end in (m, k) / (k, n) (or transposed), and each of their
    leading dims is read at a batch loop's index (same size as C's) or at a constant.
    """
    if len(op.inputs) != 2 or len(op.outputs) != 1 or op.res:
        return None
    values = [op.inputs[0], op.inputs[1], op.outputs[0]]
    types = [v.type for v in values]
    if not all(is_strided_blas_memref(t) for t in types):
        return None
    element = types[0].get_element_type()  # type: ignore[union-attr]
    if any(t.get_element_type() != element for t in types):  # type: ignore[union-attr]
        return None
    maps = [m.data for m in op.indexing_maps.data if isinstance(m, AffineMapAttr)]
    if len(maps) != 3 or any(m.num_symbols != 0 for m in maps):
        return None
    loops = maps[2].num_dims
    iterators = [it.data for it in op.iterator_types.data]
    reductions = [d for d, it in enumerate(iterators) if it == IteratorType.REDUCTION]
    if len(iterators) != loops or len(reductions) != 1:
        return None
    if any(it not in (IteratorType.PARALLEL, IteratorType.REDUCTION) for it in iterators):
        return None
    (k_dim,) = reductions
    c_map = maps[2]
    if not all(isinstance(e, AffineDimExpr) for e in c_map.results):
        return None
    c_dims = [e.position for e in c_map.results]  # type: ignore[union-attr]
    if sorted(c_dims) != [d for d in range(loops) if d != k_dim] or len(c_dims) < 3:
        return None
    batch = len(c_dims) - 2
    batch_dims, (m_dim, n_dim) = c_dims[:batch], c_dims[batch:]
    c_shape = types[2].get_shape()  # type: ignore[union-attr]
    batch_sizes = tuple(c_shape[:batch])
    m, n = c_shape[batch:]
    a_shape, b_shape = (t.get_shape() for t in types[:2])  # type: ignore[union-attr]

    def operand(index: int, rows: int, cols: int) -> BatchedOperand | None:
        """Operand `index`, whose matrix is indexed (rows, cols), or (cols, rows) transposed."""
        expr_map, shape = maps[index], types[index].get_shape()  # type: ignore[union-attr]
        if len(expr_map.results) != len(shape) or len(shape) < 2:
            return None
        *lead, first, second = expr_map.results
        if not all(isinstance(e, AffineDimExpr) for e in (first, second)):
            return None
        pair = (first.position, second.position)  # type: ignore[union-attr]
        if pair == (rows, cols):
            transposed = False
        elif pair == (cols, rows):
            transposed = True
        else:
            return None
        positions: list[int | None] = []
        constants: list[int] = []
        for e, size in zip(lead, shape[: len(lead)]):
            if isinstance(e, AffineDimExpr) and e.position in batch_dims:
                position = batch_dims.index(e.position)
                if position in positions or size != batch_sizes[position]:
                    return None
                positions.append(position)
                constants.append(0)
            elif isinstance(e, AffineConstantExpr) and 0 <= e.value < size:
                positions.append(None)
                constants.append(e.value)
            else:
                return None
        return BatchedOperand(values[index], tuple(positions), tuple(constants), transposed)

    a = operand(0, m_dim, k_dim)
    b = operand(1, k_dim, n_dim)
    c = operand(2, m_dim, n_dim)
    if a is None or b is None or c is None or c.transposed:
        return None
    k = a_shape[-2] if a.transposed else a_shape[-1]
    a_m = a_shape[-1] if a.transposed else a_shape[-2]
    b_k, b_n = (b_shape[-1], b_shape[-2]) if b.transposed else (b_shape[-2], b_shape[-1])
    if (a_m, b_k, b_n) != (m, k, n):
        return None
    if not is_multiply_accumulate(op, element):
        return None
    return BatchedMatmul(a, b, c, batch_sizes, m, n, k)


def matrix_subview(
    operand: BatchedOperand, ivs: list[SSAValue | None]
) -> tuple[SSAValue, list[Operation]]:
    """The 2-D matrix of `operand` at batch indices `ivs` (a loop variable per C batch
    position, None where that dimension has size 1), as a rank-reducing `memref.subview`
    whose type keeps the source's last two strides (offset `?` when an index is dynamic);
    the operand itself when it is 2-D."""
    value = operand.value
    t = value.type
    assert isinstance(t, MemRefType)
    if not operand.positions:
        return value, []
    shape = t.get_shape()
    strides = unit_strides_last(t)
    assert strides is not None
    source_offset = t.get_offset()
    offsets: list[SSAValue | int] = []
    for position, constant in zip(operand.positions, operand.constants):
        iv = ivs[position] if position is not None else None
        offsets.append(iv if iv is not None else constant)
    offsets += [0, 0]
    static_offset: int | None = source_offset
    for offset, stride in zip(offsets, strides):
        if not isinstance(offset, int):
            static_offset = None
            break
        if static_offset is not None:
            static_offset += offset * stride
    lead = len(operand.positions)
    result_type = MemRefType(
        t.get_element_type(),
        shape[lead:],
        StridedLayoutAttr(strides[lead:], static_offset),
        t.memory_space,
    )
    subview = memref.SubviewOp.get(
        value, offsets, [1] * lead + list(shape[lead:]), [1] * len(shape), result_type
    )
    return subview.result, [subview]


def depends_on_loops(operand: BatchedOperand, ivs: list[SSAValue | None]) -> bool:
    return any(p is not None and ivs[p] is not None for p in operand.positions)


@dataclass
class BatchLoops:
    """An scf.for nest over batch dimensions, built empty: `before` (its constants, then the
    outermost loop) goes before the op it replaces; the caller fills `body` and ends it with
    scf.yield. Size-1 dimensions get no loop (`ivs` None there); with no loop at all, `body` is
    None and the work goes straight before the op."""

    before: list[Operation]
    ivs: list[SSAValue | None]
    body: Block | None

    def place(self, op: Operation, hoisted: Sequence[Operation], inner: Sequence[Operation]) -> None:
        """Put the nest before `op`: `hoisted` ahead of it, `inner` in its body."""
        block = op.parent
        assert block is not None
        if self.body is None:
            block.insert_ops_before([*self.before, *hoisted, *inner], op)
            return
        self.body.add_ops([*inner, scf.YieldOp()])
        constants, loop = self.before[:-1], self.before[-1]
        block.insert_ops_before([*constants, *hoisted, loop], op)


def batch_loops(sizes: Sequence[int]) -> BatchLoops:
    """The loop nest of `BatchLoops` over `sizes`."""
    index = IndexType()
    looped = [p for p, size in enumerate(sizes) if size != 1]
    ivs: list[SSAValue | None] = [None] * len(sizes)
    if not looped:
        return BatchLoops([], ivs, None)
    zero = arith.ConstantOp(IntegerAttr(0, index))
    one = arith.ConstantOp(IntegerAttr(1, index))
    before: list[Operation] = [zero, one]
    bodies: list[Block] = []
    loops: list[scf.ForOp] = []
    for position in looped:
        bound = arith.ConstantOp(IntegerAttr(sizes[position], index))
        before.append(bound)
        body = Block(arg_types=[index])
        ivs[position] = body.args[0]
        loops.append(scf.ForOp(zero.result, bound.result, one.result, [], body))
        bodies.append(body)
    for outer, loop in zip(bodies[:-1], loops[1:]):
        outer.add_ops([loop, scf.YieldOp()])
    return BatchLoops([*before, loops[0]], ivs, bodies[-1])


def emit_batched_gemm(op: linalg.GenericOp, matmul: BatchedMatmul, beta: float) -> None:
    """Replace `op` by an scf.for nest over C's batch dimensions (size-1 ones need no loop)
    calling blas.gemm on the 2-D subviews at each batch index."""
    nest = batch_loops(matmul.batch_sizes)
    hoisted: list[Operation] = []
    inner: list[Operation] = []
    views: list[SSAValue] = []
    for operand in (matmul.a, matmul.b, matmul.c):
        view, ops = matrix_subview(operand, nest.ivs)
        (inner if depends_on_loops(operand, nest.ivs) else hoisted).extend(ops)
        views.append(view)
    inner.append(
        GemmOp(
            views[0],
            views[1],
            views[2],
            beta=beta,
            transpose_a=matmul.a.transposed,
            transpose_b=matmul.b.transposed,
        )
    )
    nest.place(op, hoisted, inner)
    op.detach()
    op.erase()


@dataclass(frozen=True)
class ConvertLinalgToBlasPass(ModulePass):
    """Replace linalg.matmul on f32/f64 memrefs of at least `min_flops` by blas.gemm,
    folding the output's zero fill (beta = 0) and transposed operand copies (transpose flags);
    a batched-matmul linalg.generic of at least `min_flops` in all becomes an scf.for nest
    over its batch dimensions calling blas.gemm on 2-D subviews.

    Input invariant: stage "bufferized". Output IR: the same with blas.gemm ops.
    """

    name = "convert-linalg-to-blas"

    min_flops: int = 32768

    def __post_init__(self) -> None:
        if self.min_flops < 0:  # a ValueError: irgrad-opt reports it as a bad pass option
            raise ValueError(f"min_flops must be at least 0, got {self.min_flops}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for candidate in op.walk():
            if isinstance(candidate, linalg.MatmulOp | linalg.GenericOp) and (
                candidate.results or any(isinstance(v.type, TensorType) for v in candidate.operands)
            ):
                raise PassError("requires buffer semantics; run bufferize first", candidate)
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
                    erase_fill(dead_op)
                else:
                    erase_dead_copy(dead_op)
        generics = [g for g in op.walk() if isinstance(g, linalg.GenericOp)]
        for generic in generics:
            batched = batched_matmul(generic)
            # Each call costs about a microsecond: many tiny products stay loops.
            if batched is None or batched.flops < self.min_flops or 2 * batched.m * batched.n * batched.k < MIN_GEMM_FLOPS:
                continue
            fill = zero_fill_before(generic, generic.outputs[0])
            emit_batched_gemm(generic, batched, beta=0.0 if fill is not None else 1.0)
            if fill is not None:
                erase_fill(fill)


def erase_fill(fill: Operation) -> None:
    """Erase a folded zero fill, and its constant once nothing else uses it."""
    assert isinstance(fill, linalg.FillOp)
    value = fill.inputs[0].owner
    fill.detach()
    fill.erase()
    if isinstance(value, arith.ConstantOp) and not value.result.uses:
        value.detach()
        value.erase()
