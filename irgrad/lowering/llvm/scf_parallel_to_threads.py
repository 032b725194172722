"""`convert-scf-parallel-to-threads`: large `scf.parallel` loops to calls of the thread pool.

MLIR's `async-parallel-for`, for irgrad's CPU runtime: the body of a parallel loop becomes a
function over a range of its first dimension, and the loop becomes one call of
`irgrad_parallel_for(fn, ctx, n)`, which runs `fn(ctx, begin, end)` on disjoint ranges
covering `[0, n)` on every thread of the pool (irgrad/backends/cpu/threads.py) and returns when
all are done. Iterations of an `scf.parallel` are independent by definition, so any split
computes the same values as the serial loop, bit for bit.

Input invariant: stage "loops" (scf, memref, arith, math, func); runs first in
`convert-to-llvm`, before `convert-scf-parallel-to-scf` serializes what is left.
Output IR, per converted loop: `func.func private @<function>_parallel<k>(%ctx, %begin, %end)`
running the original loop narrowed to `[begin, end)`, its captured values loaded from `ctx`; at
the loop's place, the captured values stored into slots and
`llvm.call @irgrad_parallel_for(addressof @..._parallel<k>, ctx, n)`.
Which loops: outermost `scf.parallel`s without reductions, heap allocations or `cf.assert`s in
their body, with constant bounds and estimated work at least `min-work`; below that, waking
the other threads costs more than it saves.
Details: docs/design/cpu-backend.md, "irgrad/lowering/llvm/scf_parallel_to_threads.py".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from irgrad.lowering.llvm.type_conversion import PTR, convert_type
from irgrad.lowering.loops.scf_parallel_to_scf import check_has_dimensions

ENTRY_POINT = "irgrad_parallel_for"
SLOT_BYTES = 8


def constant_int(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def trip_count(lb: SSAValue, ub: SSAValue, step: SSAValue) -> int | None:
    lo, hi, st = constant_int(lb), constant_int(ub), constant_int(step)
    if lo is None or hi is None or st is None or st <= 0:
        return None
    return max(0, -(-(hi - lo) // st))


def estimated_work(block: Block) -> int:
    """Ops run by one pass over `block`, nested constant-trip `scf.for` loops multiplied in."""
    total = 0
    for op in block.ops:
        total += 1
        if isinstance(op, scf.ForOp):
            trips = trip_count(op.lb, op.ub, op.step)
            total += (trips if trips is not None else 1) * estimated_work(op.body.block)
        elif isinstance(op, scf.ParallelOp):
            trips = math.prod(
                trip_count(lb, ub, st) or 1 for lb, ub, st in zip(op.lowerBound, op.upperBound, op.step)
            )
            total += trips * estimated_work(op.body.block)
        else:
            for region in op.regions:
                for inner in region.blocks:
                    total += estimated_work(inner)
    return total


def is_slot_type(t: Attribute) -> bool:
    """Values that fit one 8-byte slot: memrefs (a pointer), index, integers, floats."""
    llvm_t = convert_type(t)
    if isinstance(t, MemRefType):
        return True
    try:
        from irgrad.lowering.llvm.type_conversion import byte_size

        return byte_size(llvm_t) <= SLOT_BYTES
    except ValueError:
        return False


def captured_values(loop: scf.ParallelOp) -> list[SSAValue] | None:
    """Values defined outside `loop` that its body uses (constants excluded: they are
    cloned); None when one cannot travel through a slot."""
    inside: set[Operation] = set(loop.walk())
    captured: list[SSAValue] = []
    seen: set[SSAValue] = set()
    for op in loop.body.walk():
        for operand in op.operands:
            owner = operand.owner
            defined_inside = (
                owner in inside if isinstance(owner, Operation) else owner.parent_op() in inside
            )
            if defined_inside or operand in seen:
                continue
            if isinstance(owner, arith.ConstantOp):
                continue
            if not is_slot_type(operand.type):
                return None
            seen.add(operand)
            captured.append(operand)
    return captured


def slot_address(ctx: SSAValue, k: int, t: Attribute) -> llvm.GEPOp:
    """The address of slot k as a pointer to `t` (the GEP counts in elements of `t`, so that
    the translation's typed pointers match the value stored or loaded)."""
    from irgrad.lowering.llvm.type_conversion import byte_size

    size = SLOT_BYTES if isinstance(t, llvm.LLVMPointerType) else byte_size(t)
    return llvm.GEPOp.from_mixed_indices(ctx, [k * SLOT_BYTES // size], t)


def _cast(value: SSAValue, t: Attribute) -> UnrealizedConversionCastOp:
    return UnrealizedConversionCastOp.get([value], [t])


def outline(loop: scf.ParallelOp, name: str, captured: list[SSAValue]) -> func.FuncOp:
    """The function running `loop` over iterations [begin, end) of its first dimension."""
    body = Block(arg_types=[PTR, i64, i64])
    ctx, begin, end = body.args
    for arg, hint in zip(body.args, ("ctx", "begin", "end")):
        arg.name_hint = hint
    mapping: dict[SSAValue, SSAValue] = {}

    def add(op: Operation) -> SSAValue:
        body.add_op(op)
        return op.results[0]

    # Constants the loop reads (bounds included) are cloned into the function.
    walked = list(loop.walk())
    inside = set(walked)
    for op in walked:  # in program order, so the output is deterministic
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, arith.ConstantOp) and operand not in mapping and owner not in inside:
                mapping[operand] = add(owner.clone())
    for k, value in enumerate(captured):
        t = convert_type(value.type)
        slot = add(slot_address(ctx, k, t))
        loaded = add(llvm.LoadOp(slot, t))
        mapping[value] = loaded if loaded.type == value.type else add(_cast(loaded, value.type))

    def bound(v: SSAValue) -> SSAValue:
        return mapping.get(v, v)

    lbs = [bound(v) for v in loop.lowerBound]
    ubs = [bound(v) for v in loop.upperBound]
    steps = [bound(v) for v in loop.step]
    index = IndexType()
    first = add(_cast(begin, index))
    last = add(_cast(end, index))
    lo = add(arith.AddiOp(lbs[0], add(arith.MuliOp(first, steps[0]))))
    hi = add(arith.MinUIOp(add(arith.AddiOp(lbs[0], add(arith.MuliOp(last, steps[0])))), ubs[0]))

    clone = loop.clone(value_mapper=dict(mapping))
    region = clone.detach_region(clone.body)
    clone.erase()
    body.add_op(scf.ParallelOp([lo, *lbs[1:]], [hi, *ubs[1:]], steps, region))
    body.add_op(func.ReturnOp())
    return func.FuncOp(name, ([PTR, i64, i64], []), Region(body), visibility="private")


def entry_block(op: Operation) -> Block:
    function = op
    while not isinstance(function, func.FuncOp):
        parent = function.parent_op()
        assert parent is not None
        function = parent
    block = function.body.blocks[0]
    return block


def replace_with_call(loop: scf.ParallelOp, outlined: func.FuncOp, captured: list[SSAValue]) -> None:
    """Fill the slots and call the pool where `loop` was."""
    block = loop.parent
    assert block is not None
    entry = entry_block(loop)

    def before(op: Operation) -> SSAValue | None:
        block.insert_op_before(op, loop)
        return op.results[0] if op.results else None

    slots = arith.ConstantOp(IntegerAttr(max(1, len(captured)), i64))
    alloca = llvm.AllocaOp(slots.result, i64, alignment=SLOT_BYTES)
    # An untyped pointer, so the translation's typed pointers accept stores of any slot type.
    ctx = llvm.BitcastOp(alloca.res, PTR)
    first = entry.first_op
    if first is None:
        entry.add_ops([slots, alloca, ctx])
    else:
        entry.insert_ops_before([slots, alloca, ctx], first)
    for k, value in enumerate(captured):
        t = convert_type(value.type)
        stored = value if t == value.type else before(_cast(value, t))
        slot = before(slot_address(ctx.results[0], k, t))
        before(llvm.StoreOp(stored, slot))
    trips = trip_count(loop.lowerBound[0], loop.upperBound[0], loop.step[0])
    assert trips is not None  # eligible loops have constant bounds
    n64 = before(llvm.ConstantOp(IntegerAttr(trips, i64), i64))
    fn = before(llvm.AddressOfOp(outlined.sym_name.data, PTR))
    before(llvm.CallOp(ENTRY_POINT, fn, ctx.results[0], n64))
    loop.detach()
    loop.erase()


def declare_entry_point(module: ModuleOp) -> None:
    for op in module.ops:
        if isinstance(op, llvm.FuncOp) and op.sym_name.data == ENTRY_POINT:
            return
    module.body.block.add_op(
        llvm.FuncOp(
            ENTRY_POINT,
            llvm.LLVMFunctionType([PTR, PTR, i64], llvm.LLVMVoidType()),
            linkage=llvm.LinkageAttr("external"),
        )
    )


def allocates_on_the_heap(loop: scf.ParallelOp) -> bool:
    """Whether the body may call the allocator: a failed allocation is turned into a
    MemoryError only on the calling thread (irgrad/backends/cpu/guard.py), so such loops stay
    serial."""
    from irgrad.lowering.llvm.memref_to_llvm import ALLOCA_LIMIT, _buffer_bytes

    for op in loop.body.walk():
        if isinstance(op, memref.AllocOp):
            return True
        if isinstance(op, memref.AllocaOp) and _buffer_bytes(op.memref.type) > ALLOCA_LIMIT:  # type: ignore[arg-type]
            return True
    return False


def has_asserts(loop: scf.ParallelOp) -> bool:
    """Whether the body may run a `cf.assert` (a runtime check), itself or in a function it
    calls: like a failed allocation, a failed assert becomes an error only on the calling
    thread, so such loops stay serial."""
    from xdsl.traits import SymbolTable

    seen: set[Operation] = set()
    stack: list[Operation] = [loop]
    while stack:
        for op in stack.pop().walk():
            if op.name == "cf.assert":
                return True
            if isinstance(op, func.CallOp):
                callee = SymbolTable.lookup_symbol(op, op.callee)
                if callee is not None and callee not in seen:
                    seen.add(callee)
                    stack.append(callee)
    return False


def eligible(loop: scf.ParallelOp, min_work: int) -> bool:
    check_has_dimensions(loop)
    if loop.initVals or allocates_on_the_heap(loop) or has_asserts(loop):
        return False
    parent = loop.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ParallelOp):
            return False
        parent = parent.parent_op()
    trips = [trip_count(lb, ub, st) for lb, ub, st in zip(loop.lowerBound, loop.upperBound, loop.step)]
    if any(t is None for t in trips) or trips[0] < 2:  # type: ignore[operator]
        return False
    return math.prod(trips) * estimated_work(loop.body.block) >= min_work  # type: ignore[arg-type]


@dataclass(frozen=True)
class ConvertScfParallelToThreadsPass(ModulePass):
    """Outline outermost reduction-free scf.parallel loops of at least `min_work` estimated
    ops into functions over ranges of their first dimension, called through the thread pool.

    Input invariant: stage "loops". Output IR: func.func + llvm ops (see the module doc).
    """

    name = "convert-scf-parallel-to-threads"

    min_work: int = 1 << 20

    def __post_init__(self) -> None:
        if self.min_work < 0:  # a ValueError: irgrad-opt reports it as a bad pass option
            raise ValueError(f"min_work must be at least 0, got {self.min_work}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        converted = 0
        for function in list(op.ops):
            if not isinstance(function, func.FuncOp) or not function.body.blocks:
                continue
            loops = [l for l in function.walk() if isinstance(l, scf.ParallelOp) and eligible(l, self.min_work)]
            for k, loop in enumerate(loops):
                captured = captured_values(loop)
                if captured is None:
                    continue
                outlined = outline(loop, f"{function.sym_name.data}_parallel{k}", captured)
                op.body.block.insert_op_before(outlined, function)
                replace_with_call(loop, outlined, captured)
                converted += 1
        if converted:
            declare_entry_point(op)
