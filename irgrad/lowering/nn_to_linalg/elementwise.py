"""Elementwise `nn` ops to an all-parallel `linalg.generic` with a scalar arith/math body.

Each op has a scalar rule `rule(b, element_type, *scalars) -> scalar` in one of the tables
below; `ElementwisePattern` wraps it in a generic over the result shape. The rules spell out
every edge case the `nn` dialect defines, in ops that have no undefined behaviour on any input:
- NaN propagates (`arith.maximumf`/`minimumf`, never `maxnumf`/`minnumf`);
- integer division by zero gives 0, and `INT_MIN / -1` wraps to `INT_MIN`, with the divisor
  replaced by 1 before `arith.divsi` sees it (a select after a trapping division is too late);
- float to integer conversion saturates and maps NaN to 0, with the operand replaced by 0
  before `arith.fptosi` sees an out-of-range value;
- a shift by an amount outside `0 .. width - 1` gives 0, with the amount replaced by 0 before
  `arith.shli`/`shrui` see it;
- f16 and bf16 transcendental functions compute in f32 and round once, as the interpreter does.
"""

from __future__ import annotations

from math import prod
from collections.abc import Callable
from typing import ClassVar, cast

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerType, TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from irgrad.diagnostics import PassError

from irgrad.dialects import nn
from irgrad.dialects.nn import is_bool, is_float
from irgrad.lowering.nn_to_linalg.common import (
    Emitter,
    LoweringPattern,
    cmpf,
    compute_type,
    constant,
    empty,
    convert_float,
    element_of,
    elementwise,
    extend,
    float_binary,
    highest,
    is_signed_int,
    lowest,
    select,
    truncate,
)

Rule = Callable[..., SSAValue]
"""`rule(b, element_type, *scalars)`: the scalar result for one element."""


def in_compute_type(fn: Callable[..., SSAValue]) -> Rule:
    """A float rule computed in f32 for f16/bf16 operands and rounded once at the end."""

    def rule(b: Emitter, t: Attribute, *xs: SSAValue) -> SSAValue:
        wide = compute_type(t)
        result = fn(b, *(extend(b, x, wide) for x in xs))
        return truncate(b, result, t)

    return rule


def by_class(float_rule: Rule, int_rule: Rule, bool_rule: Rule | None = None) -> Rule:
    """Dispatch on the element type: float, i32/i64, or i1 (defaults to the integer rule)."""

    def rule(b: Emitter, t: Attribute, *xs: SSAValue) -> SSAValue:
        if is_float(t):
            return float_rule(b, t, *xs)
        if is_bool(t) and bool_rule is not None:
            return bool_rule(b, t, *xs)
        return int_rule(b, t, *xs)

    return rule


def op_rule(op_type: type[Operation]) -> Rule:
    """The rule `op_type(*scalars)` for an arith op that takes its operands only (a float
    binary op built by `float_binary`, the same op faster)."""
    if issubclass(op_type, arith.FloatingPointLikeBinaryOperation):
        return lambda b, t, x, y: float_binary(b, op_type, x, y)
    return lambda b, t, *xs: b(op_type(*xs))


def math_rule(op_type: type[Operation]) -> Rule:
    """A math function, computed in f32 for f16/bf16."""
    return in_compute_type(lambda b, *xs: b(op_type(*xs)))


# ---------------------------------------------------------------------------------------------
# Unary rules
# ---------------------------------------------------------------------------------------------


def _neg_int(b: Emitter, t: Attribute, x: SSAValue) -> SSAValue:
    return b(arith.SubiOp(constant(b, 0, t), x))


def _abs_int(b: Emitter, t: Attribute, x: SSAValue) -> SSAValue:
    # |INT_MIN| wraps to INT_MIN, as numpy's abs.
    negative = b(arith.CmpiOp(x, constant(b, 0, t), "slt"))
    return b(arith.SelectOp(negative, _neg_int(b, t, x), x))


