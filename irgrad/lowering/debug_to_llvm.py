"""`convert-debug-to-llvm`: `debug.print` to a call of the CPU runtime's print entry point.

Input invariant: `debug.print` on memrefs with identity layouts (bufferize copies a strided
view into a fresh buffer first) and static shapes.
Output IR: `llvm.call @irgrad_debug_print_<n>(i64 spec, ptr x_0, ..., ptr x_<n-1>)`, declared
in the module, one pointer per operand (its first element, as convert-memref-to-llvm gives
it). `spec` numbers the op's format string, operand names, shapes and dtypes in this
process's table (irgrad/backends/debug_print.py), which the runtime reads to view each
pointer as a numpy array. Memref operands reach the call through unrealized casts, as in
convert-blas-to-llvm, so run this pass before convert-memref-to-llvm.

Because the spec number is this process's, object code holding a print is never written to
the disk cache (irgrad/frontend/jit.py asks `has_debug_print`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import MemRefType, ModuleOp, NoneAttr
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irgrad.backends import debug_print
from irgrad.diagnostics import PassError
from irgrad.dialects.debug import PrintOp
from irgrad.frontend.dtypes import from_element_type
from irgrad.lowering.llvm_common import LLVMBuilder, apply_conversion, check_no_ops_left


def entry_point(count: int) -> str:
    """The runtime symbol for a print of `count` operands."""
    return f"irgrad_debug_print_{count}"


class PrintLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PrintOp, rewriter: PatternRewriter):
        arrays = []
        for v in op.inputs:
            t = cast(MemRefType[Attribute], v.type)
            if not isinstance(t, MemRefType) or not isinstance(t.layout, NoneAttr):
                raise PassError(f"operands must be memrefs with identity layouts, found {v.type}", op)
            arrays.append((tuple(t.get_shape()), from_element_type(t.get_element_type())))
        spec = debug_print.register(op.format.data, op.operand_names(), arrays)
        b = LLVMBuilder(rewriter, op)
        args = [b.const_int(spec), *(b.operand(v) for v in op.inputs)]
        b.call(entry_point(len(op.inputs)), args, None)
        rewriter.erase(op)


def has_debug_print(module: Operation) -> bool:
    return any(isinstance(op, PrintOp) for op in module.walk())


@dataclass(frozen=True)
class ConvertDebugToLLVMPass(ModulePass):
    """Lower debug.print to calls of the runtime's irgrad_debug_print_<n>.

    Input invariant: debug.print on identity-layout memrefs. Output IR: llvm.call ops and
    their declarations; memref operands through unrealized casts to !llvm.ptr.
    """

    name = "convert-debug-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_conversion(op, [PrintLowering()], dialect="debug")
        check_no_ops_left(op, "debug", self.name)
