"""Gradients of scalar functions: `autodiff.grad` and `autodiff.value_and_grad`.

Both are reverse mode seeded with 1.0, so the callee must return exactly one float scalar (or rank-0
float tensor); `ScalarGradientOp` holds that check for the builders and the verifiers alike. The
general reverse-mode request, with cotangents of any shape, is `autodiff.vjp` in products.py.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence

from xdsl.dialects.builtin import FunctionType, SymbolRefAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import irdl_op_definition, result_def, var_operand_def, var_result_def

from irgrad.dialects.autodiff.base import (
    DifferentiateOp,
    WrtIndices,
    format_types,
    is_scalar_loss_type,
    symbol_of,
    wrt_attr,
)


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
        self.scalar_result_type(callee.function_type, symbol_of(callee))
        gradient_types = self.wrt_arg_types(callee.function_type, symbol_of(callee), wrt)
        super().__init__(
            operands=[args],
            result_types=[gradient_types],
            properties={"callee": symbol_of(callee), "wrt": wrt_attr(wrt)},
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
        value_type = self.scalar_result_type(callee.function_type, symbol_of(callee))
        gradient_types = self.wrt_arg_types(callee.function_type, symbol_of(callee), wrt)
        super().__init__(
            operands=[args],
            result_types=[value_type, gradient_types],
            properties={"callee": symbol_of(callee), "wrt": wrt_attr(wrt)},
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