def _sign_float(b: Emitter, t: Attribute, x: SSAValue) -> SSAValue:
    # numpy's sign: x > 0 ? 1 : x < 0 ? -1 : x == 0 ? +0 : x (so NaN stays NaN, -0 gives +0).
    zero = constant(b, 0.0, t)
    nan_or_zero = b(arith.SelectOp(b(arith.CmpfOp(x, zero, "oeq")), zero, x))
    negative = b(arith.SelectOp(b(arith.CmpfOp(x, zero, "olt")), constant(b, -1.0, t), nan_or_zero))
    return b(arith.SelectOp(b(arith.CmpfOp(x, zero, "ogt")), constant(b, 1.0, t), negative))


def _sign_int(b: Emitter, t: Attribute, x: SSAValue) -> SSAValue:
    zero = constant(b, 0, t)
    negative = b(arith.SelectOp(b(arith.CmpiOp(x, zero, "slt")), constant(b, -1, t), zero))
    return b(arith.SelectOp(b(arith.CmpiOp(x, zero, "sgt")), constant(b, 1, t), negative))


def _relu_float(b: Emitter, t: Attribute, x: SSAValue) -> SSAValue:
    return b(arith.MaximumfOp(x, constant(b, 0.0, t)))


def _relu_int(b: Emitter, t: Attribute, x: SSAValue) -> SSAValue:
    return b(arith.MaxSIOp(x, constant(b, 0, t)))


def _sigmoid(b: Emitter, x: SSAValue) -> SSAValue:
    # The interpreter's non-overflowing form: with z = e**-|x| <= 1 (NaN stays NaN),
    # 1 / (1 + z) for x >= 0 and z / (1 + z) otherwise.
    t = x.type
    one = constant(b, 1.0, t)
    positive = b(arith.CmpfOp(x, constant(b, 0.0, t), "oge"))
    z = b(math.ExpOp(b(arith.SelectOp(positive, b(arith.NegfOp(x)), x))))
    denominator = b(arith.AddfOp(one, z))
    return b(
        arith.SelectOp(
            positive, b(arith.DivfOp(one, denominator)), b(arith.DivfOp(z, denominator))
        )
    )


def _rsqrt(b: Emitter, x: SSAValue) -> SSAValue:
    return b(arith.DivfOp(constant(b, 1.0, x.type), b(math.SqrtOp(x))))


UNARY: dict[type[Operation], Rule] = {
    nn.NegOp: by_class(lambda b, t, x: b(arith.NegfOp(x)), _neg_int),
    nn.AbsOp: by_class(lambda b, t, x: b(math.AbsFOp(x)), _abs_int),
    nn.SignOp: by_class(_sign_float, _sign_int),
    nn.ReluOp: by_class(_relu_float, _relu_int),
    nn.ExpOp: math_rule(math.ExpOp),
    nn.LogOp: math_rule(math.LogOp),
    nn.TanhOp: math_rule(math.TanhOp),
    nn.SigmoidOp: in_compute_type(_sigmoid),
    nn.SqrtOp: math_rule(math.SqrtOp),
    nn.RsqrtOp: in_compute_type(_rsqrt),
    nn.SinOp: math_rule(math.SinOp),
    nn.ErfOp: math_rule(math.ErfOp),
    nn.CosOp: math_rule(math.CosOp),
}


# ---------------------------------------------------------------------------------------------
# Binary rules
# ---------------------------------------------------------------------------------------------


def _div_int(b: Emitter, t: Attribute, x: SSAValue, y: SSAValue) -> SSAValue:
    # x / 0 is 0; INT_MIN / -1 wraps to INT_MIN, which is INT_MIN / 1. Both divisors become 1
    # before the division, since arith.divsi is undefined for them.
    zero, one = constant(b, 0, t), constant(b, 1, t)
    by_zero = b(arith.CmpiOp(y, zero, "eq"))
    overflow = b(
        arith.AndIOp(
            b(arith.CmpiOp(x, constant(b, lowest(t), t), "eq")),
            b(arith.CmpiOp(y, constant(b, -1, t), "eq")),
        )
    )
    safe = b(arith.SelectOp(b(arith.OrIOp(by_zero, overflow)), one, y))
    return b(arith.SelectOp(by_zero, zero, b(arith.DivSIOp(x, safe))))


