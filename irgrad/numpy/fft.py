"""`ig.fft`: numpy.fft's and jax.numpy.fft's functions, on the `nn.fft` op.

Transforms: `fft`, `ifft`, `rfft`, `irfft`, `hfft`, `ihfft` (one axis), `fft2`, `ifft2`, `rfft2`,
`irfft2` (two), `fftn`, `ifftn`, `rfftn`, `irfftn` (any); helpers `fftfreq`, `rfftfreq`,
`fftshift`, `ifftshift`. Arguments, defaults and errors are jax.numpy.fft's (which are numpy's
but for dtypes): `n`/`s` crop or zero-pad the input along the transformed axes, `norm` is
"backward" (the default: 1/n on the inverse), "ortho" (1/sqrt(n) both ways) or "forward" (1/n on
the forward transform).

Dtypes, as JAX's: a complex transform of a real or integer array is complex64 (complex128 for
float64); `rfft*` take real arrays only (ints and bools become float32, as do float16 and
bfloat16, which JAX refuses); `irfft*` and `hfft` give float32 or float64.

How it runs: each function moves the transformed axes last, crops or pads, and emits one
`nn.fft` (irgrad/dialects/nn/fft.py) over those trailing axes; `nn-expand-fft` writes it as
matmul-based Cooley-Tukey stages for every backend, so `ig.grad`, `ig.vmap`, `ig.jit` and the
GPU take it like any other op. Derivatives are those of a linear map: for a real loss of a complex
input, JAX's convention (the conjugate cotangent), as everywhere in irgrad.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.numpy.arrays import moveaxis, roll
from irgrad.numpy.basic import divide, multiply
from irgrad.numpy.complex_numbers import conj
from irgrad.numpy.support import api, lift
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.errors import DTypeError, user_site
from irgrad.tracing.tracer import Tracer, full

_NORMS = (None, "backward", "ortho", "forward")


def _input(name: str, a: Any, fft_type: str) -> Tracer:
    """`a` in the dtype its transform takes: complex for FFT/IFFT/IRFFT, f32/f64 for RFFT."""
    x = lift(a)
    if fft_type != "RFFT":
        return x if dtypes.is_complex(x.dtype) else lax.convert(x, dtypes.complex_of(x.dtype))
    if dtypes.is_complex(x.dtype):
        raise DTypeError(f"ig.fft.{name}: takes a real array, got dtype {x.dtype} (shape {x.shape}){user_site()}")
    return x if x.dtype in (dtypes.float32, dtypes.float64) else lax.convert(x, dtypes.float32)


def _axes(name: str, ndim: int, s: tuple[int, ...] | None, axes: Sequence[int] | None) -> list[int]:
    """The transformed axes, in [0, ndim), checked as jax.numpy.fft checks them."""
    if axes is None:
        return list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
    given = [operator.index(a) for a in axes]
    if len(given) != len(set(given)):
        raise ValueError(f"ig.fft.{name} does not support repeated axes. Got axes {list(axes)}.{user_site()}")
    for a in given:
        if not -ndim <= a < ndim:
            raise ValueError(f"ig.fft.{name}: axis {a} is out of bounds for an array of {ndim} dimensions{user_site()}")
    normalized = [a % ndim for a in given]
    if len(normalized) != len(set(normalized)):
        raise ValueError(f"ig.fft.{name} does not support repeated axes. Got axes {list(axes)}.{user_site()}")
    return normalized


def _crop_or_pad(x: Tracer, shape: Sequence[int]) -> Tracer:
    """`x` cut down or zero-padded (at the end) to `shape`, axis by axis."""
    if tuple(shape) == x.shape:
        return x
    kept = [min(a, b) for a, b in zip(x.shape, shape)]
    if kept != list(x.shape):
        x = lax.slice(x, [0] * x.ndim, kept, [1] * x.ndim)
    for axis, (have, want) in enumerate(zip(x.shape, shape)):
        if want > have:
            zeros = full((*x.shape[:axis], want - have, *x.shape[axis + 1 :]), 0, x.dtype)
            x = lax.concatenate([x, zeros], axis)
    return x


def _norm_factor(name: str, norm: str | None, lengths: Sequence[int]) -> float | None:
    """The scale `norm` puts on a transform whose own scale is "backward"'s (None: none)."""
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    if norm in (None, "backward"):
        return None
    count = float(math.prod(lengths))
    inverse = name.startswith("i")
    if norm == "ortho":
        return math.sqrt(count) if inverse else 1.0 / math.sqrt(count)
    return count if inverse else 1.0 / count


