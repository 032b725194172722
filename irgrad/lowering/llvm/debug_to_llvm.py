"""`convert-debug-to-llvm`: `debug.print` to a call of the CPU runtime's print entry point.

Input invariant: `debug.print` on memrefs with identity layouts (bufferize copies a strided
view into a fresh buffer first) and static shapes.
Output IR: `llvm.call @irgrad_debug_print_<n>(ptr spec, ptr x_0, ..., ptr x_<n-1>)`, declared
in the module, one pointer per operand (its first element, as convert-memref-to-llvm gives
it). `spec` points at a constant string of the module (`@_irgrad_print_spec_<k>`, one per
distinct print): the op's format string, operand names, shapes and dtypes as JSON
(irgrad/lowering/llvm/print_spec.py), which the runtime reads to view each pointer as a numpy
array. The object code is self-contained, so programs that print are disk-cached like any
other. Memref operands reach the call through unrealized casts, as in convert-blas-to-llvm,
so run this pass before convert-memref-to-llvm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import MemRefType, ModuleOp, NoneAttr
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irgrad.diagnostics import PassError
from irgrad.dialects.debug import PrintOp
from irgrad.tracing.dtypes import from_element_type
from irgrad.lowering.llvm.builder import LLVMBuilder
from irgrad.lowering.llvm.checks import check_no_ops_left
from irgrad.lowering.llvm.print_spec import encode_spec
from irgrad.lowering.llvm.symbols import StringGlobals
from irgrad.lowering.llvm.type_conversion import PTR
from irgrad.lowering.rewriting import apply_conversion


def entry_point(count: int) -> str:
    """The runtime symbol for a print of `count` operands."""
    return f"irgrad_debug_print_{count}"


SPEC_PREFIX = "_irgrad_print_spec"


class PrintLowering(RewritePattern):
    def __init__(self, module: ModuleOp) -> None:
        self.specs = StringGlobals(module, SPEC_PREFIX)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PrintOp, rewriter: PatternRewriter):
        arrays = []
        for v in op.inputs:
            t = cast(MemRefType[Attribute], v.type)
            if not isinstance(t, MemRefType) or not isinstance(t.layout, NoneAttr):
                raise PassError(f"operands must be memrefs with identity layouts, found {v.type}", op)
            arrays.append((tuple(t.get_shape()), from_element_type(t.get_element_type())))
        spec = self.specs.name(encode_spec(op.format.data, op.operand_names(), arrays))
        b = LLVMBuilder(rewriter, op)
        args = [b.insert(llvm.AddressOfOp(spec, PTR)), *(b.operand(v) for v in op.inputs)]
        b.call(entry_point(len(op.inputs)), args, None)
        rewriter.erase(op)


@dataclass(frozen=True)
class ConvertDebugToLLVMPass(ModulePass):
    """Lower debug.print to calls of the runtime's irgrad_debug_print_<n>.

    Input invariant: debug.print on identity-layout memrefs. Output IR: llvm.call ops and
    their declarations; memref operands through unrealized casts to !llvm.ptr.
    """

    name = "convert-debug-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_conversion(op, [PrintLowering(op)], dialect="debug")
        check_no_ops_left(op, "debug", self.name)
