"""`ig.random`: counter-based pseudo-random numbers with jax.random's signatures.

A key is an int32 array of shape (2,): the two 32-bit words of a Threefry-2x32 key, as JAX's
raw `uint32[2]` keys but held as int32 bit patterns, since irgrad has no unsigned types. Every
function is pure: the same key gives the same numbers, eagerly (numpy in and out) and traced
(the key is then usually a traced argument of a jitted step), on every backend, because the
generator itself is IR: Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers:
as easy as 1, 2, 3", SC 2011; JAX's `threefry2x32`), written with `nn.add` (wrapping mod
2**32), `nn.xor`, and rotations built from `nn.shift_left`, `nn.shift_right_logical`, `nn.or`.

Derivation (JAX's `jax_threefry_partitionable` scheme, its default since JAX 0.5): element i
(row-major) of an output of shape S is the Threefry block of the key at counter (0, i), so
`split(key, n)[i] == fold_in(key, i)`, and `bits(key, S)` is the xor of the block's two words.
`key`, `split`, `fold_in` and `bits` equal JAX's bit for bit (tests pin values from JAX 0.10.2).
Floats are made from bits by integer arithmetic only, never by reinterpreting bits:
`uniform` takes the top p bits (p = 24 for float32, 11 for float16, 8 for bfloat16) as
`(bits >>> (32 - p)) * 2**-p`; float64 takes 53 bits of the block's two words. `normal` is
Box-Muller. See docs/api/random.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy.support import api, broadcast_to, is_scalar, lift
from irgrad.tracing.tracer import Tracer, full
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.tracing.sorting import sort_order

__all__ = [
    "PRNGKey",
    "bernoulli",
    "bits",
    "categorical",
    "choice",
    "fold_in",
    "key",
    "normal",
    "permutation",
    "randint",
    "split",
    "threefry2x32",
    "uniform",
]

Shape = Sequence[int]

# Threefry-2x32 (Random123's threefry2x32_20): rotation constants of the even and odd groups of
# four rounds, and the key-schedule parity constant.
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
KS_PARITY = 0x1BD11BDA
ROUNDS = 20

# Bits of uniform randomness in a float of each dtype: its precision (significand bits).
_PRECISION = {dtypes.float16: 11, dtypes.bfloat16: 8, dtypes.float32: 24, dtypes.float64: 53}


# ---------------------------------------------------------------------------------------------
# 32-bit words as int32
# ---------------------------------------------------------------------------------------------


def as_int32(word: int) -> int:
    """The int32 whose two's complement bits are `word mod 2**32` (0xFFFFFFFF -> -1)."""
    word &= 0xFFFFFFFF
    return word - (1 << 32) if word >= 1 << 31 else word


class _Words:
    """Word arithmetic on int32 tracers of one shape, with that shape's constants made once."""

    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape
        self._constants: dict[int, Tracer] = {}

    def const(self, word: int) -> Tracer:
        value = as_int32(word)
        if value not in self._constants:
            self._constants[value] = full(self.shape, value, dtypes.int32)
        return self._constants[value]

    def add(self, a: Tracer, b: Tracer) -> Tracer:
        return lax.binary(nn.AddOp, a, b)  # int32 addition wraps: addition mod 2**32

    def xor(self, a: Tracer, b: Tracer) -> Tracer:
        return lax.binary(nn.XorOp, a, b)

    def rotl(self, x: Tracer, d: int) -> Tracer:
        left = lax.binary(nn.ShiftLeftOp, x, self.const(d))
        right = lax.binary(nn.ShiftRightLogicalOp, x, self.const(32 - d))
        return lax.binary(nn.OrOp, left, right)


