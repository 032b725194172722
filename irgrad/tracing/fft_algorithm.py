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
RFFT of an even length is one half-length complex FFT of the even and odd samples as (re, im) and
an O(n) untangling; IRFFT of an even length the inverse of that, the imaginary parts of the zero and
Nyquist coefficients dropped (pocketfft's c2r as an R-linear map). Odd lengths: the complex FFT of the
real input, halved; Re(IFFT(c * X)) zero-padded to n, c = 1 for the zero coefficient, else 2.

Constants (DFT matrices, twiddles, chirps) are computed in float64 with exponents reduced modulo n
and rounded once to the operand's precision. Speed against numpy.fft: benchmarks/fft.py. Written on
irgrad/tracing alone: a pass builds its code on the tracing core, never on the library.
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


def _last_slice(x: Tracer, start: int, limit: int, stride: int = 1) -> Tracer:
    lead = list(x.shape[:-1])
    return lax.slice(x, [0] * len(lead) + [start], [*lead, limit], [1] * len(lead) + [stride])


def _halves(x: Tracer) -> tuple[Tracer, Tracer]:
    """The even and odd elements of the last axis (length 2h) as two (..., h) arrays."""
    h = x.shape[-1] // 2
    pairs = lax.reshape(x, (*x.shape[:-1], h, 2))
    sliced = [lax.slice(pairs, [0] * (pairs.ndim - 1) + [k], [*pairs.shape[:-1], k + 1], [1] * pairs.ndim) for k in (0, 1)]
    return lax.reshape(sliced[0], (*x.shape[:-1], h)), lax.reshape(sliced[1], (*x.shape[:-1], h))


def _mirrored(values: Tracer) -> Tracer:
    """conj(V[h - k]) for k = 0..h, of V of length h + 1: reversed (a stride -1 slice), conjugated."""
    return lax.unary(nn.ConjOp, _last_slice(values, values.shape[-1] - 1, -1, -1))


def _real_even_transform(x: Tracer) -> Tracer:
    """RFFT of a real x of even length n = 2h along its last axis, by one h-point complex FFT of
    z = x[0::2] + i x[1::2]: with Z = FFT(z) and R[k] = conj(Z[h - k]), X[k] = (Z + R) / 2 +
    w^k (Z - R) / 2i for k = 0..h, w = exp(-2 pi i / n)."""
    n = x.shape[-1]
    even, odd = _halves(x)
    z = lax.binary(nn.ComplexOp, even, odd)
    spectrum = transform_last(z, False)
    extended = lax.concatenate([spectrum, _last_slice(spectrum, 0, 1)], z.ndim - 1)  # Z[h] = Z[0]
    mirrored = _mirrored(extended)
    k = np.arange(n // 2 + 1)
    half_twiddle = (-0.5j * _unit_roots(k, n, False, np.dtype(np.complex128))).astype(z.dtype)
    sums = multiply(lax.binary(nn.AddOp, extended, mirrored), 0.5)
    differences = multiply(lax.binary(nn.SubOp, extended, mirrored), constant(half_twiddle))
    return lax.binary(nn.AddOp, sums, differences)


def _real_even_inverse(x: Tracer, n: int) -> Tracer:
    """n times IRFFT of (..., h + 1) coefficients to n = 2h reals (the inverse of the above): the
    imaginary parts of X[0] and X[h] dropped (as pocketfft's c2r), Z[k] = (X + R) + i w^-k (X - R)
    with R[k] = conj(X[h - k]) (twice the spectrum of x[0::2] + i x[1::2]), z = the unnormalized
    h-point inverse of Z, (Re z, Im z) interleaved: n x."""
    h = n // 2
    ends = [lax.convert(_real_part(_last_slice(x, k, k + 1)), x.dtype) for k in (0, h)]
    x = lax.concatenate([ends[0], _last_slice(x, 1, h), ends[1]], x.ndim - 1)
    mirrored = _mirrored(x)
    head = _last_slice(x, 0, h)
    tail = _last_slice(mirrored, 0, h)
    k = np.arange(h)
    twiddle = (1j * _unit_roots(k, n, True, np.dtype(np.complex128))).astype(x.dtype)
    z = lax.binary(
        nn.AddOp, lax.binary(nn.AddOp, head, tail), multiply(lax.binary(nn.SubOp, head, tail), constant(twiddle))
    )
    y = transform_last(z, True)
    parts = [lax.reshape(lax.unary(op, y), (*y.shape, 1)) for op in (nn.RealOp, nn.ImagOp)]
    pairs = lax.concatenate(parts, y.ndim)
    return lax.reshape(pairs, (*y.shape[:-1], n))


def fft(x: Tracer, fft_type: str, length: tuple[int, ...]) -> Tracer:
    """What `nn.fft` of `fft_type` and `length` computes (irgrad/dialects/nn/fft.py), on `x`."""
    axes = list(range(x.ndim - len(length), x.ndim))
    count = math.prod(length)
    if fft_type in ("FFT", "IFFT"):
        inverse = fft_type == "IFFT"
        for axis in axes:
            x = _along(x, axis, inverse)
        return _scaled(x, count) if inverse else x
    n = length[-1]
    if fft_type == "RFFT":  # the last axis first, as numpy's rfftn
        if n % 2 == 0 and n > 2:
            y = _real_even_transform(x)
        else:
            y = _last_slice(transform_last(_complex(x), False), 0, n // 2 + 1)
        for axis in axes[:-1]:
            y = _along(y, axis, False)
        return y
    assert fft_type == "IRFFT", fft_type
    for axis in axes[:-1]:
        x = _along(x, axis, True)
    if n % 2 == 0 and n > 2:
        return _scaled(_real_even_inverse(x, n), count)
    return _scaled(_real_part(transform_last(_hermitian_weights(x, n), True)), count)


__all__ = ["DIRECT_LIMIT", "dft_matrix", "fft", "transform_last"]
