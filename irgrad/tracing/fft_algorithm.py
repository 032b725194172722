"""The discrete Fourier transform as tensor ops, which `nn-expand-fft` traces in place of `nn.fft`
(as JAX's `lower_fun`, and as the factorizations' reference loops).

Mixed-radix Cooley-Tukey in its "four-step" form, each small DFT one matmul by a constant DFT
matrix, so the work is in the backends' GEMMs and the IR is a few ops per factor:
- n <= `DIRECT_LIMIT`: one matmul by the n x n DFT matrix;
- otherwise n = r * m, r the largest divisor up to `DIRECT_LIMIT`: x viewed as (r, m), an r-point
  DFT down the columns, a twiddle multiply by exp(-2 pi i j k / n), the m-point transform of each
  row (recursively), a transpose to the output order;
- a prime factor above `DIRECT_LIMIT` (no such r): Bluestein's chirp-z, a convolution with a chirp
  through two power-of-two transforms of length >= 2n - 1 and the chirp's precomputed spectrum.
RFFT is the complex FFT of the real input, halved; IRFFT is Re(IFFT(c * X)) zero-padded to n, c = 1
for the zero (and an even length's Nyquist) coefficient, else 2: pocketfft's c2r as an R-linear map.

Constants (DFT matrices, twiddles, chirps) are computed in float64 with exponents reduced modulo n
and rounded once to the operand's precision. Cost and accuracy against numpy.fft:
docs/dialects/nn.md, "nn.fft", and benchmarks/fft.py. Written on irgrad/tracing alone: a pass
builds its code on the tracing core, never on the user-facing library.
"""

from __future__ import annotations

import math

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.elementwise import multiply
from irgrad.tracing.tracer import Tracer, constant, full

DIRECT_LIMIT = 64
"""The longest DFT done as one matmul by its DFT matrix; longer ones are split into factors up to it."""


# Constants, in float64 and exact integer exponents (j * k mod n), rounded once to `dtype`.


def _unit_roots(exponents: np.ndarray, n: int, inverse: bool, dtype: np.dtype) -> np.ndarray:
    """exp(-+2 pi i e / n) for integer exponents e (reduced modulo n first)."""
    sign = 1.0 if inverse else -1.0
    angle = sign * 2.0 * np.pi * (exponents % n).astype(np.float64) / n
    return (np.cos(angle) + 1j * np.sin(angle)).astype(dtype)


def dft_matrix(n: int, inverse: bool, dtype: np.dtype) -> np.ndarray:
    """The n x n DFT matrix W[j, k] = exp(-+2 pi i j k / n), so that y = x @ W."""
    j = np.arange(n, dtype=np.int64)
    return _unit_roots(np.outer(j, j), n, inverse, dtype)


def _largest_radix(n: int) -> int | None:
    """The largest divisor r of n with 1 < r <= DIRECT_LIMIT and r < n, or None (n is prime)."""
    for r in range(min(DIRECT_LIMIT, n - 1), 1, -1):
        if n % r == 0:
            return r
    return None


def _bluestein_length(n: int) -> int:
    """The power of two Bluestein's convolution of length n runs at: >= 2n - 1."""
    return 1 << math.ceil(math.log2(2 * n - 1))


# The transforms. Each takes and returns a complex tracer, transformed along its last axis.


def _matmul_last(x: Tracer, w: np.ndarray) -> Tracer:
    """x (..., n) @ w (n, k) as one 2-D matmul."""
    lead = x.shape[:-1]
    rows = math.prod(lead)
    flat = lax.reshape(x, (rows, x.shape[-1]))
    y = lax.matmul(flat, constant(w))
    return lax.reshape(y, (*lead, w.shape[1]))


def _swap_last_two(x: Tracer) -> Tracer:
    perm = [*range(x.ndim - 2), x.ndim - 1, x.ndim - 2]
    return lax.transpose(x, perm)


def _cooley_tukey(x: Tracer, r: int, inverse: bool) -> Tracer:
    """The four-step algorithm for n = r * m: X[k1 + r*k2] = sum_j2 W_m^(j2 k2) T[j2, k1]
    sum_j1 W_r^(j1 k1) x[m*j1 + j2], with twiddles T[j2, k1] = W_n^(j2 k1)."""
    lead, n = x.shape[:-1], x.shape[-1]
    m = n // r
    columns = _swap_last_two(lax.reshape(x, (*lead, r, m)))  # [..., j2, j1]
    a = _matmul_last(columns, dft_matrix(r, inverse, x.dtype))  # [..., j2, k1]
    twiddles = _unit_roots(np.outer(np.arange(m), np.arange(r)), n, inverse, x.dtype)
    a = multiply(a, constant(twiddles))
    b = transform_last(_swap_last_two(a), inverse)  # [..., k1, k2]
    return lax.reshape(_swap_last_two(b), (*lead, n))  # index k2 * r + k1


