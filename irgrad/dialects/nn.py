"""The `nn` dialect: irgrad's high-level tensor dialect.

Where it sits: the Python frontend traces models to `nn`; the autodiff pass differentiates `nn`
(and produces `nn` again); `convert-nn-to-linalg` lowers it. The reference interpreter executes it
directly with numpy.

Design rules:
- Values are builtin ranked tensors with static shapes; element types f16, bf16, f32, f64, i1,
  i32, i64.
- Nothing is implicit: elementwise operands have equal types, broadcasting is spelled with
  `nn.broadcast_in_dim`, dtype changes with `nn.convert`. The IR shows everything that happens.
- Every op has one shape-inference function (`infer_type`) used both by its Python builder, so
  builders never spell result types, and by its verifier, so the two cannot disagree.
- Verifier messages follow MLIR: `'nn.matmul' op contracting dimensions differ: lhs 4x3, rhs 5x2`.
"""

from __future__ import annotations

import math
from abc import ABC
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    AnyTensorTypeConstr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    I64,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    UnitAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from xdsl.utils.lexer import Position

FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
INT_WIDTHS = (1, 32, 64)
INDEX_INT_WIDTHS = (32, 64)

Value = SSAValue | Operation


# ---------------------------------------------------------------------------------------------
# Type helpers
# ---------------------------------------------------------------------------------------------


def is_float(t: Attribute) -> bool:
    return isinstance(t, FLOAT_TYPES)


def is_signless_int(t: Attribute, widths: Sequence[int]) -> bool:
    """A signless integer of one of `widths` bits (si32 and ui32 are not irgrad types)."""
    return (
        isinstance(t, IntegerType)
        and t.width.data in widths
        and t.signedness.data == Signedness.SIGNLESS
    )


def is_int(t: Attribute) -> bool:
    """Signless integers irgrad tensors may hold; i1 counts (it is the boolean type)."""
    return is_signless_int(t, INT_WIDTHS)


def is_bool(t: Attribute) -> bool:
    return is_signless_int(t, (1,))


def shape_str(t: Attribute) -> str:
    """`4x3` for tensor<4x3xf32>, `scalar` for rank 0: the spelling verifier messages use."""
    if isinstance(t, TensorType):
        shape = t.get_shape()
        return "x".join(str(d) for d in shape) if shape else "scalar"
    return str(t)


def tensor(shape: Sequence[int], element_type: Attribute) -> TensorType:
    return TensorType(element_type, list(shape))


def _type_of(value: Value) -> Attribute:
    return SSAValue.get(value).type


def _ints(attr: DenseArrayBase) -> tuple[int, ...]:
    return cast(tuple[int, ...], attr.get_values())


def _i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def _i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(int(value), i64)


# ---------------------------------------------------------------------------------------------
# Base classes
# ---------------------------------------------------------------------------------------------


class NNOperation(IRDLOperation, ABC):
    """Base of every `nn` op: checks tensor types, then compares the result with `infer_type`."""

    traits = traits_def(Pure())

    def error(self, message: str) -> VerifyException:
        return VerifyException(f"'{self.name}' op {message}")

    def verify_(self) -> None:
        for kind, values in (("operand", self.operands), ("result", self.results)):
            for index, value in enumerate(values):
                t = value.type
                if not isinstance(t, TensorType):
                    continue
                element = t.get_element_type()
                if not (is_float(element) or is_int(element)):
                    raise self.error(
                        f"{kind} #{index} has element type {element}; nn tensors hold "
                        "f16, bf16, f32, f64, i1, i32 or i64"
                    )
                if any(d < 0 for d in t.get_shape()):
                    raise self.error(f"{kind} #{index} has a dynamic shape {t}; nn shapes are static")
        self.verify_semantics()
        expected = self.expected_result_type()
        if expected is not None and self.results[0].type != expected:
            raise self.error(
                f"result type {self.results[0].type} does not match the inferred type {expected}"
            )

    def verify_semantics(self) -> None:
        """Op-specific checks beyond shape inference (element type rules and such)."""

    def expected_result_type(self) -> Attribute | None:
        """The result type `infer_type` gives for this op's operands and properties."""
        return None


def _check_float(op: NNOperation, t: Attribute, what: str = "operand") -> None:
    assert isinstance(t, TensorType)
    if not is_float(t.get_element_type()):
        raise op.error(f"{what} must have a floating-point element type, got {t}")


def _check_numeric(op: NNOperation, t: Attribute, what: str = "operand") -> None:
    assert isinstance(t, TensorType)
    if is_bool(t.get_element_type()):
        raise op.error(f"{what} must be numeric (not i1), got {t}")


def _check_int(op: NNOperation, t: Attribute, what: str = "operand") -> None:
    assert isinstance(t, TensorType)
    if not is_int(t.get_element_type()):
        raise op.error(f"{what} must have an integer element type (i1, i32 or i64), got {t}")


def _check_wide_int(op: NNOperation, t: Attribute, what: str = "operand") -> None:
    assert isinstance(t, TensorType)
    if not is_signless_int(t.get_element_type(), INDEX_INT_WIDTHS):
        raise op.error(f"{what} must have element type i32 or i64, got {t}")


# ---------------------------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(NNOperation):
    """A tensor constant from a dense attribute.

    `%c = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>`
    """

    name = "nn.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(AnyTensorTypeConstr)

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        # The dense attribute carries its own type, so the result type is not repeated.
        value_pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error(
                f"'nn.constant' expects a dense elements attribute, got {value}", value_pos
            )
        attrs = parser.parse_optional_attr_dict()
        op = cls(value)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)

    def expected_result_type(self) -> Attribute:
        return self.value.type



def _print_scalar(printer: Printer, attr: Attribute) -> None:
    if isinstance(attr, FloatAttr):
        v = attr.value.data
        if math.isnan(v):
            printer.print_string("nan")
        elif math.isinf(v):
            printer.print_string("inf" if v > 0 else "-inf")
        else:
            text = repr(float(v))
            if "." not in text:
                # repr gives `1e+16`, but an MLIR float literal needs its decimal point.
                mantissa, _, exponent = text.partition("e")
                text = f"{mantissa}.0e{exponent}"
            printer.print_string(text)
    elif isinstance(attr, IntegerAttr):
        t = attr.type
        if is_bool(t):
            printer.print_string("true" if attr.value.data else "false")
        else:
            printer.print_string(str(attr.value.data))
    else:
        printer.print_attribute(attr)


@irdl_op_definition
class FullOp(NNOperation):
    """A tensor filled with one scalar value of its element type.

    `%z = nn.full 0.5 : tensor<2x3xf32>`
    """

    name = "nn.full"
    value = prop_def(base(FloatAttr) | base(IntegerAttr))
    result = result_def(AnyTensorTypeConstr)

    def __init__(self, value: float | int | bool, result_type: TensorType):
        element = result_type.get_element_type()
        if is_float(element):
            attr: Attribute = FloatAttr(float(value), cast(Float32Type, element))
        else:
            attr = IntegerAttr(int(value), cast(IntegerType, element))
        super().__init__(properties={"value": attr}, result_types=[result_type])

    @classmethod
    def parse(cls, parser: Parser) -> FullOp:
        # The value is read before its type, so it is kept as a literal until the type is known;
        # that lets it print bare (`0.5`, `true`, `-inf`) instead of `0.5 : f32`.
        literal_pos = parser.pos
        negative = parser.parse_optional_punctuation("-") is not None
        keyword = parser.parse_optional_keyword_in(("true", "false", "inf", "nan"))
        literal: str | int | float = keyword if keyword is not None else parser.parse_number()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_pos = parser.pos
        result_type = parser.parse_type()
        if not isinstance(result_type, TensorType):
            parser.raise_error(f"'nn.full' expects a tensor type, got {result_type}", type_pos)
        element = result_type.get_element_type()
        value = _scalar_attr(literal, negative, element, parser, literal_pos)
        op = cls.build(properties={"value": value}, result_types=[result_type])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_scalar(printer, self.value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.result.type)
        if self.value.type != t.get_element_type():
            raise self.error(
                f"value type {self.value.type} does not match the element type of {t}"
            )


