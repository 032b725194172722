"""MLIR's custom assembly of `scf.parallel`, `memref.copy`, `memref.cast`, `memref.global`, the
short form of `linalg.reduce`, and `arith.select` with a tensor condition.

xDSL 0.75 gives these ops no custom form: it prints them generically and cannot read the form
upstream `mlir-opt` prints ("Operation scf.parallel does not have a custom format"), so IR that
went through upstream MLIR did not come back. The forms here are upstream's (MLIR 19,
`SCF.cpp` `ParallelOp::print/parse`, `MemRefOps.td`), printed and read:

    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) init (%z) -> f32 { ... }
    memref.copy %a, %b : memref<4xf32> to memref<4xf32, strided<[1], offset: ?>>
    %v = memref.cast %a : memref<4xf32> to memref<?xf32>
    memref.global "private" constant @c : memref<2xf32> = dense<[1.0, 2.0]> {alignment = 64 : i64}

    %r = linalg.reduce { arith.addf } ins(%x : tensor<4x8xf32>) outs(%i : tensor<4xf32>) dimensions = [1]
    %s = arith.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>

An `scf.parallel` body's empty `scf.reduce` is left implicit (as xDSL does for `scf.for`;
upstream reads both). Upstream: not reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ShapedType,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
)
from xdsl.ir import Attribute, Block, Region
from xdsl.irdl.declarative_assembly_format import FormatProgram
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import SingleBlockImplicitTerminator, ensure_terminator
from xdsl.utils.exceptions import VerifyException

from irgrad.xdsl_patches.patching import install, is_patched, require_source

COPY_FORMAT = "$source `,` $destination attr-dict `:` type($source) `to` type($destination)"
CAST_FORMAT = "$source attr-dict `:` type($source) `to` type($dest)"


def apply() -> None:
    if is_patched(scf.ParallelOp.print):
        return
    declare_format(memref.CopyOp, COPY_FORMAT)
    declare_format(memref.CastOp, CAST_FORMAT)
    install_custom_syntax(scf.ParallelOp, _print_parallel, _parse_parallel)
    install_custom_syntax(memref.GlobalOp, _print_global, _parse_global)
    _patch_linalg_reduce()
    _patch_arith_select()


def declare_format(op_type: Any, text: str) -> None:
    """Give an xDSL op a declarative assembly format after its definition (compiled on first use)."""
    program: list[FormatProgram] = []

    def compiled() -> FormatProgram:
        if not program:
            program.append(FormatProgram.from_str(text, op_type.get_irdl_definition()))
        return program[0]

    def print_with_format(self: Any, printer: Printer) -> None:
        compiled().print(printer, self)

    def parse_with_format(cls: Any, parser: Parser) -> Any:
        return compiled().parse(parser, cls)

    install_custom_syntax(op_type, print_with_format, parse_with_format)


def install_custom_syntax(op_type: Any, print_fn: Any, parse_fn: Any) -> None:
    install(op_type, "print", print_fn, op_type.print)
    _install_parse(op_type, parse_fn)


def _install_parse(op_type: Any, parse_fn: Any) -> None:
    original_parse = op_type.__dict__.get("parse", op_type.parse)
    parse_method = classmethod(parse_fn)
    parse_fn._irgrad_patch = True
    parse_fn._irgrad_original = original_parse
    setattr(op_type, "parse", parse_method)


# ---- pieces of MLIR's syntax the custom forms share ----------------------------------------


def print_values(printer: Printer, values: Any) -> None:
    """`(%a, %b)`."""
    printer.print_string("(")
    printer.print_list(values, printer.print_ssa_value)
    printer.print_string(")")


def print_arrow_types(printer: Printer, types: Sequence[Attribute]) -> None:
    """MLIR's optional arrow type list: nothing, ` -> t`, or ` -> (t1, t2)`."""
    if not types:
        return
    printer.print_string(" -> ")
    if len(types) == 1:
        printer.print_attribute(types[0])
        return
    printer.print_string("(")
    printer.print_list(types, printer.print_attribute)
    printer.print_string(")")


