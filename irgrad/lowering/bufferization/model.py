"""What memory a tensor value lives in: `Root`s and `Buffer`s; signatures; constant globals.

A root is one piece of memory, of one of five kinds (`RootKind`); a buffer is a memref value
lying in a root: the root itself, or a view of it. See irgrad/lowering/bufferization/bufferize.py for how
the pass uses them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.traits import SymbolTable

CONTRACT = (
    'is outside the "linalg" stage contract (docs/design/cpu-pipeline.md); '
    "bufferize cannot convert it"
)


class RootKind(Enum):
    ALLOC = "alloc"
    """A `memref.alloc` this pass made: writable; its owner block frees it."""
    OWNED = "owned"
    """A region argument or region-op result handing over a buffer: writable, freed."""
    ARGUMENT = "argument"
    """A function argument: read-only, the caller's."""
    GLOBAL = "global"
    """A `memref.get_global` of a constant: read-only."""
    EMPTY = "empty"
    """A `tensor.empty`: no memory until an op needs some (each such op gets its own)."""


@dataclass(eq=False)
class Root:
    """One piece of memory, and the tensor values that lie in it."""

    kind: RootKind
    buffer: SSAValue | None
    owner: Block | None = None
    alloc: memref.AllocOp | None = None
    tensors: list[SSAValue] = field(default_factory=list)
    """Tensor values lying in this root that may still be read (pruned as the walk passes
    their last use)."""
    moved: bool = False
    """Ownership went elsewhere (a region, a result, an out-parameter): not freed here."""

    @property
    def writable(self) -> bool:
        return self.kind in (RootKind.ALLOC, RootKind.OWNED) and not self.moved


@dataclass(frozen=True, eq=False)
class Buffer:
    """Where a tensor value lives. `memref` is None for a `tensor.empty` (no memory yet)."""

    memref: SSAValue | None
    root: Root
    covers: bool = True
    """The buffer is the whole root with identity layout (the root, or a reshape of it)."""

    @property
    def is_root(self) -> bool:
        return self.memref is not None and self.memref is self.root.buffer


# --------------------------------------------------------------------------------------
# Types and small IR helpers
# --------------------------------------------------------------------------------------


def memref_type(t: Attribute) -> MemRefType:
    """The identity-layout memref type of tensor type `t`."""
    assert isinstance(t, TensorType)
    return MemRefType(t.get_element_type(), t.get_shape())


def is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    assert isinstance(t, TensorType | MemRefType)
    return t.get_shape()


def touches_tensors(op: Operation) -> bool:
    """Whether `op` has a tensor operand, result, or argument of one of its own blocks."""
    if any(isinstance(t, TensorType) for t in (*op.operand_types, *op.result_types)):
        return True
    return any(
        isinstance(arg.type, TensorType)
        for region in op.regions
        for block in region.blocks
        for arg in block.args
    )


def is_permutation(m: AffineMap) -> bool:
    dims = [e.position for e in m.results if isinstance(e, AffineDimExpr)]
    return len(dims) == len(m.results) == m.num_dims and sorted(dims) == list(range(m.num_dims))


def reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr[ArrayAttr[IntegerAttr]]:
    return ArrayAttr([ArrayAttr([IntegerAttr(d, 64) for d in g]) for g in groups])


def dense_i64(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def kept_dimensions(sizes: Sequence[int], result_shape: Sequence[int]) -> list[int] | None:
    """Which slice dimensions a (possibly rank-reducing) slice keeps; dropped ones are 1."""

    def match(i: int, j: int) -> list[int] | None:
        if j == len(result_shape):
            return [] if all(s == 1 for s in sizes[i:]) else None
        if len(sizes) - i < len(result_shape) - j:
            return None
        if sizes[i] == result_shape[j] and (rest := match(i + 1, j + 1)) is not None:
            return [i, *rest]
        return match(i + 1, j) if sizes[i] == 1 else None

    return match(0, 0)


def subview_type(
    source: MemRefType,
    sizes: Sequence[int],
    strides: Sequence[int],
    result_shape: Sequence[int],
    offsets: Sequence[int | None] = (),
) -> MemRefType:
    """The type of a subview of `source`: static strides; a static offset where the source's
    offset and every one of `offsets` (None: dynamic) is static, as upstream `memref.subview`
    infers and requires, `?` otherwise (or without `offsets`)."""
    source_strides = source.get_strides()
    assert source_strides is not None
    kept = kept_dimensions(sizes, result_shape)
    assert kept is not None
    result_strides: list[int] = []
    for d in kept:
        stride = source_strides[d]
        assert stride is not None, "the stage contract has static strides only"
        result_strides.append(stride * strides[d])
    offset: int | None = None
    if offsets and all(o is not None for o in offsets):
        offset = source.get_offset()
        if offset is not None:
            offset += sum(int(o) * int(s) for o, s in zip(offsets, source_strides))  # type: ignore[arg-type]
    layout = StridedLayoutAttr(result_strides, offset)
    return MemRefType(source.get_element_type(), list(result_shape), layout)


def erase_op(op: Operation) -> None:
    block = op.parent_block()
    if block is not None:
        block.erase_op(op)
    else:
        op.erase()


def ancestor_in(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is or contains `op`, or None when `block` does not enclose it."""
    current: Operation | None = op
    while current is not None:
        parent = current.parent_block()
        if parent is block:
            return current
        current = parent.parent_op() if parent is not None else None
    return None


# --------------------------------------------------------------------------------------
# Module-level state: function signatures and constant globals
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Signature:
    """A function's original type, and where its tensor results go."""

    inputs: tuple[Attribute, ...]
    outputs: tuple[Attribute, ...]

    @property
    def tensor_results(self) -> list[int]:
        return [i for i, t in enumerate(self.outputs) if isinstance(t, TensorType)]

    @property
    def has_tensors(self) -> bool:
        return any(isinstance(t, TensorType) for t in (*self.inputs, *self.outputs))

    def bufferized(self) -> FunctionType:
        """Tensor arguments as memrefs, then one trailing out-parameter per tensor result."""
        inputs = [memref_type(t) if isinstance(t, TensorType) else t for t in self.inputs]
        outs = [memref_type(t) for t in self.outputs if isinstance(t, TensorType)]
        results = [t for t in self.outputs if not isinstance(t, TensorType)]
        return FunctionType.from_lists([*inputs, *outs], results)


class Globals:
    """`memref.global`s for dense constants, one per distinct value, at the module's top."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.by_value: dict[tuple[Attribute, Attribute], str] = {}
        self.counter = itertools.count()

    def name_for(self, value: DenseIntOrFPElementsAttr, t: MemRefType) -> str:
        key = (value, t)
        if (name := self.by_value.get(key)) is not None:
            return name
        shape = "x".join(map(str, t.get_shape())) or "scalar"
        while True:
            name = f"__constant_{shape}_{next(self.counter)}"
            if SymbolTable.lookup_symbol(self.module, name) is None:
                break
        glob = memref.GlobalOp.get(
            StringAttr(name), t, value, StringAttr("private"), constant=UnitAttr()
        )
        body = self.module.body.block
        if body.first_op is None:
            body.add_op(glob)
        else:
            body.insert_op_before(glob, body.first_op)
        self.by_value[key] = name
        return name