def _scalar_attr(
    literal: str | int | float,
    negative: bool,
    element: Attribute,
    parser: Parser,
    literal_pos: Position,
) -> Attribute:
    # Errors point at the literal, which was read before the type that rejects it.
    shown = f"-{literal}" if negative else f"{literal}"
    if is_float(element):
        ft = cast(Float32Type, element)
        if literal == "nan":
            return FloatAttr(math.nan, ft)
        if literal == "inf":
            return FloatAttr(-math.inf if negative else math.inf, ft)
        if literal in ("true", "false"):
            parser.raise_error(f"'nn.full' value {shown} does not fit {element}", literal_pos)
        v = float(literal)
        return FloatAttr(-v if negative else v, ft)
    if is_int(element):
        it = cast(IntegerType, element)
        if literal in ("true", "false"):
            if not is_bool(element) or negative:
                parser.raise_error(f"'nn.full' value {shown} does not fit {element}", literal_pos)
            return IntegerAttr(1 if literal == "true" else 0, it)
        if isinstance(literal, float) or literal in ("inf", "nan"):
            parser.raise_error(f"'nn.full' value {shown} does not fit {element}", literal_pos)
        v = -int(literal) if negative else int(literal)
        try:
            return IntegerAttr(v, it)
        except VerifyException:
            parser.raise_error(f"'nn.full' value {v} does not fit {element}", literal_pos)
    parser.raise_error(f"'nn.full' cannot fill element type {element}", literal_pos)


@irdl_op_definition
class IotaOp(NNOperation):
    """Counts 0, 1, 2, ... along one dimension, constant along the others.

    `%i = nn.iota dim = 1 : tensor<2x3xi32>`
    """

    name = "nn.iota"
    dimension = prop_def(IntegerAttr[I64])
    result = result_def(AnyTensorTypeConstr)
    assembly_format = "`dim` `=` $dimension attr-dict `:` type($result)"

    def __init__(self, dimension: int, result_type: TensorType):
        super().__init__(
            properties={"dimension": _i64_attr(dimension)}, result_types=[result_type]
        )

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.result.type)
        d = self.dimension.value.data
        if not 0 <= d < max(1, len(t.get_shape())) or len(t.get_shape()) == 0:
            raise self.error(f"dimension {d} is out of range for result of rank {len(t.get_shape())}")
        if is_bool(t.get_element_type()):
            raise self.error(f"result must be numeric (not i1), got {t}")


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------


class ElementwiseUnaryOp(NNOperation, ABC):
    """`%y = nn.<op> %x : tensor<...>`: result type equals operand type."""

    T: ClassVar = VarConstraint("T", AnyTensorTypeConstr)
    operand = operand_def(T)
    result = result_def(T)
    assembly_format = "$operand attr-dict `:` type($result)"

    # Which element types the op ACCEPTS: "float", "numeric" (no i1) or "any".
    ACCEPTS: ClassVar[str] = "float"

    def __init__(self, operand: Value):
        super().__init__(operands=[operand], result_types=[_type_of(operand)])

    def verify_semantics(self) -> None:
        if self.ACCEPTS == "float":
            _check_float(self, self.operand.type)
        elif self.ACCEPTS == "numeric":
            _check_numeric(self, self.operand.type)


@irdl_op_definition
class NegOp(ElementwiseUnaryOp):
    """Elementwise -x.  `%y = nn.neg %x : tensor<4xf32>`"""

    name = "nn.neg"
    ACCEPTS: ClassVar[str] = "numeric"


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """Elementwise |x|.  `%y = nn.abs %x : tensor<4xf32>`"""

    name = "nn.abs"
    ACCEPTS: ClassVar[str] = "numeric"


