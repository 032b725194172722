"""What the `convert-*-to-llvm` passes share: the type conversion, the casts that let each
pass run on its own, and a builder of `llvm` dialect ops.

Why unrealized casts: each pass converts only its own dialect (as MLIR's conversions do). An
op it rewrites takes its operands through `builtin.unrealized_conversion_cast` to their
`llvm` types and casts its results back to the original types, so the IR stays well typed
between passes; `reconcile-unrealized-casts` removes the cast pairs once every dialect is
converted (the last step of `convert-to-llvm`).

The type conversion (docs/design/cpu-pipeline.md, stage "llvm"):
- `index` is `i64`;
- `bf16` is its 16 bits in an `i16` (LLVM's `bfloat` has no arithmetic on x86 and neither
  llvmlite nor xDSL's translation knows it): arithmetic extends to f32 and rounds back to
  nearest even after every op, which is what numpy (ml_dtypes) computes;
- `f16` stays `half` (LLVM promotes each op to f32 and rounds back, as numpy does);
- a memref is one `!llvm.ptr` to its first element (the bare-pointer model; strides come
  from the type);
- in memory an `i1` element takes one byte (numpy's bool), an `index` element 8 bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    TensorType,
    UnitAttr,
    UnrealizedConversionCastOp,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.reconcile_unrealized_casts import _try_remove_cast_chain  # pyright: ignore[reportPrivateUsage]
from xdsl.traits import SymbolTable

from irgrad.diagnostics import PassError
from irgrad.lowering.rewriting import apply_conversion, walk_ops  # noqa: F401  (re-exported: the conversions use them)

PTR = llvm.LLVMPointerType()
f16 = Float16Type()
f32 = Float32Type()
f64 = Float64Type()

ALLOC_ALIGNMENT = 64
"""Bytes; `memref.alloc` buffers start on a cache line (and an AVX-512 vector)."""


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


def convert_type(t: Attribute) -> Attribute:
    """The `llvm` dialect type of a value of type `t` (the identity for legal types)."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, BFloat16Type):
        return i16
    if isinstance(t, MemRefType):
        return PTR
    return t


def storage_type(element_type: Attribute) -> Attribute:
    """The `llvm` type one memref element of `element_type` is stored as."""
    if isinstance(element_type, IntegerType) and element_type.width.data == 1:
        return i8
    return convert_type(element_type)


