"""`tensor.generate`, with xDSL's `tensor` ops: the `tensor` dialect irgrad reads.

    %t = tensor.generate %n {
    ^bb0(%i: index, %j: index):
      ...
      tensor.yield %v : f32
    } : tensor<?x8xf32>

The body computes the element at each index; one `index` operand per dynamic dimension.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, TensorType
from xdsl.ir import Attribute, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import RecursiveMemoryEffect, SingleBlockImplicitTerminator
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class GenerateOp(IRDLOperation):
    """A tensor whose elements a region computes from their indices."""

    name = "tensor.generate"

    dynamicExtents = var_operand_def(IndexType)
    result = result_def(TensorType)
    body = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect(), SingleBlockImplicitTerminator(tensor.YieldOp))

    def __init__(self, result_type: TensorType[Attribute], body: Region, dynamic_extents: Sequence[SSAValue] = ()):
        super().__init__(operands=[dynamic_extents], result_types=[result_type], regions=[body])

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, TensorType)
        shape = t.get_shape()
        dynamic = sum(1 for d in shape if d == DYNAMIC_INDEX)
        if dynamic != len(self.dynamicExtents):
            raise VerifyException(
                f"tensor.generate needs one extent operand per dynamic dimension of {t}: "
                f"{dynamic}, got {len(self.dynamicExtents)}"
            )
        args = self.body.block.args
        if len(args) != len(shape) or not all(isinstance(a.type, IndexType) for a in args):
            raise VerifyException(f"tensor.generate's body takes {len(shape)} index arguments, one per dimension of {t}")
        yielded = self.body.block.last_op
        if not isinstance(yielded, tensor.YieldOp) or len(yielded.operands) != 1:
            raise VerifyException("tensor.generate's body ends in a tensor.yield of one element")
        if yielded.operands[0].type != t.get_element_type():
            raise VerifyException(
                f"tensor.generate's body yields {yielded.operands[0].type}, the element type of {t} is {t.get_element_type()}"
            )

    def print(self, printer: Printer) -> None:
        if self.dynamicExtents:
            printer.print_string(" ")
            printer.print_list(self.dynamicExtents, printer.print_ssa_value)
        printer.print_string("  ")
        printer.print_region(self.body)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> GenerateOp:
        extents = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        ) or []
        body = parser.parse_region()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_pos = parser.pos
        result_type = parser.parse_type()
        if not isinstance(result_type, TensorType):
            parser.raise_error(f"tensor.generate makes a tensor, not {result_type}", at_position=type_pos)
        index = IndexType()
        op = cls(result_type, body, [parser.resolve_operand(e, index) for e in extents])
        op.attributes |= attrs
        return op


Tensor = Dialect("tensor", [*tensor.Tensor.operations, GenerateOp], [*tensor.Tensor.attributes])
"""xDSL's `tensor` dialect with `tensor.generate`."""
