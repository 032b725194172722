"""Reductions over listed axes: `nn.reduce_sum`, `nn.reduce_max` and `nn.reduce_min`, on one base."""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import AnyTensorTypeConstr, DenseArrayBase, TensorType, UnitAttr, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from irgrad.dialects.nn.base import (
    NNOperation,
    Value,
    _check_numeric,
    _i64_array,
    _ints,
    _type_of,
    check_axes,
    tensor,
)


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> list[int]:
    if keepdims:
        return [1 if i in axes else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in axes]


class ReduceOp(NNOperation, ABC):
    """`%y = nn.reduce_<kind> %x axes = [1] keepdims : tensor<2x3xf32> -> tensor<2x1xf32>`"""

    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    assembly_format = (
        "$operand `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict "
        "`:` type($operand) `->` type($result)"
    )

    def __init__(self, operand: Value, axes: Sequence[int], keepdims: bool = False):
        t = cast(TensorType, _type_of(operand))
        # Negative axes count from the end; out-of-range ones are kept for the verifier to report.
        rank = len(t.get_shape())
        axes = [a + rank if -rank <= a < 0 else a for a in axes]
        props: dict[str, Attribute] = {"axes": _i64_array(axes)}
        if keepdims:
            props["keepdims"] = UnitAttr()
        super().__init__(
            operands=[operand],
            properties=props,
            result_types=[tensor(reduced_shape(t.get_shape(), axes, keepdims), t.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        t = cast(TensorType, self.operand.type)
        axes = _ints(self.axes)
        check_axes(self, axes, len(t.get_shape()))
        shape = reduced_shape(t.get_shape(), axes, self.keepdims is not None)
        return tensor(shape, t.get_element_type())


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over the listed axes.  `%s = nn.reduce_sum %x axes = [0] : tensor<2x3xf32> -> tensor<3xf32>`"""

    name = "nn.reduce_sum"
    COMPLEX: ClassVar[bool] = True

    def verify_semantics(self) -> None:
        _check_numeric(self, self.operand.type)


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over the listed axes; NaN propagates; -inf (or the type's minimum) for empty axes.

    `%m = nn.reduce_max %x axes = [1] : tensor<2x3xf32> -> tensor<2xf32>`
    """

    name = "nn.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over the listed axes; NaN propagates; +inf (or the type's maximum) for empty axes.

    `%m = nn.reduce_min %x axes = [1] : tensor<2x3xf32> -> tensor<2xf32>`
    """

    name = "nn.reduce_min"