def _shift(op_type: type[Operation]) -> Rule:
    """`op_type(x, n)` where 0 <= n < width, else 0 (the amount is made safe first)."""

    def rule(b: Emitter, t: Attribute, x: SSAValue, n: SSAValue) -> SSAValue:
        zero = constant(b, 0, t)
        width = cast(IntegerType, t).width.data
        # Unsigned, so a negative amount is out of range too.
        in_range = b(arith.CmpiOp(n, constant(b, width, t), "ult"))
        shifted = b(op_type(x, b(arith.SelectOp(in_range, n, zero))))
        return b(arith.SelectOp(in_range, shifted, zero))

    return rule


BINARY: dict[type[Operation], Rule] = {
    nn.AddOp: by_class(op_rule(arith.AddfOp), op_rule(arith.AddiOp)),
    nn.SubOp: by_class(op_rule(arith.SubfOp), op_rule(arith.SubiOp)),
    nn.MulOp: by_class(op_rule(arith.MulfOp), op_rule(arith.MuliOp)),
    nn.DivOp: by_class(op_rule(arith.DivfOp), _div_int),
    nn.PowOp: math_rule(math.PowFOp),
    # On i1, false < true: the unsigned forms (and, or) are max and min.
    nn.MaximumOp: by_class(op_rule(arith.MaximumfOp), op_rule(arith.MaxSIOp), op_rule(arith.MaxUIOp)),
    nn.MinimumOp: by_class(op_rule(arith.MinimumfOp), op_rule(arith.MinSIOp), op_rule(arith.MinUIOp)),
    nn.AndOp: op_rule(arith.AndIOp),
    nn.OrOp: op_rule(arith.OrIOp),
    nn.XorOp: op_rule(arith.XOrIOp),
    nn.ShiftLeftOp: _shift(arith.ShLIOp),
    nn.ShiftRightLogicalOp: _shift(arith.ShRUIOp),
}


# ---------------------------------------------------------------------------------------------
# compare, select, convert
# ---------------------------------------------------------------------------------------------

# Ordered float predicates (NaN compares false) except `ne`, which is unordered (NaN != NaN).
FLOAT_PREDICATES = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
SIGNED_PREDICATES = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
UNSIGNED_PREDICATES = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


def compare(b: Emitter, direction: str, t: Attribute, x: SSAValue, y: SSAValue) -> SSAValue:
    if is_float(t):
        return cmpf(b, x, y, FLOAT_PREDICATES[direction])
    predicates = SIGNED_PREDICATES if is_signed_int(t) else UNSIGNED_PREDICATES
    return b(arith.CmpiOp(x, y, predicates[direction]))


def convert(b: Emitter, x: SSAValue, to: Attribute) -> SSAValue:
    """`nn.convert` of one scalar: numpy's `astype`, with a defined result for every input."""
    source = x.type
    if source == to:
        return x
    if is_bool(to):
        if is_float(source):
            return b(arith.CmpfOp(x, constant(b, 0.0, source), "une"))  # NaN != 0 is true
        return b(arith.CmpiOp(x, constant(b, 0, source), "ne"))
    if is_bool(source):
        return b(arith.UIToFPOp(x, to)) if is_float(to) else b(arith.ExtUIOp(x, to))
    if is_float(source) and is_float(to):
        return convert_float(b, x, to)
    if is_float(to):
        return b(arith.SIToFPOp(x, to))
    if is_float(source):
        return _float_to_int(b, x, cast(IntegerType, to))
    if cast(IntegerType, to).width.data > cast(IntegerType, source).width.data:
        return b(arith.ExtSIOp(x, to))
    return b(arith.TruncIOp(x, to))


