"""Activation functions beyond relu, tanh and sigmoid, as jax.nn defines them: gelu, silu,
softplus, log_sigmoid, leaky_relu, elu, celu, selu, relu6, soft_sign, hard_tanh, hard_sigmoid,
hard_silu, mish, glu, standardize, dot_product_attention.

Each is a composite of `nn` ops, so autodiff, batching and every backend cover it without rules of
its own; each is written so that it neither overflows nor loses precision for large |x|, and its
derivative at a kink is decided here (docs/autodiff.md, Contracts):
- leaky_relu'(0) = 1 and elu'(0) = alpha (the x < 0 side's formula is not taken at 0: `x >= 0`
  picks x, as in JAX);
- relu6'(0) = relu6'(6) = 0 (JAX's choice: only the open interval passes a gradient);
- softplus'(0) = 1/2 exactly (it is `maximum(x, 0) + log1p(exp(-|x|))`, and a maximum tie
  splits its cotangent), so it equals sigmoid everywhere;
- celu'(0) = 1 (both sides' limit); hard_tanh'(+-1) = 1 (JAX's `where(x > 1, 1, where(x < -1,
  -1, x))` keeps x at the bounds); hard_sigmoid'(-3) = hard_sigmoid'(3) = 0 (it is
  relu6(x + 3) / 6).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irgrad.numpy import basic as np_api
from irgrad.numpy.basic import expm1
from irgrad.numpy.support import api, broadcast_to, lift, require_float
from irgrad.tracing.tracer import Tracer


def _float(name: str, x: Any) -> Tracer:
    return require_float(name, lift(x))


@api
def softplus(x: Any) -> Tracer:
    """log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): no overflow. |x| and max are selects
    that take the x <= 0 side at 0, where the formula is log1p(exp(x)) itself, so every
    derivative there is exact (softplus'(0) = 1/2, softplus''(0) = 1/4; an abs would give
    sign(0)**2 = 0 for the second)."""
    t = _float("softplus", x)
    positive = t > 0
    minus_abs = np_api.where(positive, -t, t)
    return np_api.where(positive, t, 0.0) + np_api.log1p(np_api.exp(minus_abs))


@api
def log_sigmoid(x: Any) -> Tracer:
    """log(sigmoid(x)) = -softplus(-x), finite for every finite x."""
    return -softplus(-_float("log_sigmoid", x))


@api
def silu(x: Any) -> Tracer:
    """x * sigmoid(x) (also called swish)."""
    t = _float("silu", x)
    return t * np_api.sigmoid(t)


swish = silu


@api
def gelu(x: Any, approximate: bool = True) -> Tracer:
    """x * Phi(x). approximate=True (JAX's default): the tanh form
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). approximate=False: the exact form with erf."""
    t = _float("gelu", x)
    if not approximate:
        return 0.5 * t * (1.0 + np_api.erf(t * (1.0 / math.sqrt(2.0))))
    inner = math.sqrt(2.0 / math.pi) * (t + 0.044715 * (t * t * t))
    return 0.5 * t * (1.0 + np_api.tanh(inner))


@api
def leaky_relu(x: Any, negative_slope: float = 0.01) -> Tracer:
    """x for x >= 0, negative_slope * x below; the derivative at 0 is 1."""
    t = _float("leaky_relu", x)
    return np_api.where(t >= 0, t, negative_slope * t)


@api
def elu(x: Any, alpha: float = 1.0) -> Tracer:
    """x for x > 0, alpha * expm1(x) otherwise. expm1 sees where(x > 0, 0, x) (a select, not a
    minimum, whose tie at 0 would halve the derivative there), so a large x makes no inf."""
    t = _float("elu", x)
    positive = t > 0
    return np_api.where(positive, t, alpha * expm1(np_api.where(positive, 0.0, t)))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@api
def selu(x: Any) -> Tracer:
    """scale * elu(x, alpha) with the self-normalizing constants of Klambauer et al. (2017)."""
    return _SELU_SCALE * elu(_float("selu", x), _SELU_ALPHA)


@api
def relu6(x: Any) -> Tracer:
    """min(max(x, 0), 6); the gradient is 1 on (0, 6) only, 0 at both kinks (as JAX)."""
    t = _float("relu6", x)
    inside = (t > 0) & (t < 6)
    clipped = np_api.where(t >= 6, np.asarray(6, t.dtype), np_api.where(t <= 0, np.asarray(0, t.dtype), t))
    return np_api.where(inside, t, clipped)  # NaN fails every compare: it stays NaN, as in JAX


@api
def celu(x: Any, alpha: float = 1.0) -> Tracer:
    """x for x > 0, alpha * expm1(x / alpha) otherwise (continuously differentiable, slope 1
    at 0 from both sides); expm1 sees 0 where x > 0, so a large x makes no inf."""
    t = _float("celu", x)
    positive = t > 0
    return np_api.where(positive, t, alpha * expm1(np_api.where(positive, 0.0, t) / alpha))


@api
def soft_sign(x: Any) -> Tracer:
    """x / (|x| + 1)."""
    t = _float("soft_sign", x)
    return t / (np_api.abs(t) + 1.0)


@api
def hard_tanh(x: Any) -> Tracer:
    """x clipped to [-1, 1]; the gradient is 1 on the closed interval (JAX's where form)."""
    t = _float("hard_tanh", x)
    one = np.asarray(1, t.dtype)
    return np_api.where(t > 1, one, np_api.where(t < -1, -one, t))


@api
def hard_sigmoid(x: Any) -> Tracer:
    """relu6(x + 3) / 6: a piecewise-linear sigmoid."""
    return relu6(_float("hard_sigmoid", x) + 3.0) / 6.0


@api
def hard_silu(x: Any) -> Tracer:
    """x * hard_sigmoid(x) (also called hard_swish)."""
    t = _float("hard_silu", x)
    return t * hard_sigmoid(t)


hard_swish = hard_silu


@api
def mish(x: Any) -> Tracer:
    """x * tanh(softplus(x)) (Misra, 2019)."""
    t = _float("mish", x)
    return t * np_api.tanh(softplus(t))


@api
def glu(x: Any, axis: int = -1) -> Tracer:
    """Gated linear unit: x split in two halves a, b along `axis`, a * sigmoid(b)."""
    from irgrad.tracing.errors import ShapeError, user_site
    from irgrad.numpy.arrays import split

    t = lift(x)
    n = t.shape[axis] if t.ndim else 0
    if t.ndim == 0 or n % 2:
        raise ShapeError(f"glu: axis {axis} must have an even size, got shape {t.shape}{user_site()}")
    a, b = split(t, 2, axis=axis)
    return a * np_api.sigmoid(b)


@api
def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: float = 1e-5, where: Any = None) -> Tracer:
    """(x - mean) / sqrt(variance + epsilon) over `axis`, the statistics computed when not
    given (the variance as mean(x^2) - mean(x)^2, as jax.nn; `where` masks what they see)."""
    t = _float("standardize", x)
    if mean is None:
        mean = _masked_mean(t, axis, where)
    if variance is None:
        variance = _masked_mean(t * t, axis, where) - mean * mean
    return (t - mean) * np_api.rsqrt(variance + epsilon)


