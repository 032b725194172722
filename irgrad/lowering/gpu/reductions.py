"""Reductions on the GPU: `scf.for` reduction nests raised to `scf.parallel` with
`scf.reduce`, and such loops run as a shared-memory tree reduction over two kernels.

Why a tree, not atomics: the combining function is whatever region the `scf.reduce` holds
(sum, product, max/min with NaN propagation, bitwise, on any element type, bf16 and i1
included), and a tree applies it as it is, in a fixed order, so a result does not change
from run to run; atomics exist for a few operations and types only and add in whatever
order the threads arrive.

Raising: stage "loops" computes a full reduction on the host side of any `scf.parallel`, as an
`scf.for` nest whose accumulator's only use is the combining op. When that op is associative
and commutative (COMBINERS) the nest becomes `scf.parallel ... { scf.reduce(f(%i)) { combine } }`
(up to the rounding of float sums in another order); anything else stays serial.

The tree, for N points and block size b: kernel 1 has G = min(N, b*b) threads fold strided
points into registers and each block reduce them in shared memory to one partial; kernel 2
(when there is more than one block) reduces the partials and stores combine(init, total).
Details: docs/design/gpu-pipeline.md, "irgrad/lowering/gpu/reductions.py".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from irgrad.lowering.gpu.common import (
    constant_int,
    induction_values,
    BLOCK_ID_X,
    SHARED_MEMORY_SPACE,
    THREAD_ID_X,
    Emitter,
    build_launch,
    delinearize,
    global_thread_index,
    work_type_for,
)

COMBINERS: tuple[type[Operation], ...] = (
    arith.AddfOp,
    arith.MulfOp,
    arith.MaximumfOp,
    arith.MinimumfOp,
    arith.MaxnumfOp,
    arith.MinnumfOp,
    arith.AddiOp,
    arith.MuliOp,
    arith.MaxSIOp,
    arith.MinSIOp,
    arith.MaxUIOp,
    arith.MinUIOp,
    arith.AndIOp,
    arith.OrIOp,
    arith.XOrIOp,
)
"""Associative and commutative combining ops: their reductions may run in any order."""

_NOT_IN_REDUCTION_BODY = (
    memref.StoreOp,
    memref.CopyOp,
    memref.AllocOp,
    memref.AllocaOp,
    memref.DeallocOp,
    scf.ParallelOp,
    gpu.LaunchOp,
)


# ---------------------------------------------------------------------------------------------
# Raising scf.for reduction nests
# ---------------------------------------------------------------------------------------------


def match_reduction_nest(loop: scf.ForOp) -> tuple[list[scf.ForOp], Operation] | None:
    """The loops of the reduction nest rooted at `loop` and its combining op, or None."""
    loops: list[scf.ForOp] = []
    current = loop
    while True:
        if len(current.iter_args) != 1 or not isinstance(current.lb.type, IndexType):
            return None
        loops.append(current)
        body = current.body.block
        acc = body.args[1]
        ops = list(body.ops)
        inner = ops[0] if len(ops) == 2 and isinstance(ops[0], scf.ForOp) else None
        if (
            inner is not None
            and inner.iter_args[0] is acc
            and acc.uses.get_length() == 1
            and ops[1].operands[0] is inner.results[0]
        ):
            current = inner
            continue
        break
    ivs = {l.body.block.args[0] for l in loops}
    for l in loops[1:]:
        if any(v in ivs for v in (l.lb, l.ub, l.step)):
            return None  # not rectangular
    body = loops[-1].body.block
    acc = body.args[1]
    terminator = body.last_op
    assert terminator is not None
    combine = terminator.operands[0].owner
    if (
        not isinstance(combine, COMBINERS)
        or combine.parent_block() is not body
        or acc.uses.get_length() != 1
        or next(iter(acc.uses)).operation is not combine
        or combine.results[0].uses.get_length() != 1
    ):
        return None
    for op in body.walk():
        if isinstance(op, _NOT_IN_REDUCTION_BODY) or op.name == "func.call":
            return None
    return loops, combine


def raise_reduction_nest(loops: list[scf.ForOp], combine: Operation) -> scf.ParallelOp:
    """Replace the nest by the equivalent `scf.parallel` with one `scf.reduce`."""
    outer = loops[0]
    innermost = loops[-1].body.block
    acc = innermost.args[1]
    value = next(v for v in combine.operands if v is not acc)

    body = Block(arg_types=[IndexType()] * len(loops))
    for loop, arg in zip(loops, body.args):
        loop.body.block.args[0].replace_all_uses_with(arg)
    terminator = innermost.last_op
    for op in list(innermost.ops):
        if op is combine or op is terminator:
            continue
        op.detach()
        body.add_op(op)

    reduction = Block(arg_types=[acc.type, acc.type])
    mapper: dict[SSAValue, SSAValue] = {acc: reduction.args[0], value: reduction.args[1]}
    combined = combine.clone(value_mapper=mapper)
    reduction.add_op(combined)
    reduction.add_op(scf.ReduceReturnOp(combined.results[0]))
    body.add_op(scf.ReduceOp([value], [Region(reduction)]))

    parallel = scf.ParallelOp(
        [l.lb for l in loops],
        [l.ub for l in loops],
        [l.step for l in loops],
        Region(body),
        [outer.iter_args[0]],
    )
    block = outer.parent_block()
    assert block is not None
    block.insert_op_before(parallel, outer)
    outer.results[0].replace_all_uses_with(parallel.results[0])
    # The moved body no longer uses the combine; drop the old nest from the inside out.
    combine.results[0].replace_all_uses_with(acc)
    block.erase_op(outer)
    return parallel


def raise_reduction_nests(root: Operation, is_host: Callable[[Operation], bool]) -> int:
    """Raise every matching nest whose loop `is_host(loop)`; returns how many."""
    count = 0
    for op in list(root.walk()):
        if not isinstance(op, scf.ForOp) or op.parent is None or not is_host(op):
            continue
        match = match_reduction_nest(op)
        if match is not None:
            raise_reduction_nest(*match)
            count += 1
    return count


# ---------------------------------------------------------------------------------------------
# The tree reduction
# ---------------------------------------------------------------------------------------------


def static_trip_counts(op: scf.ParallelOp) -> list[int] | None:
    counts: list[int] = []
    for lb, ub, step in zip(op.lowerBound, op.upperBound, op.step, strict=True):
        l, u, s = constant_int(lb), constant_int(ub), constant_int(step)
        if l is None or u is None or s is None or s <= 0:
            return None
        counts.append(max(0, -(-(u - l) // s)))
    return counts


def power_of_two_at_most(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def next_power_of_two(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


class _Combiner:
    """Applies the `scf.reduce` regions of a loop (cloned where they are used)."""

    def __init__(self, reduce_op: scf.ReduceOp):
        self.regions = list(reduce_op.reductions)

    def __call__(self, e: Emitter, k: int, a: SSAValue, b: SSAValue) -> SSAValue:
        block = self.regions[k].block
        mapper: dict[SSAValue, SSAValue] = {block.args[0]: a, block.args[1]: b}
        result: SSAValue | None = None
        for op in block.ops:
            if isinstance(op, scf.ReduceReturnOp):
                result = mapper.get(op.result, op.result)
                break
            e.add(op.clone(value_mapper=mapper))
        assert result is not None
        return result


def _shared(e: Emitter, size: int, t: Attribute) -> SSAValue:
    space = IntegerAttr(SHARED_MEMORY_SPACE, i64)
    return e.add(memref.AllocaOp.get(t, shape=[size], memory_space=space))


def _tree(
    e: Emitter,
    combiner: _Combiner,
    shared: Sequence[SSAValue],
    tid: SSAValue,
    live: SSAValue,
    size: int,
) -> None:
    """Halve the live prefix of each shared array until element 0 holds the total.

    Barriers sit at the top level of the kernel (every thread reaches them); the last step
    needs none, as only thread 0 reads the result and it wrote it itself."""
    s = size // 2
    while s >= 1:
        stride = e.const(s, tid.type)
        partner = e.addi(tid, stride)
        active = e.andi(e.cmpi("ult", tid, stride), e.cmpi("ult", partner, live))
        then = Emitter.before(e.if_(active).last_op)  # type: ignore[arg-type]
        i = then.cast(tid, IndexType())
        j = then.cast(partner, IndexType())
        for k, buffer in enumerate(shared):
            a = then.add(memref.LoadOp.get(buffer, [i]))
            b = then.add(memref.LoadOp.get(buffer, [j]))
            then.add(memref.StoreOp.get(combiner(then, k, a, b), buffer, [i]))
        if s > 1:
            e.add(gpu.BarrierOp())
        s //= 2


def lower_parallel_reduction(op: scf.ParallelOp, block_size: int) -> bool:
    """Replace an `scf.parallel` with reductions by the tree (module doc); False (and no
    change) when its trip counts are not static."""
    counts = static_trip_counts(op)
    if counts is None:
        return False
    parent = op.parent_block()
    assert parent is not None
    total = math.prod(counts)
    inits = list(op.initVals)
    if total == 0:
        for result, init in zip(op.results, inits):
            result.replace_all_uses_with(init)
        parent.erase_op(op)
        return True

    body = op.body.block
    reduce_op = body.last_op
    assert isinstance(reduce_op, scf.ReduceOp)
    combiner = _Combiner(reduce_op)
    types = [v.type for v in inits]
    block = min(power_of_two_at_most(block_size), next_power_of_two(total))
    threads = min(total, block * block)
    blocks = -(-threads // block)

    host = Emitter.before(op)
    results = [host.add(memref.AllocOp.get(t, shape=[])) for t in types]
    partials = [host.add(memref.AllocOp.get(t, shape=[blocks])) for t in types] if blocks > 1 else []

    def point_values(e: Emitter, linear: SSAValue, work: Attribute) -> list[SSAValue]:
        """The loop body at linear index `linear`: its reduced values."""
        indices = delinearize(e, linear, counts, work)
        values = induction_values(e, indices, op.lowerBound, op.step)
        mapper: dict[SSAValue, SSAValue] = dict(zip(body.args, values))
        for inner in body.ops:
            if inner is reduce_op:
                break
            e.add(inner.clone(value_mapper=mapper))
        return [mapper.get(v, v) for v in reduce_op.args]

    def finish(e: Emitter, tid: SSAValue, shared: list[SSAValue]) -> None:
        """Thread 0: result = combine(init, total), the total being shared[0]."""
        then = Emitter.before(e.if_(e.cmpi("eq", tid, e.const(0, tid.type))).last_op)  # type: ignore[arg-type]
        zero = then.index(0)
        for k, (buffer, init, result) in enumerate(zip(shared, inits, results)):
            total_k = then.add(memref.LoadOp.get(buffer, [zero]))
            then.add(memref.StoreOp.get(combiner(then, k, init, total_k), result, []))

    def first_kernel(e: Emitter, launch_body: Block) -> None:
        work = work_type_for(total + threads)
        gid = global_thread_index(e, launch_body, work)
        tid = e.cast(launch_body.args[THREAD_ID_X], work)
        shared = [_shared(e, block, t) for t in types]
        then = Emitter.before(e.if_(e.cmpi("ult", gid, e.const(threads, work))).last_op)  # type: ignore[arg-type]
        # Fold f(gid), f(gid + G), ... : the first point starts the accumulator (selects
        # keep the loop body in one copy; the combine of the placeholder is discarded).
        loop_body = Block(arg_types=[IndexType(), *types])
        lb = then.cast(gid, IndexType())
        zeros = [_placeholder(then, t) for t in types]
        loop = scf.ForOp(lb, then.index(total), then.index(threads), zeros, Region(loop_body))
        then.add(loop)
        le = Emitter.at_end(loop_body)
        j = loop_body.args[0]
        first = le.cmpi("eq", j, lb)
        values = point_values(le, le.cast(j, work), work)
        folded = [
            le.add(arith.SelectOp(first, v, combiner(le, k, acc, v)))
            for k, (acc, v) in enumerate(zip(loop_body.args[1:], values))
        ]
        le.add(scf.YieldOp(*folded))
        index = then.cast(tid, IndexType())
        for buffer, value in zip(shared, loop.results):
            then.add(memref.StoreOp.get(value, buffer, [index]))
        e.add(gpu.BarrierOp())
        block_id = e.cast(launch_body.args[BLOCK_ID_X], work)
        remaining = e.add(
            arith.SubiOp(e.const(threads, work), e.muli(block_id, e.const(block, work)))
        )
        live = e.add(arith.MinSIOp(remaining, e.const(block, work)))
        _tree(e, combiner, shared, tid, live, block)
        if blocks == 1:
            finish(e, tid, shared)
            return
        then = Emitter.before(e.if_(e.cmpi("eq", tid, e.const(0, work))).last_op)  # type: ignore[arg-type]
        index = then.cast(block_id, IndexType())
        zero = then.index(0)
        for s, partial in zip(shared, partials):
            then.add(memref.StoreOp.get(then.add(memref.LoadOp.get(s, [zero])), partial, [index]))

    def second_kernel(e: Emitter, launch_body: Block) -> None:
        size = next_power_of_two(blocks)
        tid = e.cast(launch_body.args[THREAD_ID_X], work_type_for(blocks))
        shared = [_shared(e, size, t) for t in types]
        live = e.const(blocks, tid.type)
        then = Emitter.before(e.if_(e.cmpi("ult", tid, live)).last_op)  # type: ignore[arg-type]
        index = then.cast(tid, IndexType())
        for s, partial in zip(shared, partials):
            then.add(memref.StoreOp.get(then.add(memref.LoadOp.get(partial, [index])), s, [index]))
        e.add(gpu.BarrierOp())
        _tree(e, combiner, shared, tid, live, size)
        finish(e, tid, shared)

    build_launch(host, blocks, block, first_kernel)
    if blocks > 1:
        build_launch(host, 1, next_power_of_two(blocks), second_kernel)
        for partial in partials:
            host.add(memref.DeallocOp.get(partial))
    for result, buffer in zip(op.results, results):
        result.replace_all_uses_with(host.add(memref.LoadOp.get(buffer, [])))
    terminator = parent.last_op
    assert terminator is not None
    for buffer in results:
        parent.insert_op_before(memref.DeallocOp.get(buffer), terminator)
    parent.erase_op(op)
    return True


def _placeholder(e: Emitter, t: Attribute) -> SSAValue:
    """Any value of type `t`: the accumulator before the first point (never used)."""
    if isinstance(t, AnyFloat):
        return e.add(arith.ConstantOp(FloatAttr(0.0, t)))
    return e.add(arith.ConstantOp(IntegerAttr(0, t)))


__all__ = [
    "COMBINERS",
    "lower_parallel_reduction",
    "match_reduction_nest",
    "raise_reduction_nest",
    "raise_reduction_nests",
    "static_trip_counts",
]
