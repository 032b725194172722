"""`convert-memref-to-llvm`: memrefs to bare pointers (docs/design/cpu-pipeline.md, "llvm").

Input invariant: static shapes; identity layouts, or `strided<[...], offset: ...>` layouts
with static strides (offsets may be dynamic); element types f16, bf16, f32, f64, signless
integers, index.
Output IR: a memref value is one `!llvm.ptr` to the first element of its view.
- `memref.load`/`store`: `getelementptr inbounds` by sum(index_k * stride_k), the strides
  read from the type (an i1 element is a byte; stores write 0 or 1, loads test != 0);
- `memref.subview`: the source pointer advanced by sum(offset_k * source_stride_k), the
  dynamic offsets included; sizes and steps live in the result type's shape and strides;
- `memref.alloc`: `aligned_alloc(64, size rounded up to 64)`; `memref.dealloc`: `free`;
- `memref.alloca`: an `llvm.alloca` (64-byte aligned) in the function's entry block, so a
  loop does not grow the stack; above 64 KiB an `aligned_alloc` there, freed before every
  return of the function, so a large buffer cannot overflow the stack;
- `memref.copy`: `llvm.memcpy` when source and target are both contiguous, else an
  `scf.for` nest of element loads and stores (so this pass runs before convert-scf-to-cf);
- `memref.global`: an `llvm.mlir.global` (internal unless public, 64-byte aligned, zeros when
  uninitialized); `memref.get_global`: `llvm.mlir.addressof`;
- `memref.cast`, `collapse_shape`, `expand_shape`, `reinterpret_cast` (static): the same
  pointer; `memref.dim`, `memref.rank`: constants; `memref.assume_alignment`: erased.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    TensorType,
    UnitAttr,
    i1,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from irgrad.diagnostics import PassError
from irgrad.lowering.llvm.builder import LLVMBuilder
from irgrad.lowering.llvm.checks import check_no_ops_left
from irgrad.lowering.llvm.type_conversion import (
    ALLOC_ALIGNMENT,
    PTR,
    byte_size,
    is_scalar_type,
    storage_type,
)
from irgrad.lowering.rewriting import apply_conversion

PASS = "convert-memref-to-llvm"


# ---------------------------------------------------------------------------------------------
# Layouts
# ---------------------------------------------------------------------------------------------


def row_major_strides(shape: Sequence[int]) -> list[int]:
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    return strides


def checked_type(value: SSAValue, op: Operation) -> MemRefType:
    """The memref type of `value`, or a located error if it is outside the contract."""
    t = value.type
    if not isinstance(t, MemRefType):
        raise PassError(f"expected a memref, got {t}", op)
    t = cast(MemRefType[Attribute], t)
    if any(d < 0 for d in t.get_shape()):
        raise PassError(f"has dynamic shape {t}; {PASS} supports static shapes only", op)
    if not is_scalar_type(t.get_element_type()):
        raise PassError(f"has element type {t.get_element_type()}, not a scalar", op)
    strides_of(t, op)
    return t


def strides_of(t: MemRefType[Attribute], op: Operation) -> list[int]:
    """Element strides of a memref type; a located error when they are not static."""
    layout = t.layout
    shape = t.get_shape()
    if isinstance(layout, NoneAttr):
        return row_major_strides(shape)
    if isinstance(layout, StridedLayoutAttr):
        strides = [s.data if isinstance(s, IntAttr) else None for s in layout.strides]
        if any(s is None for s in strides):
            raise PassError(f"has dynamic strides ({t}); {PASS} needs static strides", op)
        return cast(list[int], strides)
    if isinstance(layout, AffineMapAttr) and layout.data.is_identity():
        return row_major_strides(shape)
    raise PassError(f"has layout {layout}, which {PASS} does not support", op)


def is_contiguous(t: MemRefType[Attribute], op: Operation) -> bool:
    """True when the elements are packed in row-major order (size-1 dims ignored)."""
    shape = t.get_shape()
    expected = row_major_strides(shape)
    return all(n == 1 or s == e for n, s, e in zip(shape, strides_of(t, op), expected, strict=True))


def element_offset(
    b: LLVMBuilder, indices: Sequence[SSAValue | int], strides: Sequence[int]
) -> SSAValue | int:
    """sum(index_k * stride_k) as an i64 value (or an int when all indices are static)."""
    static = 0
    terms: list[SSAValue] = []
    for index, stride in zip(indices, strides, strict=True):
        if isinstance(index, int):
            static += index * stride
            continue
        if stride == 0:
            continue
        term = index if stride == 1 else b.mul(index, b.const_int(stride), nsw=True)
        terms.append(term)
    if not terms:
        return static
    total = terms[0]
    for term in terms[1:]:
        total = b.add(total, term, nsw=True)
    if static:
        total = b.add(total, b.const_int(static), nsw=True)
    return total


def offset_pointer(
    b: LLVMBuilder, ptr: SSAValue, offset: SSAValue | int, element: Attribute
) -> SSAValue:
    if isinstance(offset, int) and offset == 0:
        return ptr
    return b.gep(ptr, offset, element)


def element_pointer(
    b: LLVMBuilder, op: Operation, ref: SSAValue, indices: Sequence[SSAValue]
) -> tuple[SSAValue, Attribute]:
    """The address of `ref[indices]` and the element's storage type."""
    t = checked_type(ref, op)
    element = storage_type(t.get_element_type())
    ptr = b.operand(ref)
    offset = element_offset(b, b.operands(indices), strides_of(t, op))
    return offset_pointer(b, ptr, offset, element), element


