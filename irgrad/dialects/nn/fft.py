"""`nn.fft`: the discrete Fourier transform over an array's trailing dimensions (StableHLO's
`stablehlo.fft`, lax.fft).

`%y = nn.fft %x type = "FFT" length = [8] : tensor<4x8xcomplex<f32>> -> tensor<4x8xcomplex<f32>>`

`length` names the sizes of the last `len(length)` dimensions (1 or more) that are transformed;
the leading ones are a batch. The four types, with n the product of `length`:

- `FFT`: complex -> complex, y[k] = sum_j x[j] exp(-2 pi i j k / n) over each transformed axis;
- `IFFT`: complex -> complex, the inverse, with the 1/n scale (so IFFT(FFT(x)) = x);
- `RFFT`: real (f32/f64) -> complex, the FFT of a real array, only the non-negative frequencies of
  the last axis kept (length[-1] // 2 + 1 of them);
- `IRFFT`: complex -> real, the inverse of RFFT: the last axis holds length[-1] // 2 + 1
  coefficients of a Hermitian spectrum, the result length[-1] reals. The imaginary parts of the
  zero-frequency coefficient (and of the Nyquist one for an even length) are ignored, as by numpy
  and pocketfft, so IRFFT is an R-linear map of every input, and its derivative is that map's.

The interpreter runs the op as numpy.fft; `nn-expand-fft` writes it as matmuls of small DFT
matrices (mixed-radix Cooley-Tukey, Bluestein for large prime lengths) before `nn-expand-complex`
and autodiff, so every backend runs it and derivatives are those of the linear ops it becomes.
"""

from __future__ import annotations

from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    AnyTensorTypeConstr,
    ComplexType,
    DenseArrayBase,
    Float32Type,
    Float64Type,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def

from irgrad.dialects.nn.base import (
    NNOperation,
    Value,
    _i64_array,
    _ints,
    _type_of,
    is_complex,
    shape_str,
    tensor,
)

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


def fft_result_type(operand: TensorType, fft_type: str, length: tuple[int, ...]) -> TensorType:
    """The result type of nn.fft of `fft_type` and `length` on `operand` (checked elsewhere)."""
    shape = list(operand.get_shape())
    element = operand.get_element_type()
    if fft_type == "RFFT":
        return tensor([*shape[:-1], length[-1] // 2 + 1], ComplexType(element))
    if fft_type == "IRFFT":
        assert isinstance(element, ComplexType)
        return tensor([*shape[:-1], length[-1]], element.get_element_type())
    return operand


@irdl_op_definition
class FftOp(NNOperation):
    """The DFT of the trailing `length` dimensions, of type FFT, IFFT, RFFT or IRFFT (above).

    `%r = nn.fft %x type = "RFFT" length = [6] : tensor<2x6xf64> -> tensor<2x4xcomplex<f64>>`
    """

    name = "nn.fft"
    COMPLEX: ClassVar[bool] = True
    operand = operand_def(AnyTensorTypeConstr)
    result = result_def(AnyTensorTypeConstr)
    fft_type = prop_def(StringAttr)
    fft_length = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$operand `type` `=` $fft_type `length` `=` $fft_length attr-dict `:` type($operand) `->` type($result)"
    )

    def __init__(self, operand: Value, fft_type: str, length: tuple[int, ...] | list[int]):
        t = cast(TensorType, _type_of(operand))
        super().__init__(
            operands=[operand],
            properties={"fft_type": StringAttr(fft_type), "fft_length": _i64_array(length)},
            result_types=[fft_result_type(t, fft_type, tuple(length))],
        )

    @property
    def kind(self) -> str:
        return self.fft_type.data

    @property
    def length(self) -> tuple[int, ...]:
        return _ints(self.fft_length)

    def verify_semantics(self) -> None:
        t = cast(TensorType, self.operand.type)
        kind, length = self.kind, self.length
        if kind not in FFT_TYPES:
            raise self.error(f"type must be one of {', '.join(FFT_TYPES)}, got \"{kind}\"")
        if not length:
            raise self.error("length must name at least one dimension")
        if any(n < 0 for n in length) or (kind in ("RFFT", "IRFFT") and 0 in length):
            raise self.error(f"length {list(length)} has a size that is negative (or 0, for {kind})")
        shape = t.get_shape()
        if len(length) > len(shape):
            raise self.error(f"length {list(length)} names {len(length)} dimensions of a {shape_str(t)} operand")
        wants_complex = kind != "RFFT"
        element = t.get_element_type()
        if wants_complex and not is_complex(element):
            raise self.error(f"{kind} takes a complex operand, got {t}")
        if not wants_complex and not isinstance(element, Float32Type | Float64Type):
            raise self.error(f"RFFT takes an f32 or f64 operand, got {t}")
        expected = list(length)
        if kind == "IRFFT":
            expected[-1] = length[-1] // 2 + 1
        if list(shape[len(shape) - len(length) :]) != expected:
            raise self.error(
                f"{kind} of length {list(length)} needs trailing dimensions {expected}, got operand {shape_str(t)}"
            )

    def expected_result_type(self) -> Attribute:
        return fft_result_type(cast(TensorType, self.operand.type), self.kind, self.length)


__all__ = ["FFT_TYPES", "FftOp", "fft_result_type"]
