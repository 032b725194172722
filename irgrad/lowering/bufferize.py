"""`bufferize`: tensors to memrefs, in place where legal, every buffer freed when dead.

Input invariant: stage "linalg" of docs/design/cpu-pipeline.md (static shapes; linalg ops in
destination-passing style on tensors; tensor, scf, func, arith, math ops). Output IR: stage
"bufferized": no tensor value remains; `memref.alloc`/`dealloc`/`copy`/`subview`/`load`/
`store`/`collapse_shape`/`expand_shape`/`global`/`get_global` and linalg ops on memrefs.

How a tensor becomes a buffer
-----------------------------
Every tensor SSA value gets a `Buffer`: a memref value and the `Root` it lies in. A root is
one piece of memory: a `memref.alloc` this pass made (ALLOC), a buffer a region argument or
region-op result hands over (OWNED), a function argument (ARGUMENT, read-only), a constant
(GLOBAL, a `memref.global`, read-only) or a `tensor.empty` (EMPTY: no memory until an op
needs some; each op that does gets a fresh `memref.alloc`, so `tensor.empty` costs nothing).
Views (`extract_slice` -> `memref.subview`, collapse/expand -> `memref.collapse_shape`/
`expand_shape`) lie in their source's root.

Value semantics: an op that writes (a linalg op's `outs`, `insert_slice`, `insert`) writes
into its destination's buffer only when (1) the root is writable (ALLOC or OWNED, never an
argument or a global), (2) the buffer covers the whole root with identity layout, and
(3) no tensor value lying in that root can be read later (`buffer_liveness.is_live_after`:
a later use in the block, any use inside an enclosing loop that does not define it, a use
nested in the op). Otherwise it writes a fresh `memref.alloc`, copied from the destination
first when the op reads the destination's contents.

In-place rule for elementwise ops (a `linalg.generic` or named elementwise op whose loops are
all parallel): when the output's init is not read (a `tensor.empty`, typically), the result
may be written into one of the op's *inputs* instead of a new buffer, if that input's buffer
(1) is writable, (2) covers its whole root, (3) has exactly the output's tensor type,
(4) is indexed by the same indexing map as the output and that map is a permutation (so
every iteration reads an element before writing the same element, and no iteration reads an
element another one wrote), (5) lies in a root that no other operand of the op touches
except inputs read through that same map, and (6) lies in a root none of whose tensors can
be read after the op. Function arguments and globals are never written.

Ownership and deallocation
--------------------------
Every ALLOC/OWNED root is owned by one block (where it was allocated, or the region whose
argument or result it is). Ownership moves only through region boundaries: a buffer passed
as an `scf.for`/`scf.while` init, or yielded (`scf.yield`, `scf.condition`), goes to the
receiving region or to the op's result, which is owned by the block holding the op. A
buffer moves only if it is the root itself, owned by the block the move happens in, dead
afterwards and not moved twice; otherwise a fresh copy moves. A root that does not move is
freed by one `memref.dealloc` in its owner block after the last op that uses it or any view
of it (a use nested in a region counts at the op holding the region), so every path frees
it exactly once and nothing is freed while a view of it is in use.

Calling convention
------------------
Tensor arguments become identity-layout memref arguments (the callee only reads them; a
caller passing a strided view copies it first). Tensor results become trailing memref
out-parameters the caller allocates; the function returns only its scalar results. A result
whose root is an ALLOC made in the function's entry block is computed directly in the
out-parameter (the alloc is replaced by it); anything else is copied into it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf, tensor
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import (
    ConvOperation,
    ElementwiseOperation,
    LinalgStructuredOperation,
    PoolingOperation,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, SymbolTable

from irgrad.diagnostics import PassError
from irgrad.lowering.buffer_liveness import OpOrder, is_live_after

CONTRACT = 'is outside the "linalg" stage contract (docs/design/cpu-pipeline.md); bufferize cannot convert it'


# --------------------------------------------------------------------------------------
# Buffers and roots
# --------------------------------------------------------------------------------------


class RootKind(Enum):
    ALLOC = "alloc"
    OWNED = "owned"
    ARGUMENT = "argument"
    GLOBAL = "global"
    EMPTY = "empty"


@dataclass(eq=False)
class Root:
    """One piece of memory, and the tensor values that lie in it."""

    kind: RootKind
    buffer: SSAValue | None
    owner: Block | None = None
    alloc: memref.AllocOp | None = None
    tensors: list[SSAValue] = field(default_factory=list)
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


def memref_type(t: Attribute) -> MemRefType:
    assert isinstance(t, TensorType)
    return MemRefType(t.get_element_type(), t.get_shape())


def _is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType)


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


def _is_permutation(m: AffineMap) -> bool:
    dims = [e.position for e in m.results if isinstance(e, AffineDimExpr)]
    return len(dims) == len(m.results) == m.num_dims and sorted(dims) == list(range(m.num_dims))


def _reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr[ArrayAttr[IntegerAttr]]:
    return ArrayAttr([ArrayAttr([IntegerAttr(d, 64) for d in g]) for g in groups])


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
    source: MemRefType, sizes: Sequence[int], strides: Sequence[int], result_shape: Sequence[int]
) -> MemRefType:
    """The type of a subview of `source`: static strides, offset `?` (the stage contract)."""
    source_strides = source.get_strides()
    assert source_strides is not None and all(s is not None for s in source_strides)
    kept = kept_dimensions(sizes, result_shape)
    assert kept is not None
    layout = StridedLayoutAttr(
        [source_strides[d] * strides[d] for d in kept],  # pyright: ignore[reportOptionalOperand]
        None,
    )
    return MemRefType(source.get_element_type(), list(result_shape), layout)


# --------------------------------------------------------------------------------------
# Module-level state: function signatures and constant globals
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Signature:
    """A function's original type, and where its tensor results went."""

    inputs: tuple[Attribute, ...]
    outputs: tuple[Attribute, ...]

    @property
    def tensor_results(self) -> list[int]:
        return [i for i, t in enumerate(self.outputs) if isinstance(t, TensorType)]

    def bufferized(self) -> FunctionType:
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
        while True:
            name = f"__constant_{'x'.join(map(str, t.get_shape())) or 'scalar'}_{next(self.counter)}"
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


