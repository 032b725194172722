"""Elementwise `nn` ops: unary math, binary arithmetic, `nn.compare`, `nn.select`, `nn.convert`,
bitwise ops and shifts.

Unary and binary ops share a base class (`ElementwiseUnaryOp`, `ElementwiseBinaryOp`) holding the
operands, the assembly format and the element-type rule, so a concrete op is its name, its
docstring and what it `ACCEPTS`.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar, cast

from xdsl.dialects.builtin import AnyTensorTypeConstr, I64, IntegerAttr, TensorType, i1
from xdsl.ir import Attribute
from xdsl.irdl import VarConstraint, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.parser import Parser
from xdsl.printer import Printer

from irgrad.dialects.nn.base import (
    NNOperation,
    Value,
    _check_float,
    _check_int,
    _check_numeric,
    _check_wide_int,
    _i64_attr,
    _type_of,
    is_bool,
    shape_str,
    tensor,
)


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
    COMPLEX: ClassVar[bool] = True
    ACCEPTS: ClassVar[str] = "numeric"


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """Elementwise |x|.  `%y = nn.abs %x : tensor<4xf32>`"""

    name = "nn.abs"
    ACCEPTS: ClassVar[str] = "numeric"


@irdl_op_definition
class SignOp(ElementwiseUnaryOp):
    """Elementwise sign: -1, 0 or 1 (NaN stays NaN); of a complex z, z / |z| (0 at 0, numpy 2's).
    Its derivative is zero.  `%y = nn.sign %x : tensor<4xf32>`"""

    name = "nn.sign"
    COMPLEX: ClassVar[bool] = True
    ACCEPTS: ClassVar[str] = "numeric"


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """Elementwise e**x.  `%y = nn.exp %x : tensor<4xf32>`"""

    name = "nn.exp"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Elementwise natural logarithm (on complex values the principal branch, cut on the negative
    real axis).  `%y = nn.log %x : tensor<4xf32>`"""

    name = "nn.log"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """Elementwise hyperbolic tangent.  `%y = nn.tanh %x : tensor<4xf32>`"""

    name = "nn.tanh"
    COMPLEX: ClassVar[bool] = True


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
    """Elementwise square root (on complex values the principal one, Re >= 0).
    `%y = nn.sqrt %x : tensor<4xf32>`"""

    name = "nn.sqrt"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class RsqrtOp(ElementwiseUnaryOp):
    """Elementwise 1 / sqrt(x).  `%y = nn.rsqrt %x : tensor<4xf32>`"""

    name = "nn.rsqrt"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class SinOp(ElementwiseUnaryOp):
    """Elementwise sine.  `%y = nn.sin %x : tensor<4xf32>`"""

    name = "nn.sin"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class CosOp(ElementwiseUnaryOp):
    """Elementwise cosine.  `%y = nn.cos %x : tensor<4xf32>`"""

    name = "nn.cos"
    COMPLEX: ClassVar[bool] = True


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
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class SubOp(ElementwiseBinaryOp):
    """Elementwise x - y; integers wrap around.  `%z = nn.sub %x, %y : tensor<4xf32>`"""

    name = "nn.sub"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class MulOp(ElementwiseBinaryOp):
    """Elementwise x * y; integers wrap around.  `%z = nn.mul %x, %y : tensor<4xf32>`"""

    name = "nn.mul"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class DivOp(ElementwiseBinaryOp):
    """Elementwise x / y. IEEE on floats; on integers it truncates toward zero (C, arith.divsi,
    lax.div) and x / 0 gives 0, so no input can trap.

    `%z = nn.div %x, %y : tensor<4xf32>`
    """

    name = "nn.div"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class PowOp(ElementwiseBinaryOp):
    """Elementwise x ** y on floats (IEEE pow); on complex values the principal exp(y log x).
    `%z = nn.pow %x, %y : tensor<4xf32>`"""

    name = "nn.pow"
    COMPLEX: ClassVar[bool] = True
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
    """Elementwise comparison giving i1; NaN compares unequal to everything, as in IEEE. Complex
    values are equal where both parts are; the ordered directions compare them lexicographically,
    real parts first (numpy's order, and jnp's).

    `%m = nn.compare lt, %x, %y : tensor<4xf32>` (the result is tensor<4xi1>)
    """

    name = "nn.compare"
    COMPLEX: ClassVar[bool] = True
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
    COMPLEX: ClassVar[bool] = True
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
    defined result. Anything to i1 is `x != 0`; i1 to a number gives 0 or 1. A real number to
    complex has a zero imaginary part; complex to a real or integer type keeps the real part
    (numpy's astype, which warns, and JAX's); complex to i1 is true where either part is nonzero.

    `%y = nn.convert %x : tensor<4xf32> -> tensor<4xf16>`
    """

    name = "nn.convert"
    COMPLEX: ClassVar[bool] = True
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
