"""The checks the `convert-*-to-llvm` passes share: an op they lower must be on contract
scalars, and no op of the converted dialect may be left once a pass is done; each failure is
a located PassError that names the remedy or the missing lowering.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from irgrad.diagnostics import PassError
from irgrad.lowering.llvm.type_conversion import is_scalar_type
from irgrad.lowering.rewriting import walk_ops


def check_scalar_operands(op: Operation, pass_name: str) -> None:
    """A located PassError unless every operand and result of `op` is a contract scalar."""
    for value in (*op.operands, *op.results):
        if not is_scalar_type(value.type):
            raise PassError(
                f"operates on {value.type}; {pass_name} lowers scalar ops only "
                "(run bufferize and convert-linalg-to-parallel-loops first)",
                op,
            )


def check_no_ops_left(module: ModuleOp, dialect: str, pass_name: str) -> None:
    """A located PassError at the first op of `dialect` still in `module`."""
    prefix = dialect + "."
    for op in walk_ops(module):
        if op.name.startswith(prefix):
            raise PassError(f"has no lowering in {pass_name}", op)