def _core(name: str, fft_type: str, a: Any, s: Sequence[int] | None, axes: Sequence[int] | None, norm: str | None) -> Tracer:
    """jax.numpy.fft's `_fft_core`: one nn.fft of `fft_type` over `axes`, cropped/padded to `s`."""
    x = _input(name, a, fft_type)
    sizes = None if s is None else tuple(operator.index(v) for v in s)
    if sizes is not None and any(v <= 0 for v in sizes):
        raise ValueError(f"ig.fft.{name}: shape should be positive, got s={list(sizes)}{user_site()}")
    if sizes is not None and axes is not None and len(sizes) != len(axes):
        raise ValueError(f"ig.fft.{name}: shape and axes have different lengths (s={list(sizes)}, axes={list(axes)}){user_site()}")
    chosen = _axes(name, x.ndim, sizes, axes)
    last = list(range(x.ndim - len(chosen), x.ndim))
    if axes is not None:
        x = moveaxis(x, chosen, last)
    if not chosen:
        return x
    if sizes is not None:
        wanted = list(x.shape)
        for axis, v in zip(last, sizes):
            wanted[axis] = v
        if fft_type == "IRFFT":
            wanted[-1] = wanted[-1] // 2 + 1
        x = _crop_or_pad(x, wanted)
        lengths = list(sizes)
    else:
        lengths = [x.shape[axis] for axis in last]
        if fft_type == "IRFFT":
            lengths[-1] = 2 * (x.shape[-1] - 1)
    if fft_type in ("RFFT", "IRFFT") and lengths[-1] <= 0:
        raise ValueError(f"ig.fft.{name}: invalid number of data points ({lengths[-1]}) along the last axis{user_site()}")
    y = lax.fft(x, fft_type, lengths)
    factor = _norm_factor(name, norm, lengths)
    if factor is not None:
        y = multiply(y, factor)
    return moveaxis(y, last, chosen) if axes is not None else y


def _one_axis(name: str, axis: Any) -> list[int]:
    if isinstance(axis, (list, tuple)):
        raise ValueError(
            f"ig.fft.{name} does not support multiple axes. Please use ig.fft.{name}n. Got axis = {axis!r}."
        )
    return [operator.index(axis)]


def _two_axes(name: str, axes: Sequence[int]) -> Sequence[int]:
    if len(axes) != 2:
        raise ValueError(f"ig.fft.{name} only supports 2 axes. Got axes = {axes!r}.")
    return axes


def _length(n: int | None) -> list[int] | None:
    return None if n is None else [n]


# One axis.


@api
def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tracer:
    """The 1-D discrete Fourier transform along `axis` (cropped or zero-padded to `n`)."""
    return _core("fft", "FFT", a, _length(n), _one_axis("fft", axis), norm)


@api
def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tracer:
    """The inverse of `fft` (1/n scale with the default norm)."""
    return _core("ifft", "IFFT", a, _length(n), _one_axis("ifft", axis), norm)


@api
def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tracer:
    """The FFT of a real array: the n // 2 + 1 non-negative frequencies."""
    return _core("rfft", "RFFT", a, _length(n), _one_axis("rfft", axis), norm)


@api
def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tracer:
    """The inverse of `rfft`: n reals (default 2 * (m - 1) for m coefficients) from a half spectrum."""
    return _core("irfft", "IRFFT", a, _length(n), _one_axis("irfft", axis), norm)


