"""`nn` ops that make a tensor from nothing: `nn.constant`, `nn.full` (one scalar) and `nn.iota`."""

from __future__ import annotations

import math
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    AnyTensorTypeConstr,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    I64,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import base, irdl_op_definition, prop_def, result_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.lexer import Position

from irgrad.dialects.nn.base import NNOperation, _i64_attr, is_bool, is_float, is_int


@irdl_op_definition
class ConstantOp(NNOperation):
    """A tensor constant from a dense attribute.

    `%c = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>`
    """

    name = "nn.constant"
    COMPLEX: ClassVar[bool] = True
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