# --------------------------------------------------------------------------------------
# One function
# --------------------------------------------------------------------------------------


def _linalg_operands(op: Operation) -> tuple[Sequence[SSAValue], Sequence[SSAValue]]:
    if isinstance(op, linalg.BroadcastOp | linalg.ReduceOp):
        return (op.input,), (op.init,)
    assert isinstance(op, LinalgStructuredOperation)
    return op.inputs, op.outputs


def _linalg_maps(op: Operation) -> list[AffineMap]:
    """Indexing maps of a linalg op's operands (broadcast and reduce included)."""
    if isinstance(op, LinalgStructuredOperation):
        return [m.data for m in op.get_indexing_maps()]
    if isinstance(op, linalg.BroadcastOp):
        rank = len(memref_or_tensor_shape(op.init))
        added = set(op.dimensions.get_values())
        kept = [AffineDimExpr(d) for d in range(rank) if d not in added]
        return [AffineMap(rank, 0, tuple(kept)), AffineMap.identity(rank)]
    assert isinstance(op, linalg.ReduceOp)
    rank = len(memref_or_tensor_shape(op.input))
    reduced = set(op.dimensions.get_values())
    kept = [AffineDimExpr(d) for d in range(rank) if d not in reduced]
    return [AffineMap.identity(rank), AffineMap(rank, 0, tuple(kept))]


def memref_or_tensor_shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    assert isinstance(t, TensorType | MemRefType)
    return t.get_shape()


def _all_parallel(op: Operation) -> bool:
    if isinstance(op, LinalgStructuredOperation):
        return all("parallel" in str(t.data) for t in op.get_iterator_types())
    return isinstance(op, linalg.BroadcastOp)


def _reads_output(op: Operation, n_inputs: int, k: int) -> bool:
    """Whether the op reads the current contents of its `k`th output."""
    if isinstance(op, PoolingOperation | ConvOperation):
        return True  # xDSL's hidden pooling region ignores its accumulator; the op does not
    body = op.regions[0].block
    return bool(body.args[n_inputs + k].uses)


LINALG_OPS = (LinalgStructuredOperation, linalg.BroadcastOp, linalg.ReduceOp)