def _bluestein(x: Tracer, inverse: bool) -> Tracer:
    """Bluestein's chirp-z: X[k] = c[k] * sum_j (x[j] c[j]) conj(c[k - j]), c[j] = exp(-+pi i j^2 / n),
    the convolution circular at a power-of-two length L >= 2n - 1 (so it wraps into zeros)."""
    lead, n = x.shape[:-1], x.shape[-1]
    size = _bluestein_length(n)
    j = np.arange(n, dtype=np.int64)
    chirp = _unit_roots(j * j, 2 * n, inverse, np.dtype(np.complex128))
    kernel = np.zeros(size, np.complex128)
    kernel[:n] = np.conj(chirp)
    kernel[size - n + 1 :] = np.conj(chirp[1:])[::-1]
    spectrum = np.fft.fft(kernel) / size  # the inverse transform's 1/L folded in
    weighted = multiply(x, constant(chirp.astype(x.dtype)))
    padded = lax.concatenate([weighted, full((*lead, size - n), 0.0, x.dtype)], x.ndim - 1)
    product = multiply(transform_last(padded, False), constant(spectrum.astype(x.dtype)))
    convolved = transform_last(product, True)
    head = lax.slice(convolved, [0] * x.ndim, [*lead, n], [1] * x.ndim)
    return multiply(head, constant(chirp.astype(x.dtype)))


def transform_last(x: Tracer, inverse: bool) -> Tracer:
    """The unnormalized DFT (inverse: with exp(+...)) of complex `x` along its last axis."""
    n = x.shape[-1]
    if n <= 1 or x.size == 0:
        return x
    if n <= DIRECT_LIMIT:
        return _matmul_last(x, dft_matrix(n, inverse, x.dtype))
    r = _largest_radix(n)
    if r is None:
        return _bluestein(x, inverse)
    return _cooley_tukey(x, r, inverse)


def _along(x: Tracer, axis: int, inverse: bool) -> Tracer:
    """transform_last along `axis` (moved last and back)."""
    last = x.ndim - 1
    if axis == last:
        return transform_last(x, inverse)
    perm = list(range(x.ndim))
    perm[axis], perm[last] = last, axis
    return lax.transpose(transform_last(lax.transpose(x, perm), inverse), perm)


def _scaled(x: Tracer, count: int) -> Tracer:
    return multiply(x, 1.0 / count) if count > 1 else x


def _complex(x: Tracer) -> Tracer:
    return lax.convert(x, dtypes.complex_of(x.dtype))


def _real_part(x: Tracer) -> Tracer:
    return lax.unary(nn.RealOp, x)


def _hermitian_weights(x: Tracer, n: int) -> Tracer:
    """x (..., n // 2 + 1) times c (1 at frequency 0 and, for even n, n / 2; else 2), zero-padded to n."""
    half = x.shape[-1]
    c = np.full(half, 2.0)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    weighted = multiply(x, constant(c.astype(x.dtype)))
    if n == half:
        return weighted
    zeros = full((*x.shape[:-1], n - half), 0.0, x.dtype)
    return lax.concatenate([weighted, zeros], x.ndim - 1)


def fft(x: Tracer, fft_type: str, length: tuple[int, ...]) -> Tracer:
    """What `nn.fft` of `fft_type` and `length` computes (irgrad/dialects/nn/fft.py), on `x`."""
    axes = list(range(x.ndim - len(length), x.ndim))
    count = math.prod(length)
    if fft_type in ("FFT", "IFFT"):
        inverse = fft_type == "IFFT"
        for axis in axes:
            x = _along(x, axis, inverse)
        return _scaled(x, count) if inverse else x
    if fft_type == "RFFT":
        y = _complex(x)
        for axis in reversed(axes):  # the last axis first, as numpy's rfftn
            y = _along(y, axis, False)
            if axis == axes[-1]:
                limit = [*y.shape[:-1], length[-1] // 2 + 1]
                y = lax.slice(y, [0] * y.ndim, limit, [1] * y.ndim)
        return y
    assert fft_type == "IRFFT", fft_type
    for axis in axes[:-1]:
        x = _along(x, axis, True)
    y = _real_part(_along(_hermitian_weights(x, length[-1]), axes[-1], True))
    return _scaled(y, count)


__all__ = ["DIRECT_LIMIT", "dft_matrix", "fft", "transform_last"]
