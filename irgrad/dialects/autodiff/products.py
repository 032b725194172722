"""Vector-Jacobian and Jacobian-vector products: `autodiff.vjp` (reverse mode) and `autodiff.jvp` (forward).

Each takes the callee's arguments and then the seeds (`cotangents`, one per callee result; `tangents`,
one per `wrt` argument) and returns the callee's results followed by the derivatives, so one request
yields primal and derivative together, as `jax.vjp` and `jax.jvp` do.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import AttrSizedOperandSegments, irdl_op_definition, var_operand_def, var_result_def

from irgrad.dialects.autodiff.base import DifferentiateOp, WrtIndices, symbol_of, wrt_attr


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
        cotangent_types = self.wrt_arg_types(callee.function_type, symbol_of(callee), wrt)
        super().__init__(
            operands=[args, cotangents],
            result_types=[[*callee.function_type.outputs.data, *cotangent_types]],
            properties={"callee": symbol_of(callee), "wrt": wrt_attr(wrt)},
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
        self.wrt_arg_types(callee.function_type, symbol_of(callee), wrt)
        outputs = callee.function_type.outputs.data
        super().__init__(
            operands=[args, tangents],
            result_types=[[*outputs, *outputs]],
            properties={"callee": symbol_of(callee), "wrt": wrt_attr(wrt)},
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

