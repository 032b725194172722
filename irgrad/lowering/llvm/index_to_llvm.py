"""`convert-index-to-llvm`: `index` dialect ops (irgrad/dialects/index.py) to the `llvm` dialect.

Input invariant: `index` ops anywhere (their operands are `index` or, for the casts, signless
integers). Output IR: `llvm` ops on i64 (`index` is i64, see type_conversion.py); values of other
dialects' ops reach them through `builtin.unrealized_conversion_cast` (removed by
`reconcile-unrealized-casts`).

The patterns are MLIR's IndexToLLVM (mlir/lib/Conversion/IndexToLLVM/IndexToLLVM.cpp), except
the divisions, which use convert-arith-to-llvm's `integer_division` (one lowering for both
dialects, exact for every defined input, as the interpreter computes it; MLIR's ceildivs
expansion wraps for INT_MIN).

One deviation, shared with convert-arith-to-llvm: division never traps. A zero divisor, and
INT_MIN / -1 for the signed kinds, divide by 1 instead (the quotient is then the dividend,
wrapped for INT_MIN, the remainder 0), where `llvm.sdiv` would be undefined (a SIGFPE on x86).
The index dialect leaves these cases undefined; the reference interpreter raises on them.
Details: docs/design/cpu-backend.md, "irgrad/lowering/llvm/index_to_llvm.py".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerType, ModuleOp, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irgrad.dialects import index
from irgrad.lowering.llvm.arith_to_llvm import integer_division
from irgrad.lowering.llvm.builder import LLVMBuilder
from irgrad.lowering.llvm.checks import check_no_ops_left
from irgrad.lowering.llvm.type_conversion import convert_type
from irgrad.lowering.rewriting import apply_conversion

PASS = "convert-index-to-llvm"


BINARY: dict[type[Operation], type[Operation]] = {
    index.AddOp: llvm.AddOp,
    index.SubOp: llvm.SubOp,
    index.MulOp: llvm.MulOp,
    index.AndOp: llvm.AndOp,
    index.OrOp: llvm.OrOp,
    index.XOrOp: llvm.XOrOp,
    index.ShlOp: llvm.ShlOp,
    index.ShrSOp: llvm.AShrOp,
    index.ShrUOp: llvm.LShrOp,
}

MIN_MAX: dict[type[Operation], str] = {
    index.MaxSOp: "llvm.smax.i64",
    index.MaxUOp: "llvm.umax.i64",
    index.MinSOp: "llvm.smin.i64",
    index.MinUOp: "llvm.umin.i64",
}


DIVISIONS: dict[type[Operation], str] = {
    index.DivSOp: "divs",
    index.DivUOp: "divu",
    index.RemSOp: "rems",
    index.RemUOp: "remu",
    index.FloorDivSOp: "floordivs",
    index.CeilDivSOp: "ceildivs",
    index.CeilDivUOp: "ceildivu",
}


def _lowering(op_type: type[Operation]) -> Callable[[LLVMBuilder, SSAValue, SSAValue], SSAValue] | None:
    """How a two-operand index op becomes llvm on i64: one llvm op, an llvm min/max
    intrinsic, or convert-arith-to-llvm's `integer_division`."""
    if op_type in BINARY:
        return lambda b, lhs, rhs: b.binary(BINARY[op_type], lhs, rhs)
    if op_type in MIN_MAX:
        return lambda b, lhs, rhs: b.intrinsic(MIN_MAX[op_type], [lhs, rhs], i64)
    if op_type in DIVISIONS:
        return lambda b, lhs, rhs: integer_division(b, DIVISIONS[op_type], lhs, rhs)
    return None


class BinaryLowering(RewritePattern):
    """Every two-operand arithmetic op (add .. shru, max/min, the divisions): `_lowering`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        lower = _lowering(type(op))
        if lower is None:
            return
        b = LLVMBuilder(rewriter, op)
        lhs, rhs = b.operands(op.operands)
        b.replace(op, lower(b, lhs, rhs))


class CmpLowering(RewritePattern):
    """`index.cmp` is `llvm.icmp` with the same predicate."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: index.CmpOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        lhs, rhs = b.operands(op.operands)
        b.replace(op, b.icmp(op.pred.data.value, lhs, rhs))


class ConstantLowering(RewritePattern):
    """constant, bool.constant and sizeof: `llvm.mlir.constant`s."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        match op:
            case index.ConstantOp():
                value, t = op.value.value.data, i64
            case index.BoolConstantOp():
                value, t = op.value.value.data, IntegerType(1)
            case index.SizeOfOp():
                value, t = index.INDEX_BITWIDTH, i64
            case _:
                return
        b = LLVMBuilder(rewriter, op)
        b.replace(op, b.const_int(value, t))


class CastLowering(RewritePattern):
    """casts/castu: sign/zero-extend or truncate between i64 and the integer type."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if not isinstance(op, index.CastSOp | index.CastUOp):
            return
        b = LLVMBuilder(rewriter, op)
        x = b.operand(op.input)
        target = convert_type(op.output.type)
        b.replace(op, b.int_resize(x, target, signed=isinstance(op, index.CastSOp)))


def index_to_llvm_patterns() -> list[RewritePattern]:
    return [
        ConstantLowering(),
        BinaryLowering(),
        CmpLowering(),
        CastLowering(),
    ]


@dataclass(frozen=True)
class ConvertIndexToLLVMPass(ModulePass):
    """Lower `index` dialect ops to the llvm dialect on i64 (MLIR's IndexToLLVM).

    Input invariant: none (index ops anywhere). Output IR: llvm ops, joined to unconverted
    ops by unrealized casts. An index op it cannot lower is a located error.
    """

    name = "convert-index-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_conversion(op, index_to_llvm_patterns(), dialect="index")
        check_no_ops_left(op, "index", self.name)
