"""Few long reductions on the GPU: each output's reduction loop split into chunks that run in
parallel, then combined per output, so a column sum uses the whole device.

Stage "loops" runs a linalg reduction whose parallel dimensions are small (a bias gradient, a
few logits' columns) as one `scf.parallel` point per output element, each running the whole
reduction `scf.for`: few threads, each with a long chain of loads. Split into S chunks, a
first `scf.parallel` over (chunk, output) writes S partial results per output, and the original
loop then reduces the S partials in order.

S = min(K / MIN_CHUNK, ceil(TARGET_THREADS / P)) for P output points and K iterations, applied
where S >= 2 and K >= MIN_SPLIT_TRIPS (a shorter loop costs less than the launch the split
adds). The chunk index is the outer dimension, so loads stay coalesced. The order of the
combination is fixed, so results are reproducible, but it is not the serial order: sums and
products round differently (max and min are exact), as with the CPU's scf-split-reductions.

Applies to an `scf.parallel` without reductions whose dimensions start at 0 with step 1 and
have constant sizes, whose body holds, at its top level, one `scf.for` with constant bounds
carrying one float value combined by one `arith.addf` / `mulf` / `maximumf` / `minimumf`
(split_reductions' recognizer), and no op before that loop that writes memory (they are
cloned into the first loop). Anything else is left as it is.
Details: docs/design/gpu-pipeline.md, "irgrad/lowering/gpu/split_reductions.py".
"""

from __future__ import annotations

import math

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from irgrad.lowering.loops.scf_split_reductions import (
    COMBINER_IDENTITY,
    constant_index as _constant,
    reduction_combiner,
)

TARGET_THREADS = 1 << 16
"""Threads the split aims at: a few per SM lane of a large GPU (132 SMs x 2048 threads is
270k resident; 64k keeps enough loads in flight for a memory-bound sum)."""

MIN_CHUNK = 16
"""The fewest iterations a chunk keeps (below that, the second pass and the buffer cost more
than the parallelism gains)."""