def _threefry(k0: Tracer, k1: Tracer, x0: Tracer, x1: Tracer) -> tuple[Tracer, Tracer]:
    """Threefry-2x32, 20 rounds, on int32 tracers: key words k0, k1 (rank 0) and counter words
    x0, x1 (one shape); returns the two output words in that shape."""
    w = _Words(x0.shape)
    k0, k1 = broadcast_to(k0, w.shape), broadcast_to(k1, w.shape)
    ks = (k0, k1, w.xor(w.xor(k0, k1), w.const(KS_PARITY)))
    x0, x1 = w.add(x0, ks[0]), w.add(x1, ks[1])
    for group in range(ROUNDS // 4):
        for r in ROTATIONS[group % 2]:
            x0 = w.add(x0, x1)
            x1 = w.xor(x0, w.rotl(x1, r))
        # Key injection after every four rounds: the next schedule words, plus the group count.
        x0 = w.add(x0, ks[(group + 1) % 3])
        x1 = w.add(x1, w.add(ks[(group + 2) % 3], w.const(group + 1)))
    return x0, x1


# ---------------------------------------------------------------------------------------------
# Keys and counters
# ---------------------------------------------------------------------------------------------


def _key_words(op_name: str, key: Any) -> tuple[Tracer, Tracer]:
    """The key's two words as rank-0 int32 tracers, after checking it is a key."""
    k = lift(key)
    if k.shape != (2,) or k.dtype != dtypes.int32:
        message = (
            f"random.{op_name}: a key is an int32 array of shape (2,) (from ig.random.key or "
            f"split), got {k.dtype} of shape {k.shape}{user_site()}"
        )
        raise ShapeError(message) if k.shape != (2,) else DTypeError(message)
    words = [lax.reshape(lax.slice(k, [i], [i + 1], [1]), ()) for i in (0, 1)]
    return words[0], words[1]


def _shape(op_name: str, shape: int | Shape) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 0 for d in dims):
        raise ShapeError(f"random.{op_name}: shape must be non-negative integers, got {shape!r}{user_site()}")
    return tuple(int(d) for d in dims)


def _blocks(op_name: str, key: Any, shape: tuple[int, ...]) -> tuple[Tracer, Tracer]:
    """Both output words of the Threefry blocks at counters (0, i), i the row-major index."""
    k0, k1 = _key_words(op_name, key)
    size = math.prod(shape)
    if size >= 2**31:
        raise ShapeError(
            f"random.{op_name}: {size} values in one call exceed the int32 counter range{user_site()}"
        )
    lo = lax.reshape(lax.iota((size,), 0, dtypes.int32), shape)
    hi = full(shape, 0, dtypes.int32)
    return _threefry(k0, k1, hi, lo)


def _stack_words(w0: Tracer, w1: Tracer) -> Tracer:
    """Two word arrays of shape S as keys of shape (*S, 2)."""
    shape = (*w0.shape, 1)
    return lax.concatenate([lax.reshape(w0, shape), lax.reshape(w1, shape)], len(w0.shape))


def _bits32(op_name: str, key: Any, shape: tuple[int, ...]) -> Tracer:
    w0, w1 = _blocks(op_name, key, shape)
    return lax.binary(nn.XorOp, w0, w1)


def _bits64(op_name: str, key: Any, shape: tuple[int, ...]) -> Tracer:
    """64 random bits per element (int64): word 0 high, word 1 low, as JAX's 64-bit bits."""
    w0, w1 = _blocks(op_name, key, shape)
    hi = lax.convert(w0, dtypes.int64)
    lo = lax.convert(w1, dtypes.int64)  # sign-extended: keep the low 32 bits only
    lo = lax.binary(nn.AndOp, lo, full(shape, 0xFFFFFFFF, dtypes.int64))
    return lax.binary(nn.OrOp, lax.binary(nn.ShiftLeftOp, hi, full(shape, 32, dtypes.int64)), lo)


def key(seed: Any) -> Any:
    """A key from an integer seed (jax.random.key / PRNGKey, raw int32[2]).

    A Python int is taken as 64 bits (words: high, low), so `key(0)` is [0, 0] and `key(-1)`
    is [-1, -1]. A numpy or traced int32 seed gives [0, seed]; an int64 seed [high, low].
    """
    if isinstance(seed, bool):
        raise DTypeError(f"random.key: seed must be an integer, got {seed!r}{user_site()}")
    if isinstance(seed, int):
        if not -(2**63) <= seed < 2**64:
            raise ValueError(f"random.key: seed {seed} does not fit 64 bits{user_site()}")
        return np.array([as_int32(seed >> 32), as_int32(seed)], dtype=np.int32)
    if isinstance(seed, (np.ndarray, np.generic)):
        array = np.asarray(seed)
        if array.shape == () and array.dtype in (dtypes.int32, dtypes.int64):
            value = int(array)
            high = (value >> 32) if array.dtype == dtypes.int64 else 0
            return np.array([as_int32(high), as_int32(value)], dtype=np.int32)
    return _traced_key(seed)


