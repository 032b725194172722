"""`llvm.addrspacecast`, with xDSL's `llvm` ops: the `llvm` dialect irgrad reads.

    %p = llvm.addrspacecast %q : !llvm.ptr<1> to !llvm.ptr

A pointer cast from one address space to another (upstream refuses `llvm.bitcast` for it).
xDSL's translation to LLVM IR has no such op: `as_bitcasts` writes each as a `bitcast`, which
irgrad/backends/gpu/ptx.py turns into LLVM's `addrspacecast` in the LLVM IR.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.rewriter import Rewriter
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class AddrSpaceCastOp(IRDLOperation):
    """A pointer in another address space."""

    name = "llvm.addrspacecast"

    arg = operand_def(llvm.LLVMPointerType)
    res = result_def(llvm.LLVMPointerType)

    traits = traits_def(Pure())

    assembly_format = "$arg attr-dict `:` type($arg) `to` type($res)"

    def __init__(self, arg: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[arg], result_types=[result_type])

    def verify_(self) -> None:
        if self.arg.type == self.res.type:
            raise VerifyException(f"llvm.addrspacecast changes the address space, not {self.arg.type} to itself")


def as_bitcasts(module: ModuleOp) -> None:
    """Each `llvm.addrspacecast` of `module` as an `llvm.bitcast`, for xDSL's LLVM translation."""
    for op in [o for o in module.walk() if isinstance(o, AddrSpaceCastOp)]:
        Rewriter.replace_op(op, llvm.BitcastOp(op.arg, op.res.type))


LLVM = Dialect("llvm", [*llvm.LLVM.operations, AddrSpaceCastOp], [*llvm.LLVM.attributes])
"""xDSL's `llvm` dialect with `llvm.addrspacecast`."""
