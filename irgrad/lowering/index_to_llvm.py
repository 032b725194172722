"""`convert-index-to-llvm`: `index` dialect ops (irgrad/dialects/index.py) to the `llvm` dialect.

Input invariant: `index` ops anywhere (their operands are `index` or, for the casts, signless
integers). Output IR: `llvm` ops on i64 (`index` is i64, see llvm_common); values of other
dialects' ops reach them through `builtin.unrealized_conversion_cast` (removed by
`reconcile-unrealized-casts`).

The patterns are MLIR's IndexToLLVM (mlir/lib/Conversion/IndexToLLVM/IndexToLLVM.cpp):
- add/sub/mul/and/or/xor/shl/shrs/shru are one llvm op each; maxs/maxu/mins/minu the
  `llvm.smax`/`umax`/`smin`/`umin` intrinsics; cmp is `llvm.icmp` with the same predicate;
  casts/castu sign/zero-extend or truncate; constant, bool.constant and sizeof (64) are
  `llvm.mlir.constant`s;
- floordivs and ceildivu are MLIR's expansions, op for op:
  floordivs(n, m): x = m < 0 ? 1 : -1;  (n < 0) != (m < 0) && n != 0 ? -1 - (x - n) / m
                                                                     : n / m
  ceildivu(n, m):  n == 0 ? 0 : (n - 1) / m + 1
- ceildivs is not: MLIR's `-(-n / m)` wraps for n = INT_MIN (ceildivs(INT_MIN, 2) came out
  +2^62), so it is q + (r != 0 && (r > 0) == (m > 0)) with q, r the truncating quotient and
  remainder: exact for every defined input, as the interpreter computes it.

One deviation, shared with convert-arith-to-llvm: division never traps. MLIR's `llvm.sdiv`
on a zero divisor or INT_MIN / -1 is undefined and a SIGFPE on x86 would kill the process,
so a zero divisor is replaced by 1 first (the quotient is then the dividend, the remainder
0) and each signed division (remainder) of INT_MIN by -1 divides by 1 instead, which gives
the wrapped result INT_MIN (remainder 0). The index dialect leaves these cases undefined;
the reference interpreter raises on them.
"""

from __future__ import annotations

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
from irgrad.lowering.llvm_common import (
    LLVMBuilder,
    apply_conversion,
    check_no_ops_left,
    convert_type,
)

PASS = "convert-index-to-llvm"

INDEX_MIN = -(1 << (index.INDEX_BITWIDTH - 1))

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


def nonzero(b: LLVMBuilder, d: SSAValue) -> SSAValue:
    """`d`, or 1 where it is 0."""
    zero, one = b.const_int(0, i64), b.const_int(1, i64)
    return b.select(b.icmp("eq", d, zero), one, d)


def sdiv(
    b: LLVMBuilder, a: SSAValue, d: SSAValue, is_neg_one: SSAValue, rem: bool = False
) -> SSAValue:
    """`a / d` (or `a % d`) signed, for a nonzero `d` (`is_neg_one` is `d == -1`): INT_MIN / -1
    divides by 1 instead, the wrapped quotient (and remainder 0) without the trap."""
    overflow = b.and_(b.icmp("eq", a, b.const_int(INDEX_MIN, i64)), is_neg_one)
    safe = b.select(overflow, b.const_int(1, i64), d)
    return b.binary(llvm.SRemOp if rem else llvm.SDivOp, a, safe)


class BinaryLowering(RewritePattern):
    """add, sub, mul, and, or, xor, shl, shrs, shru: one llvm op each."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        target = BINARY.get(type(op))
        if target is None:
            return
        b = LLVMBuilder(rewriter, op)
        lhs, rhs = b.operands(op.operands)
        b.replace(op, b.binary(target, lhs, rhs))


class MinMaxLowering(RewritePattern):
    """maxs, maxu, mins, minu: `llvm.smax`/`umax`/`smin`/`umin`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        intrinsic = MIN_MAX.get(type(op))
        if intrinsic is None:
            return
        b = LLVMBuilder(rewriter, op)
        lhs, rhs = b.operands(op.operands)
        b.replace(op, b.intrinsic(intrinsic, [lhs, rhs], i64))


