"""`nn` ops indexed by a tensor of integers: `nn.gather` and its adjoint `nn.scatter_add`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import AnyTensorTypeConstr, I64, IntegerAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import VarConstraint, irdl_op_definition, operand_def, prop_def, result_def

from irgrad.dialects.nn.base import (
    INDEX_INT_WIDTHS,
    NNOperation,
    Value,
    _check_numeric,
    _i64_attr,
    _type_of,
    is_signless_int,
    shape_str,
    tensor,
)


def gather_shape(operand: Sequence[int], indices: Sequence[int], axis: int) -> list[int]:
    return [*operand[:axis], *indices, *operand[axis + 1 :]]


def _check_indices(op: NNOperation, t: TensorType) -> None:
    e = t.get_element_type()
    if not is_signless_int(e, INDEX_INT_WIDTHS):
        raise op.error(f"indices must have element type i32 or i64, got {t}")


@irdl_op_definition
class GatherOp(NNOperation):
    """Takes slices along `axis` at integer indices (numpy's `take(x, indices, axis)`).

    Result shape: operand.shape[:axis] + indices.shape + operand.shape[axis+1:]. A negative index
    counts from the end (as in numpy); indices still out of range are clamped (as in XLA).

    `%y = nn.gather %x[%idx] axis = 0 : (tensor<5x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>`
    """

    name = "nn.gather"
    operand = operand_def(AnyTensorTypeConstr)
    indices = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$operand `[` $indices `]` `axis` `=` $axis attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, operand: Value, indices: Value, axis: int):
        x, i = cast(TensorType, _type_of(operand)), cast(TensorType, _type_of(indices))
        super().__init__(
            operands=[operand, indices],
            properties={"axis": _i64_attr(axis)},
            result_types=[tensor(gather_shape(x.get_shape(), i.get_shape(), axis), x.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        x, i = cast(TensorType, self.operand.type), cast(TensorType, self.indices.type)
        _check_indices(self, i)
        axis = self.axis.value.data
        if not 0 <= axis < len(x.get_shape()):
            raise self.error(f"axis {axis} out of range for operand {shape_str(x)}")
        if x.get_shape()[axis] == 0 and math.prod(i.get_shape()) > 0:
            raise self.error(f"cannot gather from empty axis {axis} of operand {shape_str(x)}")
        return tensor(gather_shape(x.get_shape(), i.get_shape(), axis), x.get_element_type())


@irdl_op_definition
class ScatterAddOp(NNOperation):
    """Adds `updates` into a copy of `operand` at integer indices along `axis`; repeats accumulate.

    The adjoint of `nn.gather`: `updates` has the shape gather would give for these indices.

    `%y = nn.scatter_add %x[%idx], %u axis = 0 : (tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>`
    """

    name = "nn.scatter_add"
    T: ClassVar = VarConstraint("T", AnyTensorTypeConstr)
    operand = operand_def(T)
    indices = operand_def(AnyTensorTypeConstr)
    updates = operand_def(AnyTensorTypeConstr)
    result = result_def(T)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$operand `[` $indices `]` `,` $updates `axis` `=` $axis attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(self, operand: Value, indices: Value, updates: Value, axis: int):
        super().__init__(
            operands=[operand, indices, updates],
            properties={"axis": _i64_attr(axis)},
            result_types=[_type_of(operand)],
        )

    def verify_semantics(self) -> None:
        x = cast(TensorType, self.operand.type)
        i = cast(TensorType, self.indices.type)
        u = cast(TensorType, self.updates.type)
        _check_indices(self, i)
        _check_numeric(self, x)
        axis = self.axis.value.data
        if not 0 <= axis < len(x.get_shape()):
            raise self.error(f"axis {axis} out of range for operand {shape_str(x)}")
        if x.get_shape()[axis] == 0 and math.prod(i.get_shape()) > 0:
            raise self.error(f"cannot scatter into empty axis {axis} of operand {shape_str(x)}")
        expected = gather_shape(x.get_shape(), i.get_shape(), axis)
        if list(u.get_shape()) != expected or u.get_element_type() != x.get_element_type():
            raise self.error(
                f"updates {u} must be {tensor(expected, x.get_element_type())} for operand "
                f"{shape_str(x)}, indices {shape_str(i)} and axis {axis}"
            )
