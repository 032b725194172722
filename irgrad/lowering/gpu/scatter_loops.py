"""Scatter-add loops on the GPU: the serial loop over index positions moves inside the
parallel loop over the row it updates, so the whole scatter is one kernel.

Stage "loops" runs `nn.scatter_add` (irgrad/lowering/nn_to_linalg/indirect.py) as a host
`scf.for` over the index positions, carrying the result buffer in place; each iteration
reads its index and adds one row of updates through a temporary, so as it stands each
iteration is a kernel launch (and an allocation) from the host. Interchanged, it is one
kernel: a thread per row element, each running the positions in their order. Each thread
touches only its own element of each row, so every element sees its additions in exactly the
serial order: the result is bit for bit the serial loop's (no atomics, whose order would
vary from run to run).

The rewrite applies only where that argument holds, checked on the IR (one carried buffer
yielded unchanged, no other writes, the row read and written through the same view at the
loop's own induction variables); anything else is left as it was.

Rows too short to fill a warp get the other deterministic strategy when the work allows it
(at most OWNER_WORK position checks in all): a thread per element of the whole destination,
each scanning every position and adding those whose index is its own row.
Details: docs/design/gpu-pipeline.md, "irgrad/lowering/gpu/scatter_loops.py".
"""

from __future__ import annotations

import math

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.traits import is_side_effect_free

from irgrad.lowering.gpu.common import constant_int, may_alias, root

WARP = 32
"""Rows with fewer elements than this get a thread per destination element (module doc)."""
OWNER_WORK = 1 << 26
"""Most index checks (destination elements x positions) the thread-per-element form may do."""


def _same_view(a: Operation, b: Operation) -> bool:
    return (
        isinstance(a, memref.SubviewOp)
        and isinstance(b, memref.SubviewOp)
        and a.source is b.source
        and list(a.operands) == list(b.operands)
        and a.properties == b.properties
        and a.result.type == b.result.type
    )


