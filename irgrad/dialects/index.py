"""The `index` dialect: integer arithmetic on `index` values, as MLIR's `index` dialect.

xDSL 0.75 has no `index` dialect, so irgrad defines MLIR's ops with MLIR's syntax:

    %c = index.constant 42
    %t = index.bool.constant true
    %s = index.add %a, %b            (sub, mul, divs, divu, ceildivs, ceildivu, floordivs,
                                      rems, remu, maxs, maxu, mins, minu, shl, shrs, shru,
                                      and, or, xor)
    %p = index.cmp slt(%a, %b)       (eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge)
    %i = index.casts %x : i32 to index     (castu zero-extends instead)
    %w = index.sizeof

Semantics are MLIR's: the ops compute on the target's index width (64 bits for irgrad's CPU
backend), read their operands as signed or unsigned as the op's name says (`s`/`u`), and
wrap. Division by zero, signed division overflow (INT_MIN / -1) and a shift by the bit width
or more are undefined; the reference interpreter raises on them and `convert-index-to-llvm`
makes them not trap (irgrad/lowering/llvm/index_to_llvm.py). `casts`/`castu` convert between
`index` and a signless integer type: exactly one side is `index`.
"""

from __future__ import annotations

from enum import auto

from xdsl.dialects.builtin import (
    BoolAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Dialect, Operation, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Commutative, ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

INDEX = IndexType()
INDEX_BITWIDTH = 64
"""The width of `index` on irgrad's targets (what `index.sizeof` gives)."""


class IndexCmpPredicate(StrEnum):
    """MLIR's `IndexCmpPredicate`, in its order (the same as LLVM's `icmp` predicates)."""

    EQ = auto()
    NE = auto()
    SLT = auto()
    SLE = auto()
    SGT = auto()
    SGE = auto()
    ULT = auto()
    ULE = auto()
    UGT = auto()
    UGE = auto()


@irdl_attr_definition
class IndexCmpPredicateAttr(EnumAttribute[IndexCmpPredicate], SpacedOpaqueSyntaxAttribute):
    """`#index<cmp_predicate slt>`; `index.cmp` prints only the keyword."""

    name = "index.cmp_predicate"


# ---------------------------------------------------------------------------------------------
# Binary ops
# ---------------------------------------------------------------------------------------------


class IndexBinaryOp(IRDLOperation):
    """`%r = index.<op> %lhs, %rhs`: two index operands, one index result."""

    lhs = operand_def(IndexType)
    rhs = operand_def(IndexType)
    result = result_def(IndexType)

    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[INDEX])

    @classmethod
    def parse(cls, parser: Parser) -> IndexBinaryOp:
        lhs = parser.parse_operand(INDEX)
        parser.parse_punctuation(",")
        rhs = parser.parse_operand(INDEX)
        attributes = parser.parse_optional_attr_dict()
        op = cls(lhs, rhs)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        printer.print_op_attributes(self.attributes)


def _commutative(cls: type[IndexBinaryOp]) -> type[IndexBinaryOp]:
    cls.traits = traits_def(Pure(), Commutative())
    return cls


@irdl_op_definition
@_commutative
class AddOp(IndexBinaryOp):
    """Wrapping addition."""

    name = "index.add"


@irdl_op_definition
class SubOp(IndexBinaryOp):
    """Wrapping subtraction."""

    name = "index.sub"


@irdl_op_definition
@_commutative
class MulOp(IndexBinaryOp):
    """Wrapping multiplication."""

    name = "index.mul"


@irdl_op_definition
class DivSOp(IndexBinaryOp):
    """Signed division, rounding toward zero."""

    name = "index.divs"


@irdl_op_definition
class DivUOp(IndexBinaryOp):
    """Unsigned division."""

    name = "index.divu"


@irdl_op_definition
class CeilDivSOp(IndexBinaryOp):
    """Signed division, rounding toward positive infinity."""

    name = "index.ceildivs"


@irdl_op_definition
class CeilDivUOp(IndexBinaryOp):
    """Unsigned division, rounding up."""

    name = "index.ceildivu"


@irdl_op_definition
class FloorDivSOp(IndexBinaryOp):
    """Signed division, rounding toward negative infinity."""

    name = "index.floordivs"


@irdl_op_definition
class RemSOp(IndexBinaryOp):
    """Signed remainder (the sign of the dividend)."""

    name = "index.rems"


@irdl_op_definition
class RemUOp(IndexBinaryOp):
    """Unsigned remainder."""

    name = "index.remu"


@irdl_op_definition
@_commutative
class MaxSOp(IndexBinaryOp):
    """Signed maximum."""

    name = "index.maxs"


@irdl_op_definition
@_commutative
class MaxUOp(IndexBinaryOp):
    """Unsigned maximum."""

    name = "index.maxu"


@irdl_op_definition
@_commutative
class MinSOp(IndexBinaryOp):
    """Signed minimum."""

    name = "index.mins"


@irdl_op_definition
@_commutative
class MinUOp(IndexBinaryOp):
    """Unsigned minimum."""

    name = "index.minu"


