"""`convert-func-to-llvm`: functions, calls and returns to the `llvm` dialect.

Input invariant: `func.func`s whose arguments and results are contract scalars or memrefs.
Output IR:
- `func.func @f` becomes `llvm.func @f` with the same name (the entry point's name), one
  `!llvm.ptr` per memref argument and scalars by value (`index` as i64, bf16 as i16); one
  result is returned as itself, several as an `!llvm.struct`; private functions get
  internal linkage, the others external;
- `func.call` becomes `llvm.call`, `func.return` becomes `llvm.return`;
- with `packed-interface=true` (the default) every public function with a body also gets
  `llvm.func @_irgrad_packed_f(%args: !llvm.ptr)`, the entry the runtime calls (MLIR's
  packed interface): `args` points at an array of pointers, one per argument then one per
  result; argument slot k points at the argument's value (for a memref, at a word holding
  its data pointer; i1 is one byte), result slot k points at where to store the result.
  One signature for every function, so a caller (ctypes) needs no per-type calling
  convention (f16 and bf16 scalars, struct returns); and the runtime can point a memref's
  slot straight at the data field of a numpy array object.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FunctionType,
    MemRefType,
    ModuleOp,
    UnitAttr,
    i1,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from irgrad.diagnostics import PassError
from irgrad.lowering.llvm.c_interface import PACKED_PREFIX
from irgrad.lowering.llvm.builder import LLVMBuilder
from irgrad.lowering.llvm.casts import convert_block_arguments
from irgrad.lowering.llvm.checks import check_no_ops_left
from irgrad.lowering.llvm.type_conversion import PTR, convert_type, is_scalar_type
from irgrad.lowering.rewriting import apply_conversion

PASS = "convert-func-to-llvm"


def result_type(types: tuple[Attribute, ...] | list[Attribute]) -> Attribute:
    """The llvm result type of a function returning `types`."""
    converted = [convert_type(t) for t in types]
    if not converted:
        return llvm.LLVMVoidType()
    if len(converted) == 1:
        return converted[0]
    return llvm.LLVMStructType.from_type_list(converted)


def check_signature(op: func.FuncOp) -> None:
    for t in (*op.function_type.inputs.data, *op.function_type.outputs.data):
        # A !llvm.ptr is already lowered (the context of an outlined parallel loop body).
        if not (is_scalar_type(t) or isinstance(t, MemRefType | llvm.LLVMPointerType)):
            raise PassError(
                f"has a {t} in its signature; {PASS} takes scalars, memrefs and !llvm.ptr only "
                "(run bufferize first)",
                op,
            )


def position(k: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [k])


class FuncLowering(RewritePattern):
    def __init__(self, packed_interface: bool):
        self.packed_interface = packed_interface

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter):
        check_signature(op)
        ft = op.function_type
        inputs = [convert_type(t) for t in ft.inputs.data]
        private = op.sym_visibility is not None and op.sym_visibility.data == "private"
        has_body = bool(op.body.blocks)
        linkage = "internal" if private and has_body else "external"
        body = rewriter.move_region_contents_to_new_regions(op.body)
        new = llvm.FuncOp(
            op.sym_name.data,
            llvm.LLVMFunctionType(inputs, result_type(ft.outputs.data)),
            linkage=llvm.LinkageAttr(linkage),
            body=body,
        )
        # One llvm argument per argument: MLIR's argument attributes (`llvm.noalias`) and
        # `no_inline` carry over, for the LLVM IR translation.
        if op.arg_attrs is not None:
            new.arg_attrs = op.arg_attrs
        if "no_inline" in op.attributes:
            new.no_inline = UnitAttr()
        new.location = op.location  # where an error about the function points
        rewriter.replace(op, new)
        if has_body:
            convert_block_arguments(rewriter, body.first_block)
        if self.packed_interface and has_body and not private:
            wrapper = packed_wrapper(new, ft)
            rewriter.insert(wrapper, InsertPoint.after(new))


def packed_wrapper(callee: llvm.FuncOp, ft: FunctionType) -> llvm.FuncOp:
    """`void _irgrad_packed_f(ptr args)`: unpack, call @f, store the results."""
    block = Block(arg_types=[PTR])
    args = block.args[0]
    wrapper = llvm.FuncOp(
        PACKED_PREFIX + callee.sym_name.data,
        llvm.LLVMFunctionType([PTR], llvm.LLVMVoidType()),
        linkage=llvm.LinkageAttr("external"),
        body=Region(block),
    )
    ret = llvm.ReturnOp()
    block.add_op(ret)

    b = LLVMBuilder(PatternRewriter(ret), ret)

    def slot(k: int) -> SSAValue:
        address = b.insert(llvm.GEPOp.from_mixed_indices(args, [k], PTR, inbounds=True))
        return b.insert(llvm.LoadOp(address, PTR))

    values: list[SSAValue] = []
    for k, t in enumerate(ft.inputs.data):
        pointer = slot(k)
        if isinstance(t, MemRefType):
            values.append(b.insert(llvm.LoadOp(pointer, PTR)))
        elif t == i1:
            byte = b.insert(llvm.LoadOp(pointer, i8))
            values.append(b.icmp("ne", byte, b.const_int(0, i8)))
        else:
            values.append(b.insert(llvm.LoadOp(pointer, convert_type(t))))
    out = callee.function_type.output
    returned = None if isinstance(out, llvm.LLVMVoidType) else out
    call = b.insert(llvm.CallOp(callee.sym_name.data, *values, return_type=returned))
    outputs = ft.outputs.data
    for k, t in enumerate(outputs):
        value = call
        if len(outputs) > 1:
            value = b.insert(llvm.ExtractValueOp(position(k), call, convert_type(t)))
        if t == i1:
            value = b.zext(value, i8)
        b.insert(llvm.StoreOp(value, slot(len(ft.inputs.data) + k)))
    return wrapper


class ReturnLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        values = b.operands(op.arguments)
        if not values:
            rewriter.replace(op, llvm.ReturnOp())
            return
        if len(values) == 1:
            rewriter.replace(op, llvm.ReturnOp(values[0]))
            return
        struct_type = llvm.LLVMStructType.from_type_list([v.type for v in values])
        packed = b.insert(llvm.UndefOp(struct_type))
        for k, value in enumerate(values):
            packed = b.insert(llvm.InsertValueOp(position(k), packed, value))
        rewriter.replace(op, llvm.ReturnOp(packed))


class CallLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter):
        for t in (*op.arguments.types, *op.result_types):
            if not (is_scalar_type(t) or isinstance(t, MemRefType)):
                raise PassError(f"passes a {t}; {PASS} takes scalars and memrefs only", op)
        b = LLVMBuilder(rewriter, op)
        args = b.operands(op.arguments)
        out = result_type(list(op.result_types))
        returned = None if isinstance(out, llvm.LLVMVoidType) else out
        call = b.insert(llvm.CallOp(op.callee.string_value(), *args, return_type=returned))
        if len(op.results) <= 1:
            b.replace(op, *([call] if op.results else []))
            return
        parts = [
            b.insert(llvm.ExtractValueOp(position(k), call, convert_type(r.type)))
            for k, r in enumerate(op.results)
        ]
        b.replace(op, *parts)


@dataclass(frozen=True)
class ConvertFuncToLLVMPass(ModulePass):
    """Lower func.func/call/return to llvm.func/call/return, with packed entry wrappers.

    Input invariant: scalar and memref signatures. Output IR: llvm functions taking one
    pointer per memref; `@_irgrad_packed_<name>` wrappers for public functions (option
    `packed-interface`).
    """

    name = "convert-func-to-llvm"

    packed_interface: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_conversion(
            op,
            [FuncLowering(self.packed_interface), ReturnLowering(), CallLowering()],
            dialect="func",
        )
        check_no_ops_left(op, "func", self.name)