@api
def _traced_key(seed: Any) -> Tracer:
    s = lift(seed)
    if s.shape != () or not dtypes.is_int(s.dtype):
        raise DTypeError(
            f"random.key: seed must be a scalar int32 or int64, got {s.dtype} of shape {s.shape}{user_site()}"
        )
    if s.dtype == dtypes.int32:
        return _stack_words(full((), 0, dtypes.int32), s)
    high = lax.binary(nn.ShiftRightLogicalOp, s, full((), 32, dtypes.int64))
    # int64 -> int32 conversion keeps the low 32 bits (two's complement wrap-around).
    return _stack_words(lax.convert(high, dtypes.int32), lax.convert(s, dtypes.int32))


PRNGKey = key


@api
def split(key: Any, num: int | Shape = 2) -> Tracer:
    """`num` new keys, shape (num, 2) (or (*num, 2) for a shape): key i is `fold_in(key, i)`."""
    w0, w1 = _blocks("split", key, _shape("split", num))
    return _stack_words(w0, w1)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from `key` and a 32-bit integer: the Threefry block of `key` at counter (0, data).

    `data` is a Python int in [-2**31, 2**32) or an integer scalar (int64: its low 32 bits).
    """
    if isinstance(data, int) and not isinstance(data, bool):
        if not -(2**31) <= data < 2**32:
            raise ValueError(f"random.fold_in: data {data} does not fit 32 bits{user_site()}")
        # An array argument, not a static one: eager calls share one program for every value.
        data = np.array(as_int32(data), dtype=np.int32)
    return _fold_in(key, data)


@api
def _fold_in(key: Any, data: Any) -> Tracer:
    d = lift(data)
    if d.shape != () or not dtypes.is_int(d.dtype):
        raise DTypeError(
            f"random.fold_in: data must be a scalar integer, got {d.dtype} of shape {d.shape}{user_site()}"
        )
    k0, k1 = _key_words("fold_in", key)
    w0, w1 = _threefry(k0, k1, full((), 0, dtypes.int32), lax.convert(d, dtypes.int32))
    return _stack_words(w0, w1)


@api
def threefry2x32(key: Any, x0: Any, x1: Any) -> tuple[Tracer, Tracer]:
    """The raw Threefry-2x32 block function: counter words (x0, x1) (int32 arrays of one shape)
    encrypted under `key`; returns the two output words. Words are uint32 bit patterns."""
    k0, k1 = _key_words("threefry2x32", key)
    a, b = lift(x0), lift(x1)
    if a.dtype != dtypes.int32 or b.dtype != dtypes.int32 or a.shape != b.shape:
        raise DTypeError(
            f"random.threefry2x32: counter words must be int32 arrays of one shape, got "
            f"{a.dtype}{list(a.shape)} and {b.dtype}{list(b.shape)}{user_site()}"
        )
    return _threefry(k0, k1, a, b)


# ---------------------------------------------------------------------------------------------
# Distributions
# ---------------------------------------------------------------------------------------------


@api
def bits(key: Any, shape: int | Shape = (), dtype: Any = dtypes.int32) -> Tracer:
    """Uniformly random bits: int32 (the xor of each block's words) or int64 (both words)."""
    d = dtypes.canonical(dtype)
    shape = _shape("bits", shape)
    if d == dtypes.int32:
        return _bits32("bits", key, shape)
    if d == dtypes.int64:
        return _bits64("bits", key, shape)
    raise DTypeError(f"random.bits: dtype must be int32 or int64, got {d}{user_site()}")


def _float_dtype(op_name: str, dtype: Any) -> np.dtype:
    d = dtypes.canonical(dtype)
    if not dtypes.is_float(d):
        raise DTypeError(f"random.{op_name}: dtype must be a float dtype, got {d}{user_site()}")
    return d


def _unit(op_name: str, key: Any, shape: tuple[int, ...], d: np.dtype) -> Tracer:
    """Uniform on [0, 1) in dtype `d`: multiples of 2**-p, p the precision of `d`, all exact."""
    p = _PRECISION[d]
    if d == dtypes.float64:
        mantissa = lax.binary(nn.ShiftRightLogicalOp, _bits64(op_name, key, shape), full(shape, 64 - p, dtypes.int64))
        unit = lax.convert(mantissa, dtypes.float64)
    else:
        b = _bits32(op_name, key, shape)
        mantissa = lax.binary(nn.ShiftRightLogicalOp, b, full(shape, 32 - p, dtypes.int32))
        # Below 2**24 every integer is exact in float32; scaled by 2**-p it is exact in `d`.
        unit = lax.convert(mantissa, dtypes.float32)
    scaled = lax.binary(nn.MulOp, unit, full(shape, 2.0**-p, unit.dtype))
    return lax.convert(scaled, d)


def _bound(op_name: str, value: Any, shape: tuple[int, ...], d: np.dtype) -> Tracer:
    if is_scalar(value):
        return full(shape, value, d)
    t = lift(value, d)
    try:
        np.broadcast_shapes(t.shape, shape)
    except ValueError:
        raise ShapeError(
            f"random.{op_name}: bound of shape {t.shape} does not broadcast to shape {shape}{user_site()}"
        ) from None
    return broadcast_to(t, shape)


def _largest_below(value: float, d: np.dtype) -> float:
    """The largest value of dtype `d` below `value` (rounded to `d` first)."""
    x = np.array([value], dtype=d)
    if np.isnan(x[0]) or np.isneginf(x[0]):
        return float(x[0])
    unsigned = x.view(np.dtype(f"uint{d.itemsize * 8}"))
    if x[0] == 0:
        # Below +-0 is the negative number of least magnitude: the sign bit and the last bit.
        below = np.array([(1 << (d.itemsize * 8 - 1)) | 1], dtype=unsigned.dtype)
    else:
        # Floats are sign and magnitude: one step toward -inf shrinks a positive magnitude.
        below = unsigned - 1 if x[0] > 0 else unsigned + 1
    return float(below.view(d)[0])


@api
def uniform(
    key: Any, shape: int | Shape = (), dtype: Any = dtypes.float32, minval: Any = 0.0, maxval: Any = 1.0
) -> Tracer:
    """Uniform floats in [minval, maxval): `u * (maxval - minval) + minval` with `u` from `_unit`.

    Rounding can carry that expression up to `maxval`; such values become the largest float below
    `maxval` when `maxval` is a Python number, and `minval` when it is an array (rare: at most
    one draw in 2**p).
    """
    d = _float_dtype("uniform", dtype)
    shape = _shape("uniform", shape)
    lo, hi = _bound("uniform", minval, shape, d), _bound("uniform", maxval, shape, d)
    u = _unit("uniform", key, shape, d)
    r = lax.binary(nn.AddOp, lax.binary(nn.MulOp, u, lax.binary(nn.SubOp, hi, lo)), lo)
    if is_scalar(maxval):
        return lax.binary(nn.MinimumOp, r, full(shape, _largest_below(float(maxval), d), d))
    return lax.select(lax.compare("lt", r, hi), r, lo)


@api
def normal(key: Any, shape: int | Shape = (), dtype: Any = dtypes.float32) -> Tracer:
    """Standard normal floats by Box-Muller: `sqrt(-2 log u1) * cos(2 pi u2)`.

    u1 in (0, 1] and u2 in [0, 1) are uniforms of the keys `split(key)`, computed in float64 for
    float64 and in float32 otherwise (then rounded to `dtype`). The float32 tail ends at
    sqrt(-2 log 2**-24) ~ 5.77, float64's at ~ 8.57.
    """
    d = _float_dtype("normal", dtype)
    shape = _shape("normal", shape)
    c = dtypes.float64 if d == dtypes.float64 else dtypes.float32
    keys = split(key, 2)
    key1, key2 = (lax.reshape(lax.slice(keys, [i, 0], [i + 1, 2], [1, 1]), (2,)) for i in (0, 1))
    one = full(shape, 1.0, c)
    u1 = lax.binary(nn.SubOp, one, _unit("normal", key1, shape, c))
    u2 = _unit("normal", key2, shape, c)
    radius = lax.unary(nn.SqrtOp, lax.binary(nn.MulOp, full(shape, -2.0, c), lax.unary(nn.LogOp, u1)))
    angle = lax.binary(nn.MulOp, full(shape, 2 * math.pi, c), u2)
    return lax.convert(lax.binary(nn.MulOp, radius, lax.unary(nn.CosOp, angle)), d)


@api
def bernoulli(key: Any, p: Any = 0.5, shape: int | Shape | None = None) -> Tracer:
    """Booleans that are true with probability `p`: `uniform(key, shape, p's dtype) < p`.

    `shape` defaults to p's shape; p is a Python float (float32) or a float array broadcastable
    to `shape`.
    """
    prob = lift(p) if not is_scalar(p) else None
    d = prob.dtype if prob is not None and dtypes.is_float(prob.dtype) else dtypes.float32
    out_shape = _shape("bernoulli", shape if shape is not None else (prob.shape if prob is not None else ()))
    u = _unit("bernoulli", key, out_shape, d)
    return lax.compare("lt", u, _bound("bernoulli", p, out_shape, d))


@api
def randint(key: Any, shape: int | Shape, minval: Any, maxval: Any, dtype: Any = dtypes.int32) -> Tracer:
    """Uniform integers in [minval, maxval) (minval where maxval <= minval).

    63 random bits reduced modulo the span, in int64: the bias is at most span / 2**63. Bounds
    are clipped to the dtype (maxval up to 2**31 for int32); for int64 the span must stay below
    2**63.
    """
    d = dtypes.canonical(dtype)
    if not dtypes.is_int(d):
        raise DTypeError(f"random.randint: dtype must be int32 or int64, got {d}{user_site()}")
    shape = _shape("randint", shape)
    i64 = dtypes.int64
    lo, hi = _bound("randint", minval, shape, i64), _bound("randint", maxval, shape, i64)
    if d == dtypes.int32:
        info = np.iinfo(np.int32)
        floor, ceiling = full(shape, int(info.min), i64), full(shape, int(info.max) + 1, i64)
        lo = lax.binary(nn.MinimumOp, lax.binary(nn.MaximumOp, lo, floor), ceiling)
        hi = lax.binary(nn.MinimumOp, lax.binary(nn.MaximumOp, hi, floor), ceiling)
    span = lax.binary(nn.SubOp, hi, lo)
    one = full(shape, 1, i64)
    span = lax.select(lax.compare("gt", span, full(shape, 0, i64)), span, one)
    r = lax.binary(nn.ShiftRightLogicalOp, _bits64("randint", key, shape), one)  # in [0, 2**63)
    offset = lax.binary(nn.SubOp, r, lax.binary(nn.MulOp, lax.binary(nn.DivOp, r, span), span))
    return lax.convert(lax.binary(nn.AddOp, lo, offset), d)


# ---------------------------------------------------------------------------------------------
# permutation
# ---------------------------------------------------------------------------------------------


def _population(op_name: str, what: str, x: Any, axis: int) -> tuple[int, Tracer | None, int]:
    """(n, array, axis): an int `x` is arange(x) (no array); an array's slices along `axis`."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if x < 0:
            raise ShapeError(f"random.{op_name}: {what} must be a non-negative int or an array, got {x}{user_site()}")
        return int(x), None, axis
    array = lift(x)
    if array.ndim == 0:
        raise ShapeError(f"random.{op_name}: {what} must be an int or an array of rank >= 1, got a scalar{user_site()}")
    if not -array.ndim <= axis < array.ndim:
        raise ShapeError(
            f"random.{op_name}: axis {axis} is out of range for an array of shape {array.shape}{user_site()}"
        )
    axis %= array.ndim
    return array.shape[axis], array, axis


@api
def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Tracer:
    """A uniformly random permutation: of `arange(x)` (int32) when `x` is an int, else of `x`'s
    slices along `axis` (the same reordering for all of them).

    Each position gets 64 random bits (`bits(key, (n,), int64)`) and the positions are sorted
    by them, ties broken by position: a tie among n keys has probability below n**2 / 2**65
    (3e-8 for a million), the only departure from uniform. The sort is a bitonic network over
    n rounded up to a power of two (padding keys sort last), O(n log^2 n) compare-exchanges in
    (log2 n)(log2 n + 1)/2 vector stages. Same distribution as jax.random.permutation,
    different numbers. `independent=True` (each slice permuted separately) is not supported.
    """
    if independent:
        raise NotImplementedError(f"random.permutation: independent=True is not supported{user_site()}")
    n, array, axis = _population("permutation", "x", x, axis)
    if n <= 1:
        order = lax.iota((n,), 0, dtypes.int32)
    else:
        size = 1 << (n - 1).bit_length()
        keys = _bits64("permutation", key, (n,))
        if size > n:
            padding = full((size - n,), int(np.iinfo(np.int64).max), dtypes.int64)
            keys = lax.concatenate([keys, padding], 0)
        order = sort_order(keys)  # the bitonic network ig.sort uses (irgrad/tracing/sorting.py)
        if size > n:
            order = lax.slice(order, [0], [n], [1])
    return order if array is None else lax.gather(array, order, axis)


# ---------------------------------------------------------------------------------------------
# categorical, choice
# ---------------------------------------------------------------------------------------------


@api
def categorical(key: Any, logits: Any, axis: int = -1, shape: int | Shape | None = None) -> Tracer:
    """Indices drawn from softmax(logits) along `axis` (int32), by the Gumbel-max trick:
    `argmax(logits - log(-log(u)))` with u uniform in (0, 1) (a uniform of `_unit` moved by
    half a step off 0, so the noise is finite; computed in float32, float64 for float64
    logits). `shape` defaults to logits' shape without `axis`; a given shape must end with
    it (leading dimensions draw independent samples), as in jax.random.categorical."""
    from irgrad.numpy.numerics import argmax

    t = lift(logits)
    if t.ndim == 0:
        raise ShapeError(f"random.categorical: logits must have rank >= 1, got a scalar{user_site()}")
    if not -t.ndim <= axis < t.ndim:
        raise ShapeError(f"random.categorical: axis {axis} is out of range for logits of shape {t.shape}{user_site()}")
    axis %= t.ndim
    batch = tuple(d for i, d in enumerate(t.shape) if i != axis)
    out = batch if shape is None else _shape("categorical", shape)
    if out[len(out) - len(batch) :] != batch:
        raise ShapeError(
            f"random.categorical: shape {out} must end with the logits' batch shape {batch}{user_site()}"
        )
    lead = out[: len(out) - len(batch)]
    c = dtypes.float64 if t.dtype == dtypes.float64 else dtypes.float32
    noise_shape = (*lead, *t.shape)
    half_step = 2.0 ** -(_PRECISION[c] + 1)
    u = lax.binary(nn.AddOp, _unit("categorical", key, noise_shape, c), full(noise_shape, half_step, c))
    gumbel = lax.unary(nn.NegOp, lax.unary(nn.LogOp, lax.unary(nn.NegOp, lax.unary(nn.LogOp, u))))
    scores = lax.binary(nn.AddOp, broadcast_to(lax.convert(t, c), noise_shape), gumbel)
    return argmax(scores, axis=len(lead) + axis)


@api
def choice(
    key: Any, a: Any, shape: int | Shape = (), replace: bool = True, p: Any = None, axis: int = 0
) -> Tracer:
    """A random sample of `arange(a)` (an int `a`) or of `a`'s slices along `axis`, as
    jax.random.choice: uniform with replacement (`randint`), uniform without (the first
    entries of `permutation`), or with probabilities `p` and replacement (`categorical` of
    log p). Weighted sampling without replacement is not supported."""
    shape = _shape("choice", shape)
    count = math.prod(shape)
    n, population, axis = _population("choice", "a", a, axis)
    if n <= 0 and count > 0:
        raise ShapeError(f"random.choice: cannot take {count} samples from an empty population{user_site()}")
    if p is not None:
        if not replace:
            raise NotImplementedError(
                f"random.choice: weighted sampling without replacement (p with replace=False) is not supported{user_site()}"
            )
        weights = lift(p)
        if weights.shape != (n,):
            raise ShapeError(f"random.choice: p must have shape ({n},), got {weights.shape}{user_site()}")
        index = categorical(key, lax.unary(nn.LogOp, weights), shape=shape)
    elif replace:
        index = randint(key, shape, 0, n)
    else:
        if count > n:
            raise ShapeError(
                f"random.choice: cannot take {count} samples without replacement from {n}{user_site()}"
            )
        index = lax.reshape(lax.slice(permutation(key, n), [0], [count], [1]), shape)
    return index if population is None else lax.gather(population, index, axis)