class FunctionBufferizer:
    """Bufferizes one function body (see the module docstring)."""

    def __init__(
        self,
        function: func.FuncOp,
        signatures: dict[str, Signature],
        globals_: Globals,
        order: OpOrder,
    ) -> None:
        self.function = function
        self.signatures = signatures
        self.globals = globals_
        self.order = order
        self.buffers: dict[SSAValue, Buffer] = {}
        self.roots: list[Root] = []
        self.dead_ops: list[Operation] = []
        self.dead_args: list[BlockArgument] = []
        self.out_params: list[BlockArgument] = []

    # ---- bookkeeping -------------------------------------------------------------------

    def bind(self, value: SSAValue, buffer: Buffer) -> None:
        self.buffers[value] = buffer
        buffer.root.tensors.append(value)

    def new_root(self, kind: RootKind, buffer: SSAValue | None, owner: Block | None) -> Root:
        root = Root(kind, buffer, owner)
        self.roots.append(root)
        return root

    def buffer(self, value: SSAValue) -> Buffer:
        try:
            return self.buffers[value]
        except KeyError:
            owner = value.owner
            op = owner if isinstance(owner, Operation) else owner.parent_op()
            raise PassError(
                "uses a tensor that bufferize could not convert (a tensor from outside the "
                "function?)",
                op,
            ) from None

    def alloc(self, t: Attribute, before: Operation) -> Buffer:
        """A fresh identity-layout buffer for tensor type `t`, allocated just before `before`."""
        op = memref.AllocOp([], [], memref_type(t))
        block = before.parent_block()
        assert block is not None
        block.insert_op_before(op, before)
        root = self.new_root(RootKind.ALLOC, op.memref, block)
        root.alloc = op
        return Buffer(op.memref, root)

    def copy(self, source: SSAValue, target: SSAValue, before: Operation) -> None:
        block = before.parent_block()
        assert block is not None
        block.insert_op_before(memref.CopyOp(source, target), before)

    def insert(self, op: Operation, before: Operation) -> Operation:
        block = before.parent_block()
        assert block is not None
        block.insert_op_before(op, before)
        return op

    def read(self, value: SSAValue, at: Operation) -> SSAValue:
        """A memref holding `value` for reading at `at` (an empty tensor gets fresh memory)."""
        b = self.buffer(value)
        if b.memref is None:
            return self.alloc(value.type, at).memref  # type: ignore[return-value]
        return b.memref

    def read_contiguous(self, value: SSAValue, at: Operation) -> Buffer:
        """Like `read`, but copied into a fresh buffer when the layout is not the identity."""
        b = self.buffer(value)
        if b.memref is None:
            return self.alloc(value.type, at)
        t = b.memref.type
        assert isinstance(t, MemRefType)
        if isinstance(t.layout, NoneAttr):
            return b
        fresh = self.alloc(value.type, at)
        assert fresh.memref is not None
        self.copy(b.memref, fresh.memref, at)
        return fresh

    def dead_after(self, root: Root, op: Operation) -> bool:
        return not any(is_live_after(t, op, self.order) for t in root.tensors)

    def destination(self, value: SSAValue, op: Operation, *, reads: bool, avoid: Root | None = None) -> Buffer:
        """The buffer `op` writes the new version of tensor `value` into."""
        b = self.buffer(value)
        if b.memref is None:
            return self.alloc(value.type, op)
        if b.covers and b.root.writable and b.root is not avoid and self.dead_after(b.root, op):
            return b
        fresh = self.alloc(value.type, op)
        if reads:
            assert fresh.memref is not None
            self.copy(b.memref, fresh.memref, op)
        return fresh

    def move(self, value: SSAValue, at: Operation, moved: set[Root], *, check_liveness: bool) -> SSAValue:
        """A buffer holding `value` whose ownership leaves the block of `at` through `at`."""
        b = self.buffer(value)
        block = at.parent_block()
        if (
            b.is_root
            and b.root.writable
            and b.root.owner is block
            and b.root not in moved
            and (not check_liveness or self.dead_after(b.root, at))
        ):
            moved.add(b.root)
            b.root.moved = True
            assert b.memref is not None
            return b.memref
        fresh = self.alloc(value.type, at)
        assert fresh.memref is not None
        if b.memref is not None:
            self.copy(b.memref, fresh.memref, at)
        fresh.root.moved = True
        return fresh.memref

    def region_argument(self, arg: BlockArgument) -> None:
        """Give tensor block argument `arg` an owned memref argument next to it."""
        block = arg.block
        new = block.insert_arg(memref_type(arg.type), arg.index)
        new.name_hint = arg.name_hint
        self.bind(arg, Buffer(new, self.new_root(RootKind.OWNED, new, block)))
        self.dead_args.append(arg)

    def region_results(self, old: Operation, new: Operation) -> None:
        block = new.parent_block()
        for r_old, r_new in zip(old.results, new.results, strict=True):
            if _is_tensor(r_old):
                self.bind(r_old, Buffer(r_new, self.new_root(RootKind.OWNED, r_new, block)))
            else:
                r_old.replace_all_uses_with(r_new)

    def replace_region_op(self, old: Operation, new: Operation) -> None:
        self.insert(new, old)
        self.order.same_position(new, old)
        new.location = old.location
        self.dead_ops.append(old)

    # ---- the walk ----------------------------------------------------------------------

    def run(self) -> None:
        body = self.function.body
        if len(body.blocks) != 1:
            raise PassError(f"with {len(body.blocks)} blocks " + CONTRACT, self.function)
        block = body.block
        signature = self.signatures[self.function.sym_name.data]
        for arg in [a for a in block.args if _is_tensor(a)]:
            new = block.insert_arg(memref_type(arg.type), arg.index)
            new.name_hint = arg.name_hint
            self.bind(arg, Buffer(new, self.new_root(RootKind.ARGUMENT, new, None)))
            self.dead_args.append(arg)
        for i in signature.tensor_results:
            out = block.insert_arg(memref_type(signature.outputs[i]), len(block.args))
            out.name_hint = "out" if len(signature.tensor_results) == 1 else f"out{i}"
            self.out_params.append(out)
        self.convert_block(block)
        for op in reversed(self.dead_ops):
            _erase(op)
        for arg in self.dead_args:
            arg.block.erase_arg(arg)
        place_deallocs(self.roots)

    def convert_block(self, block: Block) -> None:
        for op in list(block.ops):
            self.convert(op)

    def convert(self, op: Operation) -> None:
        if not touches_tensors(op):
            for region in op.regions:
                for block in region.blocks:
                    self.convert_block(block)
            return
        match op:
            case tensor.EmptyOp():
                if op.dynamic_sizes:
                    raise PassError("with dynamic sizes " + CONTRACT, op)
                self.bind(op.tensor, Buffer(None, self.new_root(RootKind.EMPTY, None, None)))
                self.dead_ops.append(op)
            case arith.ConstantOp():
                self.convert_constant(op)
            case _ if isinstance(op, LINALG_OPS):
                self.convert_linalg(op)
            case tensor.ExtractOp():
                load = self.insert(memref.LoadOp.get(self.read(op.tensor, op), op.indices), op)
                op.result.replace_all_uses_with(load.results[0])
                self.dead_ops.append(op)
            case tensor.InsertOp():
                dest = self.destination(op.dest, op, reads=True)
                assert dest.memref is not None
                self.insert(memref.StoreOp.get(op.scalar, dest.memref, op.indices), op)
                self.bind(op.result, dest)
                self.dead_ops.append(op)
            case tensor.FromElementsOp():
                self.convert_from_elements(op)
            case tensor.ExtractSliceOp():
                self.convert_extract_slice(op)
            case tensor.InsertSliceOp():
                self.convert_insert_slice(op)
            case tensor.CollapseShapeOp() | tensor.ExpandShapeOp():
                self.convert_reshape_view(op)
            case tensor.ReshapeOp():
                self.convert_reshape(op)
            case scf.ForOp():
                self.convert_for(op)
            case scf.IfOp():
                self.convert_if(op)
            case scf.WhileOp():
                self.convert_while(op)
            case scf.YieldOp() | scf.ConditionOp():
                self.convert_region_terminator(op)
            case func.CallOp():
                self.convert_call(op)
            case func.ReturnOp():
                self.convert_return(op)
            case _:
                raise PassError(CONTRACT, op)

    # ---- tensor ops --------------------------------------------------------------------

    def convert_constant(self, op: arith.ConstantOp) -> None:
        value = op.value
        if not isinstance(value, DenseIntOrFPElementsAttr):
            raise PassError(f"with a {value.name} value " + CONTRACT, op)
        t = memref_type(op.result.type)
        get = self.insert(memref.GetGlobalOp(self.globals.name_for(value, t), t), op)
        self.bind(op.result, Buffer(get.results[0], self.new_root(RootKind.GLOBAL, get.results[0], None)))
        self.dead_ops.append(op)

    def convert_from_elements(self, op: tensor.FromElementsOp) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        dest = self.alloc(t, op)
        assert dest.memref is not None
        shape = t.get_shape()
        constants: dict[int, SSAValue] = {}

        def index(i: int) -> SSAValue:
            if i not in constants:
                constants[i] = self.insert(arith.ConstantOp.from_int_and_width(i, IndexType()), op).results[0]
            return constants[i]

        for flat, element in enumerate(op.elements):
            position: list[int] = []
            rest = flat
            for n in reversed(shape):
                position.append(rest % n)
                rest //= n
            indices = [index(i) for i in reversed(position)]
            self.insert(memref.StoreOp.get(element, dest.memref, indices), op)
        self.bind(op.result, dest)
        self.dead_ops.append(op)

    def _static_slice(self, op: tensor.ExtractSliceOp | tensor.InsertSliceOp) -> tuple[list[int], list[int]]:
        sizes = list(op.static_sizes.get_values())
        strides = list(op.static_strides.get_values())
        if op.sizes or op.strides:
            raise PassError("with dynamic sizes or strides " + CONTRACT, op)
        if any(s < 1 for s in strides):
            raise PassError("with a stride below 1 " + CONTRACT, op)
        return sizes, strides

    def _subview(
        self,
        op: tensor.ExtractSliceOp | tensor.InsertSliceOp,
        source: SSAValue,
        result_shape: Sequence[int],
    ) -> SSAValue:
        sizes, strides = self._static_slice(op)
        source_type = source.type
        assert isinstance(source_type, MemRefType)
        if kept_dimensions(sizes, result_shape) is None:
            raise PassError(f"slice sizes {sizes} do not reduce to shape {list(result_shape)}", op)
        view = memref.SubviewOp(
            source,
            op.offsets,
            [],
            [],
            op.static_offsets,
            op.static_sizes,
            op.static_strides,
            subview_type(source_type, sizes, strides, result_shape),
        )
        return self.insert(view, op).results[0]

    def convert_extract_slice(self, op: tensor.ExtractSliceOp) -> None:
        self._static_slice(op)
        b = self.buffer(op.source)
        if b.memref is None:
            self.bind(op.result, Buffer(None, self.new_root(RootKind.EMPTY, None, None)))
        else:
            shape = memref_or_tensor_shape(op.result)
            self.bind(op.result, Buffer(self._subview(op, b.memref, shape), b.root, covers=False))
        self.dead_ops.append(op)

    def convert_insert_slice(self, op: tensor.InsertSliceOp) -> None:
        self._static_slice(op)
        source = self.buffer(op.source)
        # Writing a slice of a root into another slice of the same root would overlap.
        dest = self.destination(op.dest, op, reads=True, avoid=source.root)
        assert dest.memref is not None
        view = self._subview(op, dest.memref, memref_or_tensor_shape(op.source))
        self.copy(self.read(op.source, op), view, op)
        self.bind(op.result, dest)
        self.dead_ops.append(op)

    def convert_reshape_view(self, op: tensor.CollapseShapeOp | tensor.ExpandShapeOp) -> None:
        b = self.buffer(op.src)
        if b.memref is None:
            self.bind(op.result, Buffer(None, self.new_root(RootKind.EMPTY, None, None)))
            self.dead_ops.append(op)
            return
        if isinstance(op, tensor.ExpandShapeOp) and op.dynamic_output_shape:
            raise PassError("with a dynamic output shape " + CONTRACT, op)
        source_buffer = self.read_contiguous(op.src, op)
        source = source_buffer.memref
        assert source is not None
        t = memref_type(op.result.type)
        if isinstance(op, tensor.CollapseShapeOp):
            view = memref.CollapseShapeOp.create(
                operands=[source], result_types=[t], properties={"reassociation": op.reassociation}
            )
        else:
            view = memref.ExpandShapeOp.create(
                operands=[source],
                result_types=[t],
                properties={
                    "reassociation": op.reassociation,
                    "static_output_shape": op.static_output_shape,
                },
            )
        result = self.insert(view, op).results[0]
        self.bind(op.result, Buffer(result, source_buffer.root, covers=source_buffer.covers))
        self.dead_ops.append(op)

    def convert_reshape(self, op: tensor.ReshapeOp) -> None:
        """`tensor.reshape` to a static shape: collapse to 1-D, then expand (views, no copy)."""
        b = self.buffer(op.source)
        if b.memref is None:
            self.bind(op.result, Buffer(None, self.new_root(RootKind.EMPTY, None, None)))
            self.dead_ops.append(op)
            return
        source_buffer = self.read_contiguous(op.source, op)
        source = source_buffer.memref
        assert source is not None
        source_shape = memref_or_tensor_shape(op.source)
        target_shape = memref_or_tensor_shape(op.result)
        element = memref_type(op.result.type).get_element_type()
        flat = source
        if len(source_shape) != 1:
            n = 1
            for d in source_shape:
                n *= d
            flat_type = MemRefType(element, [n])
            if source_shape:
                flat = self.insert(
                    memref.CollapseShapeOp.create(
                        operands=[source],
                        result_types=[flat_type],
                        properties={"reassociation": _reassociation([list(range(len(source_shape)))])},
                    ),
                    op,
                ).results[0]
            else:
                flat = self.insert(
                    memref.ExpandShapeOp.create(
                        operands=[source],
                        result_types=[flat_type],
                        properties={
                            "reassociation": _reassociation([]),
                            "static_output_shape": _dense_i64([n]),
                        },
                    ),
                    op,
                ).results[0]
        result = flat
        if len(target_shape) != 1:
            t = MemRefType(element, target_shape)
            if target_shape:
                view = memref.ExpandShapeOp.create(
                    operands=[flat],
                    result_types=[t],
                    properties={
                        "reassociation": _reassociation([list(range(len(target_shape)))]),
                        "static_output_shape": _dense_i64(target_shape),
                    },
                )
            else:
                view = memref.CollapseShapeOp.create(
                    operands=[flat], result_types=[t], properties={"reassociation": _reassociation([])}
                )
            result = self.insert(view, op).results[0]
        self.bind(op.result, Buffer(result, source_buffer.root, covers=source_buffer.covers))
        self.dead_ops.append(op)

    # ---- linalg ------------------------------------------------------------------------

    def convert_linalg(self, op: Operation) -> None:
        ins, outs = _linalg_operands(op)
        maps = _linalg_maps(op)
        parallel = _all_parallel(op)
        n_in = len(ins)
        elementwise = parallel and isinstance(op, linalg.GenericOp | ElementwiseOperation)

        def root_of(v: SSAValue) -> Root | None:
            return self.buffer(v).root if _is_tensor(v) else None

        def hazard_free(root: Root, k: int) -> bool:
            """No operand but output k and inputs read through output k's map touch `root`."""
            for j, v in enumerate(ins):
                if root_of(v) is root:
                    same_point = parallel and maps[j] == maps[n_in + k] and _is_permutation(maps[j])
                    if not (same_point and self.buffer(v).covers):
                        return False
            return all(root_of(o) is not root for i, o in enumerate(outs) if i != k)

        # Decide every destination before touching the IR (liveness reads the original op).
        dests: list[Buffer] = []
        claimed: set[Root] = set()
        for k, out in enumerate(outs):
            if not _is_tensor(out):
                raise PassError("mixes tensor and buffer operands " + CONTRACT, op)
            b = self.buffer(out)
            reads = _reads_output(op, n_in, k)
            dest: Buffer | None = None
            if (
                b.memref is not None
                and b.covers
                and b.root.writable
                and b.root not in claimed
                and hazard_free(b.root, k)
                and self.dead_after(b.root, op)
            ):
                dest = b
            elif elementwise and (b.memref is None or not reads) and _is_permutation(maps[n_in + k]):
                for j, v in enumerate(ins):
                    if not _is_tensor(v) or v.type != out.type or maps[j] != maps[n_in + k]:
                        continue
                    candidate = self.buffer(v)
                    if (
                        candidate.memref is not None
                        and candidate.covers
                        and candidate.root.writable
                        and candidate.root not in claimed
                        and hazard_free(candidate.root, k)
                        and self.dead_after(candidate.root, op)
                    ):
                        dest = candidate
                        break
            if dest is None:
                dest = self.alloc(out.type, op)
                if reads and b.memref is not None:
                    assert dest.memref is not None
                    self.copy(b.memref, dest.memref, op)
            claimed.add(dest.root)
            dests.append(dest)

        new_ins = [self.read(v, op) if _is_tensor(v) else v for v in ins]
        new_outs = [d.memref for d in dests]
        assert all(m is not None for m in new_outs)
        regions = [op.detach_region(r) for r in list(op.regions)]
        new = type(op).create(
            operands=[*new_ins, *new_outs],  # type: ignore[list-item]
            result_types=[],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            regions=regions,
            location=op.location,
        )
        self.insert(new, op)
        self.order.same_position(new, op)
        for result, dest in zip(op.results, dests, strict=True):
            self.bind(result, dest)
        self.dead_ops.append(op)
        # A body may read other tensors (a gather's tensor.extract).
        for region in new.regions:
            for block in region.blocks:
                self.convert_block(block)

    # ---- control flow ------------------------------------------------------------------

    def move_inits(self, values: Sequence[SSAValue], op: Operation) -> list[SSAValue]:
        moved: set[Root] = set()
        return [self.move(v, op, moved, check_liveness=True) if _is_tensor(v) else v for v in values]

    def convert_for(self, op: scf.ForOp) -> None:
        inits = self.move_inits(op.iter_args, op)
        new = scf.ForOp(op.lb, op.ub, op.step, inits, Region())
        op.body.move_blocks(new.body)
        self.replace_region_op(op, new)
        block = new.body.block
        for arg in [a for a in block.args[1:] if _is_tensor(a)]:
            self.region_argument(arg)
        self.convert_block(block)
        self.region_results(op, new)

    def convert_if(self, op: scf.IfOp) -> None:
        types = [memref_type(t) if isinstance(t, TensorType) else t for t in op.result_types]
        new = scf.IfOp(op.cond, types, Region(), Region())
        op.true_region.move_blocks(new.true_region)
        op.false_region.move_blocks(new.false_region)
        self.replace_region_op(op, new)
        for region in new.regions:
            for block in region.blocks:
                self.convert_block(block)
        self.region_results(op, new)

    def convert_while(self, op: scf.WhileOp) -> None:
        inits = self.move_inits(op.arguments, op)
        types = [memref_type(t) if isinstance(t, TensorType) else t for t in op.result_types]
        new = scf.WhileOp(inits, types, Region(), Region())
        op.before_region.move_blocks(new.before_region)
        op.after_region.move_blocks(new.after_region)
        self.replace_region_op(op, new)
        for region in new.regions:
            block = region.block
            for arg in [a for a in block.args if _is_tensor(a)]:
                self.region_argument(arg)
            self.convert_block(block)
        self.region_results(op, new)

    def convert_region_terminator(self, op: scf.YieldOp | scf.ConditionOp) -> None:
        moved: set[Root] = set()
        values = op.args if isinstance(op, scf.ConditionOp) else op.arguments
        new_values = [self.move(v, op, moved, check_liveness=False) if _is_tensor(v) else v for v in values]
        new = scf.ConditionOp(op.condition, *new_values) if isinstance(op, scf.ConditionOp) else scf.YieldOp(*new_values)
        self.insert(new, op)
        self.dead_ops.append(op)

    # ---- calls -------------------------------------------------------------------------

    def convert_call(self, op: func.CallOp) -> None:
        signature = self.signatures.get(op.callee.string_value())
        if signature is None:
            raise PassError(f"calls {op.callee}, which is not a function of the module", op)
        args = [self.read_contiguous(v, op).memref if _is_tensor(v) else v for v in op.arguments]
        outs = [self.alloc(r.type, op) for r in op.results if _is_tensor(r)]
        scalar_types = [r.type for r in op.results if not _is_tensor(r)]
        new = self.insert(
            func.CallOp(op.callee, [*args, *(o.memref for o in outs)], scalar_types), op  # type: ignore[misc]
        )
        new.location = op.location
        out_iter = iter(outs)
        scalar_iter = iter(new.results)
        for r in op.results:
            if _is_tensor(r):
                self.bind(r, next(out_iter))
            else:
                r.replace_all_uses_with(next(scalar_iter))
        self.dead_ops.append(op)

    def convert_return(self, op: func.ReturnOp) -> None:
        if op.parent_op() is not self.function:
            raise PassError("outside its function's body " + CONTRACT, op)
        entry = self.function.body.block
        outs = iter(self.out_params)
        taken: dict[Root, SSAValue] = {}
        scalars: list[SSAValue] = []
        for v in op.arguments:
            if not _is_tensor(v):
                scalars.append(v)
                continue
            out = next(outs)
            b = self.buffer(v)
            root = b.root
            if b.memref is None:
                continue  # a tensor.empty: its contents are unspecified
            if (
                b.is_root
                and root.kind is RootKind.ALLOC
                and root.writable
                and root.owner is entry
                and root not in taken
                and root.alloc is not None
            ):
                taken[root] = out  # computed in the caller's buffer from the start (below)
            else:
                self.copy(b.memref, out, op)
        # After the copies, which may read a root that becomes an out-parameter.
        for root, out in taken.items():
            assert root.alloc is not None
            root.alloc.memref.replace_all_uses_with(out)
            _erase(root.alloc)
            root.alloc = None
            root.buffer = out
            root.moved = True
        new = self.insert(func.ReturnOp(*scalars), op)
        new.location = op.location
        self.dead_ops.append(op)


