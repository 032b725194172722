"""What the GPU passes share: building `gpu.launch` ops, index arithmetic, buffer roots.

`gpu.launch` body arguments follow MLIR's order: block ids (x, y, z), thread ids (x, y, z),
grid sizes (x, y, z), block sizes (x, y, z). irgrad's kernels use the x dimension only:
iteration spaces are linearized (docs/design/gpu-pipeline.md).

Buffers: roots and aliasing live in `ir_queries` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType, i32
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from irgrad.lowering.ir_queries import (  # noqa: F401 (re-exported)
    VIEW_OPS,
    enclosing,
    is_fresh,
    may_alias,
    root,
)

BLOCK_ID_X = 0
THREAD_ID_X = 3
GRID_DIM_X = 6
BLOCK_DIM_X = 9


SHARED_MEMORY_SPACE = 3
"""NVVM's address space of shared (workgroup) memory; a `memref<..., 3 : i64>` lives there."""


class Emitter:
    """Inserts ops at a fixed point and returns their first result; caches index constants."""

    def __init__(self, point: InsertPoint):
        self.point = point
        self._constants: dict[tuple[int, Attribute], SSAValue] = {}

    @staticmethod
    def at_end(block: Block) -> Emitter:
        return Emitter(InsertPoint.at_end(block))

    @staticmethod
    def before(op: Operation) -> Emitter:
        return Emitter(InsertPoint.before(op))

    def add(self, op: Operation) -> SSAValue:
        if self.point.insert_before is not None:
            self.point.block.insert_op_before(op, self.point.insert_before)
        else:
            self.point.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def const(self, value: int, t: Attribute = IndexType()) -> SSAValue:
        key = (value, t)
        if key not in self._constants:
            self._constants[key] = self.add(arith.ConstantOp(IntegerAttr(value, t)))
        return self._constants[key]

    def index(self, value: int) -> SSAValue:
        return self.const(value, IndexType())

    def cast(self, value: SSAValue, t: Attribute) -> SSAValue:
        if value.type == t:
            return value
        return self.add(arith.IndexCastOp(value, t))

    def muli(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.MuliOp(a, b))

    def addi(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.AddiOp(a, b))

    def cmpi(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.CmpiOp(a, b, predicate))

    def andi(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.AndIOp(a, b))

    def if_(self, condition: SSAValue) -> Block:
        """An `scf.if` without results; returns its then-block (ending in scf.yield)."""
        then_block = Block()
        then_block.add_op(scf.YieldOp())
        self.add(scf.IfOp(condition, [], Region(then_block), Region()))
        return then_block


def delinearize(
    e: Emitter, linear: SSAValue, sizes: Sequence[int], work_type: Attribute
) -> list[SSAValue]:
    """The index of each dimension (outermost first, as `index` values) of a row-major
    linear index `linear` of type `work_type` (i32 or index) in a space of `sizes`."""
    indices: list[SSAValue] = []
    rest = linear
    for k in range(len(sizes) - 1, -1, -1):
        n = sizes[k]
        if n == 1:
            indices.append(e.index(0))
            continue
        if k == 0:
            indices.append(e.cast(rest, IndexType()))
            break
        size = e.const(n, work_type)
        indices.append(e.cast(e.add(arith.RemUIOp(rest, size)), IndexType()))
        rest = e.add(arith.DivUIOp(rest, size))
    return list(reversed(indices))


def constant_int(value: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def induction_values(
    e: Emitter, indices: Sequence[SSAValue], lower_bounds: Sequence[SSAValue], steps: Sequence[SSAValue]
) -> list[SSAValue]:
    """A loop's induction variables at zero-based point `indices`: lb + index * step each
    (no op where the step is 1 or the bound 0)."""
    values: list[SSAValue] = []
    for index, lb, step in zip(indices, lower_bounds, steps, strict=True):
        value = index
        if constant_int(step) != 1:
            value = e.muli(value, step)
        if constant_int(lb) != 0:
            value = e.addi(value, lb)
        values.append(value)
    return values


def work_type_for(total: int) -> Attribute:
    """i32 index arithmetic where every linear index fits (64-bit division is slow on GPUs)."""
    return i32 if total < 2**31 else IndexType()


def global_thread_index(e: Emitter, body: Block, work_type: Attribute) -> SSAValue:
    """blockIdx.x * blockDim.x + threadIdx.x, in `work_type`."""
    block_id = e.cast(body.args[BLOCK_ID_X], work_type)
    block_dim = e.cast(body.args[BLOCK_DIM_X], work_type)
    thread_id = e.cast(body.args[THREAD_ID_X], work_type)
    return e.addi(e.muli(block_id, block_dim), thread_id)


def build_launch(
    at: Emitter, grid: int | SSAValue, block: int | SSAValue, fill: Callable[[Emitter, Block], None]
) -> gpu.LaunchOp:
    """A one-dimensional `gpu.launch` at `at`; `fill(emitter, body)` writes its body (the
    emitter inserts before the `gpu.terminator`)."""
    body = Block(arg_types=[IndexType()] * 12)
    terminator = gpu.TerminatorOp()
    body.add_op(terminator)
    one = at.index(1)
    sizes = [at.index(v) if isinstance(v, int) else v for v in (grid, block)]
    launch = gpu.LaunchOp(Region(body), [sizes[0], one, one], [sizes[1], one, one])
    at.add(launch)
    fill(Emitter.before(terminator), body)
    return launch


# ---------------------------------------------------------------------------------------------
# Buffers
# ---------------------------------------------------------------------------------------------


def is_shared_memory(t: Attribute) -> bool:
    space = t.memory_space if isinstance(t, MemRefType) else None
    return isinstance(space, IntegerAttr) and space.value.data == SHARED_MEMORY_SPACE


def captured_values(op: Operation) -> Iterator[SSAValue]:
    """Values defined outside `op` and used by ops inside its regions (each once)."""
    seen: set[SSAValue] = set()
    inner: set[Operation] = set()
    for inside in op.walk():
        inner.add(inside)
    for inside in op.walk():
        if inside is op:
            continue
        for value in inside.operands:
            owner = value.owner
            defined_inside = (
                owner in inner
                if isinstance(owner, Operation)
                else _block_inside(value, op)
            )
            if not defined_inside and value not in seen:
                seen.add(value)
                yield value


def _block_inside(value: SSAValue, op: Operation) -> bool:
    assert isinstance(value, BlockArgument)
    parent = value.block.parent_op()
    while parent is not None:
        if parent is op:
            return True
        parent = parent.parent_op()
    return False


def is_integer_like(t: Attribute) -> bool:
    return isinstance(t, IntegerType | IndexType)
