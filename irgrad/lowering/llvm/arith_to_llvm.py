"""`convert-arith-to-llvm`: scalar `arith` ops to the `llvm` dialect.

Input invariant: `arith` ops on scalars (signless integers, `index`, f16, bf16, f32, f64);
dense (tensor or vector) constants are gone (bufferize turned them into `memref.global`s).
Output IR: `llvm` ops; values of other dialects' ops reach them through
`builtin.unrealized_conversion_cast` (removed by `reconcile-unrealized-casts`).

Semantics kept exactly as the reference interpreter computes them:
- `maximumf`/`minimumf` are `llvm.maximum`/`llvm.minimum` (NaN propagates, -0 < +0),
  `maxnumf`/`minnumf` are `llvm.maximumnum`/`llvm.minimumnum` (IEEE 754-2019: NaN dropped,
  -0 < +0); never `llvm.maxnum`, whose signed zeros are unspecified.
- Integer division and remainder never trap: a zero divisor (and INT_MIN / -1) divides by
  1 instead, since a SIGFPE would kill the process (arith leaves both undefined; the
  contract's guarded divisions never reach them).
- `fptosi`/`fptoui` saturate (`llvm.fptosi.sat`): in range they equal arith's result and
  out of range arith's result is poison. xDSL's llvm dialect has no fptosi, fptoui or
  uitofp op, so the first two are intrinsics and `uitofp` is built from `sitofp`.
- bf16 computes in f32 and rounds to nearest even after every op (as ml_dtypes does);
  conversions to f16/bf16 from f64 round once (to odd in f32 first).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irgrad.diagnostics import PassError
from irgrad.dialects.upstream import arith as upstream_arith
from irgrad.lowering.llvm.builder import NO_FASTMATH, LLVMBuilder
from irgrad.lowering.llvm.checks import check_no_ops_left, check_scalar_operands
from irgrad.lowering.llvm.type_conversion import convert_type, f64, float_width, intrinsic_suffix
from irgrad.lowering.rewriting import apply_conversion

PASS = "convert-arith-to-llvm"

INTEGER_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
}

FLOAT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
    upstream_arith.RemFOp: llvm.FRemOp,  # fmod: exact, so computing bf16 in f32 is too
}

FLOAT_INTRINSICS: dict[type[Operation], str] = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaxnumfOp: "llvm.maximumnum",
    arith.MinnumfOp: "llvm.minimumnum",
}

MIN_MAX: dict[type[Operation], str] = {  # icmp predicate choosing the first operand
    arith.MaxSIOp: "sgt",
    arith.MinSIOp: "slt",
    arith.MaxUIOp: "ugt",
    arith.MinUIOp: "ult",
}

CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


def fastmath_of(op: Operation) -> llvm.FastMathAttr:
    """The op's `fastmath` flags as llvm's (none unless the user asked)."""
    flags = op.properties.get("fastmath")
    if flags is None or not flags.data:  # type: ignore[attr-defined]
        return NO_FASTMATH
    return llvm.FastMathAttr(tuple(flags.data))  # type: ignore[attr-defined]


def int_width(t: Attribute) -> int:
    t = convert_type(t)
    assert isinstance(t, IntegerType)
    return t.width.data


class IntegerBinaryLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        target = INTEGER_BINARY.get(type(op))
        if target is None:
            return
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        lhs, rhs = b.operands(op.operands)
        b.replace(op, b.binary(target, lhs, rhs))


class MinMaxIntegerLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        predicate = MIN_MAX.get(type(op))
        if predicate is None:
            return
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        lhs, rhs = b.operands(op.operands)
        b.replace(op, b.select(b.icmp(predicate, lhs, rhs), lhs, rhs))


DIVISION_KINDS: dict[type[Operation], str] = {
    arith.DivSIOp: "divs",
    arith.DivUIOp: "divu",
    arith.RemSIOp: "rems",
    arith.RemUIOp: "remu",
    arith.FloorDivSIOp: "floordivs",
    arith.CeilDivSIOp: "ceildivs",
    arith.CeilDivUIOp: "ceildivu",
}


def integer_division(b: LLVMBuilder, kind: str, a: SSAValue, d: SSAValue) -> SSAValue:
    """`a / d` of one of DIVISION_KINDS' kinds on integers of width > 1, with the divisor made
    safe (a zero divisor, and INT_MIN / -1 for the signed kinds, divide by 1: no trap; see the
    module doc). Floor and ceiling come from the truncating quotient and remainder, exact for
    every defined input. Shared with convert-index-to-llvm."""
    t = a.type
    width = int_width(t)
    zero, one = b.const_int(0, t), b.const_int(1, t)
    unsafe = b.icmp("eq", d, zero)
    if kind in ("divs", "rems", "floordivs", "ceildivs"):
        overflow = b.and_(
            b.icmp("eq", a, b.const_int(-(1 << (width - 1)), t)),
            b.icmp("eq", d, b.const_int(-1, t)),
        )
        unsafe = b.or_(unsafe, overflow)
    safe = b.select(unsafe, one, d)
    if kind in ("divs", "divu", "rems", "remu"):
        target = {"divs": llvm.SDivOp, "divu": llvm.UDivOp, "rems": llvm.SRemOp, "remu": llvm.URemOp}[kind]
        return b.binary(target, a, safe)
    if kind == "ceildivu":
        q = b.binary(llvm.UDivOp, a, safe)
        r = b.binary(llvm.URemOp, a, safe)
        return b.select(b.icmp("ne", r, zero), b.add(q, one), q)
    # floordivs / ceildivs: q - 1 / q + 1 where inexact and r, d of other / one sign.
    q = b.binary(llvm.SDivOp, a, safe)
    r = b.binary(llvm.SRemOp, a, safe)
    floor = kind == "floordivs"
    signs = b.icmp("ne" if floor else "eq", b.icmp("slt", r, zero), b.icmp("slt", safe, zero))
    adjust = b.and_(b.icmp("ne", r, zero), signs)
    return b.select(adjust, b.sub(q, one) if floor else b.add(q, one), q)


class DivisionLowering(RewritePattern):
    """Integer division and remainder, with the divisor made safe (see the module doc)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        kind = DIVISION_KINDS.get(type(op))
        if kind is None:
            return
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        a, d = b.operands(op.operands)
        if int_width(a.type) == 1:
            # i1: the only defined divisor is true, so the quotient is the dividend.
            b.replace(op, b.const_int(0, a.type) if kind in ("rems", "remu") else a)
            return
        b.replace(op, integer_division(b, kind, a, d))


class FloatBinaryLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        target = FLOAT_BINARY.get(type(op))
        intrinsic = FLOAT_INTRINSICS.get(type(op))
        if target is None and intrinsic is None:
            return
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        t = op.results[0].type
        lhs, rhs = b.operands(op.operands)
        if isinstance(t, BFloat16Type):
            lhs, rhs = b.bf16_to_f32(lhs), b.bf16_to_f32(rhs)
        compute_type = lhs.type
        if target is not None:
            result = b.float_binary(target, lhs, rhs, fastmath_of(op))
        else:
            name = f"{intrinsic}.{intrinsic_suffix(compute_type)}"
            result = b.intrinsic(name, [lhs, rhs], compute_type)
        if isinstance(t, BFloat16Type):
            result = b.f32_to_bf16(result)
        b.replace(op, result)


class NegfLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter):
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        x = b.operand(op.operand)
        if isinstance(op.result.type, BFloat16Type):
            sign = b.const_int(-0x8000, x.type)
            b.replace(op, b.xor(x, sign))  # exact, NaN payload kept, like numpy
            return
        b.replace(op, b.insert(llvm.FNegOp(x)))


class ConstantLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter):
        value = op.value
        if isinstance(value, DenseIntOrFPElementsAttr) or not isinstance(
            value, IntegerAttr | FloatAttr
        ):
            raise PassError(
                f"dense constant of type {op.result.type} cannot be lowered by {PASS}; "
                "bufferize turns tensor constants into memref.global first",
                op,
            )
        b = LLVMBuilder(rewriter, op)
        t = op.result.type
        if isinstance(value, FloatAttr):
            b.replace(op, b.const_float(value.value.data, t))
        else:
            b.replace(op, b.const_int(value.value.data, t))


class CmpiLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter):
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        lhs, rhs = b.operands(op.operands)
        predicate = CMPI_PREDICATES[op.predicate.value.data]
        b.replace(op, b.icmp(predicate, lhs, rhs))


class CmpfLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter):
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        predicate = CMPF_PREDICATES[op.predicate.value.data]
        if predicate in ("false", "true"):
            b.replace(op, b.const_int(predicate == "true", IntegerType(1)))
            return
        lhs, rhs = b.operands(op.operands)
        if isinstance(op.lhs.type, BFloat16Type):
            lhs, rhs = b.bf16_to_f32(lhs), b.bf16_to_f32(rhs)
        b.replace(op, b.fcmp(predicate, lhs, rhs))


class SelectLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter):
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        cond, lhs, rhs = b.operands(op.operands)
        b.replace(op, b.select(cond, lhs, rhs))


class IntegerCastLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        match op:
            case arith.ExtSIOp() | arith.IndexCastOp():
                signed = True
            case arith.ExtUIOp() | arith.TruncIOp() | upstream_arith.IndexCastUIOp():
                signed = False
            case _:
                return
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        x = b.operand(op.operands[0])
        b.replace(op, b.int_resize(x, convert_type(op.results[0].type), signed))


class IntToFloatLowering(RewritePattern):
    """sitofp/uitofp: to f32/f64/f16 directly; to bf16 through f64 then one rounding."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if not isinstance(op, arith.SIToFPOp | arith.UIToFPOp):
            return
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        x = b.operand(op.operands[0])
        t = op.results[0].type
        # The interpreter converts integers to bf16 through f64 (exact below 2**53).
        compute = f64 if isinstance(t, BFloat16Type) else t
        if isinstance(op, arith.SIToFPOp):
            result = b.sitofp(x, compute)
        else:
            result = self.unsigned_to_float(b, x, compute)
        if isinstance(t, BFloat16Type):
            result = b.float_convert(result, f64, t)
        b.replace(op, result)

    @staticmethod
    def unsigned_to_float(b: LLVMBuilder, x: SSAValue, t: Attribute) -> SSAValue:
        width = int_width(x.type)
        if width < 64:
            return b.sitofp(b.zext(x, i64), t)
        # u64: halve with the lost bit kept sticky, convert, double (exact: one rounding).
        one = b.const_int(1, x.type)
        halved = b.or_(b.lshr(x, one), b.and_(x, one))
        as_half = b.sitofp(halved, t)
        doubled = b.insert(llvm.FAddOp(as_half, as_half))
        direct = b.sitofp(x, t)
        return b.select(b.icmp("slt", x, b.const_int(0, x.type)), doubled, direct)


class FloatToIntLowering(RewritePattern):
    """fptosi/fptoui: the saturating intrinsics (f16/bf16 are widened to f32, exactly)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if not isinstance(op, arith.FPToSIOp | arith.FPToUIOp):
            return
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        src = op.operands[0].type
        x = b.operand(op.operands[0])
        if float_width(src) == 16:
            x = b.to_f32(x, src)
        t = convert_type(op.results[0].type)
        kind = "fptosi" if isinstance(op, arith.FPToSIOp) else "fptoui"
        name = f"llvm.{kind}.sat.{intrinsic_suffix(t)}.{intrinsic_suffix(x.type)}"
        b.replace(op, b.intrinsic(name, [x], t))


class FloatCastLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if not isinstance(op, arith.ExtFOp | arith.TruncFOp):
            return
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        x = b.operand(op.operands[0])
        b.replace(op, b.float_convert(x, op.operands[0].type, op.results[0].type))


class BitcastLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.BitcastOp, rewriter: PatternRewriter):
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        x = b.operand(op.input)
        t = convert_type(op.result.type)
        b.replace(op, x if x.type == t else b.bitcast(x, t))


def arith_to_llvm_patterns() -> list[RewritePattern]:
    return [
        ConstantLowering(),
        IntegerBinaryLowering(),
        MinMaxIntegerLowering(),
        DivisionLowering(),
        FloatBinaryLowering(),
        NegfLowering(),
        CmpiLowering(),
        CmpfLowering(),
        SelectLowering(),
        IntegerCastLowering(),
        IntToFloatLowering(),
        FloatToIntLowering(),
        FloatCastLowering(),
        BitcastLowering(),
    ]


@dataclass(frozen=True)
class ConvertArithToLLVMPass(ModulePass):
    """Lower scalar arith ops (integers, index, f16, bf16, f32, f64) to the llvm dialect.

    Input invariant: arith on scalars only. Output IR: llvm ops, joined to unconverted ops
    by unrealized casts. An arith op it cannot lower is a located error.
    """

    name = "convert-arith-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_conversion(op, arith_to_llvm_patterns(), dialect="arith")
        check_no_ops_left(op, "arith", self.name)