def parse_arrow_types(parser: Parser) -> list[Attribute]:
    """What `print_arrow_types` prints (and `-> ()`)."""
    if parser.parse_optional_punctuation("->") is None:
        return []
    if parser.parse_optional_punctuation("(") is None:
        return [parser.parse_type()]
    types = parser.parse_optional_undelimited_comma_separated_list(parser.parse_optional_type, parser.parse_type) or []
    parser.parse_punctuation(")")
    return types


# ---- scf.parallel ------------------------------------------------------------------------


def _print_parallel(self: scf.ParallelOp, printer: Printer) -> None:
    printer.print_string(" ")
    print_values(printer, self.body.block.args)
    printer.print_string(" = ")
    print_values(printer, self.lowerBound)
    printer.print_string(" to ")
    print_values(printer, self.upperBound)
    printer.print_string(" step ")
    print_values(printer, self.step)
    if self.initVals:
        printer.print_string(" init ")
        print_values(printer, self.initVals)
    print_arrow_types(printer, [r.type for r in self.res])
    printer.print_string(" ")
    terminator = self.body.block.last_op
    explicit = not isinstance(terminator, scf.ReduceOp) or bool(terminator.args) or bool(terminator.attributes)
    printer.print_region(self.body, print_entry_block_args=False, print_block_terminators=explicit)
    printer.print_op_attributes(self.attributes)


def _parse_parallel(cls: Any, parser: Parser) -> scf.ParallelOp:
    paren = Parser.Delimiter.PAREN
    ivs = parser.parse_comma_separated_list(paren, lambda: parser.parse_argument(expect_type=False))
    parser.parse_punctuation("=")
    lower = parser.parse_comma_separated_list(paren, parser.parse_unresolved_operand)
    parser.parse_keyword("to")
    upper = parser.parse_comma_separated_list(paren, parser.parse_unresolved_operand)
    parser.parse_keyword("step")
    steps = parser.parse_comma_separated_list(paren, parser.parse_unresolved_operand)
    if not len(ivs) == len(lower) == len(upper) == len(steps):
        parser.raise_error(
            f"scf.parallel needs as many bounds and steps as induction variables: {len(ivs)} variables, "
            f"{len(lower)} lower bounds, {len(upper)} upper bounds, {len(steps)} steps"
        )
    init_pos = parser.pos
    inits = parser.parse_comma_separated_list(paren, parser.parse_unresolved_operand) if parser.parse_optional_keyword("init") else []
    types = parse_arrow_types(parser)
    if len(types) != len(inits):
        parser.raise_error(f"scf.parallel has {len(inits)} init values but {len(types)} result types", at_position=init_pos)
    index = IndexType()
    resolved_inits = parser.resolve_operands(inits, types, init_pos)
    body = parser.parse_region([iv.resolve(index) for iv in ivs])
    attrs = parser.parse_optional_attr_dict()
    op = scf.ParallelOp(
        [parser.resolve_operand(v, index) for v in lower],
        [parser.resolve_operand(v, index) for v in upper],
        [parser.resolve_operand(v, index) for v in steps],
        body,
        resolved_inits,
    )
    op.attributes |= attrs
    for trait in op.get_traits_of_type(SingleBlockImplicitTerminator):
        ensure_terminator(op, trait)
    return op


# ---- memref.global -----------------------------------------------------------------------


def _print_global(self: memref.GlobalOp, printer: Printer) -> None:
    visibility = self.sym_visibility.data
    if visibility != "public":
        printer.print_string(" ")
        printer.print_string_literal(visibility)
    if self.constant is not None:
        printer.print_string(" constant")
    printer.print_string(" ")
    printer.print_symbol_name(self.sym_name.data)
    printer.print_string(" : ")
    printer.print_attribute(self.type)
    printer.print_string(" = ")
    if isinstance(self.initial_value, UnitAttr):
        printer.print_string("uninitialized")
    else:
        self.initial_value.print_without_type(printer)
    attrs = dict(self.attributes)
    if self.alignment is not None:
        attrs = {"alignment": self.alignment, **attrs}
    printer.print_op_attributes(attrs)


