"""`linalg.map`, `linalg.batch_matmul`, `linalg.matvec` and `linalg.dot`, with xDSL's `linalg`
ops: the `linalg` dialect irgrad reads.

    %m = linalg.map { arith.addf } ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>)
    %m = linalg.map ins(%a : tensor<8xf32>) outs(%init : tensor<8xf32>)
      (%x: f32) { ... linalg.yield %y : f32 }
    %c = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%c0 : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    %y = linalg.matvec ins(%m, %x : tensor<4x8xf32>, tensor<8xf32>) outs(%y0 : tensor<4xf32>) -> tensor<4xf32>
    %d = linalg.dot ins(%x, %y : tensor<8xf32>, tensor<8xf32>) outs(%d0 : tensor<f32>) -> tensor<f32>

Semantics are upstream's: the contractions accumulate into their output (`C += A B`), on one
element type (upstream's casts between element types are not offered: a verifier error). The
pass `linalg-generalize-upstream-ops` rewrites all four into `linalg.generic`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.linalg import Linalg as XdslLinalg
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    MemRefType,
    ShapedType,
    TensorType,
)
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.ir import Attribute, BlockArgument, Dialect, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    IRDLOperation,
    base,
    irdl_op_definition,
    operand_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from irgrad.xdsl_patches.upstream_op_syntax import parse_short_form

# ---- linalg.map --------------------------------------------------------------------------


@irdl_op_definition
class MapOp(IRDLOperation):
    """Elementwise: the body maps the inputs' elements at each index to the output's."""

    name = "linalg.map"

    inputs = var_operand_def(base(TensorType) | base(MemRefType))
    init = operand_def(base(TensorType) | base(MemRefType))
    result = var_result_def(TensorType)
    mapper = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, inputs: Sequence[SSAValue], init: SSAValue, mapper: Region):
        result = [init.type] if isinstance(init.type, TensorType) else []
        super().__init__(operands=[inputs, init], result_types=[result], regions=[mapper])

    def verify_(self) -> None:
        shape = self.init.type.get_shape()
        for k, value in enumerate(self.inputs):
            if value.type.get_shape() != shape:
                raise VerifyException(
                    f"linalg.map's input #{k} has shape {list(value.type.get_shape())}, its output {list(shape)}"
                )
        args = self.mapper.block.args
        expected = [v.type.get_element_type() for v in self.inputs]
        if [a.type for a in args] != expected:
            raise VerifyException(f"linalg.map's body takes the inputs' element types {expected}")
        yielded = self.mapper.block.last_op
        element = self.init.type.get_element_type()
        if not isinstance(yielded, linalg.YieldOp) or [v.type for v in yielded.operands] != [element]:
            raise VerifyException(f"linalg.map's body ends in a linalg.yield of one {element}")

    def print(self, printer: Printer) -> None:
        payload = _short_form_payload(self.mapper, len(self.inputs))
        if payload is not None:
            printer.print_string(f" {{ {payload.name}")
            printer.print_op_attributes(payload.attributes)
            printer.print_string(" }")
        printer.print_string(" ins(")
        printer.print_list(self.inputs, printer.print_ssa_value)
        printer.print_string(" : ")
        printer.print_list((v.type for v in self.inputs), printer.print_attribute)
        printer.print_string(") outs(")
        printer.print_ssa_value(self.init)
        printer.print_string(" : ")
        printer.print_attribute(self.init.type)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        if payload is None:
            printer.print_string("\n(")
            printer.print_list(self.mapper.block.args, printer.print_block_argument)
            printer.print_string(") ")
            printer.print_region(self.mapper, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> MapOp:
        short = parse_short_form(parser)
        pos = parser.pos
        parser.parse_characters("ins")
        parser.parse_punctuation("(")
        unresolved = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_unresolved_operand)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation(")")
        inputs = parser.resolve_operands(unresolved, types, pos)
        parser.parse_characters("outs")
        parser.parse_punctuation("(")
        init_operand = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        init = parser.resolve_operand(init_operand, parser.parse_type())
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        if not all(isinstance(v.type, ShapedType) for v in (*inputs, init)):
            parser.raise_error("linalg.map's operands are tensors or memrefs", at_position=pos)
        element_types = [v.type.get_element_type() for v in inputs]
        if short is not None:
            region = short.region(parser, element_types, init.type.get_element_type())
        else:
            args = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_argument)
            region = parser.parse_region(args)
        op = cls(inputs, init, region)
        op.attributes |= attrs
        return op


def _short_form_payload(region: Region, arity: int) -> Operation | None:
    """The body's one op when it can print as `{ name attrs }`, as upstream does: one op of the
    block arguments in order, without regions or non-default properties, its result yielded."""
    block = region.block
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[1], linalg.YieldOp):
        return None
    payload, yielded = ops
    if payload.regions or len(payload.results) != 1 or list(yielded.operands) != [payload.results[0]]:
        return None
    if list(payload.operands) != list(block.args) or len(block.args) != arity:
        return None
    definition = type(payload).get_irdl_definition() if hasattr(type(payload), "get_irdl_definition") else None
    for name, value in payload.properties.items():
        default = definition.properties[name].default_value if definition and name in definition.properties else None
        if value != default:
            return None
    return payload


# ---- contractions ------------------------------------------------------------------------


def _contraction_body(arg_types: Sequence[Attribute]) -> Region:
    add, mul = (arith.AddfOp, arith.MulfOp) if isinstance(arg_types[-1], AnyFloat) else (arith.AddiOp, arith.MuliOp)

    @Builder.implicit_region(arg_types)
    def body(args: tuple[BlockArgument, ...]) -> None:
        linalg.YieldOp(add(args[2], mul(args[0], args[1])))

    return body


class Contraction(NamedOperation):
    """A named contraction `C += A B` on one element type, given by its indexing maps."""

    MAPS: ClassVar[tuple[Callable[..., tuple[object, ...]], ...]]
    REDUCTIONS: ClassVar[int] = 1

    def __init__(self, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]):
        results = [o.type for o in outputs if isinstance(o.type, TensorType)]
        super().__init__(ins=inputs, outs=outputs, result_types=[results], hidden_region=self.get_hidden_region(inputs, outputs))

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        arg_types = cls.body_arg_types((*inputs, *outputs))
        if len(set(arg_types)) > 1:  # the body's arith ops could not be built
            raise VerifyException(
                f"{cls.name} on mixed element types ({', '.join(map(str, arg_types))}) is not supported"
            )
        return _contraction_body(arg_types)

    def get_indexing_maps(self) -> ArrayAttr[AffineMapAttr]:
        return ArrayAttr([AffineMapAttr(AffineMap.from_callable(m)) for m in self.MAPS])

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        return [m.data for m in self.get_indexing_maps().data]

    def get_iterator_types(self) -> ArrayAttr[linalg.IteratorTypeAttr]:
        dims = self.get_indexing_maps().data[0].data.num_dims
        kinds = [linalg.IteratorTypeAttr.parallel()] * (dims - self.REDUCTIONS)
        return ArrayAttr(kinds + [linalg.IteratorTypeAttr.reduction()] * self.REDUCTIONS)

    def verify_(self) -> None:
        operands = [*self.inputs, *self.outputs]
        if len(self.inputs) != 2 or len(self.outputs) != 1:
            raise VerifyException(f"{self.name} takes two inputs and one output")
        for value, indexing in zip(operands, self.get_default_indexing_maps()):
            if len(value.type.get_shape()) != len(indexing.results):
                raise VerifyException(f"{self.name}'s operand {value.type} should have rank {len(indexing.results)}")
        super().verify_()


@irdl_op_definition
class BatchMatmulOp(Contraction):
    """`C[b, i, j] += A[b, i, k] B[b, k, j]`."""

    name = "linalg.batch_matmul"
    MAPS: ClassVar[tuple[Callable[..., tuple[object, ...]], ...]] = (lambda b, i, j, k: (b, i, k), lambda b, i, j, k: (b, k, j), lambda b, i, j, k: (b, i, j))


@irdl_op_definition
class MatvecOp(Contraction):
    """`y[i] += A[i, j] x[j]`."""

    name = "linalg.matvec"
    MAPS: ClassVar[tuple[Callable[..., tuple[object, ...]], ...]] = (lambda i, j: (i, j), lambda i, j: (j,), lambda i, j: (i,))


@irdl_op_definition
class DotOp(Contraction):
    """`c[] += a[k] b[k]`."""

    name = "linalg.dot"
    MAPS: ClassVar[tuple[Callable[..., tuple[object, ...]], ...]] = (lambda k: (k,), lambda k: (k,), lambda k: ())


Linalg = Dialect(
    "linalg",
    [*XdslLinalg.operations, MapOp, BatchMatmulOp, MatvecOp, DotOp],
    [*XdslLinalg.attributes],
)
"""xDSL's `linalg` dialect with the ops above."""