def _index(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def _writes_memory(op: Operation) -> bool:
    return any(isinstance(inner, memref.StoreOp | memref.CopyOp | memref.AllocOp | memref.DeallocOp) for inner in op.walk())


def _candidate(parallel: scf.ParallelOp) -> tuple[scf.ForOp, Operation, list[int], int] | None:
    """(the reduction loop, its combiner, the parallel sizes, its trip count) if `parallel`
    qualifies (see the module docstring)."""
    if parallel.initVals:
        return None
    sizes = []
    for lb, ub, step in zip(parallel.lowerBound, parallel.upperBound, parallel.step):
        if _constant(lb) != 0 or _constant(step) != 1 or _constant(ub) is None:
            return None
        sizes.append(_constant(ub))
    body = parallel.body.block
    loops = [op for op in body.ops if isinstance(op, scf.ForOp)]
    if len(loops) != 1:
        return None
    loop = loops[0]
    combiner = reduction_combiner(loop)
    lb, ub, step = _constant(loop.lb), _constant(loop.ub), _constant(loop.step)
    if combiner is None or lb is None or ub is None or step is None or step <= 0:
        return None
    for op in body.ops:
        if op is loop:
            break
        if _writes_memory(op) or op.regions:
            return None
    return loop, combiner, sizes, max(0, -(-(ub - lb) // step))


MIN_SPLIT_TRIPS = 2048
"""The shortest reduction that is split. Why: the split costs a kernel launch (its combining
pass), while a thread's serial loop is cheap per iteration, so short reductions (a bias
gradient over a small batch) run slower split; from about 2048 iterations the serial loop is
worth a launch, and a column sum over tens of thousands of rows gains far more.
Figures: docs/design/gpu-pipeline.md, "Measurements moved from code comments"."""


def split_count(points: int, trips: int) -> int:
    """The chunks S a reduction of `trips` iterations at each of `points` outputs is split into
    (1: not split)."""
    if points <= 0 or trips < MIN_SPLIT_TRIPS:
        return 1
    return max(1, min(trips // MIN_CHUNK, math.ceil(TARGET_THREADS / points)))


def _split(parallel: scf.ParallelOp, loop: scf.ForOp, combiner: Operation, sizes: list[int], chunks: int) -> None:
    body = parallel.body.block
    element = loop.iter_args[0].type
    lb, ub, step = (_constant(v) for v in (loop.lb, loop.ub, loop.step))
    assert lb is not None and ub is not None and step is not None
    trips = -(-(ub - lb) // step)
    chunk = -(-trips // chunks)
    chunks = -(-trips // chunk)  # no empty chunk: 2100 rows are 124 chunks of 17, not 131
    partial_type = MemRefType(element, [chunks, *sizes])
    alloc = memref.AllocOp([], [], partial_type)
    zero, one, upper_c = _index(0), _index(1), _index(chunks)
    uppers = [_index(s) for s in sizes]
    Rewriter.insert_op([alloc, zero, one, upper_c, *uppers], InsertPoint.before(parallel))

    # Phase 1: (c, i...) -> partial[c, i...], chunk c of the reduction from the identity.
    first = Block(arg_types=[IndexType()] * (1 + len(sizes)))
    c = first.args[0]
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, first.args[1:]))
    for op in body.ops:
        if op is loop:
            break
        first.add_op(op.clone(value_mapper=mapping))
    span, base, stride, last = _index(chunk * step), _index(lb), _index(step), _index(ub)
    begin_offset = arith.MuliOp(c, span.result)
    begin = arith.AddiOp(base.result, begin_offset.result)
    end_raw = arith.AddiOp(begin.result, span.result)
    end = arith.MinSIOp(end_raw.result, last.result)
    identity = arith.ConstantOp(FloatAttr(COMBINER_IDENTITY[type(combiner)], element))
    first.add_ops([span, base, stride, last, begin_offset, begin, end_raw, end, identity])
    inner_loop = loop.clone(value_mapper=mapping)
    for k, value in enumerate([begin.result, end.result, stride.result, identity.result]):
        inner_loop.operands[k] = value
    first.add_op(inner_loop)
    first.add_op(memref.StoreOp.get(inner_loop.results[0], alloc.memref, [c, *first.args[1:]]))
    first.add_op(scf.ReduceOp())
    phase1 = scf.ParallelOp([zero] * (1 + len(sizes)), [upper_c, *uppers], [one] * (1 + len(sizes)), Region(first))
    Rewriter.insert_op(phase1, InsertPoint.before(parallel))

    # Phase 2: the original loop's reduction reads the chunks' results in order.
    combine = Block(arg_types=[IndexType(), element])
    load = memref.LoadOp.get(alloc.memref, [combine.args[0], *body.args])
    operands = [combine.args[1] if v is loop.body.block.args[1] else load.res for v in combiner.operands]
    new_combiner = combiner.clone()
    for k, v in enumerate(operands):
        new_combiner.operands[k] = v
    combine.add_ops([load, new_combiner, scf.YieldOp(new_combiner.results[0])])
    combine_loop = scf.ForOp(zero.result, upper_c.result, one.result, [loop.iter_args[0]], Region(combine))
    Rewriter.replace_op(loop, combine_loop)
    Rewriter.insert_op(memref.DeallocOp.get(alloc.memref), InsertPoint.after(parallel))


def split_parallel_reductions(root: Operation) -> None:
    """Split the reductions of every qualifying host-level `scf.parallel` under `root`."""
    for parallel in [op for op in root.walk() if isinstance(op, scf.ParallelOp)]:
        if parallel.parent is None or any(isinstance(p, scf.ParallelOp) for p in _ancestors(parallel)):
            continue
        found = _candidate(parallel)
        if found is None:
            continue
        loop, combiner, sizes, trips = found
        chunks = split_count(math.prod(sizes), trips)
        if chunks >= 2:
            _split(parallel, loop, combiner, sizes, chunks)


def _ancestors(op: Operation):
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()


__all__ = ["MIN_CHUNK", "MIN_SPLIT_TRIPS", "TARGET_THREADS", "split_count", "split_parallel_reductions"]