class DivisionLowering(RewritePattern):
    """divs, divu, rems, remu: sdiv/udiv/srem/urem with the divisor made safe."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if not isinstance(op, index.DivSOp | index.DivUOp | index.RemSOp | index.RemUOp):
            return
        b = LLVMBuilder(rewriter, op)
        a, d = b.operands(op.operands)
        d = nonzero(b, d)
        match op:
            case index.DivSOp() | index.RemSOp():
                is_neg_one = b.icmp("eq", d, b.const_int(-1, i64))
                result = sdiv(b, a, d, is_neg_one, rem=isinstance(op, index.RemSOp))
            case index.DivUOp():
                result = b.binary(llvm.UDivOp, a, d)
            case _:
                result = b.binary(llvm.URemOp, a, d)
        b.replace(op, result)


class CeilDivSLowering(RewritePattern):
    """`q = n / m`, `r = n % m` (truncating), then `q + 1` where the division was inexact and
    the exact quotient positive (`r != 0` and r, m of one sign). Not MLIR's expansion, which
    computes `-n` and so wraps for n = INT_MIN: this one is exact for every defined input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: index.CeilDivSOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        n, m = b.operands(op.operands)
        m = nonzero(b, m)
        zero, one, neg_one = (b.const_int(v, i64) for v in (0, 1, -1))
        is_neg_one = b.icmp("eq", m, neg_one)
        quotient = sdiv(b, n, m, is_neg_one)
        remainder = sdiv(b, n, m, is_neg_one, rem=True)
        inexact = b.icmp("ne", remainder, zero)
        same_sign = b.icmp("eq", b.icmp("sgt", remainder, zero), b.icmp("sgt", m, zero))
        round_up = b.and_(inexact, same_sign)
        b.replace(op, b.add(quotient, b.select(round_up, one, zero)))


class FloorDivSLowering(RewritePattern):
    """MLIR's expansion: `x = m < 0 ? 1 : -1`, then `n*m < 0 ? -1 - (x-n)/m : n/m`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: index.FloorDivSOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        n, m = b.operands(op.operands)
        m = nonzero(b, m)
        zero, pos_one, neg_one = (b.const_int(v, i64) for v in (0, 1, -1))
        is_neg_one = b.icmp("eq", m, neg_one)
        # x
        m_neg = b.icmp("slt", m, zero)
        x = b.select(m_neg, pos_one, neg_one)
        # The negative result.
        x_minus_n = b.sub(x, n)
        neg_res = b.sub(neg_one, sdiv(b, x_minus_n, m, is_neg_one))
        # The positive result.
        pos_res = sdiv(b, n, m, is_neg_one)
        # The negative result where n and m have different signs and n != 0.
        n_neg = b.icmp("slt", n, zero)
        diff_sign = b.icmp("ne", n_neg, m_neg)
        n_nonzero = b.icmp("ne", n, zero)
        b.replace(op, b.select(b.and_(diff_sign, n_nonzero), neg_res, pos_res))


class CeilDivULowering(RewritePattern):
    """MLIR's expansion: `n == 0 ? 0 : (n-1)/m + 1`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: index.CeilDivUOp, rewriter: PatternRewriter):
        b = LLVMBuilder(rewriter, op)
        n, m = b.operands(op.operands)
        m = nonzero(b, m)
        zero, one = b.const_int(0, i64), b.const_int(1, i64)
        quotient = b.binary(llvm.UDivOp, b.sub(n, one), m)
        plus_one = b.add(quotient, one)
        b.replace(op, b.select(b.icmp("eq", n, zero), zero, plus_one))


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
        MinMaxLowering(),
        DivisionLowering(),
        CeilDivSLowering(),
        FloorDivSLowering(),
        CeilDivULowering(),
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
        apply_conversion(op, index_to_llvm_patterns())
        check_no_ops_left(op, "index", self.name)
