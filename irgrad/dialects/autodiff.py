"""The `autodiff` dialect: requests for derivatives of `func.func` functions.

Pipeline position: the frontend (or a hand-written module) emits `autodiff.*` ops next to the `func`/`nn` IR they
differentiate; the autodiff transform (irgrad/autodiff/) later expands each request into ordinary IR that computes
the derivative. No pass below that transform understands this dialect.

Every call-like op names its callee by a flat symbol (`callee`, a `SymbolRefAttr` property), the differentiating
ops list argument indices in `wrt` (a `DenseArrayBase` of i64, printed `wrt [0, 1]`), and the op ends with a
functional type, as `func.call` does. The verifiers resolve the symbols in the nearest symbol table (MLIR's
`verifySymbolUses`, here the `SymbolUserOpInterface` trait) and check the request against the callee's signature,
so a malformed request fails when the IR is verified rather than deep inside the transform.

Side effects: the call-like ops carry no memory-effect trait. They are exactly as pure as their callee, which an
op-level trait cannot express, so xDSL treats them conservatively (never erased as dead, never hoisted).
`autodiff.stop_gradient` is `Pure`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloatConstr,
    BaseAttr,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FlatSymbolRefAttrConstr,
    FunctionType,
    IndexType,
    IntegerType,
    SymbolRefAttr,
    TensorType,
    UnrankedTensorType,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure, SymbolTable, SymbolUserOpInterface
from xdsl.utils.exceptions import VerifyException

# ---------------------------------------------------------------------------------------------------------------
# Types a derivative is defined for
# ---------------------------------------------------------------------------------------------------------------

DIFFERENTIABLE_FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
"""The element types irgrad differentiates; the narrow and exotic floats have no derivative rules downstream."""


def is_differentiable_type(type: Attribute) -> bool:
    """True for f16/bf16/f32/f64 scalars and tensors of them: the types a gradient can be taken with respect to."""
    if isinstance(type, TensorType | UnrankedTensorType):
        type = type.element_type
    return isinstance(type, DIFFERENTIABLE_FLOAT_TYPES)


def is_scalar_loss_type(type: Attribute) -> bool:
    """True for a float scalar or a rank-0 float tensor: the only results `grad` can seed with 1.0."""
    if isinstance(type, TensorType):
        return type.get_num_dims() == 0 and isinstance(type.element_type, DIFFERENTIABLE_FLOAT_TYPES)
    return isinstance(type, DIFFERENTIABLE_FLOAT_TYPES)


def plural(count: int, noun: str) -> str:
    """`1 argument`, `2 arguments`: verifier messages read as prose."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def format_types(types: Sequence[Attribute]) -> str:
    """Render a type list as MLIR writes a function's inputs, `(tensor<3xf32>, f32)`, for verifier messages."""
    return "(" + ", ".join(str(type) for type in types) + ")"


# ---------------------------------------------------------------------------------------------------------------
# Assembly-format pieces
# ---------------------------------------------------------------------------------------------------------------


def wrt_attr(indices: Sequence[int]) -> DenseArrayBase:
    """The `wrt` property value for a list of argument indices."""
    return DenseArrayBase.from_list(i64, indices)


@irdl_custom_directive
class WrtIndices(CustomDirective):
    """The `wrt [0, 2]` clause.

    The clause may be left out on input (meaning `wrt [0]`, the property's default) but is always printed, so a
    reader of a derivative request never has to recall which argument the default picks.
    """

    wrt: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        if not parser.parse_optional_keyword("wrt"):
            return  # IRDLOperation.__post_init__ fills in the default
        indices = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
        )
        self.wrt.set(state, wrt_attr(indices))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        wrt = self.wrt.get(op)
        if not isinstance(wrt, DenseArrayBase):
            return  # absent only if deleted by hand after construction; the verifier reports it
        state.print_whitespace(printer)
        printer.print_string("wrt [")
        printer.print_list(wrt.get_values(), lambda index: printer.print_string(str(index)))
        printer.print_string("]")


# ---------------------------------------------------------------------------------------------------------------
# Shared bases
# ---------------------------------------------------------------------------------------------------------------


