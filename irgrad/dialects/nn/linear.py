"""Linear `nn` ops: `nn.matmul`, `nn.conv2d`, and conv2d's windows as a matrix (`nn.im2col`)
and back (`nn.col2im`), which nn-conv2d-to-im2col rewrites a large conv2d into.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import AnyTensorTypeConstr, DenseArrayBase, TensorType, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def

from irgrad.dialects.nn.base import (
    NNOperation,
    Value,
    _check_float,
    _check_numeric,
    _i64_array,
    _ints,
    _type_of,
    shape_str,
    tensor,
)


@irdl_op_definition
class MatmulOp(NNOperation):
    """Matrix product, 2-D (MxK @ KxN) or batched (B...xMxK @ B...xKxN, equal batch dims).

    `%c = nn.matmul %a, %b : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>`
    """

    name = "nn.matmul"
    COMPLEX: ClassVar[bool] = True
    lhs = operand_def(AnyTensorTypeConstr)
    rhs = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: Value, rhs: Value):
        a, b = cast(TensorType, _type_of(lhs)), cast(TensorType, _type_of(rhs))
        shape = [*a.get_shape()[:-1], b.get_shape()[-1]]
        super().__init__(operands=[lhs, rhs], result_types=[tensor(shape, a.get_element_type())])

    def expected_result_type(self) -> Attribute:
        a, b = cast(TensorType, self.lhs.type), cast(TensorType, self.rhs.type)
        sa, sb = a.get_shape(), b.get_shape()
        if a.get_element_type() != b.get_element_type():
            raise self.error(f"element types differ: lhs {a}, rhs {b}")
        _check_numeric(self, a, "lhs")
        if len(sa) < 2 or len(sa) != len(sb):
            raise self.error(
                f"operands must both be 2-D or batched with equal rank, got lhs {shape_str(a)}, "
                f"rhs {shape_str(b)}"
            )
        if sa[:-2] != sb[:-2]:
            raise self.error(f"batch dimensions differ: lhs {shape_str(a)}, rhs {shape_str(b)}")
        if sa[-1] != sb[-2]:
            raise self.error(
                f"contracting dimensions differ: lhs {shape_str(a)}, rhs {shape_str(b)}"
            )
        return tensor([*sa[:-1], sb[-1]], a.get_element_type())


def conv_output_size(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int, dilation: int) -> int:
    """Windows along one dimension; 0 when none fits or the stride is not positive, so a builder
    never makes a negative (that is, dynamic) dimension and the verifier names the actual fault."""
    if stride < 1:
        return 0
    return max(0, (size + pad_lo + pad_hi - dilation * (kernel - 1) - 1) // stride + 1)


@irdl_op_definition
class Conv2DOp(NNOperation):
    """2-D cross-correlation, input NCHW, weights OIHW (no groups), zero padding.

    `padding` is [top, bottom, left, right].

    `%y = nn.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>`
    """

    name = "nn.conv2d"
    input = operand_def(AnyTensorTypeConstr)
    weight = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    dilation = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$input `,` $weight `stride` `=` $stride `padding` `=` $padding `dilation` `=` $dilation "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: Value,
        weight: Value,
        stride: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        dilation: Sequence[int] = (1, 1),
    ):
        x, w = cast(TensorType, _type_of(input)), cast(TensorType, _type_of(weight))
        shape = self.infer_shape(x.get_shape(), w.get_shape(), stride, padding, dilation)
        super().__init__(
            operands=[input, weight],
            properties={
                "stride": _i64_array(stride),
                "padding": _i64_array(padding),
                "dilation": _i64_array(dilation),
            },
            result_types=[tensor(shape, x.get_element_type())],
        )

    @staticmethod
    def infer_shape(
        xs: Sequence[int], ws: Sequence[int], stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int]
    ) -> list[int]:
        n, _, h, w = xs
        o, _, kh, kw = ws
        return [
            n,
            o,
            conv_output_size(h, kh, stride[0], padding[0], padding[1], dilation[0]),
            conv_output_size(w, kw, stride[1], padding[2], padding[3], dilation[1]),
        ]

    def expected_result_type(self) -> Attribute:
        x, w = cast(TensorType, self.input.type), cast(TensorType, self.weight.type)
        xs, ws = x.get_shape(), w.get_shape()
        if x.get_element_type() != w.get_element_type():
            raise self.error(f"element types differ: input {x}, weight {w}")
        _check_float(self, x, "input")
        if len(xs) != 4 or len(ws) != 4:
            raise self.error(
                f"input (NCHW) and weight (OIHW) must be 4-D, got input {shape_str(x)}, weight {shape_str(w)}"
            )
        if xs[1] != ws[1]:
            raise self.error(
                f"input channels differ: input {shape_str(x)} has {xs[1]}, weight {shape_str(w)} has {ws[1]}"
            )
        stride, padding, dilation = _ints(self.stride), _ints(self.padding), _ints(self.dilation)
        if len(stride) != 2 or min(stride, default=0) < 1:
            raise self.error(f"stride must be 2 positive integers, got {list(stride)}")
        if len(dilation) != 2 or min(dilation, default=0) < 1:
            raise self.error(f"dilation must be 2 positive integers, got {list(dilation)}")
        if len(padding) != 4 or min(padding, default=0) < 0:
            raise self.error(
                f"padding must be 4 non-negative integers [top, bottom, left, right], got {list(padding)}"
            )
        shape = self.infer_shape(xs, ws, stride, padding, dilation)
        if shape[2] < 1 or shape[3] < 1:
            raise self.error(
                f"kernel {ws[2]}x{ws[3]} (dilation {list(dilation)}) is larger than the padded input "
                f"{shape_str(x)}"
            )
        return tensor(shape, x.get_element_type())


def _check_window_geometry(op: NNOperation, kernel: Sequence[int], stride: Sequence[int],
                           padding: Sequence[int], dilation: Sequence[int]) -> None:  # fmt: skip
    for name, values, count, least in (
        ("kernel", kernel, 2, 1), ("stride", stride, 2, 1), ("dilation", dilation, 2, 1), ("padding", padding, 4, 0),
    ):  # fmt: skip
        if len(values) != count or min(values, default=least) < least:
            what = "non-negative integers [top, bottom, left, right]" if name == "padding" else "positive integers"
            raise op.error(f"{name} must be {count} {what}, got {list(values)}")


def im2col_shape(image: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
                 padding: Sequence[int], dilation: Sequence[int]) -> tuple[list[int], list[int]]:  # fmt: skip
    """(columns shape [C*KH*KW, N*OH*OW], output size [OH, OW]) of an NCHW image's windows."""
    n, c, h, w = image
    oh = conv_output_size(h, kernel[0], stride[0], padding[0], padding[1], dilation[0])
    ow = conv_output_size(w, kernel[1], stride[1], padding[2], padding[3], dilation[1])
    return [c * kernel[0] * kernel[1], n * oh * ow], [oh, ow]