# ---------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------


class LoadLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        ptr, element = element_pointer(b, op, op.memref, op.indices)
        value = b.load(ptr, element)
        if op.res.type == i1:
            value = b.icmp("ne", value, b.const_int(0, i8))
        b.replace(op, value)


class StoreLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        ptr, element = element_pointer(b, op, op.memref, op.indices)
        value = b.operand(op.value)
        if op.value.type == i1:
            value = b.zext(value, i8)
        b.store(value, ptr)
        rewriter.erase(op)


class SubviewLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.SubviewOp, rewriter: PatternRewriter):
        source_type = checked_type(op.source, op)
        checked_type(op.result, op)
        b = LLVMBuilder(rewriter, op)
        dynamic = iter(b.operands(op.offsets))
        offsets: list[SSAValue | int] = [
            next(dynamic) if o == memref.DYNAMIC_INDEX else o
            for o in op.static_offsets.get_values()
        ]
        element = storage_type(source_type.get_element_type())
        offset = element_offset(b, offsets, strides_of(source_type, op))
        b.replace(op, offset_pointer(b, b.operand(op.source), offset, element))


def _buffer_bytes(t: MemRefType[Attribute]) -> int:
    return math.prod(t.get_shape()) * byte_size(storage_type(t.get_element_type()))


class AllocLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocOp, rewriter: PatternRewriter):
        t = checked_type(op.memref, op)
        alignment = ALLOC_ALIGNMENT
        if op.alignment is not None:
            alignment = max(alignment, op.alignment.value.data)  # type: ignore[union-attr]
        # C11 wants the size to be a multiple of the alignment; a zero size may give NULL.
        size = max(alignment, -(-_buffer_bytes(t) // alignment) * alignment)
        b = LLVMBuilder(rewriter, op)
        ptr = b.call("aligned_alloc", [b.const_int(alignment), b.const_int(size)], PTR)
        b.replace(op, ptr)


ALLOCA_LIMIT = 64 * 1024
"""Bytes; a larger `memref.alloca` is heap memory freed at every return (a stack of a few
MiB must not overflow on a large buffer)."""


class AllocaLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter):
        t = checked_type(op.memref, op)
        element = storage_type(t.get_element_type())
        here = LLVMBuilder(rewriter, op)
        function = _enclosing_function(op)
        if function is None:
            count = here.const_int(max(1, math.prod(t.get_shape())))
            here.replace(op, here.insert(llvm.AllocaOp(count, element, ALLOC_ALIGNMENT)))
            return
        # Constants first: the allocation goes right after them, atop the entry block.
        if _buffer_bytes(t) <= ALLOCA_LIMIT:
            count = here.const_int(max(1, math.prod(t.get_shape())))
            top = LLVMBuilder(rewriter, here.entry_point(function))
            ptr = top.insert(llvm.AllocaOp(count, element, alignment=ALLOC_ALIGNMENT))
        else:
            size = -(-_buffer_bytes(t) // ALLOC_ALIGNMENT) * ALLOC_ALIGNMENT
            args = [here.const_int(ALLOC_ALIGNMENT), here.const_int(size)]
            top = LLVMBuilder(rewriter, here.entry_point(function))
            ptr = top.call("aligned_alloc", args, PTR)
            for block in function.regions[0].blocks:
                if isinstance(block.last_op, func.ReturnOp | llvm.ReturnOp):
                    LLVMBuilder(rewriter, block.last_op).call("free", [ptr], None)
        here.replace(op, ptr)


def _enclosing_function(op: Operation) -> Operation | None:
    """The func.func or llvm.func around `op` (its entry block holds the allocas)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp | llvm.FuncOp):
        parent = parent.parent_op()
    return parent


class DeallocLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter):
        checked_type(op.memref, op)
        b = LLVMBuilder(rewriter, op)
        b.call("free", [b.operand(op.memref)], None)
        rewriter.erase(op)


class CopyLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CopyOp, rewriter: PatternRewriter):
        source_type = checked_type(op.source, op)
        target_type = checked_type(op.destination, op)
        if source_type.get_shape() != target_type.get_shape():
            raise PassError(f"copies {source_type} into {target_type}, whose shapes differ", op)
        b = LLVMBuilder(rewriter, op)
        if is_contiguous(source_type, op) and is_contiguous(target_type, op):
            size = b.const_int(_buffer_bytes(source_type))
            source, target = b.operand(op.source), b.operand(op.destination)
            volatile = b.const_int(0, i1)
            b.intrinsic("llvm.memcpy.p0.p0.i64", [target, source, size, volatile], None)
            rewriter.erase(op)
            return
        self.copy_loops(b, op, source_type, target_type)
        rewriter.erase(op)

    @staticmethod
    def copy_loops(
        b: LLVMBuilder,
        op: memref.CopyOp,
        source_type: MemRefType[Attribute],
        target_type: MemRefType[Attribute],
    ) -> None:
        """An scf.for nest copying element by element (the storage bits, unchanged)."""
        shape = source_type.get_shape()
        element = storage_type(source_type.get_element_type())
        source, target = b.operand(op.source), b.operand(op.destination)
        zero = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType()))
        one = b.insert(arith.ConstantOp.from_int_and_width(1, IndexType()))
        ivs: list[SSAValue] = []
        point = b.point
        for n in shape:
            upper = LLVMBuilder(b.rewriter, point).insert(
                arith.ConstantOp.from_int_and_width(n, IndexType())
            )
            body = Block(arg_types=[IndexType()])
            loop = scf.ForOp(zero, upper, one, [], Region(body))
            b.rewriter.insert(loop, point)
            yield_op = scf.YieldOp()
            body.add_op(yield_op)
            ivs.append(body.args[0])
            point = InsertPoint.before(yield_op)
        inner = LLVMBuilder(b.rewriter, point)
        indices = inner.operands(ivs)
        src = offset_pointer(
            inner, source, element_offset(inner, indices, strides_of(source_type, op)), element
        )
        dst = offset_pointer(
            inner, target, element_offset(inner, indices, strides_of(target_type, op)), element
        )
        inner.insert(llvm.StoreOp(inner.insert(llvm.LoadOp(src, element)), dst))


class GlobalLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GlobalOp, rewriter: PatternRewriter):
        t = op.type
        if not isinstance(t, MemRefType):
            raise PassError(f"global of type {t} is not a memref", op)
        t = cast(MemRefType[Attribute], t)
        if any(d < 0 for d in t.get_shape()) or not is_scalar_type(t.get_element_type()):
            raise PassError(f"global of type {t} is outside the contract", op)
        element = storage_type(t.get_element_type())
        count = math.prod(t.get_shape())
        data = global_bytes(op, t, count)
        value = DenseIntOrFPElementsAttr(TensorType(element, [count]), BytesAttr(data))
        public = op.sym_visibility.data == "public"
        alignment = ALLOC_ALIGNMENT
        if op.alignment is not None:
            alignment = max(alignment, op.alignment.value.data)
        new = llvm.GlobalOp(
            llvm.LLVMArrayType(count, element),
            op.sym_name,
            "external" if public else "internal",
            constant=op.constant is not None,
            value=value,
            alignment=alignment,
        )
        rewriter.replace(op, new)


def global_bytes(op: memref.GlobalOp, t: MemRefType[Attribute], count: int) -> bytes:
    """The global's elements as packed little-endian storage bytes."""
    size = byte_size(storage_type(t.get_element_type()))
    initial = op.initial_value
    if isinstance(initial, UnitAttr) or not isinstance(initial, DenseIntOrFPElementsAttr):
        return bytes(count * size)
    raw = initial.data.data
    if t.get_element_type() == i1:
        raw = bytes(1 if byte else 0 for byte in raw)  # xDSL packs true as 0xFF
    if len(raw) == size and count != 1:  # a splat
        raw = raw * count
    if len(raw) != count * size:
        raise PassError(f"initial value holds {len(raw) // size} elements, the type {count}", op)
    return raw


class GetGlobalLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GetGlobalOp, rewriter: PatternRewriter):
        checked_type(op.memref, op)
        b = LLVMBuilder(rewriter, op)
        b.replace(op, b.insert(llvm.AddressOfOp(op.name_, PTR)))


class ViewLowering(RewritePattern):
    """Casts and reshapes of contiguous buffers keep the pointer."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if not isinstance(
            op,
            memref.CastOp
            | memref.CollapseShapeOp
            | memref.ExpandShapeOp
            | memref.ReinterpretCastOp,
        ):
            return
        source, result = op.operands[0], op.results[0]
        checked_type(source, op)
        checked_type(result, op)
        if isinstance(op, memref.ReinterpretCastOp) and (op.offsets or op.sizes or op.strides):
            raise PassError("with dynamic offsets, sizes or strides is not supported", op)
        b = LLVMBuilder(rewriter, op)
        ptr = b.operand(source)
        if isinstance(op, memref.ReinterpretCastOp):
            # The result's offset is relative to the source's base: the bare pointer
            # has lost the base, so only offset 0 on a base buffer is meaningful.
            offsets = op.static_offsets.get_values()
            ptr = offset_pointer(
                b,
                ptr,
                offsets[0] if offsets else 0,
                storage_type(cast(MemRefType[Attribute], result.type).get_element_type()),
            )
        b.replace(op, ptr)


class MetadataLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        if isinstance(op, memref.DimOp):
            t = checked_type(op.source, op)
            index_op = op.index.owner
            if not (
                isinstance(index_op, arith.ConstantOp) and isinstance(index_op.value, IntegerAttr)
            ):
                raise PassError("needs a constant dimension index", op)
            dim = index_op.value.value.data  # type: ignore[union-attr]
            b.replace(op, b.const_int(t.get_shape()[dim], i64))
        elif isinstance(op, memref.RankOp):
            t = checked_type(op.memref, op)
            b.replace(op, b.const_int(t.get_num_dims(), i64))
        elif isinstance(op, memref.ExtractAlignedPointerAsIndexOp):
            b.replace(op, b.insert(llvm.PtrToIntOp(b.operand(op.source), i64)))
        elif isinstance(op, memref.AssumeAlignmentOp):
            rewriter.replace(op, [], [op.operands[0]] if op.results else [])


def memref_to_llvm_patterns() -> list[RewritePattern]:
    return [
        LoadLowering(),
        StoreLowering(),
        SubviewLowering(),
        AllocLowering(),
        AllocaLowering(),
        DeallocLowering(),
        CopyLowering(),
        GlobalLowering(),
        GetGlobalLowering(),
        ViewLowering(),
        MetadataLowering(),
    ]


@dataclass(frozen=True)
class ConvertMemRefToLLVMPass(ModulePass):
    """Lower memrefs to bare pointers: loads, stores, subviews, alloc/free, copies, globals.

    Input invariant: static shapes and strides (see the module doc). Output IR: llvm ops;
    strided copies become scf.for nests, so run it before convert-scf-to-cf. A memref op
    or type outside the contract is a located error.
    """

    name = "convert-memref-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_conversion(op, memref_to_llvm_patterns(), dialect="memref")
        check_no_ops_left(op, "memref", self.name)