class CalleeSymbolUser(SymbolUserOpInterface):
    """Runs a `CalleeOp`'s `verify_symbol_uses`: the checks that need the callee's signature."""

    def verify(self, op: Operation) -> None:
        assert isinstance(op, CalleeOp)
        op.verify_symbol_uses()


class CalleeOp(IRDLOperation, ABC):
    """An op that calls, or differentiates, the `func.func` its `callee` property names."""

    callee = prop_def(FlatSymbolRefAttrConstr)

    traits = traits_def(CalleeSymbolUser())

    @classmethod
    def error(cls, message: str) -> VerifyException:
        """A verifier error in MLIR's form: `'autodiff.grad' op <message>`."""
        return VerifyException(f"'{cls.name}' op {message}")

    def lookup_func(self, role: str, ref: SymbolRefAttr) -> FuncOp:
        """The `func.func` that `ref` names in the nearest symbol table; `role` names the property in errors."""
        try:
            found = SymbolTable.lookup_symbol(self, ref)
        except ValueError:  # xDSL raises it when no ancestor is a symbol table
            raise self.error(f"{role} {ref} cannot be resolved: the op is not inside a symbol table") from None
        if found is None:
            raise self.error(f"{role} {ref} does not reference a symbol in the nearest symbol table")
        if not isinstance(found, FuncOp):
            raise self.error(f"{role} {ref} does not reference a func.func, but a '{found.name}'")
        return found

    def lookup_callee(self) -> FuncOp:
        """The `func.func` this op calls or differentiates."""
        return self.lookup_func("callee", self.callee)

    def verify_types(self, what: str, actual: Sequence[Attribute], expected: Sequence[Attribute], origin: str) -> None:
        """Check a list of `what`s (operands or results) against `expected`, which comes from `origin`."""
        if len(actual) != len(expected):
            raise self.error(
                f"incorrect number of {what}s: expected {len(expected)} ({origin}), got {len(actual)}"
            )
        for index, (actual_type, expected_type) in enumerate(zip(actual, expected, strict=True)):
            if actual_type != expected_type:
                raise self.error(
                    f"{what} #{index} type mismatch: expected {expected_type} ({origin}), got {actual_type}"
                )

    def verify_args(self, args: Sequence[SSAValue], callee: FunctionType) -> None:
        """The argument operands must match the callee's inputs one to one."""
        self.verify_types("argument", [arg.type for arg in args], callee.inputs.data, f"inputs of {self.callee}")

    @abstractmethod
    def verify_symbol_uses(self) -> None:
        """Check the op against the functions its symbols name (MLIR's `verifySymbolUses`)."""


class DifferentiateOp(CalleeOp, ABC):
    """A derivative of `callee` with respect to the arguments listed in `wrt`."""

    wrt = prop_def(DenseArrayBase.constr(i64), default_value=wrt_attr([0]))

    @property
    def wrt_indices(self) -> tuple[int, ...]:
        """The differentiated argument indices, in order."""
        return tuple(int(index) for index in self.wrt.get_values())

    def verify_(self) -> None:
        indices = self.wrt_indices
        if not indices:
            raise self.error("wrt must list at least one argument index")
        for previous, index in zip(indices, indices[1:]):
            if index == previous:
                raise self.error(f"wrt index {index} appears more than once in {list(indices)}")
            if index < previous:
                raise self.error(f"wrt indices must be sorted in increasing order, got {list(indices)}")

    @classmethod
    def wrt_arg_types(cls, callee: FunctionType, callee_name: SymbolRefAttr, wrt: Sequence[int]) -> list[Attribute]:
        """The types of the differentiated arguments, after checking each index is in range and a float.

        Shared by the verifiers and the builders (which need these types to infer their results), hence a
        classmethod raising the verifier's own message.
        """
        inputs = callee.inputs.data
        types: list[Attribute] = []
        for index in wrt:
            if not 0 <= index < len(inputs):
                raise cls.error(
                    f"wrt index {index} out of range: {callee_name} has {plural(len(inputs), 'argument')}"
                )
            if not is_differentiable_type(inputs[index]):
                raise cls.error(
                    f"cannot differentiate with respect to argument #{index} of {callee_name}: "
                    f"{inputs[index]} is not a floating-point type (f16, bf16, f32, f64 or a tensor of them)"
                )
            types.append(inputs[index])
        return types