def _parse_global(cls: Any, parser: Parser) -> memref.GlobalOp:
    visibility = parser.parse_optional_str_literal() or "public"
    constant = UnitAttr() if parser.parse_optional_keyword("constant") else None
    name = parser.parse_symbol_name()
    parser.parse_punctuation(":")
    type_pos = parser.pos
    memref_type = parser.parse_type()
    if not isinstance(memref_type, MemRefType):
        parser.raise_error(f"memref.global needs a memref type, got {memref_type}", at_position=type_pos)
    if parser.parse_optional_punctuation("=") is None:
        parser.raise_error("memref.global without an initial value (an external declaration) is not supported")
    initial: UnitAttr | DenseIntOrFPElementsAttr
    if parser.parse_optional_keyword("uninitialized"):
        initial = UnitAttr()
    else:
        parser.parse_keyword("dense", " or 'uninitialized' as memref.global's initial value")
        tensor_type = TensorType(memref_type.get_element_type(), memref_type.get_shape())
        initial = parser.parse_dense_int_or_fp_elements_attr(tensor_type)
    attrs = dict(parser.parse_optional_attr_dict())
    alignment = attrs.pop("alignment", None)
    if alignment is not None and not isinstance(alignment, IntegerAttr):
        parser.raise_error(f"memref.global's alignment must be an integer, got {alignment}")
    op = memref.GlobalOp.get(StringAttr(name), memref_type, initial, StringAttr(visibility), constant, alignment)
    op.attributes |= attrs
    return op




# ---- the short form of linalg.map / linalg.reduce: `{ arith.addf }` -----------------------


@dataclass(frozen=True)
class ShortFormPayload:
    """A payload op named in a short form, `{ name attr-dict }`, built once the block
    argument types are known (after `ins`/`outs`)."""

    name: str
    attributes: dict[str, Attribute]
    position: int

    def region(self, parser: Parser, arg_types: Sequence[Attribute], result_type: Attribute) -> Region:
        from xdsl.dialects.linalg import ops as linalg

        op_type = parser.ctx.get_optional_op(self.name)
        if op_type is None:
            parser.raise_error(f"unknown op '{self.name}' in a short-form body", at_position=self.position)
        block = Block(arg_types=list(arg_types))
        known = op_type.get_irdl_definition().properties if hasattr(op_type, "get_irdl_definition") else {}
        properties = {k: v for k, v in self.attributes.items() if k in known}
        attributes = {k: v for k, v in self.attributes.items() if k not in known}
        try:
            payload = op_type.build(
                operands=list(block.args), result_types=[result_type], properties=properties, attributes=attributes
            )
            payload.verify()
        except Exception as err:  # an op that does not take these operands: the user's error
            parser.raise_error(f"'{self.name}' is not a short-form body for {list(arg_types)}: {err}", at_position=self.position)
        block.add_ops([payload, linalg.YieldOp(payload.results[0])])
        return Region(block)


def parse_short_form(parser: Parser) -> ShortFormPayload | None:
    """`{ op-name attr-dict? }` if the next token opens one."""
    position = parser.pos
    if parser.parse_optional_punctuation("{") is None:
        return None
    name = parser.parse_identifier()
    attrs = dict(parser.parse_optional_attr_dict())
    parser.parse_punctuation("}")
    return ShortFormPayload(name, attrs, position)