def _defined_outside(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    holder = owner.parent_op() if isinstance(owner, Block) else owner
    while holder is not None:
        if holder is op:
            return False
        holder = holder.parent_op()
    return True


def _match(loop: scf.ForOp) -> tuple[list[Operation], scf.ParallelOp, Operation] | None:
    """(prefix ops, the row loop, the view copied into) when `loop` is a scatter loop in the
    shape the module doc describes, else None."""
    body = loop.body.block
    if len(loop.iter_args) != 1 or not isinstance(loop.iter_args[0].type, MemRefType):
        return None
    acc = body.args[1]
    ops = list(body.ops)
    if len(ops) < 6:
        return None
    *prefix, alloc, row_loop, view2, copy, dealloc, yield_ = ops
    if not (
        isinstance(alloc, memref.AllocOp)
        and isinstance(row_loop, scf.ParallelOp)
        and isinstance(copy, memref.CopyOp)
        and isinstance(dealloc, memref.DeallocOp)
        and isinstance(yield_, scf.YieldOp)
        and list(yield_.operands) == [acc]
        and not row_loop.initVals
        and copy.source is alloc.memref
        and copy.destination is view2.results[0]
        and dealloc.memref is alloc.memref
        and isinstance(view2, memref.SubviewOp)
        and view2.source is acc
    ):
        return None
    tmp = alloc.memref
    if {use.operation for use in tmp.uses} - {copy, dealloc} - set(row_loop.walk()):
        return None
    if not all(_defined_outside(v, loop) for v in (*row_loop.lowerBound, *row_loop.upperBound, *row_loop.step)):
        return None
    carried = root(loop.iter_args[0])

    def reads_carried(buffer: SSAValue) -> bool:
        """Whether a read of `buffer` may see what the loop writes."""
        return root(buffer) is acc or may_alias(root(buffer), carried)

    for op in prefix:
        if isinstance(op, memref.LoadOp):
            if reads_carried(op.memref):
                return None
        elif not isinstance(op, memref.SubviewOp) and (op.regions or not is_side_effect_free(op)):
            return None
    ivs = list(row_loop.body.block.args)
    for op in row_loop.body.block.walk():
        if isinstance(op, memref.StoreOp):
            if op.memref is not tmp or list(op.indices) != ivs:
                return None
        elif isinstance(op, memref.LoadOp):
            source = op.memref
            if reads_carried(source) and not (
                isinstance(source.owner, memref.SubviewOp)
                and _same_view(source.owner, view2)
                and list(op.indices) == ivs
            ):
                return None
        elif op.name.startswith("memref.") and op is not row_loop:
            return None
    return prefix, row_loop, view2


def _owner_axis(loop: scf.ForOp, row_loop: scf.ParallelOp, view2: memref.SubviewOp) -> int | None:
    """The scattered axis when the thread-per-destination-element form applies (module doc):
    the row view takes one dynamic offset (the index, size 1) and whole static dimensions
    elsewhere, the row is shorter than a warp, and the work is at most OWNER_WORK."""
    shape = view2.source.type.get_shape()  # type: ignore[attr-defined]
    offsets = list(view2.static_offsets.get_values())
    sizes = list(view2.static_sizes.get_values())
    strides = list(view2.static_strides.get_values())
    dynamic = [d for d, o in enumerate(offsets) if o == DYNAMIC_INDEX]
    if len(dynamic) != 1 or view2.sizes or view2.strides or any(t != 1 for t in strides):
        return None
    axis = dynamic[0]
    if any(sizes[d] != (1 if d == axis else shape[d]) or (d != axis and offsets[d] != 0) for d in range(len(shape))):
        return None
    counts = [constant_int(v) for v in (loop.lb, loop.ub, loop.step)]
    bounds = [constant_int(v) for v in (*row_loop.lowerBound, *row_loop.step)]
    if None in counts or None in bounds or any(b != (0 if k < len(shape) else 1) for k, b in enumerate(bounds)):
        return None
    lb, ub, step = counts
    positions = max(0, -(-(ub - lb) // step))  # type: ignore[operator]
    row = math.prod(sizes)
    if row >= WARP or len(row_loop.upperBound) != len(shape) or math.prod(shape) * positions > OWNER_WORK:
        return None
    return axis


def _owner_computes(loop: scf.ForOp, prefix: list[Operation], row_loop: scf.ParallelOp, view2: memref.SubviewOp, axis: int) -> None:
    """Rewrite to a thread per destination element scanning the positions (module doc)."""
    body = loop.body.block
    acc = body.args[1]
    init = loop.iter_args[0]
    shape = view2.source.type.get_shape()  # type: ignore[attr-defined]
    index = IndexType()
    outer = Block(arg_types=[index] * len(shape))
    zero = arith.ConstantOp.from_int_and_width(0, index)
    one = arith.ConstantOp.from_int_and_width(1, index)
    uppers = [arith.ConstantOp.from_int_and_width(n, index) for n in shape]
    serial = Block(arg_types=[body.args[0].type])
    mapper: dict[SSAValue, SSAValue] = {body.args[0]: serial.args[0], acc: init}
    for op in prefix:
        serial.add_op(op.clone(value_mapper=mapper))
    at = mapper[view2.offsets[0]]
    mine = arith.CmpiOp(at, outer.args[axis], "eq")
    serial.add_op(mine)
    then = Block()
    view = view2.clone(value_mapper=mapper)
    then.add_op(view)
    for d, arg in enumerate(row_loop.body.block.args):
        mapper[arg] = zero.result if d == axis else outer.args[d]
    _clone_row(row_loop, view, mapper, then)
    then.add_op(scf.YieldOp())
    serial.add_op(scf.IfOp(mine, [], Region(then)))
    serial.add_op(scf.YieldOp())
    outer.add_op(scf.ForOp(loop.lb, loop.ub, loop.step, [], Region(serial)))
    outer.add_op(scf.ReduceOp())
    parallel = scf.ParallelOp([zero] * len(shape), uppers, [one] * len(shape), Region(outer))
    parent = loop.parent_block()
    assert parent is not None
    parent.insert_ops_before([zero, one, *uppers, parallel], loop)
    loop.results[0].replace_all_uses_with(init)
    parent.erase_op(loop)


def _clone_row(row_loop: scf.ParallelOp, view: Operation, mapper: dict[SSAValue, SSAValue], into: Block) -> None:
    """The row loop's body into `into`, its stores to the temporary redirected to `view`."""
    for op in row_loop.body.block.ops:
        if isinstance(op, scf.ReduceOp):
            continue
        if isinstance(op, memref.StoreOp):
            value = mapper.get(op.value, op.value)
            into.add_op(memref.StoreOp.get(value, view.results[0], [mapper[i] for i in op.indices]))
            continue
        into.add_op(op.clone(value_mapper=mapper))


def interchange_scatter_loop(loop: scf.ForOp) -> bool:
    """Rewrite one scatter loop (module doc); False (and no change) where it does not apply."""
    matched = _match(loop)
    if matched is None:
        return False
    prefix, row_loop, view2 = matched
    axis = _owner_axis(loop, row_loop, view2)  # type: ignore[arg-type]
    if axis is not None:
        _owner_computes(loop, prefix, row_loop, view2, axis)  # type: ignore[arg-type]
        return True
    body = loop.body.block
    acc = body.args[1]
    init = loop.iter_args[0]

    outer = Block(arg_types=[a.type for a in row_loop.body.block.args])
    serial = Block(arg_types=[body.args[0].type])
    mapper: dict[SSAValue, SSAValue] = {body.args[0]: serial.args[0], acc: init}
    for op in prefix:
        serial.add_op(op.clone(value_mapper=mapper))
    view = view2.clone(value_mapper=mapper)
    serial.add_op(view)
    for arg, new in zip(row_loop.body.block.args, outer.args):
        mapper[arg] = new
    _clone_row(row_loop, view, mapper, serial)
    serial.add_op(scf.YieldOp())
    outer.add_op(scf.ForOp(loop.lb, loop.ub, loop.step, [], Region(serial)))
    outer.add_op(scf.ReduceOp())
    parallel = scf.ParallelOp(
        list(row_loop.lowerBound), list(row_loop.upperBound), list(row_loop.step), Region(outer)
    )
    parent = loop.parent_block()
    assert parent is not None
    parent.insert_op_before(parallel, loop)
    loop.results[0].replace_all_uses_with(init)
    parent.erase_op(loop)
    return True


def interchange_scatter_loops(function: func.FuncOp) -> int:
    """Interchange every scatter loop of `function` (module doc); the number rewritten."""
    loops = [op for op in function.walk() if isinstance(op, scf.ForOp)]
    return sum(interchange_scatter_loop(loop) for loop in loops if loop.parent is not None)


__all__ = ["interchange_scatter_loop", "interchange_scatter_loops"]