def _erase(op: Operation) -> None:
    block = op.parent_block()
    if block is not None:
        block.erase_op(op)
    else:
        op.erase()


def _dense_i64(values: Sequence[int]) -> Attribute:
    return DenseArrayBase.from_list(i64, list(values))


# --------------------------------------------------------------------------------------
# Deallocation
# --------------------------------------------------------------------------------------

VIEW_OPS = (memref.SubviewOp, memref.CollapseShapeOp, memref.ExpandShapeOp, memref.CastOp)


def memref_aliases(value: SSAValue) -> list[SSAValue]:
    """`value` and every view made of it, transitively."""
    result = [value]
    for v in result:
        for use in v.uses:
            if isinstance(use.operation, VIEW_OPS) and use.index == 0:
                result.extend(use.operation.results)
    return result


def _ancestor_in(op: Operation, block: Block) -> Operation | None:
    current: Operation | None = op
    while current is not None:
        parent = current.parent_block()
        if parent is block:
            return current
        current = parent.parent_op() if parent is not None else None
    return None


def place_deallocs(roots: Sequence[Root]) -> None:
    """One `memref.dealloc` per owned root that stays in its block, after its last use there."""
    positions: dict[Block, dict[Operation, int]] = {}

    def position(op: Operation, block: Block) -> int:
        if block not in positions:
            positions[block] = {o: i for i, o in enumerate(block.ops)}
        return positions[block][op]

    for root in roots:
        if root.kind not in (RootKind.ALLOC, RootKind.OWNED) or root.moved:
            continue
        block, buffer = root.owner, root.buffer
        assert block is not None and buffer is not None
        last: Operation | None = None
        for alias in memref_aliases(buffer):
            for use in alias.uses:
                user = _ancestor_in(use.operation, block)
                if user is None:
                    raise PassError(
                        "internal error: a buffer is used outside the block that owns it",
                        use.operation,
                    )
                if last is None or position(user, block) > position(last, block):
                    last = user
        dealloc = memref.DeallocOp.get(buffer)
        if last is None:
            if root.alloc is not None:
                _erase(root.alloc)  # never used: never needed
                continue
            if isinstance(buffer, OpResult):
                block.insert_op_after(dealloc, buffer.op)
            else:
                first = block.first_op
                assert first is not None
                block.insert_op_before(dealloc, first)
            continue
        if last is block.last_op and last.has_trait(IsTerminator):
            raise PassError(
                "internal error: a buffer that stays in its block reaches its terminator", last
            )
        block.insert_op_after(dealloc, last)


