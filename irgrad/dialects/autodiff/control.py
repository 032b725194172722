"""Derivative control: ops that compute an ordinary value but steer how it is differentiated.

`autodiff.stop_gradient` is the identity with a zero derivative (`Pure`). The call-like ops
(`CallLikeOp`: operands and results are the callee's) call their callee as `func.call` would and
tell the transform how to differentiate it: `custom_vjp` with user `fwd`/`bwd` functions,
`custom_jvp` with a user `jvp` function (transposed for reverse mode), `checkpoint` by recomputing
the callee's intermediates in the reverse sweep instead of saving them.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloatConstr,
    BaseAttr,
    FlatSymbolRefAttrConstr,
    FunctionType,
    IndexType,
    IntegerType,
    TensorType,
    UnrankedTensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
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
from xdsl.traits import Pure

from irgrad.dialects.autodiff.base import CalleeOp, format_types, symbol_of


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
            properties={"callee": symbol_of(callee), "fwd": symbol_of(fwd), "bwd": symbol_of(bwd)},
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
            properties={"callee": symbol_of(callee), "jvp": symbol_of(jvp)},
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
            properties={"callee": symbol_of(callee)},
        )

    def verify_symbol_uses(self) -> None:
        self.verify_call()