class WindowsOp(NNOperation, ABC):
    """Shared by im2col and col2im: the geometry of conv2d's windows (kernel [KH, KW], stride,
    padding [top, bottom, left, right], dilation) relating an NCHW image to its columns
    `[C*KH*KW, N*OH*OW]`: row (c, kh, kw), column (n, oh, ow), row-major."""

    input = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    kernel = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    dilation = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding `dilation` `=` $dilation "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def geometry(self) -> tuple[list[int], list[int], list[int], list[int]]:
        """(kernel, stride, padding, dilation) as lists."""
        return tuple(list(_ints(a)) for a in (self.kernel, self.stride, self.padding, self.dilation))  # type: ignore[return-value]

    @staticmethod
    def geometry_properties(kernel: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                            dilation: Sequence[int]) -> dict[str, Attribute]:  # fmt: skip
        return {
            "kernel": _i64_array(kernel),
            "stride": _i64_array(stride),
            "padding": _i64_array(padding),
            "dilation": _i64_array(dilation),
        }

    def check_image(self, image: TensorType, what: str) -> list[int]:
        """The columns shape of `image` (the op's `what`), after checking both."""
        _check_float(self, image, what)
        if len(image.get_shape()) != 4:
            raise self.error(f"{what} must be 4-D (NCHW), got {shape_str(image)}")
        kernel, stride, padding, dilation = self.geometry()
        _check_window_geometry(self, kernel, stride, padding, dilation)
        columns, (oh, ow) = im2col_shape(image.get_shape(), kernel, stride, padding, dilation)
        if oh < 1 or ow < 1:
            raise self.error(
                f"kernel {kernel} (dilation {dilation}) is larger than the padded {what} {shape_str(image)}"
            )
        return columns


@irdl_op_definition
class Im2ColOp(WindowsOp):
    """The windows of conv2d as a matrix: `cols[(c, kh, kw), (n, oh, ow)] =
    xp[n, c, oh*sh + kh*dh, ow*sw + kw*dw]`, xp the zero-padded input. conv2d(x, w) is then
    `reshape(w, [O, C*KH*KW]) @ cols`, reshaped to [O, N, OH, OW] and transposed to NCHW.

    `%c = nn.im2col %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<2x3x8x8xf32> -> tensor<27x128xf32>`
    """

    name = "nn.im2col"

    def __init__(self, input: Value, kernel: Sequence[int], stride: Sequence[int] = (1, 1),
                 padding: Sequence[int] = (0, 0, 0, 0), dilation: Sequence[int] = (1, 1)):  # fmt: skip
        x = cast(TensorType, _type_of(input))
        columns, _ = im2col_shape(x.get_shape(), kernel, stride, padding, dilation)
        super().__init__(
            operands=[input],
            properties=self.geometry_properties(kernel, stride, padding, dilation),
            result_types=[tensor(columns, x.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        x = cast(TensorType, self.input.type)
        return tensor(self.check_image(x, "input"), x.get_element_type())


@irdl_op_definition
class Col2ImOp(WindowsOp):
    """The transpose of im2col: every column entry added back into the image position it was
    read from (overlapping windows sum; padding positions are dropped). The result type names
    the image's shape [N, C, H, W]. It is im2col's VJP, and im2col is its.

    `%x = nn.col2im %c kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<27x128xf32> -> tensor<2x3x8x8xf32>`
    """

    name = "nn.col2im"

    def __init__(self, input: Value, image_shape: Sequence[int], kernel: Sequence[int],
                 stride: Sequence[int] = (1, 1), padding: Sequence[int] = (0, 0, 0, 0),
                 dilation: Sequence[int] = (1, 1)):  # fmt: skip
        cols = cast(TensorType, _type_of(input))
        super().__init__(
            operands=[input],
            properties=self.geometry_properties(kernel, stride, padding, dilation),
            result_types=[tensor(list(image_shape), cols.get_element_type())],
        )

    def expected_result_type(self) -> Attribute:
        cols, image = cast(TensorType, self.input.type), cast(TensorType, self.result.type)
        _check_float(self, cols, "input")
        if cols.get_element_type() != image.get_element_type():
            raise self.error(f"element types differ: input {cols}, result {image}")
        columns = self.check_image(image, "result")
        if list(cols.get_shape()) != columns:
            raise self.error(
                f"input {shape_str(cols)} is not the columns of a {shape_str(image)} image: expected "
                f"{'x'.join(map(str, columns))}"
            )
        return image
