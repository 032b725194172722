"""Batching: `autodiff.batch`, the callee mapped over a batch dimension (JAX's vmap).

The op carries one axis per operand (`in_axes`) and per result (`out_axes`), -1 meaning not mapped;
the `InAxes`/`OutAxes` directives print them as `in_axes = [0, -1]`. The verifier derives every
operand and result type from the callee's signature with the batch dimension inserted.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, TensorType, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, var_operand_def, var_result_def
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer

from irgrad.dialects.autodiff.base import CalleeOp, plural, symbol_of, wrt_attr


class _AxesDirective(CustomDirective, ABC):
    """`<keyword> = [0, -1]`: one axis per operand or result, -1 for none (JAX's None)."""

    KEYWORD: ClassVar[str]
    axes: AttributeVariable  # redeclared by each directive: their fields are their own

    def parse(self, parser: Parser, state: ParsingState) -> None:
        parser.parse_keyword(self.KEYWORD)
        parser.parse_punctuation("=")
        values = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
        )
        self.axes.set(state, wrt_attr(values))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        axes = self.axes.get(op)
        state.print_whitespace(printer)
        printer.print_string(f"{self.KEYWORD} = [")
        if isinstance(axes, DenseArrayBase):
            printer.print_list(axes.get_values(), lambda axis: printer.print_string(str(axis)))
        printer.print_string("]")


@irdl_custom_directive
class InAxes(_AxesDirective):
    KEYWORD = "in_axes"
    axes: AttributeVariable


@irdl_custom_directive
class OutAxes(_AxesDirective):
    KEYWORD = "out_axes"
    axes: AttributeVariable


def _insert_axis(t: Attribute, axis: int, size: int) -> Attribute:
    assert isinstance(t, TensorType)
    shape = list(t.get_shape())
    shape.insert(axis, size)
    return TensorType(t.get_element_type(), shape)


@irdl_op_definition
class BatchOp(CalleeOp):
    """The callee mapped over a batch dimension (JAX's vmap; Enzyme's `enzyme.batch`).

    Operand i carries the batch at dimension `in_axes[i]` (-1: not mapped, the same value for every
    example); result j gets it at dimension `out_axes[j]` (-1: the result must not depend on the
    mapped operands). Every mapped operand has the same batch size, and the callee's input i is
    operand i's type without that dimension.

    ```mlir
    %y = autodiff.batch @f(%xs, %w) in_axes = [0, -1] out_axes = [0]
        : (tensor<8x3xf32>, tensor<3x2xf32>) -> tensor<8x2xf32>
    ```
    """

    name = "autodiff.batch"

    args = var_operand_def()
    res = var_result_def()
    in_axes = prop_def(DenseArrayBase.constr(i64))
    out_axes = prop_def(DenseArrayBase.constr(i64))

    custom_directives = (InAxes, OutAxes)
    assembly_format = (
        "$callee `(` $args `)` custom<InAxes>($in_axes) custom<OutAxes>($out_axes) "
        "attr-dict `:` functional-type($args, $res)"
    )

    def __init__(
        self,
        callee: FuncOp,
        args: Sequence[SSAValue | Operation],
        in_axes: Sequence[int],
        out_axes: Sequence[int],
        size: int,
    ):
        outputs = callee.function_type.outputs.data
        result_types = [t if a < 0 else _insert_axis(t, a, size) for t, a in zip(outputs, out_axes, strict=True)]
        super().__init__(
            operands=[args],
            result_types=[result_types],
            properties={"callee": symbol_of(callee), "in_axes": wrt_attr(in_axes), "out_axes": wrt_attr(out_axes)},
        )

    @property
    def in_axes_list(self) -> tuple[int, ...]:
        return tuple(int(a) for a in self.in_axes.get_values())

    @property
    def out_axes_list(self) -> tuple[int, ...]:
        return tuple(int(a) for a in self.out_axes.get_values())

    @property
    def batch_size(self) -> int:
        for arg, axis in zip(self.args, self.in_axes_list):
            if axis >= 0 and isinstance(arg.type, TensorType):
                return arg.type.get_shape()[axis]
        return 0

    def verify_symbol_uses(self) -> None:
        callee = self.lookup_callee().function_type
        inputs, outputs = callee.inputs.data, callee.outputs.data
        in_axes, out_axes = self.in_axes_list, self.out_axes_list
        if len(in_axes) != len(self.args):
            raise self.error(f"in_axes has {len(in_axes)} entries for {plural(len(self.args), 'argument')}")
        if len(out_axes) != len(outputs):
            raise self.error(f"out_axes has {len(out_axes)} entries for {plural(len(outputs), 'result')} of {self.callee}")
        if all(a < 0 for a in in_axes):
            raise self.error("in_axes maps no argument (all -1); there is nothing to batch over")
        size = None
        expected: list[Attribute] = []
        for index, (arg, axis, t) in enumerate(zip(self.args, in_axes, inputs)):
            if axis < 0:
                expected.append(t)
                continue
            if not isinstance(t, TensorType) or not 0 <= axis <= len(t.get_shape()):
                raise self.error(
                    f"in_axes[{index}] = {axis} does not fit input #{index} of {self.callee} ({t}): "
                    "a mapped input must be a ranked tensor and the axis at most its rank"
                )
            n = arg.type.get_shape()[axis] if isinstance(arg.type, TensorType) and axis < len(arg.type.get_shape()) else -1
            if size is None:
                size = n
            elif n != size:
                raise self.error(f"argument #{index} has batch size {n} at axis {axis}, another argument {size}")
            expected.append(_insert_axis(t, axis, n))
        self.verify_args_types(expected)
        results: list[Attribute] = []
        for index, (axis, t) in enumerate(zip(out_axes, outputs)):
            if axis < 0:
                results.append(t)
                continue
            if not isinstance(t, TensorType) or not 0 <= axis <= len(t.get_shape()):
                raise self.error(
                    f"out_axes[{index}] = {axis} does not fit result #{index} of {self.callee} ({t})"
                )
            results.append(_insert_axis(t, axis, size or 0))
        self.verify_types("result", self.res.types, results, f"the results of {self.callee} with the batch axis")

    def verify_args_types(self, expected: Sequence[Attribute]) -> None:
        self.verify_types(
            "argument", [a.type for a in self.args], expected, f"inputs of {self.callee} with the batch axis"
        )

