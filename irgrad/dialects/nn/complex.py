"""Complex numbers' own `nn` ops: `nn.complex` builds one from its parts, `nn.real` and `nn.imag`
take them apart, `nn.conj` conjugates.

A complex tensor is a builtin tensor of `complex<f32>` (numpy's complex64) or `complex<f64>`
(complex128). The arithmetic ops that take complex values say so with `COMPLEX = True` (add,
sub, mul, div, neg, exp, sin, cos, select, convert, broadcast_in_dim, reshape, transpose,
slice, concatenate, reduce_sum, matmul, constant); `nn-expand-complex` rewrites all of them into real ops on an
array of (re, im) pairs before autodiff and lowering, so no pass below it sees a complex type.
"""

from __future__ import annotations

from typing import ClassVar, cast

from xdsl.dialects.builtin import AnyTensorTypeConstr, ComplexType, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import VarConstraint, irdl_op_definition, operand_def, result_def

from irgrad.dialects.nn.base import NNOperation, Value, _type_of, is_complex, is_float, tensor


def part_type(t: TensorType) -> TensorType:
    """tensor<...xf32> for tensor<...xcomplex<f32>>: the type of either part."""
    element = t.get_element_type()
    assert isinstance(element, ComplexType)
    return tensor(t.get_shape(), element.get_element_type())


def complex_type(t: TensorType) -> TensorType:
    """tensor<...xcomplex<f32>> for tensor<...xf32>."""
    return tensor(t.get_shape(), ComplexType(t.get_element_type()))


def _check_complex(op: NNOperation, t: TensorType) -> None:
    if not is_complex(t.get_element_type()):
        raise op.error(f"operand must have a complex element type, got {t}")


class ComplexPartOp(NNOperation):
    """`%re = nn.real %z : tensor<...xcomplex<f32>> -> tensor<...xf32>`: one part of a complex tensor."""

    COMPLEX: ClassVar[bool] = True
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    assembly_format = "$operand attr-dict `:` type($operand) `->` type($result)"

    def __init__(self, operand: Value):
        super().__init__(operands=[operand], result_types=[part_type(cast(TensorType, _type_of(operand)))])

    def verify_semantics(self) -> None:
        _check_complex(self, cast(TensorType, self.operand.type))

    def expected_result_type(self) -> Attribute:
        return part_type(cast(TensorType, self.operand.type))


@irdl_op_definition
class RealOp(ComplexPartOp):
    """The real part.  `%re = nn.real %z : tensor<4xcomplex<f32>> -> tensor<4xf32>`"""

    name = "nn.real"


@irdl_op_definition
class ImagOp(ComplexPartOp):
    """The imaginary part.  `%im = nn.imag %z : tensor<4xcomplex<f32>> -> tensor<4xf32>`"""

    name = "nn.imag"


@irdl_op_definition
class ComplexOp(NNOperation):
    """re + i*im from two real tensors of one type (f32 or f64; lax.complex).

    `%z = nn.complex %re, %im : tensor<4xf32> -> tensor<4xcomplex<f32>>`
    """

    name = "nn.complex"
    COMPLEX: ClassVar[bool] = True
    T: ClassVar = VarConstraint("T", AnyTensorTypeConstr)
    real = operand_def(T)
    imag = operand_def(T)
    result = result_def(AnyTensorTypeConstr)
    assembly_format = "$real `,` $imag attr-dict `:` type($real) `->` type($result)"

    def __init__(self, real: Value, imag: Value):
        super().__init__(operands=[real, imag], result_types=[complex_type(cast(TensorType, _type_of(real)))])

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.real.type)
        element = t.get_element_type()
        if not is_float(element) or not is_complex(ComplexType(element)):
            raise self.error(f"parts must have element type f32 or f64, got {t}")

    def expected_result_type(self) -> Attribute:
        return complex_type(cast(TensorType, self.real.type))


@irdl_op_definition
class ConjOp(NNOperation):
    """The complex conjugate re - i*im.  `%w = nn.conj %z : tensor<4xcomplex<f32>>`"""

    name = "nn.conj"
    COMPLEX: ClassVar[bool] = True
    T: ClassVar = VarConstraint("T", AnyTensorTypeConstr)
    operand = operand_def(T)
    result = result_def(T)
    assembly_format = "$operand attr-dict `:` type($result)"

    def __init__(self, operand: Value):
        super().__init__(operands=[operand], result_types=[_type_of(operand)])

    def verify_semantics(self) -> None:
        _check_complex(self, cast(TensorType, self.operand.type))


EXPANDED_OPS = (RealOp, ImagOp, ComplexOp, ConjOp)
"""The ops `nn-expand-complex` removes before autodiff, batching and `convert-nn-to-linalg`: they have
no derivative, batching or lowering rule of their own (their complex operands' pairs do)."""
