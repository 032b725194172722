"""`nn.fft` as numpy.fft (pocketfft): the reference the expansion of `nn-expand-fft` is tested
against. FFT, IFFT, RFFT and IRFFT over the trailing `length` dimensions, with numpy's
normalization ("backward": 1/n on the inverse transforms), in the result's precision.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls

from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import nn
from irgrad.tracing import dtypes


def fft_reference(x: np.ndarray, fft_type: str, length: tuple[int, ...]) -> np.ndarray:
    """numpy.fft's transform of `x` that nn.fft of `fft_type` and `length` computes."""
    axes = tuple(range(x.ndim - len(length), x.ndim))
    if x.size == 0:  # numpy refuses empty transforms; JAX gives an empty result
        last = {"RFFT": length[-1] // 2 + 1, "IRFFT": length[-1]}.get(fft_type, x.shape[-1])
        empty = np.zeros((*x.shape[:-1], last), x.dtype)
        return empty.real if fft_type == "IRFFT" else empty
    if fft_type == "FFT":
        return np.fft.fftn(x, axes=axes)
    if fft_type == "IFFT":
        return np.fft.ifftn(x, axes=axes)
    if fft_type == "RFFT":
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=length, axes=axes)


@register_impls
class NNFftFunctions(InterpreterFunctions):
    """nn.fft."""

    @numpy_impl(nn.FftOp)
    def run_fft(self, interpreter: Interpreter, op: nn.FftOp, args: PythonValues):
        (x,) = args
        result = fft_reference(np.asarray(x), op.kind, op.length)
        dtype = dtypes.from_element_type(op.result.type.get_element_type())
        return (np.asarray(result).astype(dtype, copy=False),)