def _symbol(func: FuncOp) -> SymbolRefAttr:
    return SymbolRefAttr(func.sym_name)


# ---------------------------------------------------------------------------------------------------------------
# Gradients of scalar functions
# ---------------------------------------------------------------------------------------------------------------


class ScalarGradientOp(DifferentiateOp, ABC):
    """`grad` and `value_and_grad`: reverse mode seeded with 1.0, so the callee must return one float scalar."""

    args = var_operand_def()

    @classmethod
    def scalar_result_type(cls, callee: FunctionType, callee_name: SymbolRefAttr) -> Attribute:
        """The callee's single scalar result type; a classmethod so builders fail with the verifier's message."""
        outputs = callee.outputs.data
        if len(outputs) != 1 or not is_scalar_loss_type(outputs[0]):
            raise cls.error(
                f"callee {callee_name} must return exactly one float scalar or rank-0 float tensor, "
                f"but returns {format_types(outputs)}"
            )
        return outputs[0]


@irdl_op_definition
class GradOp(ScalarGradientOp):
    """Gradient of a scalar function with respect to some of its arguments.

    One result per `wrt` index, each of that argument's type. `wrt` defaults to `[0]`.

    ```mlir
    %dx, %dy = autodiff.grad @loss(%x, %y) wrt [0, 1] : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    ```
    """

    name = "autodiff.grad"

    gradients = var_result_def()

    custom_directives = (WrtIndices,)
    assembly_format = (
        "$callee `(` $args `)` custom<WrtIndices>($wrt) attr-dict `:` functional-type($args, $gradients)"
    )

    def __init__(self, callee: FuncOp, args: Sequence[SSAValue | Operation], wrt: Sequence[int] = (0,)):
        self.scalar_result_type(callee.function_type, _symbol(callee))
        gradient_types = self.wrt_arg_types(callee.function_type, _symbol(callee), wrt)
        super().__init__(
            operands=[args],
            result_types=[gradient_types],
            properties={"callee": _symbol(callee), "wrt": wrt_attr(wrt)},
        )

    def verify_symbol_uses(self) -> None:
        callee = self.lookup_callee().function_type
        self.verify_args(self.args, callee)
        gradient_types = self.wrt_arg_types(callee, self.callee, self.wrt_indices)
        self.scalar_result_type(callee, self.callee)
        self.verify_types(
            "result", self.gradients.types, gradient_types, f"one gradient per wrt index of {self.callee}"
        )


@irdl_op_definition
class ValueAndGradOp(ScalarGradientOp):
    """The value of a scalar function and its gradient, from one evaluation.

    Results: the callee's result, then one gradient per `wrt` index, each of that argument's type.

    ```mlir
    %loss, %dw = autodiff.value_and_grad @loss(%w, %x) wrt [0] : (tensor<3xf32>, tensor<3xf32>) -> (f32, tensor<3xf32>)
    ```
    """

    name = "autodiff.value_and_grad"

    value = result_def()
    gradients = var_result_def()

    custom_directives = (WrtIndices,)
    assembly_format = "$callee `(` $args `)` custom<WrtIndices>($wrt) attr-dict `:` functional-type($args, results)"

    def __init__(self, callee: FuncOp, args: Sequence[SSAValue | Operation], wrt: Sequence[int] = (0,)):
        value_type = self.scalar_result_type(callee.function_type, _symbol(callee))
        gradient_types = self.wrt_arg_types(callee.function_type, _symbol(callee), wrt)
        super().__init__(
            operands=[args],
            result_types=[value_type, gradient_types],
            properties={"callee": _symbol(callee), "wrt": wrt_attr(wrt)},
        )

    def verify_symbol_uses(self) -> None:
        callee = self.lookup_callee().function_type
        self.verify_args(self.args, callee)
        gradient_types = self.wrt_arg_types(callee, self.callee, self.wrt_indices)
        self.scalar_result_type(callee, self.callee)
        self.verify_types(
            "result",
            self.result_types,
            [*callee.outputs.data, *gradient_types],
            f"the result of {self.callee}, then one gradient per wrt index",
        )


