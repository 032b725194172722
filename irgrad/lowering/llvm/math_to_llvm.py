"""`convert-math-to-llvm`: scalar `math` ops to LLVM intrinsics and libm calls.

Input invariant: `math` ops on scalars (f16, bf16, f32, f64; integers for absi, ctlz, cttz,
ctpop). Output IR: `llvm.call_intrinsic` (`llvm.exp.f32`, ...), `llvm.call` of libm
functions declared in the module, or inline expansions; unrealized casts join the
unconverted ops.

Which implementation (the reference interpreter runs numpy, correctly rounded or within an
ulp or two):
- LLVM intrinsics where LLVM has one (arithmetic ones become instructions, transcendental
  ones calls of glibc's functions); libm calls for what has none (expm1, log1p, cbrt, ...).
- tanh on f32 (and f16/bf16, computed in f32): an inline rational approximation (XLA's and
  Eigen's), within 7 ulp of the exact tanh, because it vectorizes, and on the GPU it is
  shorter than a call.
- exp flushes subnormal results to 0 (as XLA's CPU backend does): glibc's vector exp leaves
  its fast path for such lanes and runs much slower there.
- rsqrt is 1 / sqrt(x); fpowi is pow(x, (float)n); f16 and bf16 functions but the exact ones
  are computed in f32 and rounded once, the interpreter's rule.
- `math.ipowi` has no lowering (no loop construct at this level).
Details: docs/design/cpu-backend.md, "irgrad/lowering/llvm/math_to_llvm.py".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xdsl.context import Context
from xdsl.dialects import llvm, math
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)

from irgrad.diagnostics import PassError
from irgrad.lowering.llvm.builder import LLVMBuilder
from irgrad.lowering.llvm.checks import check_no_ops_left, check_scalar_operands
from irgrad.lowering.llvm.type_conversion import convert_type, f32, intrinsic_suffix
from irgrad.lowering.rewriting import apply_conversion

PASS = "convert-math-to-llvm"

EXACT_INTRINSICS: dict[type[Operation], str] = {
    # Exact in every format: computed in the value's own type (bf16 through f32 anyway).
    math.AbsFOp: "llvm.fabs",
    math.CeilOp: "llvm.ceil",
    math.FloorOp: "llvm.floor",
    math.TruncOp: "llvm.trunc",
    math.RoundOp: "llvm.round",
    math.RoundEvenOp: "llvm.roundeven",
    math.CopySignOp: "llvm.copysign",
}

INTRINSICS: dict[type[Operation], str] = {
    math.SqrtOp: "llvm.sqrt",
    math.FmaOp: "llvm.fma",
    math.ExpOp: "llvm.exp",
    math.Exp2Op: "llvm.exp2",
    math.LogOp: "llvm.log",
    math.Log2Op: "llvm.log2",
    math.Log10Op: "llvm.log10",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.TanOp: "llvm.tan",
    math.AsinOp: "llvm.asin",
    math.AcosOp: "llvm.acos",
    math.AtanOp: "llvm.atan",
    math.Atan2Op: "llvm.atan2",
    math.SinhOp: "llvm.sinh",
    math.CoshOp: "llvm.cosh",
    math.PowFOp: "llvm.pow",
}

LIBM: dict[type[Operation], str] = {  # the f64 name; f32 adds "f"
    math.ExpM1Op: "expm1",
    math.Log1pOp: "log1p",
    math.CbrtOp: "cbrt",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
    math.ErfOp: "erf",
}

INTEGER_INTRINSICS: dict[type[Operation], tuple[str, bool]] = {  # name, takes is_poison flag
    math.AbsIOp: ("llvm.abs", True),
    math.CountLeadingZerosOp: ("llvm.ctlz", True),
    math.CountTrailingZerosOp: ("llvm.cttz", True),
    math.CtPopOp: ("llvm.ctpop", False),
}

# tanh(x) ~ x * P(x^2) / Q(x^2) on |x| <= TANH_CLAMP (XLA's EmitTanh, Eigen's ptanh_float).
TANH_CLAMP = 7.90531110763549805
TANH_SMALL = 0.0004
TANH_P = (
    -2.76076847742355e-16,
    2.00018790482477e-13,
    -8.60467152213735e-11,
    5.12229709037114e-08,
    1.48572235717979e-05,
    6.37261928875436e-04,
    4.89352455891786e-03,
)
TANH_Q = (
    1.19825839466702e-06,
    1.18534705686654e-04,
    2.26843463243900e-03,
    4.89352518554385e-03,
)


def compute_type(t: Attribute) -> Attribute:
    """The type a function of a `t` value is evaluated in: f32 for f16/bf16."""
    return f32 if isinstance(t, Float16Type | BFloat16Type) else t


def widen(b: LLVMBuilder, x: SSAValue, t: Attribute) -> SSAValue:
    return b.to_f32(x, t) if isinstance(t, Float16Type | BFloat16Type) else x


def narrow(b: LLVMBuilder, x: SSAValue, t: Attribute) -> SSAValue:
    return b.float_convert(x, f32, t) if isinstance(t, Float16Type | BFloat16Type) else x


def polynomial(b: LLVMBuilder, x2: SSAValue, coefficients: tuple[float, ...]) -> SSAValue:
    """Horner's rule in x2, highest degree first, each step an `llvm.fmuladd`: one fused
    multiply-add where the target has one (x86 with FMA, every NVIDIA GPU), a multiply and an
    add elsewhere. Only inside this expansion, whose error bound (module doc) holds either
    way; the user's own `arith.mulf` / `arith.addf` are never contracted (no fast-math)."""
    t = x2.type
    name = f"llvm.fmuladd.{intrinsic_suffix(t)}"
    acc = b.const_float(coefficients[0], t)
    for c in coefficients[1:]:
        acc = b.intrinsic(name, [acc, x2, b.const_float(c, t)], t)
    return acc