@irdl_op_definition
class SignOp(ElementwiseUnaryOp):
    """Elementwise sign: -1, 0 or 1 (NaN stays NaN).  `%y = nn.sign %x : tensor<4xf32>`"""

    name = "nn.sign"
    ACCEPTS: ClassVar[str] = "numeric"


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """Elementwise e**x.  `%y = nn.exp %x : tensor<4xf32>`"""

    name = "nn.exp"


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Elementwise natural logarithm.  `%y = nn.log %x : tensor<4xf32>`"""

    name = "nn.log"


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """Elementwise hyperbolic tangent.  `%y = nn.tanh %x : tensor<4xf32>`"""

    name = "nn.tanh"


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """Elementwise logistic function 1 / (1 + e**-x).  `%y = nn.sigmoid %x : tensor<4xf32>`"""

    name = "nn.sigmoid"


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """Elementwise max(x, 0); NaN propagates.  `%y = nn.relu %x : tensor<4xf32>`"""

    name = "nn.relu"
    ACCEPTS: ClassVar[str] = "numeric"


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """Elementwise square root.  `%y = nn.sqrt %x : tensor<4xf32>`"""

    name = "nn.sqrt"


@irdl_op_definition
class RsqrtOp(ElementwiseUnaryOp):
    """Elementwise 1 / sqrt(x).  `%y = nn.rsqrt %x : tensor<4xf32>`"""

    name = "nn.rsqrt"


@irdl_op_definition
class SinOp(ElementwiseUnaryOp):
    """Elementwise sine.  `%y = nn.sin %x : tensor<4xf32>`"""

    name = "nn.sin"


@irdl_op_definition
class CosOp(ElementwiseUnaryOp):
    """Elementwise cosine.  `%y = nn.cos %x : tensor<4xf32>`"""

    name = "nn.cos"


@irdl_op_definition
class ErfOp(ElementwiseUnaryOp):
    """Elementwise error function, erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt (exact GELU needs
    it, and it has no accurate composite).  `%y = nn.erf %x : tensor<4xf32>`"""

    name = "nn.erf"


class ElementwiseBinaryOp(NNOperation, ABC):
    """`%z = nn.<op> %x, %y : tensor<...>`: both operands and the result share one type."""

    T: ClassVar = VarConstraint("T", AnyTensorTypeConstr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    # Which element types the op ACCEPTS: "float", "numeric" (no i1), "int" (i1, i32, i64),
    # "wide_int" (i32, i64) or "any".
    ACCEPTS: ClassVar[str] = "numeric"

    def __init__(self, lhs: Value, rhs: Value):
        super().__init__(operands=[lhs, rhs], result_types=[_type_of(lhs)])

    def verify_semantics(self) -> None:
        if self.ACCEPTS == "float":
            _check_float(self, self.lhs.type)
        elif self.ACCEPTS == "numeric":
            _check_numeric(self, self.lhs.type)
        elif self.ACCEPTS == "int":
            _check_int(self, self.lhs.type)
        elif self.ACCEPTS == "wide_int":
            _check_wide_int(self, self.lhs.type)


@irdl_op_definition
class AddOp(ElementwiseBinaryOp):
    """Elementwise x + y; integers wrap around.  `%z = nn.add %x, %y : tensor<4xf32>`"""

    name = "nn.add"


@irdl_op_definition
class SubOp(ElementwiseBinaryOp):
    """Elementwise x - y; integers wrap around.  `%z = nn.sub %x, %y : tensor<4xf32>`"""

    name = "nn.sub"


@irdl_op_definition
class MulOp(ElementwiseBinaryOp):
    """Elementwise x * y; integers wrap around.  `%z = nn.mul %x, %y : tensor<4xf32>`"""

    name = "nn.mul"


@irdl_op_definition
class DivOp(ElementwiseBinaryOp):
    """Elementwise x / y. IEEE on floats; on integers it truncates toward zero (C, arith.divsi,
    lax.div) and x / 0 gives 0, so no input can trap.

    `%z = nn.div %x, %y : tensor<4xf32>`
    """

    name = "nn.div"


@irdl_op_definition
class PowOp(ElementwiseBinaryOp):
    """Elementwise x ** y on floats (IEEE pow).  `%z = nn.pow %x, %y : tensor<4xf32>`"""

    name = "nn.pow"
    ACCEPTS: ClassVar[str] = "float"


@irdl_op_definition
class MaximumOp(ElementwiseBinaryOp):
    """Elementwise maximum; NaN propagates.  `%z = nn.maximum %x, %y : tensor<4xf32>`"""

    name = "nn.maximum"
    ACCEPTS: ClassVar[str] = "any"


@irdl_op_definition
class MinimumOp(ElementwiseBinaryOp):
    """Elementwise minimum; NaN propagates.  `%z = nn.minimum %x, %y : tensor<4xf32>`"""

    name = "nn.minimum"
    ACCEPTS: ClassVar[str] = "any"


COMPARISON_DIRECTIONS = ("eq", "ne", "lt", "le", "gt", "ge")


@irdl_op_definition
class CompareOp(NNOperation):
    """Elementwise comparison giving i1; NaN compares unequal to everything, as in IEEE.

    `%m = nn.compare lt, %x, %y : tensor<4xf32>` (the result is tensor<4xi1>)
    """

    name = "nn.compare"
    T: ClassVar = VarConstraint("T", AnyTensorTypeConstr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(AnyTensorTypeConstr)
    direction = prop_def(IntegerAttr[I64])  # index into COMPARISON_DIRECTIONS

    def __init__(self, direction: str, lhs: Value, rhs: Value):
        if direction not in COMPARISON_DIRECTIONS:
            raise ValueError(f"nn.compare: unknown direction {direction!r}")
        t = cast(TensorType, _type_of(lhs))
        super().__init__(
            operands=[lhs, rhs],
            result_types=[self.infer_type(t)],
            properties={"direction": _i64_attr(COMPARISON_DIRECTIONS.index(direction))},
        )

    @property
    def direction_name(self) -> str:
        return COMPARISON_DIRECTIONS[self.direction.value.data]

    @staticmethod
    def infer_type(operand_type: TensorType) -> TensorType:
        return tensor(operand_type.get_shape(), i1)

    @classmethod
    def parse(cls, parser: Parser) -> CompareOp:
        direction_pos = parser.pos
        direction = parser.parse_identifier(context_msg=" (a comparison direction)")
        if direction not in COMPARISON_DIRECTIONS:
            parser.raise_error(
                f"'nn.compare' direction must be one of {', '.join(COMPARISON_DIRECTIONS)}, "
                f"got '{direction}'",
                direction_pos,
            )
        parser.parse_punctuation(",")
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_pos = parser.pos
        t = parser.parse_type()
        if not isinstance(t, TensorType):
            parser.raise_error(f"'nn.compare' expects a tensor type, got {t}", type_pos)
        op = cls.build(
            operands=[parser.resolve_operand(lhs, t), parser.resolve_operand(rhs, t)],
            result_types=[cls.infer_type(t)],
            properties={"direction": _i64_attr(COMPARISON_DIRECTIONS.index(direction))},
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.direction_name}, ")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)

    def verify_semantics(self) -> None:
        if not 0 <= self.direction.value.data < len(COMPARISON_DIRECTIONS):
            raise self.error(f"unknown comparison direction {self.direction.value.data}")

    def expected_result_type(self) -> Attribute:
        return self.infer_type(cast(TensorType, self.lhs.type))


@irdl_op_definition
class SelectOp(NNOperation):
    """Elementwise `pred ? on_true : on_false`.

    `%z = nn.select %p, %a, %b : tensor<4xi1>, tensor<4xf32>`
    """

    name = "nn.select"
    T: ClassVar = VarConstraint("T", AnyTensorTypeConstr)
    pred = operand_def(AnyTensorTypeConstr)
    on_true = operand_def(T)
    on_false = operand_def(T)
    result = result_def(T)
    assembly_format = (
        "$pred `,` $on_true `,` $on_false attr-dict `:` type($pred) `,` type($result)"
    )

    def __init__(self, pred: Value, on_true: Value, on_false: Value):
        super().__init__(operands=[pred, on_true, on_false], result_types=[_type_of(on_true)])

    def verify_semantics(self) -> None:
        p = cast(TensorType, self.pred.type)
        v = cast(TensorType, self.on_true.type)
        if not is_bool(p.get_element_type()):
            raise self.error(f"predicate must have element type i1, got {p}")
        if p.get_shape() != v.get_shape():
            raise self.error(
                f"predicate shape {shape_str(p)} differs from operand shape {shape_str(v)}"
            )


@irdl_op_definition
class ConvertOp(NNOperation):
    """Elementwise element-type conversion (numpy `astype`); the shape is unchanged.

    Float to float rounds to nearest even. Float to integer truncates toward zero, saturates at
    the integer type's bounds and maps NaN to 0 (LLVM's fptosi.sat), so every input has a
    defined result. Anything to i1 is `x != 0`; i1 to a number gives 0 or 1.

    `%y = nn.convert %x : tensor<4xf32> -> tensor<4xf16>`
    """

    name = "nn.convert"
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` type($operand) `->` type($result)"

    def __init__(self, operand: Value, element_type: Attribute):
        t = cast(TensorType, _type_of(operand))
        super().__init__(operands=[operand], result_types=[tensor(t.get_shape(), element_type)])

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        r = cast(TensorType, self.result.type)
        return tensor(t.get_shape(), r.get_element_type())


@irdl_op_definition
class AndOp(ElementwiseBinaryOp):
    """Elementwise bitwise and (logical and on i1).  `%z = nn.and %x, %y : tensor<4xi32>`"""

    name = "nn.and"
    ACCEPTS: ClassVar[str] = "int"


@irdl_op_definition
class OrOp(ElementwiseBinaryOp):
    """Elementwise bitwise or (logical or on i1).  `%z = nn.or %x, %y : tensor<4xi32>`"""

    name = "nn.or"
    ACCEPTS: ClassVar[str] = "int"


@irdl_op_definition
class XorOp(ElementwiseBinaryOp):
    """Elementwise bitwise exclusive or (`!=` on i1).  `%z = nn.xor %x, %y : tensor<4xi32>`"""

    name = "nn.xor"
    ACCEPTS: ClassVar[str] = "int"


class ShiftOp(ElementwiseBinaryOp, ABC):
    """A shift of `lhs`'s bit pattern by `rhs` bits, elementwise, on i32 or i64.

    Every input has a defined result: an amount outside 0 .. bit width - 1 (negative included)
    gives 0, as in XLA, where arith's shifts would be poison.
    """

    ACCEPTS: ClassVar[str] = "wide_int"


@irdl_op_definition
class ShiftLeftOp(ShiftOp):
    """Elementwise `x << y`, bits shifted out are lost; 0 when y < 0 or y >= the bit width.

    `%z = nn.shift_left %x, %y : tensor<4xi32>`
    """

    name = "nn.shift_left"


@irdl_op_definition
class ShiftRightLogicalOp(ShiftOp):
    """Elementwise logical `x >> y`: the bit pattern shifts right and zeros fill from the left,
    whatever the sign of x (numpy's `>>` on the unsigned type); 0 when y < 0 or y >= the bit width.

    `%z = nn.shift_right_logical %x, %y : tensor<4xi32>`
    """

    name = "nn.shift_right_logical"


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------


def check_axes(
    op: NNOperation, axes: Sequence[int], rank: int, what: str = "axes", of: str = "operand"
) -> None:
    for a in axes:
        if not 0 <= a < rank:
            raise op.error(f"{what} {list(axes)} out of range for {of} of rank {rank}")
    if len(set(axes)) != len(axes):
        raise op.error(f"{what} {list(axes)} contain duplicates")


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> list[int]:
    if keepdims:
        return [1 if i in axes else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in axes]


class ReduceOp(NNOperation, ABC):
    """`%y = nn.reduce_<kind> %x axes = [1] keepdims : tensor<2x3xf32> -> tensor<2x1xf32>`"""

    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    assembly_format = (
        "$operand `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict "
        "`:` type($operand) `->` type($result)"
    )

    def __init__(self, operand: Value, axes: Sequence[int], keepdims: bool = False):
        t = cast(TensorType, _type_of(operand))
        # Negative axes count from the end; out-of-range ones are kept for the verifier to report.
        rank = len(t.get_shape())
        axes = [a + rank if -rank <= a < 0 else a for a in axes]
        props: dict[str, Attribute] = {"axes": _i64_array(axes)}
        if keepdims:
            props["keepdims"] = UnitAttr()
        super().__init__(
            operands=[operand],
            properties=props,
            result_types=[tensor(reduced_shape(t.get_shape(), axes, keepdims), t.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        axes = _ints(self.axes)
        check_axes(self, axes, len(t.get_shape()))
        shape = reduced_shape(t.get_shape(), axes, self.keepdims is not None)
        return tensor(shape, t.get_element_type())


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over the listed axes.  `%s = nn.reduce_sum %x axes = [0] : tensor<2x3xf32> -> tensor<3xf32>`"""

    name = "nn.reduce_sum"

    def verify_semantics(self) -> None:
        _check_numeric(self, self.operand.type)


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over the listed axes; NaN propagates; -inf (or the type's minimum) for empty axes.

    `%m = nn.reduce_max %x axes = [1] : tensor<2x3xf32> -> tensor<2xf32>`
    """

    name = "nn.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over the listed axes; NaN propagates; +inf (or the type's maximum) for empty axes.

    `%m = nn.reduce_min %x axes = [1] : tensor<2x3xf32> -> tensor<2xf32>`
    """

    name = "nn.reduce_min"


# ---------------------------------------------------------------------------------------------
# Shape manipulation
# ---------------------------------------------------------------------------------------------


class _ShapeOpCanonicalization(HasCanonicalizationPatternsTrait):
    """The folds of irgrad/transforms/nn_canonicalization.py (reshape/transpose chains, identities)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from irgrad.transforms.nn_canonicalization import FoldBroadcast, FoldReshape, FoldTranspose

        return (FoldReshape(), FoldTranspose(), FoldBroadcast())


@irdl_op_definition
class BroadcastInDimOp(NNOperation):
    """Broadcasts to a larger shape: operand dimension i becomes result dimension dims[i].

    Each mapped operand dimension is 1 (broadcast) or equals the result dimension; unmapped
    result dimensions are new. As StableHLO's broadcast_in_dim.

    `%y = nn.broadcast_in_dim %x dims = [1] : tensor<3xf32> -> tensor<2x3xf32>`
    """

    name = "nn.broadcast_in_dim"
    traits = traits_def(Pure(), _ShapeOpCanonicalization())
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    dims = prop_def(DenseArrayBase.constr(i64))
    assembly_format = "$operand `dims` `=` $dims attr-dict `:` type($operand) `->` type($result)"

    def __init__(self, operand: Value, shape: Sequence[int], dims: Sequence[int]):
        t = cast(TensorType, _type_of(operand))
        super().__init__(
            operands=[operand],
            properties={"dims": _i64_array(dims)},
            result_types=[tensor(shape, t.get_element_type())],
        )

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        r = cast(TensorType, self.result.type)
        dims = _ints(self.dims)
        if t.get_element_type() != r.get_element_type():
            raise self.error(f"element types differ: operand {t}, result {r}")
        if len(dims) != len(t.get_shape()):
            raise self.error(
                f"dims {list(dims)} has {len(dims)} entries, operand {shape_str(t)} has rank "
                f"{len(t.get_shape())}"
            )
        check_axes(self, dims, len(r.get_shape()), "dims", "result")
        for i, d in enumerate(dims):
            src, dst = t.get_shape()[i], r.get_shape()[d]
            if src != 1 and src != dst:
                raise self.error(
                    f"operand dimension {i} (size {src}) cannot broadcast to result dimension "
                    f"{d} (size {dst}): operand {shape_str(t)}, result {shape_str(r)}"
                )


@irdl_op_definition
class ReshapeOp(NNOperation):
    """Reinterprets the elements in row-major order with a new shape of equal size.

    `%y = nn.reshape %x : tensor<2x3xf32> -> tensor<6xf32>`
    """

    name = "nn.reshape"
    traits = traits_def(Pure(), _ShapeOpCanonicalization())
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` type($operand) `->` type($result)"

    def __init__(self, operand: Value, shape: Sequence[int]):
        t = cast(TensorType, _type_of(operand))
        super().__init__(operands=[operand], result_types=[tensor(shape, t.get_element_type())])

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        r = cast(TensorType, self.result.type)
        if t.get_element_type() != r.get_element_type():
            raise self.error(f"element types differ: operand {t}, result {r}")
        if math.prod(t.get_shape()) != math.prod(r.get_shape()):
            raise self.error(
                f"element counts differ: operand {shape_str(t)} ({math.prod(t.get_shape())}), "
                f"result {shape_str(r)} ({math.prod(r.get_shape())})"
            )


@irdl_op_definition
class TransposeOp(NNOperation):
    """Permutes dimensions: result dimension i is operand dimension perm[i].

    `%y = nn.transpose %x perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>`
    """

    name = "nn.transpose"
    traits = traits_def(Pure(), _ShapeOpCanonicalization())
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    perm = prop_def(DenseArrayBase.constr(i64))
    assembly_format = "$operand `perm` `=` $perm attr-dict `:` type($operand) `->` type($result)"

    def __init__(self, operand: Value, perm: Sequence[int]):
        t = cast(TensorType, _type_of(operand))
        shape = t.get_shape()
        super().__init__(
            operands=[operand],
            properties={"perm": _i64_array(perm)},
            result_types=[tensor([shape[p] for p in perm], t.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        perm = _ints(self.perm)
        rank = len(t.get_shape())
        if sorted(perm) != list(range(rank)):
            raise self.error(f"perm {list(perm)} is not a permutation of 0..{rank - 1}")
        return tensor([t.get_shape()[p] for p in perm], t.get_element_type())


def slice_length(start: int, limit: int, stride: int) -> int:
    """Number of indices start, start+stride, ... strictly before limit (either direction).

    A zero stride gives 0, so a builder still makes an op for the verifier to reject.
    """
    if stride == 0:
        return 0
    if stride > 0:
        return max(0, -(-(limit - start) // stride))
    return max(0, -(-(start - limit) // -stride))


@irdl_op_definition
class SliceOp(NNOperation):
    """Static strided slice: indices start, start+stride, ... up to but excluding limit.

    Negative strides walk backwards (limit -1 means "through index 0"), so `x[::-1]` is
    `start = [n-1], limit = [-1], stride = [-1]`. Indices are never wrapped.

    `%y = nn.slice %x start = [0, 2] limit = [2, -1] stride = [1, -1] : tensor<2x3xf32> -> tensor<2x3xf32>`
    """

    name = "nn.slice"
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    start = prop_def(DenseArrayBase.constr(i64))
    limit = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$operand `start` `=` $start `limit` `=` $limit `stride` `=` $stride attr-dict "
        "`:` type($operand) `->` type($result)"
    )

    def __init__(
        self,
        operand: Value,
        start: Sequence[int],
        limit: Sequence[int],
        stride: Sequence[int] | None = None,
    ):
        t = cast(TensorType, _type_of(operand))
        stride = list(stride) if stride is not None else [1] * len(start)
        shape = [slice_length(s, l, k) for s, l, k in zip(start, limit, stride)]
        super().__init__(
            operands=[operand],
            properties={
                "start": _i64_array(start),
                "limit": _i64_array(limit),
                "stride": _i64_array(stride),
            },
            result_types=[tensor(shape, t.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        shape = t.get_shape()
        start, limit, stride = _ints(self.start), _ints(self.limit), _ints(self.stride)
        if not len(start) == len(limit) == len(stride) == len(shape):
            raise self.error(
                f"start, limit and stride need {len(shape)} entries (operand {shape_str(t)}), "
                f"got {len(start)}, {len(limit)} and {len(stride)}"
            )
        out: list[int] = []
        for d, (s, l, k, n) in enumerate(zip(start, limit, stride, shape)):
            if k == 0:
                raise self.error(f"stride of dimension {d} is 0")
            length = slice_length(s, l, k)
            if length > 0:
                last = s + (length - 1) * k
                if not (0 <= s < n and 0 <= last < n):
                    raise self.error(
                        f"dimension {d}: slice start {s}, limit {l}, stride {k} reads outside "
                        f"0..{n - 1} of operand {shape_str(t)}"
                    )
            out.append(length)
        return tensor(out, t.get_element_type())


_INDEX_SCALAR = base(IndexType) | base(IntegerType)


def _check_index_scalars(op: NNOperation, values: Sequence[SSAValue], rank: int) -> None:
    if rank == 0:
        raise op.error("operand must have rank >= 1")
    if len(values) != rank:
        raise op.error(f"needs {rank} start indices (one per operand dimension), got {len(values)}")
    for i, v in enumerate(values):
        t = v.type
        if not (isinstance(t, IndexType) or is_signless_int(t, INDEX_INT_WIDTHS)):
            raise op.error(f"start index #{i} must be index, i32 or i64, got {t}")


@irdl_op_definition
class DynamicSliceOp(NNOperation):
    """A slice of static size at start indices given as SSA values (a loop counter, say).

    Start indices are clamped so that the slice stays in bounds, as in XLA.

    `%row = nn.dynamic_slice %x[%i, %c0] sizes = [1, 3] : tensor<4x3xf32>, index, index -> tensor<1x3xf32>`
    """

    name = "nn.dynamic_slice"
    operand = operand_def(AnyTensorTypeConstr)
    start_indices = var_operand_def(_INDEX_SCALAR)
    result = result_def(AnyTensorTypeConstr)
    sizes = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$operand `[` $start_indices `]` `sizes` `=` $sizes attr-dict "
        "`:` type($operand) `,` type($start_indices) `->` type($result)"
    )

    def __init__(self, operand: Value, start_indices: Sequence[Value], sizes: Sequence[int]):
        t = cast(TensorType, _type_of(operand))
        super().__init__(
            operands=[operand, list(start_indices)],
            properties={"sizes": _i64_array(sizes)},
            result_types=[tensor(sizes, t.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        shape = t.get_shape()
        _check_index_scalars(self, self.start_indices, len(shape))
        sizes = _ints(self.sizes)
        if len(sizes) != len(shape):
            raise self.error(f"sizes {list(sizes)} need {len(shape)} entries (operand {shape_str(t)})")
        for d, (s, n) in enumerate(zip(sizes, shape)):
            if not 0 <= s <= n:
                raise self.error(f"size {s} of dimension {d} exceeds operand {shape_str(t)}")
        return tensor(sizes, t.get_element_type())


@irdl_op_definition
class DynamicUpdateSliceOp(NNOperation):
    """A copy of operand with `update` written at start indices given as SSA values (clamped).

    `%y = nn.dynamic_update_slice %x, %row[%i, %c0] : tensor<4x3xf32>, tensor<1x3xf32>, index, index`
    """

    name = "nn.dynamic_update_slice"
    T: ClassVar = VarConstraint("T", AnyTensorTypeConstr)
    operand = operand_def(T)
    update = operand_def(AnyTensorTypeConstr)
    start_indices = var_operand_def(_INDEX_SCALAR)
    result = result_def(T)
    assembly_format = (
        "$operand `,` $update `[` $start_indices `]` attr-dict "
        "`:` type($operand) `,` type($update) `,` type($start_indices)"
    )

    def __init__(self, operand: Value, update: Value, start_indices: Sequence[Value]):
        super().__init__(
            operands=[operand, update, list(start_indices)], result_types=[_type_of(operand)]
        )

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        u = cast(TensorType, self.update.type)
        _check_index_scalars(self, self.start_indices, len(t.get_shape()))
        if t.get_element_type() != u.get_element_type():
            raise self.error(f"element types differ: operand {t}, update {u}")
        if len(u.get_shape()) != len(t.get_shape()) or any(
            a > b for a, b in zip(u.get_shape(), t.get_shape())
        ):
            raise self.error(f"update {shape_str(u)} does not fit in operand {shape_str(t)}")


@irdl_op_definition
class ConcatenateOp(NNOperation):
    """Joins tensors along one dimension; the other dimensions must agree.

    `%y = nn.concatenate %a, %b dim = 0 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>`
    """

    name = "nn.concatenate"
    inputs = var_operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    dimension = prop_def(IntegerAttr[I64])
    assembly_format = "$inputs `dim` `=` $dimension attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, inputs: Sequence[Value], dimension: int):
        types = [cast(TensorType, _type_of(v)) for v in inputs]
        super().__init__(
            operands=[list(inputs)],
            properties={"dimension": _i64_attr(dimension)},
            result_types=[self.infer_type(types, dimension)],
        )

    @staticmethod
    def infer_type(types: Sequence[TensorType], dimension: int) -> TensorType:
        shape = list(types[0].get_shape())
        shape[dimension] = sum(t.get_shape()[dimension] for t in types)
        return tensor(shape, types[0].get_element_type())

    def expected_result_type(self) -> Attribute:
        types = [cast(TensorType, v.type) for v in self.inputs]
        if not types:
            raise self.error("needs at least one input")
        d = self.dimension.value.data
        first = types[0]
        rank = len(first.get_shape())
        if not 0 <= d < rank:
            raise self.error(f"dimension {d} out of range for inputs of rank {rank}")
        for i, t in enumerate(types[1:], 1):
            if t.get_element_type() != first.get_element_type():
                raise self.error(f"input #{i} element type differs: {first} vs {t}")
            s0, s1 = first.get_shape(), t.get_shape()
            if len(s1) != rank or any(a != b for k, (a, b) in enumerate(zip(s0, s1)) if k != d):
                raise self.error(
                    f"input #{i} shape {shape_str(t)} differs from input #0 {shape_str(first)} "
                    f"outside dimension {d}"
                )
        return self.infer_type(types, d)


@irdl_op_definition
class PadOp(NNOperation):
    """Pads each dimension with `low` and `high` copies of a scalar padding value.

    `%y = nn.pad %x, %zero low = [0, 1] high = [1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>`
    """

    name = "nn.pad"
    operand = operand_def(AnyTensorTypeConstr)
    padding_value = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    low = prop_def(DenseArrayBase.constr(i64))
    high = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$operand `,` $padding_value `low` `=` $low `high` `=` $high attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(self, operand: Value, padding_value: Value, low: Sequence[int], high: Sequence[int]):
        t = cast(TensorType, _type_of(operand))
        # Clamped so that negative padding reaches the verifier's message, not a dynamic dimension.
        shape = [max(0, n + a + b) for n, a, b in zip(t.get_shape(), low, high)]
        super().__init__(
            operands=[operand, padding_value],
            properties={"low": _i64_array(low), "high": _i64_array(high)},
            result_types=[tensor(shape, t.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        p = cast(TensorType, self.padding_value.type)
        if p.get_shape() or p.get_element_type() != t.get_element_type():
            raise self.error(
                f"padding value must be a rank-0 tensor of {t.get_element_type()}, got {p}"
            )
        low, high = _ints(self.low), _ints(self.high)
        rank = len(t.get_shape())
        if len(low) != rank or len(high) != rank:
            raise self.error(
                f"low and high need {rank} entries (operand {shape_str(t)}), got {len(low)} and {len(high)}"
            )
        if any(v < 0 for v in (*low, *high)):
            raise self.error(f"padding must be non-negative, got low {list(low)}, high {list(high)}")
        return tensor(
            [n + a + b for n, a, b in zip(t.get_shape(), low, high)], t.get_element_type()
        )


# ---------------------------------------------------------------------------------------------
# Linear algebra and NN
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class MatmulOp(NNOperation):
    """Matrix product, 2-D (MxK @ KxN) or batched (B...xMxK @ B...xKxN, equal batch dims).

    `%c = nn.matmul %a, %b : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>`
    """

    name = "nn.matmul"
    lhs = operand_def(AnyTensorTypeConstr)
    rhs = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: Value, rhs: Value):
        a, b = cast(TensorType, _type_of(lhs)), cast(TensorType, _type_of(rhs))
        shape = [*a.get_shape()[:-1], b.get_shape()[-1]]
        super().__init__(operands=[lhs, rhs], result_types=[tensor(shape, a.get_element_type())])

    def expected_result_type(self) -> Attribute:
        a, b = cast(TensorType, self.lhs.type), cast(TensorType, self.rhs.type)
        sa, sb = a.get_shape(), b.get_shape()
        if a.get_element_type() != b.get_element_type():
            raise self.error(f"element types differ: lhs {a}, rhs {b}")
        _check_numeric(self, a, "lhs")
        if len(sa) < 2 or len(sa) != len(sb):
            raise self.error(
                f"operands must both be 2-D or batched with equal rank, got lhs {shape_str(a)}, "
                f"rhs {shape_str(b)}"
            )
        if sa[:-2] != sb[:-2]:
            raise self.error(f"batch dimensions differ: lhs {shape_str(a)}, rhs {shape_str(b)}")
        if sa[-1] != sb[-2]:
            raise self.error(
                f"contracting dimensions differ: lhs {shape_str(a)}, rhs {shape_str(b)}"
            )
        return tensor([*sa[:-1], sb[-1]], a.get_element_type())


def conv_output_size(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int, dilation: int) -> int:
    """Windows along one dimension; 0 when none fits or the stride is not positive, so a builder
    never makes a negative (that is, dynamic) dimension and the verifier names the actual fault."""
    if stride < 1:
        return 0
    return max(0, (size + pad_lo + pad_hi - dilation * (kernel - 1) - 1) // stride + 1)


@irdl_op_definition
class Conv2DOp(NNOperation):
    """2-D cross-correlation, input NCHW, weights OIHW (no groups), zero padding.

    `padding` is [top, bottom, left, right].

    `%y = nn.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>`
    """

    name = "nn.conv2d"
    input = operand_def(AnyTensorTypeConstr)
    weight = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    dilation = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$input `,` $weight `stride` `=` $stride `padding` `=` $padding `dilation` `=` $dilation "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: Value,
        weight: Value,
        stride: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        dilation: Sequence[int] = (1, 1),
    ):
        x, w = cast(TensorType, _type_of(input)), cast(TensorType, _type_of(weight))
        shape = self.infer_shape(x.get_shape(), w.get_shape(), stride, padding, dilation)
        super().__init__(
            operands=[input, weight],
            properties={
                "stride": _i64_array(stride),
                "padding": _i64_array(padding),
                "dilation": _i64_array(dilation),
            },
            result_types=[tensor(shape, x.get_element_type())],
        )

    @staticmethod
    def infer_shape(
        xs: Sequence[int], ws: Sequence[int], stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int]
    ) -> list[int]:
        n, _, h, w = xs
        o, _, kh, kw = ws
        return [
            n,
            o,
            conv_output_size(h, kh, stride[0], padding[0], padding[1], dilation[0]),
            conv_output_size(w, kw, stride[1], padding[2], padding[3], dilation[1]),
        ]

    def expected_result_type(self) -> Attribute:
        x, w = cast(TensorType, self.input.type), cast(TensorType, self.weight.type)
        xs, ws = x.get_shape(), w.get_shape()
        if x.get_element_type() != w.get_element_type():
            raise self.error(f"element types differ: input {x}, weight {w}")
        _check_float(self, x, "input")
        if len(xs) != 4 or len(ws) != 4:
            raise self.error(
                f"input (NCHW) and weight (OIHW) must be 4-D, got input {shape_str(x)}, weight {shape_str(w)}"
            )
        if xs[1] != ws[1]:
            raise self.error(
                f"input channels differ: input {shape_str(x)} has {xs[1]}, weight {shape_str(w)} has {ws[1]}"
            )
        stride, padding, dilation = _ints(self.stride), _ints(self.padding), _ints(self.dilation)
        if len(stride) != 2 or min(stride, default=0) < 1:
            raise self.error(f"stride must be 2 positive integers, got {list(stride)}")
        if len(dilation) != 2 or min(dilation, default=0) < 1:
            raise self.error(f"dilation must be 2 positive integers, got {list(dilation)}")
        if len(padding) != 4 or min(padding, default=0) < 0:
            raise self.error(
                f"padding must be 4 non-negative integers [top, bottom, left, right], got {list(padding)}"
            )
        shape = self.infer_shape(xs, ws, stride, padding, dilation)
        if shape[2] < 1 or shape[3] < 1:
            raise self.error(
                f"kernel {ws[2]}x{ws[3]} (dilation {list(dilation)}) is larger than the padded input "
                f"{shape_str(x)}"
            )
        return tensor(shape, x.get_element_type())


@irdl_op_definition
class MaxPool2DOp(NNOperation):
    """2-D max pooling over NCHW; padded positions count as -inf. `padding` is [t, b, l, r].

    `%y = nn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>`
    """

    name = "nn.max_pool2d"
    input = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    kernel = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: Value,
        kernel: Sequence[int],
        stride: Sequence[int] | None = None,
        padding: Sequence[int] = (0, 0, 0, 0),
    ):
        x = cast(TensorType, _type_of(input))
        stride = list(stride) if stride is not None else list(kernel)
        n, c, h, w = x.get_shape()
        shape = [
            n,
            c,
            conv_output_size(h, kernel[0], stride[0], padding[0], padding[1], 1),
            conv_output_size(w, kernel[1], stride[1], padding[2], padding[3], 1),
        ]
        super().__init__(
            operands=[input],
            properties={
                "kernel": _i64_array(kernel),
                "stride": _i64_array(stride),
                "padding": _i64_array(padding),
            },
            result_types=[tensor(shape, x.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        x = cast(TensorType, self.input.type)
        xs = x.get_shape()
        if len(xs) != 4:
            raise self.error(f"input must be 4-D (NCHW), got {shape_str(x)}")
        _check_float(self, x, "input")
        kernel, stride, padding = _ints(self.kernel), _ints(self.stride), _ints(self.padding)
        if len(kernel) != 2 or min(kernel, default=0) < 1:
            raise self.error(f"kernel must be 2 positive integers, got {list(kernel)}")
        if len(stride) != 2 or min(stride, default=0) < 1:
            raise self.error(f"stride must be 2 positive integers, got {list(stride)}")
        if len(padding) != 4 or min(padding, default=0) < 0:
            raise self.error(
                f"padding must be 4 non-negative integers [top, bottom, left, right], got {list(padding)}"
            )
        if padding[0] >= kernel[0] or padding[1] >= kernel[0] or padding[2] >= kernel[1] or padding[3] >= kernel[1]:
            raise self.error(
                f"padding {list(padding)} must be smaller than the kernel {list(kernel)} "
                "(a window of padding only has no maximum)"
            )
        h = conv_output_size(xs[2], kernel[0], stride[0], padding[0], padding[1], 1)
        w = conv_output_size(xs[3], kernel[1], stride[1], padding[2], padding[3], 1)
        if h < 1 or w < 1:
            raise self.error(f"kernel {list(kernel)} is larger than the padded input {shape_str(x)}")
        return tensor([xs[0], xs[1], h, w], x.get_element_type())


def _check_window_geometry(op: NNOperation, kernel: Sequence[int], stride: Sequence[int],
                           padding: Sequence[int], dilation: Sequence[int]) -> None:  # fmt: skip
    for name, values, count, least in (
        ("kernel", kernel, 2, 1), ("stride", stride, 2, 1), ("dilation", dilation, 2, 1), ("padding", padding, 4, 0),
    ):  # fmt: skip
        if len(values) != count or min(values, default=least) < least:
            what = "non-negative integers [top, bottom, left, right]" if name == "padding" else "positive integers"
            raise op.error(f"{name} must be {count} {what}, got {list(values)}")


def im2col_shape(image: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
                 padding: Sequence[int], dilation: Sequence[int]) -> tuple[list[int], list[int]]:  # fmt: skip
    """(columns shape [C*KH*KW, N*OH*OW], output size [OH, OW]) of an NCHW image's windows."""
    n, c, h, w = image
    oh = conv_output_size(h, kernel[0], stride[0], padding[0], padding[1], dilation[0])
    ow = conv_output_size(w, kernel[1], stride[1], padding[2], padding[3], dilation[1])
    return [c * kernel[0] * kernel[1], n * oh * ow], [oh, ow]


class WindowsOp(NNOperation, ABC):
    """Shared by im2col and col2im: the geometry of conv2d's windows (kernel [KH, KW], stride,
    padding [top, bottom, left, right], dilation) relating an NCHW image to its columns
    `[C*KH*KW, N*OH*OW]`: row (c, kh, kw), column (n, oh, ow), row-major."""

    input = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    kernel = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    dilation = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding `dilation` `=` $dilation "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def geometry(self) -> tuple[list[int], list[int], list[int], list[int]]:
        """(kernel, stride, padding, dilation) as lists."""
        return tuple(list(_ints(a)) for a in (self.kernel, self.stride, self.padding, self.dilation))  # type: ignore[return-value]

    @staticmethod
    def geometry_properties(kernel: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                            dilation: Sequence[int]) -> dict[str, Attribute]:  # fmt: skip
        return {
            "kernel": _i64_array(kernel),
            "stride": _i64_array(stride),
            "padding": _i64_array(padding),
            "dilation": _i64_array(dilation),
        }

    def check_image(self, image: TensorType, what: str) -> list[int]:
        """The columns shape of `image` (the op's `what`), after checking both."""
        _check_float(self, image, what)
        if len(image.get_shape()) != 4:
            raise self.error(f"{what} must be 4-D (NCHW), got {shape_str(image)}")
        kernel, stride, padding, dilation = self.geometry()
        _check_window_geometry(self, kernel, stride, padding, dilation)
        columns, (oh, ow) = im2col_shape(image.get_shape(), kernel, stride, padding, dilation)
        if oh < 1 or ow < 1:
            raise self.error(
                f"kernel {kernel} (dilation {dilation}) is larger than the padded {what} {shape_str(image)}"
            )
        return columns


@irdl_op_definition
class Im2ColOp(WindowsOp):
    """The windows of conv2d as a matrix: `cols[(c, kh, kw), (n, oh, ow)] =
    xp[n, c, oh*sh + kh*dh, ow*sw + kw*dw]`, xp the zero-padded input. conv2d(x, w) is then
    `reshape(w, [O, C*KH*KW]) @ cols`, reshaped to [O, N, OH, OW] and transposed to NCHW.

    `%c = nn.im2col %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<2x3x8x8xf32> -> tensor<27x128xf32>`
    """

    name = "nn.im2col"

    def __init__(self, input: Value, kernel: Sequence[int], stride: Sequence[int] = (1, 1),
                 padding: Sequence[int] = (0, 0, 0, 0), dilation: Sequence[int] = (1, 1)):  # fmt: skip
        x = cast(TensorType, _type_of(input))
        columns, _ = im2col_shape(x.get_shape(), kernel, stride, padding, dilation)
        super().__init__(
            operands=[input],
            properties=self.geometry_properties(kernel, stride, padding, dilation),
            result_types=[tensor(columns, x.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        x = cast(TensorType, self.input.type)
        return tensor(self.check_image(x, "input"), x.get_element_type())


@irdl_op_definition
class Col2ImOp(WindowsOp):
    """The transpose of im2col: every column entry added back into the image position it was
    read from (overlapping windows sum; padding positions are dropped). The result type names
    the image's shape [N, C, H, W]. It is im2col's VJP, and im2col is its.

    `%x = nn.col2im %c kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<27x128xf32> -> tensor<2x3x8x8xf32>`
    """

    name = "nn.col2im"

    def __init__(self, input: Value, image_shape: Sequence[int], kernel: Sequence[int],
                 stride: Sequence[int] = (1, 1), padding: Sequence[int] = (0, 0, 0, 0),
                 dilation: Sequence[int] = (1, 1)):  # fmt: skip
        cols = cast(TensorType, _type_of(input))
        super().__init__(
            operands=[input],
            properties=self.geometry_properties(kernel, stride, padding, dilation),
            result_types=[tensor(list(image_shape), cols.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        cols, image = cast(TensorType, self.input.type), cast(TensorType, self.result.type)
        _check_float(self, cols, "input")
        if cols.get_element_type() != image.get_element_type():
            raise self.error(f"element types differ: input {cols}, result {image}")
        columns = self.check_image(image, "result")
        if list(cols.get_shape()) != columns:
            raise self.error(
                f"input {shape_str(cols)} is not the columns of a {shape_str(image)} image: expected "
                f"{'x'.join(map(str, columns))}"
            )
        return image


def gather_shape(operand: Sequence[int], indices: Sequence[int], axis: int) -> list[int]:
    return [*operand[:axis], *indices, *operand[axis + 1 :]]


def _check_indices(op: NNOperation, t: TensorType) -> None:
    e = t.get_element_type()
    if not is_signless_int(e, INDEX_INT_WIDTHS):
        raise op.error(f"indices must have element type i32 or i64, got {t}")


@irdl_op_definition
class GatherOp(NNOperation):
    """Takes slices along `axis` at integer indices (numpy's `take(x, indices, axis)`).

    Result shape: operand.shape[:axis] + indices.shape + operand.shape[axis+1:]. A negative index
    counts from the end (as in numpy); indices still out of range are clamped (as in XLA).

    `%y = nn.gather %x[%idx] axis = 0 : (tensor<5x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>`
    """

    name = "nn.gather"
    operand = operand_def(AnyTensorTypeConstr)
    indices = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$operand `[` $indices `]` `axis` `=` $axis attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, operand: Value, indices: Value, axis: int):
        x, i = cast(TensorType, _type_of(operand)), cast(TensorType, _type_of(indices))
        super().__init__(
            operands=[operand, indices],
            properties={"axis": _i64_attr(axis)},
            result_types=[tensor(gather_shape(x.get_shape(), i.get_shape(), axis), x.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        x, i = cast(TensorType, self.operand.type), cast(TensorType, self.indices.type)
        _check_indices(self, i)
        axis = self.axis.value.data
        if not 0 <= axis < len(x.get_shape()):
            raise self.error(f"axis {axis} out of range for operand {shape_str(x)}")
        if x.get_shape()[axis] == 0 and math.prod(i.get_shape()) > 0:
            raise self.error(f"cannot gather from empty axis {axis} of operand {shape_str(x)}")
        return tensor(gather_shape(x.get_shape(), i.get_shape(), axis), x.get_element_type())


@irdl_op_definition
class ScatterAddOp(NNOperation):
    """Adds `updates` into a copy of `operand` at integer indices along `axis`; repeats accumulate.

    The adjoint of `nn.gather`: `updates` has the shape gather would give for these indices.

    `%y = nn.scatter_add %x[%idx], %u axis = 0 : (tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>`
    """

    name = "nn.scatter_add"
    T: ClassVar = VarConstraint("T", AnyTensorTypeConstr)
    operand = operand_def(T)
    indices = operand_def(AnyTensorTypeConstr)
    updates = operand_def(AnyTensorTypeConstr)
    result = result_def(T)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$operand `[` $indices `]` `,` $updates `axis` `=` $axis attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(self, operand: Value, indices: Value, updates: Value, axis: int):
        super().__init__(
            operands=[operand, indices, updates],
            properties={"axis": _i64_attr(axis)},
            result_types=[_type_of(operand)],
        )

    def verify_semantics(self) -> None:
        x = cast(TensorType, self.operand.type)
        i = cast(TensorType, self.indices.type)
        u = cast(TensorType, self.updates.type)
        _check_indices(self, i)
        _check_numeric(self, x)
        axis = self.axis.value.data
        if not 0 <= axis < len(x.get_shape()):
            raise self.error(f"axis {axis} out of range for operand {shape_str(x)}")
        if x.get_shape()[axis] == 0 and math.prod(i.get_shape()) > 0:
            raise self.error(f"cannot scatter into empty axis {axis} of operand {shape_str(x)}")
        expected = gather_shape(x.get_shape(), i.get_shape(), axis)
        if list(u.get_shape()) != expected or u.get_element_type() != x.get_element_type():
            raise self.error(
                f"updates {u} must be {tensor(expected, x.get_element_type())} for operand "
                f"{shape_str(x)}, indices {shape_str(i)} and axis {axis}"
            )


# ---------------------------------------------------------------------------------------------
# Linear algebra: the factorizations LAPACK provides (StableHLO's cholesky and triangular_solve,
# JAX's lu). Each works on the last two dimensions; leading dimensions are a batch.
# ---------------------------------------------------------------------------------------------


def _check_linalg_float(op: NNOperation, t: TensorType, what: str) -> None:
    if not isinstance(t.get_element_type(), Float32Type | Float64Type):
        raise op.error(f"{what} must be f32 or f64 (LAPACK's real types), got {t}")


def _check_square(op: NNOperation, t: TensorType, what: str) -> None:
    shape = t.get_shape()
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise op.error(f"{what} must be a square matrix or a batch of them (..., n, n), got {shape_str(t)}")


@irdl_op_definition
class CholeskyOp(NNOperation):
    """Cholesky factor L of a symmetric positive-definite matrix, A = L L^T (LAPACK's potrf).

    Only the lower triangle of A is read; L's strict upper triangle is zero. A batch element
    that is not positive definite (a pivot <= 0 or NaN) gives a factor that is all NaN, as
    jax.numpy.linalg.cholesky.

    `%l = nn.cholesky %a : (tensor<4x4xf64>) -> tensor<4x4xf64>`
    """

    name = "nn.cholesky"
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        super().__init__(operands=[operand], result_types=[_type_of(operand)])

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        _check_square(self, t, "operand")
        return t


@irdl_op_definition
class TriangularSolveOp(NNOperation):
    """X with A X = B for a triangular A (..., n, n) and B (..., n, k) of the same batch shape
    (BLAS's trsm, left side). Only A's `lower` (else upper) triangle is read, and not its
    diagonal with `unit_diagonal` (taken as ones). A zero on the diagonal gives inf/NaN.

    `%x = nn.triangular_solve %a, %b lower : (tensor<4x4xf64>, tensor<4x2xf64>) -> tensor<4x2xf64>`
    """

    name = "nn.triangular_solve"
    a = operand_def(AnyTensorTypeConstr)
    b = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    lower = opt_prop_def(UnitAttr)
    unit_diagonal = opt_prop_def(UnitAttr)
    assembly_format = (
        "$a `,` $b (`lower` $lower^)? (`unit_diagonal` $unit_diagonal^)? attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(self, a: Value, b: Value, *, lower: bool, unit_diagonal: bool = False):
        props: dict[str, Attribute] = {}
        if lower:
            props["lower"] = UnitAttr()
        if unit_diagonal:
            props["unit_diagonal"] = UnitAttr()
        super().__init__(operands=[a, b], properties=props, result_types=[_type_of(b)])

    @property
    def is_lower(self) -> bool:
        return self.lower is not None

    @property
    def is_unit(self) -> bool:
        return self.unit_diagonal is not None

    def expected_result_type(self) -> Attribute:
        a, b = cast(TensorType, self.a.type), cast(TensorType, self.b.type)
        _check_linalg_float(self, a, "a")
        _check_square(self, a, "a")
        if a.get_element_type() != b.get_element_type():
            raise self.error(f"element types differ: a {a}, b {b}")
        sa, sb = a.get_shape(), b.get_shape()
        if len(sb) != len(sa) or sb[:-2] != sa[:-2] or sb[-2] != sa[-1]:
            raise self.error(
                f"b must be (..., {sa[-1]}, k) with a's batch dimensions, got a {shape_str(a)}, b {shape_str(b)}"
            )
        return b


@irdl_op_definition
class LUOp(NNOperation):
    """LU factorization with partial pivoting, P A = L U (LAPACK's getrf), of a square A.

    Results: `lu` (L's strict lower triangle, unit diagonal implied, and U packed in one
    matrix), `pivots` (i32, 0-based: row j was swapped with row pivots[j], in order) and
    `permutation` (i32: row i of P A is row permutation[i] of A). The pivot is the first row
    of largest magnitude; an exactly singular A gives a zero on U's diagonal, not an error.

    `%lu, %piv, %perm = nn.lu %a : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xi32>, tensor<4xi32>)`
    """

    name = "nn.lu"
    operand = operand_def(AnyTensorTypeConstr)
    lu = result_def(AnyTensorTypeConstr)
    pivots = result_def(AnyTensorTypeConstr)
    permutation = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        t = cast(TensorType, _type_of(operand))
        vector = tensor(t.get_shape()[:-1], IntegerType(32))
        super().__init__(operands=[operand], result_types=[t, vector, vector])

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        _check_square(self, t, "operand")
        vector = tensor(t.get_shape()[:-1], IntegerType(32))
        expected = [t, vector, vector]
        got = [r.type for r in self.results]
        if got != expected:
            raise self.error(
                f"result types ({', '.join(map(str, got))}) do not match the inferred types "
                f"({', '.join(map(str, expected))})"
            )


def _check_result_types(op: NNOperation, expected: Sequence[Attribute]) -> None:
    got = [r.type for r in op.results]
    if got != list(expected):
        raise op.error(
            f"result types ({', '.join(map(str, got))}) do not match the inferred types "
            f"({', '.join(map(str, expected))})"
        )


@irdl_op_definition
class EighOp(NNOperation):
    """Eigenvalues and eigenvectors of a symmetric matrix, A = V diag(w) V^T (LAPACK's syevd).

    Only the lower triangle of A is read (the symmetric matrix is tril(A) + tril(A, -1)^T).
    Results: `w` (..., n), ascending, and `v` (..., n, n), the orthonormal eigenvectors as
    columns. Each eigenvector's sign is fixed: its first entry whose magnitude is at least
    half the column's largest is positive (so every backend, LAPACK or the Jacobi loop, gives
    the same vectors up to roundoff, except within a repeated eigenvalue's eigenspace, which
    has no unique basis). A NaN in the read triangle makes that batch element's w and v NaN.

    `%w, %v = nn.eigh %a : (tensor<4x4xf64>) -> (tensor<4xf64>, tensor<4x4xf64>)`
    """

    name = "nn.eigh"
    operand = operand_def(AnyTensorTypeConstr)
    w = result_def(AnyTensorTypeConstr)
    v = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        t = cast(TensorType, _type_of(operand))
        super().__init__(operands=[operand], result_types=[tensor(t.get_shape()[:-1], t.get_element_type()), t])

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        _check_square(self, t, "operand")
        _check_result_types(self, [tensor(t.get_shape()[:-1], t.get_element_type()), t])


def svd_result_types(t: TensorType) -> list[TensorType]:
    """u (..., m, k), s (..., k), vt (..., k, n) with k = min(m, n), for an operand (..., m, n)
    (the operand's type three times for a rank below 2, which the verifier rejects)."""
    if len(t.get_shape()) < 2:
        return [t, t, t]
    *batch, m, n = t.get_shape()
    k = min(m, n)
    e = t.get_element_type()
    return [tensor([*batch, m, k], e), tensor([*batch, k], e), tensor([*batch, k, n], e)]


@irdl_op_definition
class SvdOp(NNOperation):
    """Reduced singular value decomposition, A = U diag(s) V^T (LAPACK's gesdd).

    For A (..., m, n) and k = min(m, n): `u` (..., m, k) and `vt` (..., k, n) with orthonormal
    columns (rows), `s` (..., k) descending and >= 0. Signs are fixed as nn.eigh's: each column
    of u has its first entry of at least half the column's largest magnitude positive, and the
    matching row of vt is flipped with it (the product is unchanged). A NaN in A makes that
    batch element's results NaN.

    `%u, %s, %vt = nn.svd %a : (tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<3xf64>, tensor<3x3xf64>)`
    """

    name = "nn.svd"
    operand = operand_def(AnyTensorTypeConstr)
    u = result_def(AnyTensorTypeConstr)
    s = result_def(AnyTensorTypeConstr)
    vt = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        t = cast(TensorType, _type_of(operand))
        super().__init__(operands=[operand], result_types=svd_result_types(t))

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        if len(t.get_shape()) < 2:
            raise self.error(f"operand must be a matrix or a batch of them (..., m, n), got {shape_str(t)}")
        _check_result_types(self, svd_result_types(t))


def qr_result_types(t: TensorType) -> list[TensorType]:
    """q (..., m, n) and r (..., n, n) for an operand (..., m, n), m >= n (the operand's type
    twice for a rank below 2, which the verifier rejects)."""
    if len(t.get_shape()) < 2:
        return [t, t]
    *batch, _, n = t.get_shape()
    return [t, tensor([*batch, n, n], t.get_element_type())]


@irdl_op_definition
class QrOp(NNOperation):
    """Reduced QR factorization of a tall or square matrix, A = Q R (LAPACK's geqrf + orgqr).

    For A (..., m, n) with m >= n: `q` (..., m, n) with orthonormal columns and `r` (..., n, n)
    upper triangular. Householder reflections with LAPACK's signs: R's diagonal entry j is
    -sign(a_jj) times the norm of the reflected column (sign(0) = +), and where that column is
    already zero below the diagonal there is no reflection (r_jj = a_jj). So q and r match
    numpy.linalg.qr. A wide A (m < n) is the frontend's business (QR of its first m columns).

    `%q, %r = nn.qr %a : (tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<3x3xf64>)`
    """

    name = "nn.qr"
    operand = operand_def(AnyTensorTypeConstr)
    q = result_def(AnyTensorTypeConstr)
    r = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: Value):
        t = cast(TensorType, _type_of(operand))
        super().__init__(operands=[operand], result_types=qr_result_types(t))

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        _check_linalg_float(self, t, "operand")
        shape = t.get_shape()
        if len(shape) < 2 or shape[-2] < shape[-1]:
            raise self.error(f"operand must be a tall or square matrix or a batch of them (..., m, n) with m >= n, got {shape_str(t)}")
        _check_result_types(self, qr_result_types(t))


NN = Dialect(
    "nn",
    [
        ConstantOp,
        FullOp,
        IotaOp,
        NegOp,
        AbsOp,
        SignOp,
        ExpOp,
        LogOp,
        TanhOp,
        SigmoidOp,
        ReluOp,
        SqrtOp,
        RsqrtOp,
        SinOp,
        CosOp,
        ErfOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        PowOp,
        MaximumOp,
        MinimumOp,
        CompareOp,
        SelectOp,
        ConvertOp,
        AndOp,
        OrOp,
        XorOp,
        ShiftLeftOp,
        ShiftRightLogicalOp,
        ReduceSumOp,
        ReduceMaxOp,
        ReduceMinOp,
        BroadcastInDimOp,
        ReshapeOp,
        TransposeOp,
        SliceOp,
        DynamicSliceOp,
        DynamicUpdateSliceOp,
        ConcatenateOp,
        PadOp,
        MatmulOp,
        Conv2DOp,
        MaxPool2DOp,
        Im2ColOp,
        Col2ImOp,
        GatherOp,
        ScatterAddOp,
        CholeskyOp,
        TriangularSolveOp,
        LUOp,
        EighOp,
        SvdOp,
        QrOp,
    ],
    [],
)
