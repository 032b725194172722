"""`generate-runtime-verification`: bounds checks before indexed memory accesses (MLIR's pass).

Why: an index computed at run time (read from an input, say) that is out of range made the
compiled code read or write outside its buffer, and `irgrad-run --backend cpu` died with
SIGSEGV, where the interpreter reports a located error. This pass puts a check before each
access, so the compiled function reports the same kind of error instead.

Input: any IR; meant for stage "bufferized" (after bufferize, before the loops are lowered to
`cf`), where `irgrad-run --backend cpu` runs it.
Output: the same IR with, before every checked op and for every index not provably in range,
an `arith.cmpi ult` of the index against its dimension's size and a `cf.assert` whose static
message names the op's source position, the op, the dimension and its size; and, before every
`scf.for` whose step is not a constant, a `cf.assert` that the step is positive. A failed
assert raises `irgrad.backends.cpu.RuntimeCheckError` from the call (docs/design/cpu-backend.md).

Checked ops: `memref.load`, `memref.store`, `tensor.extract`, `tensor.insert`, and
`memref.subview` with static sizes and strides. Indices provably in range (constants, the
induction variables of loops with suitable constant bounds) are not checked, so that loops stay
fast; GPU code is left alone. An access whose index count is not its value's rank (unverified
IR) is a located PassError.
Details: docs/design/cpu-pipeline.md, "irgrad/transforms/generate_runtime_verification.py".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, cf, gpu, memref, scf, tensor
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from irgrad.diagnostics import PassError, location_of

CHECKED_OPS = (memref.LoadOp, memref.StoreOp, tensor.ExtractOp, tensor.InsertOp, memref.SubviewOp)


def constant_index(value: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, or None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _induction_range(value: SSAValue) -> tuple[int, int] | None:
    """`(lower, upper)` when `value` is the induction variable of an `scf.for` or one of an
    `scf.parallel` with constant bounds, lower >= 0 and a constant step > 0: every value it
    takes is in `[lower, upper)`."""
    if not isinstance(value, BlockArgument):
        return None
    loop = value.block.parent_op()
    if isinstance(loop, scf.ForOp):
        if value.block is not loop.body.block or value.index != 0:
            return None
        lb, ub, step = loop.lb, loop.ub, loop.step
    elif isinstance(loop, scf.ParallelOp):
        if value.block is not loop.body.block or value.index >= len(loop.lowerBound):
            return None
        k = value.index
        lb, ub, step = loop.lowerBound[k], loop.upperBound[k], loop.step[k]
    else:
        return None
    lo, hi, st = constant_index(lb), constant_index(ub), constant_index(step)
    if lo is None or hi is None or st is None or lo < 0 or st <= 0:
        return None
    return lo, hi


def provably_in_range(index: SSAValue, bound: int) -> bool:
    """Whether `0 <= index < bound` holds whenever the op runs (see the module doc)."""
    value = constant_index(index)
    if value is not None:
        return 0 <= value < bound
    loop_range = _induction_range(index)
    return loop_range is not None and loop_range[1] <= bound


def _in_gpu_code(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, gpu.ModuleOp | gpu.FuncOp | gpu.LaunchOp):
            return True
        parent = parent.parent_op()
    return False


def _shaped_operand(op: Operation) -> tuple[SSAValue, Sequence[SSAValue]]:
    """The memref or tensor `op` indexes, and its indices."""
    if isinstance(op, memref.LoadOp | memref.StoreOp):
        return op.memref, op.indices
    if isinstance(op, tensor.ExtractOp):
        return op.tensor, op.indices
    assert isinstance(op, tensor.InsertOp)
    return op.dest, op.indices


class _Checker:
    """Inserts the checks of one op, before it, located at it."""

    def __init__(self, op: Operation) -> None:
        self.op = op
        location = location_of(op.location)
        self.prefix = f"{location}: " if location is not None else ""

    def insert(self, new: Operation) -> SSAValue:
        new.location = self.op.location
        block = self.op.parent_block()
        assert block is not None
        block.insert_op_before(new, self.op)
        return new.results[0] if new.results else None  # type: ignore[return-value]

    def size(self, source: SSAValue, dim: int) -> tuple[SSAValue, str]:
        """The size of dimension `dim` of `source` as an index value, and how to name it."""
        t = source.type
        assert isinstance(t, MemRefType | TensorType)
        size = t.get_shape()[dim]
        if size >= 0:
            return self.constant(size), f"size {size}"
        k = self.constant(dim)
        dim_op = memref.DimOp if isinstance(t, MemRefType) else tensor.DimOp
        return self.insert(dim_op(source, k)), "dynamic size"

    def constant(self, value: int) -> SSAValue:
        return self.insert(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def check(self, index: SSAValue, bound: SSAValue, what: str) -> None:
        """`cf.assert` that `0 <= index < bound` (unsigned: a negative index is huge)."""
        ok = self.insert(arith.CmpiOp(index, bound, "ult"))
        self.insert(cf.AssertOp(ok, f"{self.prefix}'{self.op.name}' op {what}"))


def _static_size(source: SSAValue, dim: int) -> int | None:
    t = source.type
    assert isinstance(t, MemRefType | TensorType)
    size = t.get_shape()[dim]
    return size if size >= 0 else None


def check_access(op: Operation) -> None:
    """Checks for the indices of a load, store, extract or insert."""
    source, indices = _shaped_operand(op)
    rank = len(source.type.get_shape())  # type: ignore[attr-defined]
    if len(indices) != rank:
        # Only unverified IR gets here (irgrad-opt --disable-verify, a buggy pass).
        raise PassError(
            f"has {len(indices)} indices for a value of rank {rank}: "
            "generate-runtime-verification cannot check it",
            op,
        )
    checker = _Checker(op)
    for dim, index in enumerate(indices):
        size = _static_size(source, dim)
        if size is not None and provably_in_range(index, size):
            continue
        bound, named = checker.size(source, dim)
        checker.check(index, bound, f"out-of-bounds index for dimension {dim} of {named}")


def check_subview(op: memref.SubviewOp) -> None:
    """Checks for the dynamic offsets of a subview of static sizes and strides: offset k is
    in `[0, size_k - (view_k - 1) * stride_k)`, so the whole view fits."""
    sizes = op.static_sizes.get_values()
    strides = op.static_strides.get_values()
    if memref.DYNAMIC_INDEX in sizes or memref.DYNAMIC_INDEX in strides:
        return
    checker = _Checker(op)
    dynamic = iter(op.offsets)
    for dim, offset in enumerate(op.static_offsets.get_values()):
        if offset != memref.DYNAMIC_INDEX:
            continue
        index = next(dynamic)
        view, stride = sizes[dim], strides[dim]
        if view == 0:
            continue
        span = (view - 1) * stride
        size = _static_size(op.source, dim)
        what = f"out-of-bounds offset for dimension {dim} of "
        detail = f" (a view of {view} elements with stride {stride})"
        if size is not None:
            # A view longer than the dimension fits at no offset: `ult 0` always fails.
            bound = max(size - span, 0)
            if provably_in_range(index, bound):
                continue
            checker.check(index, checker.constant(bound), f"{what}size {size}{detail}")
            continue
        dim_size, named = checker.size(op.source, dim)
        if span:
            # max(size - span, 0): a negative bound would pass any offset as unsigned.
            fits = checker.insert(arith.SubiOp(dim_size, checker.constant(span)))
            dim_size = checker.insert(arith.MaxSIOp(fits, checker.constant(0)))
        checker.check(index, dim_size, f"{what}{named}{detail}")


def check_loop_step(op: scf.ForOp) -> None:
    """A non-constant `scf.for` step must be positive: compiled code would loop forever on a
    step of 0 and step past the bound on a negative one (the interpreter refuses both)."""
    step = constant_index(op.step)
    if step is not None:
        return  # a constant one is the verifier's to reject
    checker = _Checker(op)
    zero = checker.insert(arith.ConstantOp(IntegerAttr(0, op.step.type)))
    ok = checker.insert(arith.CmpiOp(op.step, zero, "sgt"))
    checker.insert(cf.AssertOp(ok, f"{checker.prefix}'{op.name}' op step is not positive"))


@dataclass(frozen=True)
class GenerateRuntimeVerificationPass(ModulePass):
    """Insert bounds checks (`cf.assert`) before memref/tensor loads, stores and subviews
    whose indices are not provably in range (MLIR's generate-runtime-verification).

    Input: any IR (run after bufferize). Output: the same IR with `arith.cmpi ult` and
    `cf.assert` before each unproven access, located at it; see the module doc.
    """

    name = "generate-runtime-verification"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        targets = [o for o in op.walk() if isinstance(o, (*CHECKED_OPS, scf.ForOp)) and not _in_gpu_code(o)]
        for target in targets:
            if isinstance(target, scf.ForOp):
                check_loop_step(target)
            elif isinstance(target, memref.SubviewOp):
                check_subview(target)
            else:
                check_access(target)


__all__ = ["GenerateRuntimeVerificationPass", "provably_in_range"]
