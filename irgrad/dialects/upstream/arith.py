"""`arith.remf` and `arith.index_castui`, with xDSL's `arith` ops: the `arith` dialect irgrad reads.

    %r = arith.remf %a, %b : f32             the remainder of a / b with a's sign (C's fmod)
    %i = arith.index_castui %x : index to i32   index read as unsigned: truncates or zero-extends
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import IRDLOperation, base, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class RemFOp(arith.FloatingPointLikeBinaryOperation):
    """The floating-point remainder, `fmod`: `a - b * trunc(a / b)`, exact, with `a`'s sign."""

    name = "arith.remf"

    traits = traits_def(Pure())


@irdl_op_definition
class IndexCastUIOp(IRDLOperation):
    """A cast between `index` and a signless integer that reads the source as unsigned."""

    name = "arith.index_castui"

    input = operand_def(base(IntegerType) | base(IndexType))
    result = result_def(base(IntegerType) | base(IndexType))

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, input_arg: SSAValue | Operation, target_type: Attribute):
        super().__init__(operands=[input_arg], result_types=[target_type])

    def verify_(self) -> None:
        if isinstance(self.input.type, IndexType) == isinstance(self.result.type, IndexType):
            raise VerifyException(
                f"'arith.index_castui' casts between index and an integer, not {self.input.type} to {self.result.type}"
            )


Arith = Dialect("arith", [*arith.Arith.operations, RemFOp, IndexCastUIOp], [*arith.Arith.attributes])
"""xDSL's `arith` dialect with the ops above."""