def byte_size(llvm_type: Attribute) -> int:
    """Size in bytes of a storage type."""
    if isinstance(llvm_type, IntegerType):
        return max(1, llvm_type.width.data // 8)
    if isinstance(llvm_type, Float16Type):
        return 2
    if isinstance(llvm_type, Float32Type):
        return 4
    if isinstance(llvm_type, Float64Type):
        return 8
    if isinstance(llvm_type, llvm.LLVMPointerType):
        return 8
    raise ValueError(f"no byte size for {llvm_type}")


def is_signless_integer(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNLESS


def is_native_float(t: Attribute) -> bool:
    """A float type LLVM computes in directly (bf16 is emulated)."""
    return isinstance(t, Float16Type | Float32Type | Float64Type)


def is_scalar_type(t: Attribute) -> bool:
    """The scalar types of the contract: signless integers, index, f16, bf16, f32, f64."""
    return is_signless_integer(t) or isinstance(t, IndexType | BFloat16Type) or is_native_float(t)


def is_legal_llvm_type(t: Attribute) -> bool:
    """True for the types stage "llvm" allows on values."""
    if isinstance(t, llvm.LLVMStructType):
        return all(is_legal_llvm_type(e) for e in t.types.data)
    return (
        is_signless_integer(t)
        or is_native_float(t)
        or isinstance(t, llvm.LLVMPointerType | llvm.LLVMVoidType | llvm.LLVMArrayType)
    )


def bf16_bits(value: float) -> int:
    """The bits of `value` rounded to bf16 (to nearest even), as a signed i16 value."""
    bits = int(np.array(value, dtype=np.float64).astype(ml_dtypes.bfloat16).view(np.uint16))
    return bits - (1 << 16) if bits >= 1 << 15 else bits


def float_bits_f32(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Applying conversion patterns
# ---------------------------------------------------------------------------------------------


def reconcile_casts(root: Operation) -> None:
    """xDSL's `reconcile-unrealized-casts` (each chain of casts that cancels out removed, the
    others left for `assert_stage_llvm` to name), offered the casts only.

    xDSL's pass runs its greedy worklist over every op of the module, and re-offers each op
    whose operands changed: 0.19 s for the 2,200 casts of a transformer step's 20,000 ops.
    Here the casts are taken from one list walk and swept until a sweep removes nothing
    (one sweep, but for a cast whose user was a multi-input cast), each chain by xDSL's own
    `_try_remove_cast_chain`, with the same result."""
    rewriter = _DirectRewriter()
    casts = [op for op in walk_ops(root) if isinstance(op, UnrealizedConversionCastOp)]
    while casts:
        for cast in casts:
            if cast.parent is not None:
                _try_remove_cast_chain(cast, rewriter, False)  # pyright: ignore[reportArgumentType]
        survivors = [cast for cast in casts if cast.parent is not None]
        if len(survivors) == len(casts):
            return
        casts = survivors


class _DirectRewriter:
    """The two rewriter calls `_try_remove_cast_chain` makes, without a PatternRewriter's
    listeners and bookkeeping."""

    @staticmethod
    def replace(op: Operation, new_ops: Sequence[Operation], new_results: Sequence[SSAValue]) -> None:
        Rewriter.replace_op(op, new_ops, new_results)

    @staticmethod
    def erase(op: Operation) -> None:
        Rewriter.erase_op(op)


# ---------------------------------------------------------------------------------------------
# Building llvm ops
# ---------------------------------------------------------------------------------------------


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
        cast = _cast(value, target)
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
        return self.insert(_cast(value, original_type))

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
        # Keyed by (value, width): the IntegerAttr (14 us to build) only on a miss.
        return self._constant(
            (value, width), lambda: IntegerAttr.from_bool(value != 0) if width == 1 else IntegerAttr(value, t), t
        )

    def const_float(self, value: float, t: Attribute) -> SSAValue:
        """A float constant of type `t` (bf16 becomes its i16 bits)."""
        if isinstance(t, BFloat16Type):
            return self.const_int(bf16_bits(value), i16)
        assert isinstance(t, AnyFloat)
        return self.constant(FloatAttr(value, t), t)

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
        return self.insert(llvm.FCmpOp(a, b, predicate))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.insert(llvm.SelectOp(cond, a, b))

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
            return self.insert(llvm.GEPOp.from_mixed_indices(ptr, [offset], element, inbounds=True))
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
        return self.insert(llvm.CallIntrinsicOp(name, list(args), results))

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


def memo(owner: object, name: str) -> dict[Any, Any]:
    """A dict kept in `owner`'s own `__dict__` under `name`, so it lives exactly as long as the
    op or value it describes. Why not a global WeakKeyDictionary: these memos hold IR that
    points back at its key (a constant's result at its function, a declaration at its
    module), so such a dictionary kept every module ever lowered alive (about 1,100 objects
    per compile, found by compiling a new function in a loop)."""
    found = owner.__dict__.get(name)
    if found is None:
        found = owner.__dict__[name] = {}
    return found


_CAST_OF = "_irgrad_llvm_cast"
"""On a value: the cast of it to its llvm type (`LLVMBuilder.operand`)."""
_CONSTANTS = "_irgrad_llvm_constants"
"""On a function: its llvm constants by (attribute, type), integers by (value, width);
`_LAST` is the latest one."""
_LAST = (llvm.LLVMVoidType(), llvm.LLVMVoidType())
_DECLARED = "_irgrad_llvm_declared"
"""On a module: the functions `declare_function` found or declared in it, by name."""


_OVERFLOW_OPS = frozenset({llvm.AddOp, llvm.SubOp, llvm.MulOp, llvm.ShlOp})
"""The integer ops with `overflowFlags` (xDSL's ArithmeticBinOpOverflow)."""
_NO_FLAGS = IntegerAttr(0, 32)
_NOT_ATOMIC = IntegerAttr(0, i64)
NO_FASTMATH = llvm.FastMathAttr(None)
"""The fast-math flags of an op the user asked none for (shared: one attribute, not one per op)."""
_NSW_FLAGS = IntegerAttr(llvm.OverflowAttr((llvm.OverflowFlag.NO_SIGNED_WRAP,)).to_int(), 32)
_ICMP_PREDICATES: dict[str, IntegerAttr] = {}
"""`llvm.icmp` predicate name -> its attribute, built on first use."""

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


def _cast(value: SSAValue, t: Attribute) -> UnrealizedConversionCastOp:
    return UnrealizedConversionCastOp.create(operands=[value], result_types=[t])


def _function_of(block: Block | None) -> Operation | None:
    """The func.func or llvm.func whose body holds `block`."""
    from xdsl.dialects import func

    op = block.parent_op() if block is not None else None
    while op is not None and not isinstance(op, func.FuncOp | llvm.FuncOp):
        op = op.parent_op()
    return op


def float_width(t: Attribute) -> int:
    if isinstance(t, Float16Type | BFloat16Type):
        return 16
    if isinstance(t, Float32Type):
        return 32
    if isinstance(t, Float64Type):
        return 64
    raise ValueError(f"{t} is not a float type")


def intrinsic_suffix(t: Attribute) -> str:
    """The type suffix of an overloaded intrinsic name: f32, f64, f16, i32, ..."""
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    return f"f{float_width(t)}"


class StringGlobals:
    """A module's constant C strings (NUL-terminated bytes) as internal `llvm.mlir.global`s,
    one per distinct text, named `<prefix>_<k>` (k skipping names the module already has):
    the messages of failed asserts (convert-cf-to-llvm), the specs of prints
    (convert-debug-to-llvm)."""

    def __init__(self, module: ModuleOp, prefix: str) -> None:
        self.module = module
        self.prefix = prefix
        self.names: dict[bytes, str] = {}

    def name(self, text: bytes) -> str:
        """The global holding `text` (added at the module's end the first time)."""
        name = self.names.get(text)
        if name is None:
            k = len(self.names)
            while SymbolTable.lookup_symbol(self.module, name := f"{self.prefix}_{k}"):
                k += 1
            data = text + b"\0"
            value = DenseIntOrFPElementsAttr(TensorType(i8, [len(data)]), BytesAttr(data))
            self.module.body.block.add_op(
                llvm.GlobalOp(llvm.LLVMArrayType(len(data), i8), name, "internal", constant=True, value=value)
            )
            self.names[text] = name
        return name


def declare_function(
    anchor: Block | Operation | None,
    name: str,
    arg_types: Sequence[Attribute],
    result_type: Attribute | None,
) -> llvm.FuncOp:
    """The `llvm.func` declaration of C function `name` in the module around `anchor`."""
    module = _enclosing_module(anchor)
    declared = memo(module, _DECLARED)
    hit = declared.get(name)
    if hit is not None and hit.parent is module.body.block and hit.sym_name.data == name:
        return hit  # a symbol table lookup per call was a tenth of convert-memref-to-llvm
    existing = SymbolTable.lookup_symbol(module, name)
    if isinstance(existing, llvm.FuncOp):
        declared[name] = existing
        return existing
    if existing is not None:
        raise PassError(
            f"is named @{name}, like the C library function the lowering calls; rename it",
            existing,
        )
    func_type = llvm.LLVMFunctionType(
        list(arg_types), llvm.LLVMVoidType() if result_type is None else result_type
    )
    decl = llvm.FuncOp(name, func_type, linkage=llvm.LinkageAttr("external"))
    module.body.block.add_op(decl)
    declared[name] = decl
    return decl


def _enclosing_module(anchor: Block | Operation | None) -> ModuleOp:
    op = anchor.parent_op() if isinstance(anchor, Block) else anchor
    while op is not None and not isinstance(op, ModuleOp):
        op = op.parent_op()
    if op is None:
        raise ValueError("the op is not inside a builtin.module")
    # The outermost module holds the symbols the translation sees.
    while (parent := op.parent_op()) is not None:
        if isinstance(parent, ModuleOp):
            op = parent
        else:
            break
    return op


def convert_block_arguments(rewriter: PatternRewriter, block: Block) -> None:
    """Give `block`'s arguments their llvm types; uses see the old types through casts."""
    for index, arg in enumerate(block.args):
        target = convert_type(arg.type)
        if target == arg.type:
            continue
        new_arg = rewriter.insert_block_argument(block, index, target)
        old_arg = block.args[index + 1]
        cast = _cast(new_arg, old_arg.type)
        rewriter.insert(cast, InsertPoint.at_start(block))
        rewriter.replace_all_uses_with(old_arg, cast.results[0])
        rewriter.erase_block_argument(old_arg)
