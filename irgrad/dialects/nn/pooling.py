"""`nn.max_pool2d`: 2-D max pooling over NCHW, with conv2d's output-size rule."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import AnyTensorTypeConstr, DenseArrayBase, TensorType, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def

from irgrad.dialects.nn.base import (
    NNOperation,
    Value,
    _check_float,
    _i64_array,
    _ints,
    _type_of,
    shape_str,
    tensor,
)
from irgrad.dialects.nn.linear import conv_output_size


@irdl_op_definition
class MaxPool2DOp(NNOperation):
    """2-D max pooling over NCHW; padded positions count as -inf. `padding` is [t, b, l, r].

    `%y = nn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>`
    """

    name = "nn.max_pool2d"
    input = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    kernel = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: Value,
        kernel: Sequence[int],
        stride: Sequence[int] | None = None,
        padding: Sequence[int] = (0, 0, 0, 0),
    ):
        x = cast(TensorType, _type_of(input))
        stride = list(stride) if stride is not None else list(kernel)
        n, c, h, w = x.get_shape()
        shape = [
            n,
            c,
            conv_output_size(h, kernel[0], stride[0], padding[0], padding[1], 1),
            conv_output_size(w, kernel[1], stride[1], padding[2], padding[3], 1),
        ]
        super().__init__(
            operands=[input],
            properties={
                "kernel": _i64_array(kernel),
                "stride": _i64_array(stride),
                "padding": _i64_array(padding),
            },
            result_types=[tensor(shape, x.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        x = cast(TensorType, self.input.type)
        xs = x.get_shape()
        if len(xs) != 4:
            raise self.error(f"input must be 4-D (NCHW), got {shape_str(x)}")
        _check_float(self, x, "input")
        kernel, stride, padding = _ints(self.kernel), _ints(self.stride), _ints(self.padding)
        if len(kernel) != 2 or min(kernel, default=0) < 1:
            raise self.error(f"kernel must be 2 positive integers, got {list(kernel)}")
        if len(stride) != 2 or min(stride, default=0) < 1:
            raise self.error(f"stride must be 2 positive integers, got {list(stride)}")
        if len(padding) != 4 or min(padding, default=0) < 0:
            raise self.error(
                f"padding must be 4 non-negative integers [top, bottom, left, right], got {list(padding)}"
            )
        if padding[0] >= kernel[0] or padding[1] >= kernel[0] or padding[2] >= kernel[1] or padding[3] >= kernel[1]:
            raise self.error(
                f"padding {list(padding)} must be smaller than the kernel {list(kernel)} "
                "(a window of padding only has no maximum)"
            )
        h = conv_output_size(xs[2], kernel[0], stride[0], padding[0], padding[1], 1)
        w = conv_output_size(xs[3], kernel[1], stride[1], padding[2], padding[3], 1)
        if h < 1 or w < 1:
            raise self.error(f"kernel {list(kernel)} is larger than the padded input {shape_str(x)}")
        return tensor([xs[0], xs[1], h, w], x.get_element_type())
