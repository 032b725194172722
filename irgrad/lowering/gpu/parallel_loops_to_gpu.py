"""`convert-parallel-loops-to-gpu`: stage "loops" to `gpu.launch` kernels inside host code.

Input invariant: stage "loops" of docs/design/cpu-pipeline.md (for the GPU pipeline, made
with `convert-linalg-to-parallel-loops{reorder_reductions=false}`, so that every parallel
dimension of a linalg op is a dimension of its `scf.parallel`).

Output IR: stage "gpu" of docs/design/gpu-pipeline.md. Every function is host code with
`gpu.launch` ops; every load and store of device memory is inside a launch, except
host-level loads that host code needs (synchronous reads, rare). In short:
- An `scf.parallel` without reductions becomes one launch of ceil(N / b) blocks of b threads
  (b = `block-size`), its dimensions linearized row-major so loads coalesce; large loops run
  several points per thread (`points-per-thread`); reductions inside the body stay sequential
  per thread unless split (irgrad/lowering/gpu/split_reductions.py).
- An `scf.parallel` with `scf.reduce`, and an `scf.for` reduction nest of host code raised
  to one (irgrad/lowering/gpu/reductions.py), becomes a shared-memory tree reduction.
- A `memref.copy` between different layouts becomes a copy kernel.
- The rest of host code is placed by irgrad/lowering/gpu/placement.py.
A loop with no points disappears. A kernel body with an op that cannot run on the device
(an allocation, a call) is a located error.
Details: docs/design/gpu-pipeline.md, "irgrad/lowering/gpu/parallel_loops_to_gpu.py".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp, NoneAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from irgrad.diagnostics import PassError
from irgrad.lowering.gpu.common import (
    Emitter,
    build_launch,
    delinearize,
    global_thread_index,
    induction_values,
    work_type_for,
)
from irgrad.lowering.gpu.placement import kernel_op, place
from irgrad.lowering.gpu.scatter_loops import interchange_scatter_loops
from irgrad.lowering.gpu.split_reductions import split_parallel_reductions
from irgrad.lowering.gpu.reductions import (
    constant_int,
    lower_parallel_reduction,
    raise_reduction_nests,
    static_trip_counts,
)
from irgrad.lowering.loops.scf_parallel_to_scf import ParallelToForLowering

PASS = "convert-parallel-loops-to-gpu"
MAX_BLOCK_SIZE = 1024

AUTO_POINTS_PER_THREAD = 4
AUTO_MIN_POINTS = 1 << 20
"""`points-per-thread=0` (the default) runs 4 points per thread in straight-line loops of at
least 2^20 points, one elsewhere. Why: a thread of a streaming kernel has one load in flight
while it waits, too few bytes in flight to cover the memory latency at full bandwidth
(Little's law); four loads issued back to back quadruple it. Below 2^20 points launch latency
dominates, and four times fewer threads would leave SMs idle. Figures: docs/design/gpu-pipeline.md,
"Measurements moved from code comments"."""


def host_level(op: Operation) -> bool:
    """Whether `op` is in host code: inside no `scf.parallel` and no `gpu.launch`."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ParallelOp | gpu.LaunchOp):
            return False
        parent = parent.parent_op()
    return True


def serialize_parallel_loops(ops: list[scf.ParallelOp]) -> None:
    """Run `scf.parallel` loops as serial `scf.for` nests (outer loops first)."""
    for loop in ops:
        if loop.parent is not None:
            ParallelToForLowering().match_and_rewrite(loop, PatternRewriter(loop))


# ---------------------------------------------------------------------------------------------
# scf.parallel -> gpu.launch
# ---------------------------------------------------------------------------------------------


def _trip_count(e: Emitter, lb: SSAValue, ub: SSAValue, step: SSAValue) -> SSAValue:
    """max(0, ceil((ub - lb) / step)) on the host, for dynamic bounds."""
    span = e.add(arith.SubiOp(ub, lb))
    count = e.add(arith.CeilDivSIOp(span, step))
    return e.add(arith.MaxSIOp(count, e.index(0)))


def auto_points_per_thread(total: int) -> int:
    """Points per thread for a loop of `total` points under `points-per-thread=0`."""
    return AUTO_POINTS_PER_THREAD if total >= AUTO_MIN_POINTS else 1


def _straight_line(body: Block) -> bool:
    return all(not op.regions for op in body.ops)


def parallel_to_launch(op: scf.ParallelOp, block_size: int, points_per_thread: int = 0) -> None:
    """Replace an `scf.parallel` without reductions by a launch (module doc)."""
    parent = op.parent_block()
    assert parent is not None
    body = op.body.block
    # A parallel loop nested in the body runs serially in its thread.
    serialize_parallel_loops([p for p in body.walk() if isinstance(p, scf.ParallelOp)])
    _check_kernel_body(op)
    host = Emitter.before(op)
    counts = static_trip_counts(op)
    if counts is not None:
        total = math.prod(counts)
        if total == 0:
            parent.erase_op(op)
            return
        k = points_per_thread or auto_points_per_thread(total)
        if k > 1 and total % (k * block_size) == 0 and _straight_line(body):
            _coarsened_launch(op, host, counts, block_size, k)
            return
        threads = min(block_size, total)
        grid: int | SSAValue = -(-total // threads)
        block: int | SSAValue = threads
        guarded = total % threads != 0
        work = work_type_for(total + threads)
        sizes: list[int | SSAValue] = list(counts)
        bound: int | SSAValue = total
    else:
        sizes = [
            _trip_count(host, lb, ub, step)
            for lb, ub, step in zip(op.lowerBound, op.upperBound, op.step, strict=True)
        ]
        bound = sizes[0]
        for size in sizes[1:]:
            bound = host.muli(bound, size)  # type: ignore[arg-type]
        b = host.index(block_size)
        blocks = host.add(arith.CeilDivSIOp(bound, b))  # type: ignore[arg-type]
        grid = host.add(arith.MaxSIOp(blocks, host.index(1)))
        block = block_size
        guarded = True
        work = IndexType()

    def fill(e: Emitter, launch_body: Block) -> None:
        gid = global_thread_index(e, launch_body, work)
        inner = e
        if guarded:
            limit = e.const(bound, work) if isinstance(bound, int) else e.cast(bound, work)
            inner = Emitter.before(e.if_(e.cmpi("ult", gid, limit)).last_op)  # type: ignore[arg-type]
        if all(isinstance(s, int) for s in sizes):
            indices = delinearize(inner, gid, sizes, work)  # type: ignore[arg-type]
        else:
            indices = _delinearize_dynamic(inner, gid, sizes)
        for arg, value in zip(body.args, induction_values(inner, indices, op.lowerBound, op.step)):
            arg.replace_all_uses_with(value)
        for inner_op in list(body.ops):
            if isinstance(inner_op, scf.ReduceOp):
                break
            inner_op.detach()
            inner.add(inner_op)

    build_launch(host, grid, block, fill)
    parent.erase_op(op)


def _delinearize_dynamic(e: Emitter, linear: SSAValue, sizes: list[int | SSAValue]) -> list[SSAValue]:
    indices: list[SSAValue] = []
    rest = e.cast(linear, IndexType())
    for k in range(len(sizes) - 1, -1, -1):
        size = sizes[k]
        n = e.index(size) if isinstance(size, int) else size
        if k == 0:
            indices.append(rest)
            break
        indices.append(e.add(arith.RemUIOp(rest, n)))
        rest = e.add(arith.DivUIOp(rest, n))
    return list(reversed(indices))


def _check_kernel_body(op: Operation) -> None:
    for inner in op.walk():
        if inner is op:
            continue
        if not kernel_op(inner):
            raise PassError(
                f"cannot run inside a GPU kernel ({PASS} maps this parallel loop to one)",
                inner,
            )


# ---------------------------------------------------------------------------------------------
# Copies
# ---------------------------------------------------------------------------------------------


def is_contiguous_type(t: Attribute) -> bool:
    """An identity-layout memref (bare pointers: its elements are packed row-major)."""
    return isinstance(t, MemRefType) and isinstance(t.layout, NoneAttr)


def copy_to_loops(op: memref.CopyOp) -> None:
    """A `memref.copy` between layouts as an elementwise `scf.parallel` (or, for rank 0, a
    load and a store that placement puts into a kernel)."""
    source, target = op.source, op.destination
    t = source.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    e = Emitter.before(op)
    if not shape:
        e.add(memref.StoreOp.get(e.add(memref.LoadOp.get(source, [])), target, []))
    elif math.prod(shape) > 0:
        body = Block(arg_types=[IndexType()] * len(shape))
        inner = Emitter.at_end(body)
        value = inner.add(memref.LoadOp.get(source, list(body.args)))
        inner.add(memref.StoreOp.get(value, target, list(body.args)))
        inner.add(scf.ReduceOp())
        zero, one = e.index(0), e.index(1)
        e.add(
            scf.ParallelOp(
                [zero] * len(shape), [e.index(n) for n in shape], [one] * len(shape), Region(body)
            )
        )
    block = op.parent_block()
    assert block is not None
    block.erase_op(op)


def _coarsened_launch(op: scf.ParallelOp, host: Emitter, counts: list[int], block: int, k: int) -> None:
    """`k` points per thread: thread g runs points g, g + T, ..., g + (k-1) T (T = N / k, so
    each of its loads is coalesced across a warp), with the straight-line body emitted op by
    op for the k points in turn: the k loads of an operand are issued back to back, k loads
    in flight per thread instead of one. Reordering memory accesses between points is what
    scf.parallel allows (its iterations are independent)."""
    body = op.body.block
    total = math.prod(counts)
    stride = total // k
    work = work_type_for(total + block)

    def fill(e: Emitter, launch_body: Block) -> None:
        gid = global_thread_index(e, launch_body, work)
        mappers: list[dict[SSAValue, SSAValue]] = []
        for j in range(k):
            linear = gid if j == 0 else e.addi(gid, e.const(j * stride, work))
            values = induction_values(e, delinearize(e, linear, counts, work), op.lowerBound, op.step)
            mappers.append(dict(zip(body.args, values)))
        for inner_op in body.ops:
            if isinstance(inner_op, scf.ReduceOp):
                break
            for mapper in mappers:
                e.add(inner_op.clone(value_mapper=mapper))

    build_launch(host, stride // block, block, fill)
    parent = op.parent_block()
    assert parent is not None
    parent.erase_op(op)


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


def convert_function(
    function: func.FuncOp, block_size: int, points_per_thread: int = 0, split_reductions: bool = True
) -> None:
    if not function.body.blocks:
        return
    interchange_scatter_loops(function)
    if split_reductions:
        split_parallel_reductions(function)
    raise_reduction_nests(function, host_level)
    for op in list(function.walk()):
        if isinstance(op, memref.CopyOp) and host_level(op):
            same = op.source.type == op.destination.type
            if not (same and is_contiguous_type(op.source.type)):
                copy_to_loops(op)
    for op in list(function.walk()):
        if not isinstance(op, scf.ParallelOp) or op.parent is None or not host_level(op):
            continue
        if not op.initVals:
            parallel_to_launch(op, block_size, points_per_thread)
        elif not lower_parallel_reduction(op, block_size):
            # Dynamic bounds: a serial loop, run by placement in a one-thread kernel.
            serialize_parallel_loops([op])
    place(function)


@dataclass(frozen=True)
class ConvertParallelLoopsToGpuPass(ModulePass):
    """Map scf.parallel nests to gpu.launch kernels (linearized, blocks x threads), reductions
    to shared-memory tree kernels, other device work to one-thread kernels.

    Input invariant: stage "loops". Output IR: stage "gpu" (docs/design/gpu-pipeline.md):
    host code with gpu.launch ops that hold every device load and store.
    """

    name = "convert-parallel-loops-to-gpu"

    block_size: int = 256

    points_per_thread: int = 0
    """Points of a large straight-line loop each thread runs, their loads issued together
    (applies where the points divide evenly into blocks; 1: one point per thread; 0: 4 for
    loops of 2^20 points or more, else 1, see AUTO_MIN_POINTS)."""

    split_reductions: bool = True
    """Split each output's reduction loop into chunks run in parallel where the outputs are too
    few to fill the device (irgrad/lowering/gpu/split_reductions.py)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not 1 <= self.block_size <= MAX_BLOCK_SIZE:
            raise PassError(
                f"{PASS}: block-size must be between 1 and {MAX_BLOCK_SIZE}, got {self.block_size}"
            )
        if not 0 <= self.points_per_thread <= 16:
            raise PassError(
                f"{PASS}: points-per-thread must be between 0 (automatic) and 16, got {self.points_per_thread}"
            )
        for function in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            convert_function(function, self.block_size, self.points_per_thread, self.split_reductions)


__all__ = ["ConvertParallelLoopsToGpuPass", "auto_points_per_thread", "convert_function", "parallel_to_launch"]