# ---------------------------------------------------------------------------------------------------------------
# Vector-Jacobian and Jacobian-vector products
# ---------------------------------------------------------------------------------------------------------------


@irdl_op_definition
class VJPOp(DifferentiateOp):
    """Vector-Jacobian product (reverse mode): pull result cotangents back to the `wrt` arguments.

    Operands: the callee's arguments, then `cotangents`, one per callee result with that result's type (any
    shape). Results: the callee's results, then one cotangent per `wrt` index with that argument's type.

    ```mlir
    %y, %dx = autodiff.vjp @f(%x, %w) cotangents(%dy : tensor<2xf32>) wrt [0]
        : (tensor<3xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3xf32>)
    ```
    """

    name = "autodiff.vjp"

    args = var_operand_def()
    cotangents = var_operand_def()
    res = var_result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (WrtIndices,)
    assembly_format = (
        "$callee `(` $args `)` `cotangents` `(` ($cotangents^ `:` type($cotangents))? `)` custom<WrtIndices>($wrt) "
        "attr-dict `:` functional-type($args, $res)"
    )

    def __init__(
        self,
        callee: FuncOp,
        args: Sequence[SSAValue | Operation],
        cotangents: Sequence[SSAValue | Operation],
        wrt: Sequence[int] = (0,),
    ):
        cotangent_types = self.wrt_arg_types(callee.function_type, _symbol(callee), wrt)
        super().__init__(
            operands=[args, cotangents],
            result_types=[[*callee.function_type.outputs.data, *cotangent_types]],
            properties={"callee": _symbol(callee), "wrt": wrt_attr(wrt)},
        )

    @property
    def outputs(self) -> Sequence[SSAValue]:
        """The callee's results (the primal values)."""
        return self.res[: len(self.res) - len(self.wrt_indices)]

    @property
    def arg_cotangents(self) -> Sequence[SSAValue]:
        """One cotangent per `wrt` index."""
        return self.res[len(self.res) - len(self.wrt_indices) :]

    def verify_symbol_uses(self) -> None:
        callee = self.lookup_callee().function_type
        self.verify_args(self.args, callee)
        self.verify_types(
            "cotangent", self.cotangents.types, callee.outputs.data, f"one per result of {self.callee}"
        )
        cotangent_types = self.wrt_arg_types(callee, self.callee, self.wrt_indices)
        self.verify_types(
            "result",
            self.res.types,
            [*callee.outputs.data, *cotangent_types],
            f"the results of {self.callee}, then one cotangent per wrt index",
        )