def _parse_reduce(cls: Any, parser: Parser) -> Any:
    from xdsl.dialects.linalg import ops as linalg
    from xdsl.dialects.builtin import DenseArrayBase, i64

    short = parse_short_form(parser)
    paren = Parser.Delimiter.PAREN

    def operand_and_type(keyword: str) -> Any:
        parser.parse_characters(keyword)
        parser.parse_punctuation("(")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        value = parser.resolve_operand(unresolved, parser.parse_type())
        parser.parse_punctuation(")")
        return value

    source = operand_and_type("ins")
    init = operand_and_type("outs")
    parser.parse_keyword("dimensions")
    parser.parse_punctuation("=")
    dimensions = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
    attrs = parser.parse_optional_attr_dict()
    element = init.type.get_element_type()
    if short is not None:
        region = short.region(parser, [source.type.get_element_type(), element], element)
    else:
        region = parser.parse_region(parser.parse_comma_separated_list(paren, parser.parse_argument))
    op = linalg.ReduceOp(source, init, DenseArrayBase.from_list(i64, dimensions), region)
    op.attributes |= attrs
    return op


def _patch_linalg_reduce() -> None:
    """xDSL reads only the long form of linalg.reduce (and prints it, as upstream mostly does)."""
    from xdsl.dialects.linalg import ops as linalg

    require_source(linalg.ReduceOp.parse, 'parser.parse_characters("ins")', patch="upstream_op_syntax")
    _install_parse(linalg.ReduceOp, _parse_reduce)


# ---- arith.select with a shaped condition -------------------------------------------------


def _print_select(self: Any, printer: Printer) -> None:
    printer.print_string(" ")
    printer.print_list(self.operands, printer.print_ssa_value)
    printer.print_op_attributes(self.attributes)
    printer.print_string(" : ")
    if isinstance(self.cond.type, ShapedType):
        printer.print_attribute(self.cond.type)
        printer.print_string(", ")
    printer.print_attribute(self.result.type)


def _parse_select(cls: Any, parser: Parser) -> Any:
    from xdsl.dialects import arith

    pos = parser.pos
    operands = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_unresolved_operand)
    if len(operands) != 3:
        parser.raise_error(f"arith.select takes 3 operands, got {len(operands)}", at_position=pos)
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
    if len(types) > 2:
        parser.raise_error("arith.select takes a result type, or a condition type and a result type")
    cond_type, result_type = (i1, types[0]) if len(types) == 1 else types
    cond, lhs, rhs = parser.resolve_operands(operands, [cond_type, result_type, result_type], pos)
    op = arith.SelectOp(cond, lhs, rhs)
    op.attributes |= attrs
    return op


def _verify_select(self: Any) -> None:
    cond_type, result_type = self.cond.type, self.result.type
    if cond_type == i1:
        return
    if not (
        isinstance(cond_type, ShapedType)
        and isinstance(result_type, ShapedType)
        and type(cond_type) is type(result_type)
        and cond_type.get_element_type() == i1
        and cond_type.get_shape() == result_type.get_shape()
    ):
        raise VerifyException(
            f"arith.select's condition is i1 or a {type(result_type).__name__} of i1 of the result's shape, "
            f"got {cond_type} for {result_type}"
        )


def _patch_arith_select() -> None:
    """xDSL's select constrains its condition to i1; MLIR also allows a shaped i1 condition
    that selects element by element (a tensor or vector of the result's shape)."""
    from xdsl.dialects import arith
    from xdsl.irdl import AnyAttr, OperandDef

    op_def = arith.SelectOp.get_irdl_definition()
    for k, (name, operand) in enumerate(op_def.operands):
        if name == "cond":
            assert type(operand) is OperandDef, "arith.select's condition is a single operand"
            op_def.operands[k] = (name, OperandDef(AnyAttr()))  # checked by _verify_select
    op_def.assembly_format = None  # the custom form below replaces it (xDSL's no longer compiles)
    install(arith.SelectOp, "verify_", _verify_select, arith.SelectOp.verify_)
    install_custom_syntax(arith.SelectOp, _print_select, _parse_select)


__all__ = ["ShortFormPayload", "apply", "declare_format", "install_custom_syntax", "parse_arrow_types",
    "parse_short_form", "print_arrow_types", "print_values",
]
