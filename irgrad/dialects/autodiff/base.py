"""What every `autodiff` op shares: the types a derivative exists for, the `wrt [..]` clause, the callee bases.

`CalleeOp` is an op that names a `func.func` by its `callee` property and verifies itself against that
function's signature once the symbol resolves (MLIR's `verifySymbolUses`, run by the `CalleeSymbolUser`
trait); `DifferentiateOp` adds the `wrt` argument indices and their checks. The request modules
(gradients, products, batch, control) build on these and on the message helpers here, so every op's
verifier speaks the same MLIR-style prose.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    BFloat16Type,
    ComplexType,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FlatSymbolRefAttrConstr,
    FunctionType,
    SymbolRefAttr,
    TensorType,
    UnrankedTensorType,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, prop_def, traits_def
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import SymbolTable, SymbolUserOpInterface
from xdsl.utils.exceptions import VerifyException

# ---------------------------------------------------------------------------------------------------------------
# Types a derivative is defined for
# ---------------------------------------------------------------------------------------------------------------

DIFFERENTIABLE_FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
"""The element types irgrad differentiates; the narrow and exotic floats have no derivative rules downstream."""


def is_differentiable_type(type: Attribute) -> bool:
    """True for f16/bf16/f32/f64 scalars and tensors of them, and for complex<f32>/complex<f64> tensors: the
    types a gradient can be taken with respect to (complex ones through nn-expand-complex's (re, im) pairs)."""
    if isinstance(type, TensorType | UnrankedTensorType):
        type = type.element_type
        if isinstance(type, ComplexType):
            type = type.element_type
            return isinstance(type, Float32Type | Float64Type)
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
                    " nor a tensor of complex<f32> or complex<f64>"
                )
            types.append(inputs[index])
        return types


def symbol_of(func: FuncOp) -> SymbolRefAttr:
    """The flat symbol reference that names `func`, as the ops' `callee`-like properties hold it."""
    return SymbolRefAttr(func.sym_name)