def _float_to_int(b: Emitter, x: SSAValue, to: IntegerType) -> SSAValue:
    """Truncation toward zero, saturating at the bounds, NaN to 0 (LLVM's fptosi.sat)."""
    # f16 cannot hold 2**31, so the bounds are compared in f32 (which holds every f16 and bf16).
    x = extend(b, x, compute_type(x.type))
    t = x.type
    bound = 2.0 ** (to.width.data - 1)  # a power of two: exact in every float type here
    too_low = b(arith.CmpfOp(x, constant(b, -bound, t), "olt"))
    too_high = b(arith.CmpfOp(x, constant(b, bound, t), "oge"))
    is_nan = b(arith.CmpfOp(x, x, "uno"))
    outside = b(arith.OrIOp(b(arith.OrIOp(too_low, too_high)), is_nan))
    safe = b(arith.SelectOp(outside, constant(b, 0.0, t), x))
    converted = b(arith.FPToSIOp(safe, to))
    low = b(arith.SelectOp(too_low, constant(b, lowest(to), to), converted))
    return b(arith.SelectOp(too_high, constant(b, highest(to), to), low))


# ---------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------


class ElementwisePattern(LoweringPattern):
    """A unary or binary op of the UNARY/BINARY tables: one generic with the op's rule."""

    OPS: ClassVar[tuple[type[Operation], ...]] = (*UNARY, *BINARY)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        t = element_of(op.operands[0])
        rule = UNARY.get(type(op)) or BINARY[type(op)]
        return elementwise(b, list(op.operands), t, lambda e, *args: [rule(e, t, *args[:-1])])


class ComparePattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.CompareOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.CompareOp, op)
        t, direction = element_of(op.lhs), op.direction_name
        return elementwise(
            b, [op.lhs, op.rhs], i1, lambda e, x, y, _out: [compare(e, direction, t, x, y)]
        )


class SelectPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.SelectOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.SelectOp, op)
        return elementwise(
            b,
            [op.pred, op.on_true, op.on_false],
            element_of(op.on_true),
            lambda e, p, x, y, _out: [select(e, p, x, y)],
        )


class ConvertPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.ConvertOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.ConvertOp, op)
        to = cast(TensorType, op.result.type).get_element_type()
        if element_of(op.operand) == to:
            return op.operand
        return elementwise(b, [op.operand], to, lambda e, x, _out: [convert(e, x, to)])


class TensorArithPattern(RewritePattern):
    """An elementwise `arith`/`math` op on tensors (valid IR the autodiff pass also accepts and
    differentiates): a generic whose body is the same op on scalars. Tensor operands are the
    generic's inputs; a scalar operand (`arith.select`'s condition) is used as it is."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if op.dialect_name() not in ("arith", "math") or isinstance(op, arith.ConstantOp):
            return
        if len(op.results) != 1 or not isinstance(op.results[0].type, TensorType):
            return
        result_type = cast(TensorType, op.results[0].type)
        shape = tuple(result_type.get_shape())
        inputs = [v for v in op.operands if isinstance(v.type, TensorType)]
        if op.regions or any(tuple(cast(TensorType, v.type).get_shape()) != shape for v in inputs):
            raise PassError("is not an elementwise op on tensors of one shape", op)
        b = Emitter(op.location)
        element = result_type.get_element_type()

        def body(e: Emitter, *args: SSAValue) -> list[SSAValue]:
            scalars = iter(args[: len(inputs)])
            operands = [next(scalars) if isinstance(v.type, TensorType) else v for v in op.operands]
            scalar_op = type(op).create(
                operands=operands,
                result_types=[element],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            return [e(scalar_op)]

        if prod(shape) == 0:
            value = empty(b, shape, element)
        else:
            value = elementwise(b, inputs, element, body, shape)
        rewriter.insert(b.ops, InsertPoint.before(op))
        rewriter.replace(op, [], [value])


def populate_elementwise_patterns(patterns: list[RewritePattern]) -> None:
    patterns.extend(
        [ElementwisePattern(), ComparePattern(), SelectPattern(), ConvertPattern(), TensorArithPattern()]
    )


__all__ = ["BINARY", "UNARY", "compare", "convert", "populate_elementwise_patterns"]