@irdl_op_definition
class JVPOp(DifferentiateOp):
    """Jacobian-vector product (forward mode): push argument tangents forward to the results.

    Operands: the callee's arguments, then `tangents`, one per `wrt` index with that argument's type. Results:
    the callee's results, then one tangent per callee result with that result's type.

    ```mlir
    %y, %dy = autodiff.jvp @f(%x, %w) tangents(%dx : tensor<3xf32>) wrt [0]
        : (tensor<3xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    ```
    """

    name = "autodiff.jvp"

    args = var_operand_def()
    tangents = var_operand_def()
    res = var_result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (WrtIndices,)
    assembly_format = (
        "$callee `(` $args `)` `tangents` `(` ($tangents^ `:` type($tangents))? `)` custom<WrtIndices>($wrt) "
        "attr-dict `:` functional-type($args, $res)"
    )

    def __init__(
        self,
        callee: FuncOp,
        args: Sequence[SSAValue | Operation],
        tangents: Sequence[SSAValue | Operation],
        wrt: Sequence[int] = (0,),
    ):
        self.wrt_arg_types(callee.function_type, _symbol(callee), wrt)
        outputs = callee.function_type.outputs.data
        super().__init__(
            operands=[args, tangents],
            result_types=[[*outputs, *outputs]],
            properties={"callee": _symbol(callee), "wrt": wrt_attr(wrt)},
        )

    @property
    def outputs(self) -> Sequence[SSAValue]:
        """The callee's results (the primal values)."""
        return self.res[: len(self.res) // 2]

    @property
    def output_tangents(self) -> Sequence[SSAValue]:
        """One tangent per callee result."""
        return self.res[len(self.res) // 2 :]

    def verify_symbol_uses(self) -> None:
        callee = self.lookup_callee().function_type
        self.verify_args(self.args, callee)
        tangent_types = self.wrt_arg_types(callee, self.callee, self.wrt_indices)
        self.verify_types(
            "tangent", self.tangents.types, tangent_types, f"one per wrt argument of {self.callee}"
        )
        outputs = callee.outputs.data
        self.verify_types(
            "result",
            self.res.types,
            [*outputs, *outputs],
            f"the results of {self.callee}, then one tangent per result",
        )


# ---------------------------------------------------------------------------------------------------------------
# Batching (vmap)
# ---------------------------------------------------------------------------------------------------------------


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
            properties={"callee": _symbol(callee), "in_axes": wrt_attr(in_axes), "out_axes": wrt_attr(out_axes)},
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


# ---------------------------------------------------------------------------------------------------------------
# Derivative control: stop_gradient, custom_vjp, checkpoint
# ---------------------------------------------------------------------------------------------------------------


@irdl_op_definition
class StopGradientOp(IRDLOperation):
    """Identity on values that blocks derivatives: its cotangent/tangent is zero.

    ```mlir
    %c = autodiff.stop_gradient %x : tensor<3xf32>
    ```
    """

    name = "autodiff.stop_gradient"

    T: ClassVar = VarConstraint(
        "T",
        BaseAttr(TensorType) | BaseAttr(UnrankedTensorType) | BaseAttr(IntegerType) | BaseAttr(IndexType)
        | AnyFloatConstr,
    )
    input = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, input: SSAValue | Operation):
        super().__init__(operands=[input], result_types=[SSAValue.get(input).type])


class CallLikeOp(CalleeOp, ABC):
    """An op that calls its callee like `func.call`, with results the callee's results."""

    args = var_operand_def()
    res = var_result_def()

    def verify_call(self) -> FunctionType:
        callee = self.lookup_callee().function_type
        self.verify_args(self.args, callee)
        self.verify_types("result", self.res.types, callee.outputs.data, f"results of {self.callee}")
        return callee


@irdl_op_definition
class CustomVJPOp(CallLikeOp):
    """Call `callee`, but differentiate it in reverse mode with user functions `fwd` and `bwd`.

    `fwd` takes the callee's arguments and returns its results followed by residuals (any types); `bwd` takes
    the residuals followed by one cotangent per callee result and returns one cotangent per callee argument. The
    transform never differentiates the callee's body itself.

    ```mlir
    %y = autodiff.custom_vjp @f(%x) fwd @f_fwd bwd @f_bwd : (tensor<3xf32>) -> tensor<3xf32>
    ```
    with `@f_fwd : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)` and
    `@f_bwd : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>`.
    """

    name = "autodiff.custom_vjp"

    fwd = prop_def(FlatSymbolRefAttrConstr)
    bwd = prop_def(FlatSymbolRefAttrConstr)

    assembly_format = "$callee `(` $args `)` `fwd` $fwd `bwd` $bwd attr-dict `:` functional-type($args, $res)"

    def __init__(self, callee: FuncOp, fwd: FuncOp, bwd: FuncOp, args: Sequence[SSAValue | Operation]):
        super().__init__(
            operands=[args],
            result_types=[callee.function_type.outputs.data],
            properties={"callee": _symbol(callee), "fwd": _symbol(fwd), "bwd": _symbol(bwd)},
        )

    def verify_symbol_uses(self) -> None:
        callee = self.verify_call()
        inputs, outputs = callee.inputs.data, callee.outputs.data

        fwd = self.lookup_func("fwd", self.fwd).function_type
        if fwd.inputs.data != inputs:
            raise self.error(
                f"fwd {self.fwd} must take the arguments of {self.callee} {format_types(inputs)}, "
                f"but takes {format_types(fwd.inputs.data)}"
            )
        if fwd.outputs.data[: len(outputs)] != outputs:
            raise self.error(
                f"fwd {self.fwd} must return the results of {self.callee} {format_types(outputs)} followed by "
                f"residuals, but returns {format_types(fwd.outputs.data)}"
            )
        residuals = fwd.outputs.data[len(outputs) :]

        bwd = self.lookup_func("bwd", self.bwd).function_type
        if bwd.inputs.data != (*residuals, *outputs):
            raise self.error(
                f"bwd {self.bwd} must take the residuals of {self.fwd} {format_types(residuals)} followed by one "
                f"cotangent per result of {self.callee} {format_types(outputs)}, "
                f"but takes {format_types(bwd.inputs.data)}"
            )
        if bwd.outputs.data != inputs:
            raise self.error(
                f"bwd {self.bwd} must return one cotangent per argument of {self.callee} {format_types(inputs)}, "
                f"but returns {format_types(bwd.outputs.data)}"
            )


@irdl_op_definition
class CustomJVPOp(CallLikeOp):
    """Call `callee`, but differentiate it with the user function `jvp` (as `jax.custom_jvp`).

    `jvp` takes the callee's arguments followed by one tangent per argument (of the argument's type) and
    returns the callee's results followed by one tangent per result. Forward mode calls it; reverse mode
    transposes it: `jvp`'s tangent outputs are linear in its tangent inputs, so the cotangent of the
    arguments is the VJP of that linear map, which the transform derives from `jvp`'s own body. The
    callee's body is never differentiated.

    ```mlir
    %y = autodiff.custom_jvp @f(%x) jvp @f_jvp : (tensor<3xf32>) -> tensor<3xf32>
    ```
    with `@f_jvp : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)`.
    """

    name = "autodiff.custom_jvp"

    jvp = prop_def(FlatSymbolRefAttrConstr)

    assembly_format = "$callee `(` $args `)` `jvp` $jvp attr-dict `:` functional-type($args, $res)"

    def __init__(self, callee: FuncOp, jvp: FuncOp, args: Sequence[SSAValue | Operation]):
        super().__init__(
            operands=[args],
            result_types=[callee.function_type.outputs.data],
            properties={"callee": _symbol(callee), "jvp": _symbol(jvp)},
        )

    def verify_symbol_uses(self) -> None:
        callee = self.verify_call()
        inputs, outputs = callee.inputs.data, callee.outputs.data
        jvp = self.lookup_func("jvp", self.jvp).function_type
        if jvp.inputs.data != (*inputs, *inputs):
            raise self.error(
                f"jvp {self.jvp} must take the arguments of {self.callee} {format_types(inputs)} followed by one "
                f"tangent per argument, but takes {format_types(jvp.inputs.data)}"
            )
        if jvp.outputs.data != (*outputs, *outputs):
            raise self.error(
                f"jvp {self.jvp} must return the results of {self.callee} {format_types(outputs)} followed by one "
                f"tangent per result, but returns {format_types(jvp.outputs.data)}"
            )


@irdl_op_definition
class CheckpointOp(CallLikeOp):
    """Call `callee`, recomputing its intermediates in the reverse sweep instead of saving them.

    Rematerialization trades compute for memory: only the arguments are kept for the backward pass.

    ```mlir
    %y = autodiff.checkpoint @block(%x) : (tensor<3xf32>) -> tensor<3xf32>
    ```
    """

    name = "autodiff.checkpoint"

    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(self, callee: FuncOp, args: Sequence[SSAValue | Operation]):
        super().__init__(
            operands=[args],
            result_types=[callee.function_type.outputs.data],
            properties={"callee": _symbol(callee)},
        )

    def verify_symbol_uses(self) -> None:
        self.verify_call()


Autodiff = Dialect(
    "autodiff",
    [
        GradOp,
        ValueAndGradOp,
        VJPOp,
        JVPOp,
        BatchOp,
        StopGradientOp,
        CustomVJPOp,
        CustomJVPOp,
        CheckpointOp,
    ],
    [],
)
