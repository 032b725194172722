"""`LLVMBuilder`: how the `convert-*-to-llvm` passes build `llvm` dialect ops, through the
pass's rewriter, with operands and results cast between their original and llvm types
(irgrad/lowering/llvm/casts.py), constants hoisted and shared per function, and the ops
built most often made by `create` with shared property attributes. `branch` and
`cond_branch` build the terminators the same way.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from irgrad.lowering.llvm.casts import unrealized_cast
from irgrad.lowering.llvm.memo import memo
from irgrad.lowering.llvm.symbols import declare_function
from irgrad.lowering.llvm.type_conversion import PTR, bf16_bits, convert_type, f16, f32, f64, float_width


class LLVMBuilder:
    """Builds `llvm` ops before an insertion point, through the pass's rewriter.

    `operand(v)` gives `v` as a value of its llvm type (through a cast when the type
    changes); `replace(op, values)` replaces `op`'s results by llvm values, cast back to
    the result types. Every other method builds one op (or a short sequence) and returns
    its result.
    """

    def __init__(self, rewriter: PatternRewriter, at: Operation | InsertPoint):
        self.rewriter = rewriter
        self.point = InsertPoint.before(at) if isinstance(at, Operation) else at

    # -- plumbing ---------------------------------------------------------------------------

    def insert(self, op: Operation) -> SSAValue:
        self.rewriter.insert(op, self.point)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def operand(self, value: SSAValue) -> SSAValue:
        """`value` as its llvm type.

        The cast goes right after the value's definition and is shared by all its uses:
        one cast per value instead of one per use keeps the IR (and compile time) small.
        """
        target = convert_type(value.type)
        if target == value.type:
            return value
        owner = value.owner
        if (
            isinstance(owner, UnrealizedConversionCastOp)
            and len(owner.inputs) == 1
            and owner.inputs[0].type == target
        ):
            return owner.inputs[0]
        cached = value.__dict__.get(_CAST_OF)
        if cached is not None and cached.type == target and cached.owner.parent is not None:  # type: ignore[union-attr]
            return cached
        cast = unrealized_cast(value, target)
        if isinstance(value, BlockArgument):
            point = InsertPoint.at_start(value.block)
        else:
            point = InsertPoint.after(owner)  # type: ignore[arg-type]
        self.rewriter.insert(cast, point)
        value.__dict__[_CAST_OF] = cast.results[0]
        return cast.results[0]

    def operands(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        return [self.operand(v) for v in values]

    def result(self, value: SSAValue, original_type: Attribute) -> SSAValue:
        """An llvm value as a value of `original_type`."""
        if value.type == original_type:
            return value
        return self.insert(unrealized_cast(value, original_type))

    def replace(self, op: Operation, *values: SSAValue) -> None:
        """Replace `op` (whose results are in its original types) by llvm values."""
        results = [self.result(v, r.type) for v, r in zip(values, op.results, strict=True)]
        self.rewriter.replace(op, [], results)

    # -- constants --------------------------------------------------------------------------

    def const_int(self, value: int, t: Attribute = i64) -> SSAValue:
        if isinstance(t, IndexType):
            t = i64
        assert isinstance(t, IntegerType)
        width = t.width.data
        value &= (1 << width) - 1
        if value >= 1 << (width - 1):
            value -= 1 << width
        # Keyed by (value, width): the IntegerAttr, slow to build, only on a miss.
        return self._constant(
            (value, width), lambda: IntegerAttr.from_bool(value != 0) if width == 1 else IntegerAttr(value, t), t
        )

    def const_float(self, value: float, t: Attribute) -> SSAValue:
        """A float constant of type `t` (bf16 becomes its i16 bits)."""
        if isinstance(t, BFloat16Type):
            return self.const_int(bf16_bits(value), i16)
        assert isinstance(t, AnyFloat)
        sign = math.copysign(1.0, value) if isinstance(value, float) else 0.0
        return self.constant(_float_attr(type(value), value, sign, t), t)

    def constant(self, attr: Attribute, t: Attribute) -> SSAValue:
        """An `llvm.mlir.constant`, one per value and function, in the entry block."""
        return self._constant((attr, t), lambda: attr, t)

    def _constant(self, key: object, make_attr: Callable[[], Attribute], t: Attribute) -> SSAValue:
        """`constant(make_attr(), t)`, found by `key` in the function's cache first."""
        function = _function_of(self.point.block)
        if function is None:
            return self.insert(llvm.ConstantOp(make_attr(), t))
        cache = memo(function, _CONSTANTS)
        hit = cache.get(key)
        if hit is not None and hit.owner.parent is not None:  # type: ignore[union-attr]
            return hit
        op = llvm.ConstantOp(make_attr(), t)
        # In creation order at the top of the entry block, so the IR reads naturally.
        self.rewriter.insert(op, self.entry_point(function))
        cache[key] = cache[_LAST] = op.result
        return op.result

    def entry_point(self, function: Operation) -> InsertPoint:
        """Where function-wide values go: the entry block, after the hoisted constants."""
        entry = function.regions[0].first_block
        assert entry is not None
        last = memo(function, _CONSTANTS).get(_LAST)
        if last is not None and last.owner.parent is entry:  # type: ignore[union-attr]
            return InsertPoint.after(last.owner)  # type: ignore[arg-type]
        return InsertPoint.at_start(entry)

    # -- arithmetic -------------------------------------------------------------------------

    def binary(self, op_type: type[Operation], lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        if op_type in _OVERFLOW_OPS:
            return self._overflow_op(op_type, lhs, rhs, False)
        return self.insert(op_type(lhs, rhs))  # type: ignore[call-arg]

    def add(self, a: SSAValue, b: SSAValue, nsw: bool = False) -> SSAValue:
        return self._overflow_op(llvm.AddOp, a, b, nsw)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._overflow_op(llvm.SubOp, a, b, False)

    def mul(self, a: SSAValue, b: SSAValue, nsw: bool = False) -> SSAValue:
        return self._overflow_op(llvm.MulOp, a, b, nsw)

    def _overflow_op(self, op_type: type[Operation], a: SSAValue, b: SSAValue, nsw: bool) -> SSAValue:
        """An integer add, sub or mul, built with `create` and a shared flags attribute: the
        constructor builds a fresh `IntegerAttr` (and `IntegerType`) for the flags each
        time, 2.5 times the cost, and index arithmetic is most of what the lowering builds."""
        flags = _NSW_FLAGS if nsw else _NO_FLAGS
        return self.insert(op_type.create(operands=[a, b], result_types=[a.type], properties={"overflowFlags": flags}))

    def icmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        attr = _ICMP_PREDICATES.get(predicate)
        if attr is None:
            attr = _ICMP_PREDICATES[predicate] = IntegerAttr(llvm.ICmpPredicateFlag(predicate).to_int(), i64)
        return self.insert(llvm.ICmpOp.create(operands=[a, b], result_types=[i1], properties={"predicate": attr}))

    def float_binary(self, op_type: type[Operation], a: SSAValue, b: SSAValue, flags: Attribute | None = None) -> SSAValue:
        """`llvm.fadd`/`fsub`/`fmul`/`fdiv`/`frem` with fast-math `flags` (none by default)."""
        properties = {"fastmathFlags": NO_FASTMATH if flags is None else flags}
        return self.insert(op_type.create(operands=[a, b], result_types=[a.type], properties=properties))

    def load(self, ptr: SSAValue, t: Attribute) -> SSAValue:
        """`llvm.load` of a `t` (what `llvm.LoadOp(ptr, t)` builds, by `create`)."""
        return self.insert(llvm.LoadOp.create(operands=[ptr], result_types=[t], properties={"ordering": _NOT_ATOMIC}))

    def store(self, value: SSAValue, ptr: SSAValue) -> None:
        """`llvm.store` (what `llvm.StoreOp(value, ptr)` builds, by `create`)."""
        self.insert(llvm.StoreOp.create(operands=[value, ptr], properties={"ordering": _NOT_ATOMIC}))

    def fcmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """`llvm.fcmp` (what `llvm.FCmpOp(a, b, predicate)` builds, by `create`, the predicate
        attribute built once per name)."""
        attr = _FCMP_PREDICATES.get(predicate)
        if attr is None:
            attr = _FCMP_PREDICATES[predicate] = IntegerAttr(llvm.FCmpPredicateFlag(predicate).to_int(), i64)
        properties = {"predicate": attr, "fastmathFlags": NO_FASTMATH}
        return self.insert(llvm.FCmpOp.create(operands=[a, b], result_types=[i1], properties=properties))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        """`llvm.select` (what `llvm.SelectOp(cond, a, b)` builds, by `create`)."""
        return self.insert(
            llvm.SelectOp.create(operands=[cond, a, b], result_types=[a.type], properties={"fastmathFlags": NO_FASTMATH})
        )

    def and_(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.insert(llvm.AndOp(a, b))

    def or_(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.insert(llvm.OrOp(a, b))

    def xor(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.insert(llvm.XOrOp(a, b))

    def shl(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._overflow_op(llvm.ShlOp, a, b, False)

    def lshr(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.insert(llvm.LShrOp(a, b))

    def gep(self, ptr: SSAValue, offset: SSAValue | int, element: Attribute) -> SSAValue:
        """`getelementptr inbounds element, ptr, offset` (one index, in elements)."""
        if isinstance(offset, int):
            if -(2**31) <= offset < 2**31:  # a constant index of the GEP itself is an i32
                return self.insert(llvm.GEPOp.from_mixed_indices(ptr, [offset], element, inbounds=True))
            offset = self.const_int(offset)
        # `create` with shared properties: three times cheaper than the constructor, and
        # address arithmetic is the most frequent thing the lowering builds.
        properties = {**_GEP_DYNAMIC, "elem_type": element}
        return self.insert(
            llvm.GEPOp.create(operands=[ptr, offset], result_types=[PTR], properties=properties)
        )

    # -- casts ------------------------------------------------------------------------------

    def bitcast(self, value: SSAValue, t: Attribute) -> SSAValue:
        return self.insert(llvm.BitcastOp(value, t))

    def zext(self, value: SSAValue, t: Attribute) -> SSAValue:
        return self.insert(llvm.ZExtOp(value, t))

    def sext(self, value: SSAValue, t: Attribute) -> SSAValue:
        return self.insert(llvm.SExtOp(value, t))

    def trunc(self, value: SSAValue, t: Attribute) -> SSAValue:
        return self.insert(llvm.TruncOp(value, t))

    def int_resize(self, value: SSAValue, t: Attribute, signed: bool) -> SSAValue:
        """Sign/zero-extend or truncate an integer to type `t`."""
        src = value.type
        assert isinstance(src, IntegerType) and isinstance(t, IntegerType)
        if src.width.data == t.width.data:
            return value
        if src.width.data > t.width.data:
            return self.trunc(value, t)
        return self.sext(value, t) if signed else self.zext(value, t)

    def fpext(self, value: SSAValue, t: Attribute) -> SSAValue:
        return self.insert(llvm.FPExtOp(value, t))

    def fptrunc(self, value: SSAValue, t: Attribute) -> SSAValue:
        return self.insert(llvm.FPTruncOp(value, t))

    def sitofp(self, value: SSAValue, t: Attribute) -> SSAValue:
        return self.insert(llvm.SIToFPOp(value, t))

    def intrinsic(
        self, name: str, args: Sequence[SSAValue], result_type: Attribute | None
    ) -> SSAValue:
        """`llvm.call_intrinsic "name"(args)`; the name carries its type suffixes."""
        results = [] if result_type is None else [result_type]
        # What `llvm.CallIntrinsicOp(name, args, results)` builds, by `create`: the name and
        # segment-size attributes shared (the constructor builds three attributes per call).
        intrin = _INTRINSIC_NAMES.get(name)
        if intrin is None:
            intrin = _INTRINSIC_NAMES[name] = StringAttr(name)
        segments = _INTRINSIC_SEGMENTS.get(len(args))
        if segments is None:
            segments = _INTRINSIC_SEGMENTS[len(args)] = DenseArrayBase.from_list(i32, [len(args), 0])
        properties = {
            "intrin": intrin,
            "op_bundle_sizes": _NO_BUNDLES,
            "operandSegmentSizes": segments,
            "fastmathFlags": NO_FASTMATH,
        }
        return self.insert(llvm.CallIntrinsicOp.create(operands=list(args), result_types=results, properties=properties))

    def call(
        self, callee: str, args: Sequence[SSAValue], result_type: Attribute | None
    ) -> SSAValue:
        """A call of the C function `callee`, declared in the module on first use."""
        declare_function(self.point.block, callee, [a.type for a in args], result_type)
        return self.insert(llvm.CallOp(callee, *args, return_type=result_type))

    # -- float formats ----------------------------------------------------------------------

    def bf16_to_f32(self, bits: SSAValue) -> SSAValue:
        """Widening is exact: the bf16 bits are the high half of the f32."""
        wide = self.zext(bits, i32)
        return self.bitcast(self.shl(wide, self.const_int(16, i32)), f32)

    def f32_to_bf16(self, x: SSAValue) -> SSAValue:
        """Round an f32 to bf16 bits, to nearest even; NaN stays a (quiet) NaN."""
        bits = self.bitcast(x, i32)
        c16 = self.const_int(16, i32)
        high = self.lshr(bits, c16)
        lsb = self.and_(high, self.const_int(1, i32))
        bias = self.add(self.const_int(0x7FFF, i32), lsb)
        rounded = self.lshr(self.add(bits, bias), c16)
        quiet_nan = self.or_(high, self.const_int(0x40, i32))
        is_nan = self.fcmp("uno", x, x)
        return self.trunc(self.select(is_nan, quiet_nan, rounded), i16)

    def f64_to_f32_round_to_odd(self, x: SSAValue) -> SSAValue:
        """f64 -> f32 toward zero, last bit set when inexact, so that one more rounding to
        a narrower format (f16, bf16) is correct (as `numerics.cast_float` does)."""
        y = self.fptrunc(x, f32)
        back = self.fpext(y, f64)
        inexact = self.fcmp("one", back, x)  # false for NaN; inf == inf
        bits = self.bitcast(y, i32)
        abs_back = self.intrinsic("llvm.fabs.f64", [back], f64)
        abs_x = self.intrinsic("llvm.fabs.f64", [x], f64)
        away = self.and_(inexact, self.fcmp("ogt", abs_back, abs_x))
        bits = self.select(away, self.sub(bits, self.const_int(1, i32)), bits)
        bits = self.select(inexact, self.or_(bits, self.const_int(1, i32)), bits)
        return self.bitcast(bits, f32)

    def to_f32(self, x: SSAValue, t: Attribute) -> SSAValue:
        """A value of float type `t` (llvm form) widened to f32 (f16, bf16 or f32)."""
        if isinstance(t, BFloat16Type):
            return self.bf16_to_f32(x)
        if isinstance(t, Float16Type):
            return self.fpext(x, f32)
        assert isinstance(t, Float32Type), t
        return x

    def float_convert(self, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
        """Convert between float types with one rounding (llvm forms in and out)."""
        if src == dst:
            return x
        if isinstance(src, BFloat16Type):
            return self.float_convert(self.bf16_to_f32(x), f32, dst)
        if isinstance(dst, BFloat16Type):
            if isinstance(src, Float64Type):
                x = self.f64_to_f32_round_to_odd(x)
            elif isinstance(src, Float16Type):
                x = self.fpext(x, f32)
            return self.f32_to_bf16(x)
        if isinstance(src, Float64Type) and isinstance(dst, Float16Type):
            # LLVM would call __truncdfhf2, absent from many processes; round to odd first.
            return self.fptrunc(self.f64_to_f32_round_to_odd(x), f16)
        if float_width(src) < float_width(dst):
            return self.fpext(x, dst)
        return self.fptrunc(x, dst)


_CAST_OF = "_irgrad_llvm_cast"
"""On a value: the cast of it to its llvm type (`LLVMBuilder.operand`)."""
_CONSTANTS = "_irgrad_llvm_constants"
"""On a function: its llvm constants by (attribute, type), integers by (value, width);
`_LAST` is the latest one."""
_LAST = (llvm.LLVMVoidType(), llvm.LLVMVoidType())


_OVERFLOW_OPS = frozenset({llvm.AddOp, llvm.SubOp, llvm.MulOp, llvm.ShlOp})
"""The integer ops with `overflowFlags` (xDSL's ArithmeticBinOpOverflow)."""
_NO_FLAGS = IntegerAttr(0, 32)
_NOT_ATOMIC = IntegerAttr(0, i64)
NO_FASTMATH = llvm.FastMathAttr(None)
"""The fast-math flags of an op the user asked none for (shared: one attribute, not one per op)."""
_NSW_FLAGS = IntegerAttr(llvm.OverflowAttr((llvm.OverflowFlag.NO_SIGNED_WRAP,)).to_int(), 32)
_ICMP_PREDICATES: dict[str, IntegerAttr] = {}
"""`llvm.icmp` predicate name -> its attribute, built on first use."""
_FCMP_PREDICATES: dict[str, IntegerAttr] = {}
"""`llvm.fcmp` predicate name -> its attribute, built on first use."""
_INTRINSIC_NAMES: dict[str, StringAttr] = {}
_INTRINSIC_SEGMENTS: dict[int, DenseArrayBase] = {}
_NO_BUNDLES = DenseArrayBase.from_list(i32, ())


@functools.lru_cache(maxsize=4096)
def _float_attr(kind: type, value: float, sign: float, t: Attribute) -> FloatAttr:
    """FloatAttr(value, t), built once per value (attributes are immutable; building one,
    with its checks, was most of a float constant's cost). `kind` and `sign` are part of
    the key so that 1 and 1.0, 0.0 and -0.0, which are equal keys, get their own attribute."""
    return FloatAttr(value, t)

_GEP_DYNAMIC: dict[str, Attribute] = {
    "rawConstantIndices": DenseArrayBase.from_list(i32, [llvm.GEP_USE_SSA_VAL]),
    "noWrapFlags": IntegerAttr(0, 32),
    "inbounds": UnitAttr(),
}


def branch(dest: Block, arguments: Sequence[SSAValue]) -> llvm.BrOp:
    """`llvm.br` (what `llvm.BrOp(dest, *arguments)` builds, by `create`: a third of the cost)."""
    return llvm.BrOp.create(operands=list(arguments), successors=[dest])


def cond_branch(
    cond: SSAValue, then_block: Block, then_args: Sequence[SSAValue], else_block: Block, else_args: Sequence[SSAValue]
) -> llvm.CondBrOp:
    """`llvm.cond_br` (what `llvm.CondBrOp(...)` builds, by `create`), the segment sizes shared."""
    sizes = (len(then_args), len(else_args))
    segments = _BRANCH_SEGMENTS.get(sizes)
    if segments is None:
        segments = _BRANCH_SEGMENTS[sizes] = DenseArrayBase.from_list(i32, [1, *sizes])
    return llvm.CondBrOp.create(
        operands=[cond, *then_args, *else_args],
        successors=[then_block, else_block],
        properties={"operandSegmentSizes": segments},
    )


_BRANCH_SEGMENTS: dict[tuple[int, int], DenseArrayBase] = {}


def _function_of(block: Block | None) -> Operation | None:
    """The func.func or llvm.func whose body holds `block`."""
    from xdsl.dialects import func

    op = block.parent_op() if block is not None else None
    while op is not None and not isinstance(op, func.FuncOp | llvm.FuncOp):
        op = op.parent_op()
    return op
