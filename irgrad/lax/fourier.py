"""`ig.lax.fft(x, fft_type, fft_lengths)`: jax.lax.fft, the `nn.fft` op with lax's checks.

`fft_type` is "FFT", "IFFT", "RFFT" or "IRFFT" (any case, as lax's string form); `fft_lengths`
are the sizes of the trailing dimensions transformed (their product is the 1/n of the inverse
types). The input is converted as lax converts it: to complex for FFT, IFFT and IRFFT, to a float
type for RFFT (ints become float32; a complex input is an error); an empty `fft_lengths` returns
the converted input. The errors are lax's, word for word.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from irgrad.numpy.support import api, lift
from irgrad.tracing import dtypes, primitives as prim
from irgrad.tracing.tracer import Tracer

_TYPES = {"fft": "FFT", "ifft": "IFFT", "rfft": "RFFT", "irfft": "IRFFT"}


def _type_name(fft_type: Any) -> str:
    name = getattr(fft_type, "name", fft_type)  # an enum member (jax's FftType) or a string
    if not isinstance(name, str):
        raise TypeError(f"Unknown FFT type value '{fft_type}'")
    kind = _TYPES.get(name.lower())
    if kind is None:
        raise ValueError(f"Unknown FFT type '{fft_type}'")
    return kind


def _converted(x: Tracer, kind: str) -> Tracer:
    if kind == "RFFT":
        if dtypes.is_complex(x.dtype):
            raise ValueError("only real valued inputs supported for rfft")
        if not dtypes.is_float(x.dtype):
            return prim.convert(x, dtypes.float32)
        if x.dtype not in (dtypes.float32, dtypes.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        return x
    return x if dtypes.is_complex(x.dtype) else prim.convert(x, dtypes.complex_of(x.dtype))


def _check_shape(x: Tracer, kind: str, lengths: tuple[int, ...]) -> None:
    shape = tuple(x.shape)
    if len(lengths) > len(shape):
        raise ValueError(
            f"FFT input shape {shape} must have at least as many input dimensions as fft_lengths {lengths}"
        )
    minor = shape[len(shape) - len(lengths) :]
    if kind == "IRFFT":
        if minor[:-1] != lengths[:-1]:
            raise ValueError(
                f"IRFFT input shape {shape} minor dimensions must be equal to all except the last "
                f"fft_length, got fft_lengths={lengths}"
            )
        if minor[-1] != lengths[-1] // 2 + 1:
            raise ValueError(
                f"IRFFT input shape {shape} last dimension must be fft_lengths[-1] // 2 + 1 = "
                f"{lengths[-1] // 2 + 1}, got fft_lengths={lengths}"
            )
    elif minor != lengths:
        raise ValueError(f"{kind if kind == 'RFFT' else 'FFT'} input shape {shape} minor dimensions must be equal to fft_lengths {lengths}")


@api
def fft(x: Any, fft_type: Any, fft_lengths: Sequence[int]) -> Tracer:
    """The DFT of `x`'s trailing `len(fft_lengths)` dimensions (irgrad/dialects/nn/fft.py)."""
    kind = _type_name(fft_type)
    t = _converted(lift(x), kind)
    lengths = tuple(int(n) for n in fft_lengths)
    if not lengths:
        return t
    _check_shape(t, kind, lengths)
    return prim.fft(t, kind, lengths)