@irdl_op_definition
class ShlOp(IndexBinaryOp):
    """Left shift (poison for a shift by the bit width or more)."""

    name = "index.shl"


@irdl_op_definition
class ShrSOp(IndexBinaryOp):
    """Arithmetic right shift (poison for a shift by the bit width or more)."""

    name = "index.shrs"


@irdl_op_definition
class ShrUOp(IndexBinaryOp):
    """Logical right shift (poison for a shift by the bit width or more)."""

    name = "index.shru"


@irdl_op_definition
@_commutative
class AndOp(IndexBinaryOp):
    """Bitwise and."""

    name = "index.and"


@irdl_op_definition
@_commutative
class OrOp(IndexBinaryOp):
    """Bitwise or."""

    name = "index.or"


@irdl_op_definition
@_commutative
class XOrOp(IndexBinaryOp):
    """Bitwise exclusive or."""

    name = "index.xor"


BINARY_OPS: tuple[type[IndexBinaryOp], ...] = (
    AddOp, SubOp, MulOp, DivSOp, DivUOp, CeilDivSOp, CeilDivUOp, FloorDivSOp, RemSOp,
    RemUOp, MaxSOp, MaxUOp, MinSOp, MinUOp, ShlOp, ShrSOp, ShrUOp, AndOp, OrOp, XOrOp,
)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Comparison, constants, casts, sizeof
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class CmpOp(IRDLOperation):
    """`%r = index.cmp slt(%lhs, %rhs)`: an i1."""

    name = "index.cmp"

    lhs = operand_def(IndexType)
    rhs = operand_def(IndexType)
    pred = prop_def(IndexCmpPredicateAttr)
    result = result_def(IntegerType(1))

    traits = traits_def(Pure())

    def __init__(
        self,
        predicate: IndexCmpPredicate | str,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
    ):
        super().__init__(
            operands=[lhs, rhs],
            result_types=[IntegerType(1)],
            properties={"pred": IndexCmpPredicateAttr(IndexCmpPredicate(predicate))},
        )

    @classmethod
    def parse(cls, parser: Parser) -> CmpOp:
        predicate = parser.parse_str_enum(IndexCmpPredicate)
        parser.parse_punctuation("(")
        lhs = parser.parse_operand(INDEX)
        parser.parse_punctuation(",")
        rhs = parser.parse_operand(INDEX)
        parser.parse_punctuation(")")
        attributes = parser.parse_optional_attr_dict()
        op = cls(predicate, lhs, rhs)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.pred.data.value}(")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """`%c = index.constant 42`."""

    name = "index.constant"

    value = prop_def(IntegerAttr[IndexType])
    result = result_def(IndexType)

    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: int):
        super().__init__(properties={"value": IntegerAttr(value, INDEX)}, result_types=[INDEX])

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        attributes = parser.parse_optional_attr_dict()
        op = cls(parser.parse_integer(allow_boolean=False))
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" {self.value.value.data}")


@irdl_op_definition
class BoolConstantOp(IRDLOperation):
    """`%t = index.bool.constant true`: an i1."""

    name = "index.bool.constant"

    value = prop_def(BoolAttr)
    result = result_def(IntegerType(1))

    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: bool):
        super().__init__(
            properties={"value": IntegerAttr.from_bool(value)}, result_types=[IntegerType(1)]
        )

    @classmethod
    def parse(cls, parser: Parser) -> BoolConstantOp:
        attributes = parser.parse_optional_attr_dict()
        if parser.parse_optional_keyword("true") is not None:
            value = True
        else:
            parser.parse_keyword("false")
            value = False
        op = cls(value)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" true" if self.value.value.data else " false")


class IndexCastOp(IRDLOperation):
    """`%r = index.casts %x : i32 to index`: between index and a signless integer type."""

    input = operand_def(IntegerType | IndexType)
    output = result_def(IntegerType | IndexType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `to` type($output)"

    def __init__(self, value: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[value], result_types=[result_type])

    def verify_(self) -> None:
        source, target = self.input.type, self.output.type
        if isinstance(source, IndexType) == isinstance(target, IndexType):
            raise VerifyException(
                f"'{self.name}' op casts between index and an integer type: exactly one of "
                f"{source} and {target} must be index"
            )
        other = target if isinstance(source, IndexType) else source
        assert isinstance(other, IntegerType)
        if other.signedness.data != Signedness.SIGNLESS:
            raise VerifyException(f"'{self.name}' op needs a signless integer type, got {other}")


@irdl_op_definition
class CastSOp(IndexCastOp):
    """Sign-extending (or truncating) cast."""

    name = "index.casts"


@irdl_op_definition
class CastUOp(IndexCastOp):
    """Zero-extending (or truncating) cast."""

    name = "index.castu"


@irdl_op_definition
class SizeOfOp(IRDLOperation):
    """`%w = index.sizeof`: the bit width of `index` on the target."""

    name = "index.sizeof"

    result = result_def(IndexType)

    traits = traits_def(Pure())

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[INDEX])


Index = Dialect(
    "index",
    [*BINARY_OPS, CmpOp, ConstantOp, BoolConstantOp, CastSOp, CastUOp, SizeOfOp],
    [IndexCmpPredicateAttr],
)