EXP_NORMAL_FROM = {"f32": -87.33, "f64": -708.3}
"""Just above ln of the smallest normal float (f32: -87.336, f64: -708.396): exp is normal from
here up, and glibc's vector exp is on its fast path (measured: f32 slow from -87.5, f64 from
-709)."""


def exp_in_fast_range(b: LLVMBuilder, x: SSAValue, t: Attribute) -> SSAValue:
    """exp(x), 0 where it would be subnormal or 0 (below EXP_NORMAL_FROM), so that exp's own
    argument never leaves the vector library's fast path at the low end (see the module doc):
    exp(select(x < bound, bound, x)) * (0 or 1). Multiplying by 1 is exact, and NaN propagates
    (NaN compares false, and NaN * 0 is NaN). The 0-or-1 comes from an integer compare of x's
    bits (for a negative bound, x < bound iff bits(x) > bits(bound) unsigned; a negative NaN is
    above too, and gives NaN * 0): with a float compare LLVM sees both selects test one
    condition and folds the product back into exp(x), the slow path."""
    suffix = intrinsic_suffix(t)
    value = EXP_NORMAL_FROM[suffix]
    bound = b.const_float(value, t)
    e = b.intrinsic(f"llvm.exp.{suffix}", [b.select(b.fcmp("olt", x, bound), bound, x)], t)
    width = 32 if suffix == "f32" else 64
    int_type = IntegerType(width)
    packed = np.array([value], np.float32 if width == 32 else np.float64).view(np.int32 if width == 32 else np.int64)
    bound_bits = b.const_int(int(packed[0]), int_type)
    below = b.icmp("ugt", b.bitcast(x, int_type), bound_bits)
    keep = b.select(below, b.const_float(0.0, t), b.const_float(1.0, t))
    return b.insert(llvm.FMulOp(e, keep))


def tanh_f32(b: LLVMBuilder, x: SSAValue) -> SSAValue:
    """The rational tanh approximation on an f32 (see the module doc)."""
    hi = b.const_float(TANH_CLAMP, f32)
    lo = b.const_float(-TANH_CLAMP, f32)
    # Compare-and-select clamps keep NaN (minnum/maxnum would drop it).
    clamped = b.select(b.fcmp("ogt", x, hi), hi, x)
    clamped = b.select(b.fcmp("olt", clamped, lo), lo, clamped)
    x2 = b.insert(llvm.FMulOp(clamped, clamped))
    p = b.insert(llvm.FMulOp(polynomial(b, x2, TANH_P), clamped))
    q = polynomial(b, x2, TANH_Q)
    # `afn`: the NVPTX backend divides as p * rcp.approx(q) (2 ulp) instead of the IEEE
    # div.rn.f32 sequence with its slow-path branch; q >= 4.9e-3, far from rcp's edge cases.
    # x86 keeps its exact divide. Either way the expansion stays within its bound (module doc).
    ratio = b.insert(llvm.FDivOp(p, q, llvm.FastMathAttr((llvm.FastMathFlag.APPROX_FUNC,))))
    absx = b.intrinsic("llvm.fabs.f32", [x], f32)
    tiny = b.fcmp("olt", absx, b.const_float(TANH_SMALL, f32))
    return b.select(tiny, x, ratio)


class FloatFunctionLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        kind = type(op)
        if not (
            kind in EXACT_INTRINSICS
            or kind in INTRINSICS
            or kind in LIBM
            or isinstance(op, math.TanhOp | math.RsqrtOp | math.FPowIOp)
        ):
            return
        check_scalar_operands(op, PASS)
        b = LLVMBuilder(rewriter, op)
        t = op.results[0].type
        args = b.operands(op.operands)
        if isinstance(op, math.FPowIOp):
            base = widen(b, args[0], t)
            exponent = b.sitofp(args[1], base.type)
            name = f"llvm.pow.{intrinsic_suffix(base.type)}"
            b.replace(op, narrow(b, b.intrinsic(name, [base, exponent], base.type), t))
            return
        if isinstance(t, BFloat16Type) or (
            isinstance(t, Float16Type) and kind not in EXACT_INTRINSICS
        ):
            args = [widen(b, a, t) for a in args]
        ct = args[0].type
        result = self.compute(b, op, args, ct)
        b.replace(op, narrow(b, result, t) if result.type != convert_type(t) else result)

    @staticmethod
    def compute(b: LLVMBuilder, op: Operation, args: list[SSAValue], ct: Attribute) -> SSAValue:
        kind = type(op)
        if isinstance(op, math.ExpOp):
            return exp_in_fast_range(b, args[0], ct)
        if kind in EXACT_INTRINSICS or kind in INTRINSICS:
            name = EXACT_INTRINSICS.get(kind) or INTRINSICS[kind]
            return b.intrinsic(f"{name}.{intrinsic_suffix(ct)}", args, ct)
        if isinstance(op, math.RsqrtOp):
            root = b.intrinsic(f"llvm.sqrt.{intrinsic_suffix(ct)}", args, ct)
            return b.insert(llvm.FDivOp(b.const_float(1.0, ct), root))
        if isinstance(op, math.TanhOp):
            if isinstance(ct, Float32Type):
                return tanh_f32(b, args[0])
            return b.intrinsic(f"llvm.tanh.{intrinsic_suffix(ct)}", args, ct)
        name = LIBM[kind] + ("f" if isinstance(ct, Float32Type) else "")
        if not isinstance(ct, Float32Type | Float64Type):  # f16 widened above
            raise PassError(f"has no lowering for {ct} in {PASS}", op)
        return b.call(name, args, ct)


class IntegerFunctionLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        entry = INTEGER_INTRINSICS.get(type(op))
        if entry is None:
            return
        check_scalar_operands(op, PASS)
        name, takes_flag = entry
        b = LLVMBuilder(rewriter, op)
        x = b.operand(op.operands[0])
        t = x.type
        assert isinstance(t, IntegerType)
        args = [x, b.const_int(0, i1)] if takes_flag else [x]
        b.replace(op, b.intrinsic(f"{name}.{intrinsic_suffix(t)}", args, t))


class UnsupportedLowering(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if isinstance(op, math.IPowIOp):
            raise PassError(
                f"has no lowering in {PASS} (integer powers need a loop; "
                "express them with scf.for and arith.muli)",
                op,
            )


def math_to_llvm_patterns() -> list[RewritePattern]:
    return [FloatFunctionLowering(), IntegerFunctionLowering(), UnsupportedLowering()]


@dataclass(frozen=True)
class ConvertMathToLLVMPass(ModulePass):
    """Lower scalar math ops to LLVM intrinsics, libm calls and inline tanh.

    Input invariant: math on scalars. Output IR: llvm ops and libm declarations, joined to
    unconverted ops by unrealized casts. A math op it cannot lower is a located error.
    """

    name = "convert-math-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_conversion(op, math_to_llvm_patterns(), dialect="math")
        check_no_ops_left(op, "math", self.name)