@api
def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tracer:
    """The FFT of a Hermitian-symmetric signal given by its first half: real, n of them."""
    axes = _one_axis("hfft", axis)
    x = conj(lift(a))
    count = (x.shape[axes[0]] - 1) * 2 if n is None else n
    return multiply(_core("hfft", "IRFFT", x, _length(n), axes, norm), float(count))


@api
def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tracer:
    """The inverse of `hfft`: the half spectrum of a real signal, conjugated and scaled by 1/n."""
    axes = _one_axis("ihfft", axis)
    x = lift(a)
    count = x.shape[axes[0]] if n is None else n
    return multiply(conj(_core("ihfft", "RFFT", x, _length(n), axes, norm)), 1.0 / count)


# Two axes.


@api
def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Tracer:
    """The 2-D discrete Fourier transform over `axes`."""
    return _core("fft2", "FFT", a, s, _two_axes("fft2", axes), norm)


@api
def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Tracer:
    """The inverse of `fft2`."""
    return _core("ifft2", "IFFT", a, s, _two_axes("ifft2", axes), norm)


@api
def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Tracer:
    """The 2-D FFT of a real array, the last axis halved."""
    return _core("rfft2", "RFFT", a, s, _two_axes("rfft2", axes), norm)


@api
def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Tracer:
    """The inverse of `rfft2`."""
    return _core("irfft2", "IRFFT", a, s, _two_axes("irfft2", axes), norm)


# Any number of axes.


@api
def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Tracer:
    """The N-D discrete Fourier transform over `axes` (all axes, or the last len(s), by default)."""
    return _core("fftn", "FFT", a, s, axes, norm)


@api
def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Tracer:
    """The inverse of `fftn`."""
    return _core("ifftn", "IFFT", a, s, axes, norm)


@api
def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Tracer:
    """The N-D FFT of a real array, the last transformed axis halved."""
    return _core("rfftn", "RFFT", a, s, axes, norm)


@api
def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Tracer:
    """The inverse of `rfftn`."""
    return _core("irfftn", "IRFFT", a, s, axes, norm)


# Frequencies and shifts.


def _frequency_arguments(name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of ig.fft.{name} only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of ig.fft.{name} only takes a single value. Got d = {list(d)}.")


@api
def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Tracer:
    """The sample frequencies of an n-point FFT, [0, 1, ..., -2, -1] / (d * n); float32 by default."""
    _frequency_arguments("fftfreq", n, d)
    return _frequencies((np.arange(n) + n // 2) % n - n // 2, d, n, dtype)


@api
def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Tracer:
    """The sample frequencies of an n-point rfft, [0, 1, ..., n // 2] / (d * n); float32 by default."""
    _frequency_arguments("rfftfreq", n, d)
    return _frequencies(np.arange(n // 2 + 1), d, n, dtype)


def _frequencies(k: np.ndarray, d: Any, n: int, dtype: Any) -> Tracer:
    """k / (d * n) in `dtype`, as JAX computes it (`device` is accepted and ignored: one device)."""
    d_type = dtypes.canonical(dtype) if dtype is not None else dtypes.float32
    spacing = multiply(d, n) if isinstance(d, Tracer) else d * n  # a Python number stays exact
    return lax.convert(divide(lift(k.astype(d_type)), spacing), d_type)


def _shifts(x: Tracer, axes: None | int | Sequence[int], sign: int) -> tuple[Any, Any]:
    if axes is None:
        chosen: Any = tuple(range(x.ndim))
        return [sign * (d // 2) for d in x.shape], chosen
    if isinstance(axes, (int, np.integer)):
        return sign * (x.shape[axes] // 2), axes
    return [sign * (x.shape[a] // 2) for a in axes], tuple(axes)


@api
def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Tracer:
    """The zero frequency moved to the centre (a roll by half of each axis)."""
    t = lift(x)
    shift, chosen = _shifts(t, axes, 1)
    return roll(t, shift, chosen)


@api
def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Tracer:
    """The inverse of `fftshift`."""
    t = lift(x)
    shift, chosen = _shifts(t, axes, -1)
    return roll(t, shift, chosen)


__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift",
    "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]