def _masked_mean(t: Tracer, axis: Any, where: Any) -> Tracer:
    if where is None:
        return np_api.mean(t, axis=axis, keepdims=True)
    w = broadcast_to(lift(where), t.shape)
    total = np_api.sum(np_api.where(w, t, 0.0), axis=axis, keepdims=True)
    return total / np_api.sum(np_api.where(w, 1.0, 0.0).astype(t.dtype), axis=axis, keepdims=True)


@api
def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None, *,
                          scale: float | None = None, is_causal: bool = False) -> Tracer:
    """softmax(q k^T * scale + bias, masked) v, as jax.nn.dot_product_attention.

    Shapes (batch, time, heads, head_dim) for the query and (batch, source, kv_heads, head_dim)
    for key and value; kv_heads may divide heads (grouped-query attention: each key/value head
    serves heads // kv_heads query heads). `bias` and the boolean `mask` (True keeps a score)
    broadcast against (batch, heads, time, source); `is_causal` keeps source <= time. `scale`
    defaults to 1/sqrt(head_dim). Masked scores get the dtype's lowest finite value, so a
    fully masked row averages the values uniformly instead of giving NaN. Each product is one
    batched `nn.matmul` (ig.einsum)."""
    from irgrad.numpy.einsum import einsum
    from irgrad.tracing.errors import ShapeError, user_site
    from irgrad.nn.functions import softmax

    q, k, v = lift(query), lift(key), lift(value)
    for name, t in (("query", q), ("key", k), ("value", v)):
        if t.ndim != 4:
            raise ShapeError(f"dot_product_attention: {name} must be (batch, time, heads, head_dim), "
                             f"got shape {t.shape}{user_site()}")
    b, tq, n, h = q.shape
    if k.shape != v.shape or k.shape[0] != b or k.shape[3] != h or n % k.shape[2]:
        raise ShapeError(f"dot_product_attention: query {q.shape}, key {k.shape} and value {v.shape} "
                         f"do not fit (key and value equal, batch and head_dim as the query's, "
                         f"kv_heads dividing heads){user_site()}")
    groups = n // k.shape[2]
    if groups > 1:
        k = _repeat_axis(k, groups, 2)
        v = _repeat_axis(v, groups, 2)
    s = k.shape[1]
    logits = einsum("bqhd,bkhd->bhqk", q, k) * (1.0 / math.sqrt(h) if scale is None else scale)
    if bias is not None:
        logits = logits + lift(bias, logits.dtype)
    keep = None
    if mask is not None:
        keep = lift(mask)
        if keep.dtype != np.bool_:
            raise ShapeError(f"dot_product_attention: mask must be boolean, got {keep.dtype}{user_site()}")
    if is_causal:
        causal = np.tril(np.ones((tq, s), dtype=bool))
        keep = lift(causal) if keep is None else keep & causal
    if keep is not None:
        lowest = np.asarray(np.finfo(logits.dtype).min, logits.dtype)
        logits = np_api.where(keep, logits, lowest)
    weights = softmax(logits, axis=-1)
    return einsum("bhqk,bkhd->bqhd", weights, v)


def _repeat_axis(t: Tracer, times: int, axis: int) -> Tracer:
    from irgrad.numpy.arrays import repeat

    return repeat(t, times, axis=axis)