# --------------------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------------------


def bufferize_module(module: ModuleOp) -> None:
    """Bufferize every function of `module` in place (see the module docstring)."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    signatures = {
        f.sym_name.data: Signature(tuple(f.function_type.inputs), tuple(f.function_type.outputs))
        for f in functions
    }
    order = OpOrder(module)
    globals_ = Globals(module)
    for function in functions:
        if function.body.blocks:
            FunctionBufferizer(function, signatures, globals_, order).run()
    for function in functions:
        signature = signatures[function.sym_name.data]
        n_outs = len(signature.tensor_results)
        if n_outs == 0 and not any(isinstance(t, TensorType) for t in signature.inputs):
            continue
        function.function_type = signature.bufferized()
        if function.arg_attrs is not None:
            function.arg_attrs = ArrayAttr([*function.arg_attrs, *[DictionaryAttr({})] * n_outs])
        if function.res_attrs is not None:
            kept = [a for a, t in zip(function.res_attrs, signature.outputs) if not isinstance(t, TensorType)]
            function.res_attrs = ArrayAttr(kept) if kept else None


@dataclass(frozen=True)
class BufferizePass(ModulePass):
    """Convert tensors to memrefs: in-place writes where legal, every buffer freed when dead,
    tensor results written into caller-provided buffers.

    Input invariant: stage "linalg" (docs/design/cpu-pipeline.md). Output IR: stage
    "bufferized". See irgrad/lowering/bufferize.py for the ownership and in-place rules.
    """

    name = "bufferize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        bufferize_module(op)


__all__ = ["BufferizePass", "bufferize_module"]
