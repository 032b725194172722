"""Activation functions beyond relu, tanh and sigmoid, as jax.nn defines them: gelu, silu,
softplus, log_sigmoid, leaky_relu, elu, selu, relu6, and expm1 (which elu needs).

Each is a composite of `nn` ops, so autodiff, batching and every backend cover it without rules of
its own; each is written so that it neither overflows nor loses precision for large |x|, and its
derivative at a kink is decided here (docs/autodiff.md, Contracts):
- leaky_relu'(0) = 1 and elu'(0) = alpha (the x < 0 side's formula is not taken at 0: `x >= 0`
  picks x, as in JAX);
- relu6'(0) = relu6'(6) = 0 (JAX's choice: only the open interval passes a gradient);
- softplus'(0) = 1/2 exactly (it is `maximum(x, 0) + log1p(exp(-|x|))`, and a maximum tie
  splits its cotangent), so it equals sigmoid everywhere.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irgrad.frontend import numpy_api as np_api
from irgrad.frontend.api_support import api, lift, require_float
from irgrad.frontend.tracing import Tracer


def _float(name: str, x: Any) -> Tracer:
    return require_float(name, lift(x))


@api
def expm1(x: Any) -> Tracer:
    """exp(x) - 1, accurate near 0: 2t / (1 - t) with t = tanh(x/2) for |x| < 1, exp(x) - 1 beyond
    (where the subtraction loses nothing). The untaken branch sees a clamped argument."""
    t = _float("expm1", x)
    small = np_api.abs(t) < 1.0
    half = np_api.tanh(np_api.minimum(np_api.maximum(t, -1.0), 1.0) * 0.5)
    near_zero = 2.0 * half / (1.0 - half)
    return np_api.where(small, near_zero, np_api.exp(t) - 1.0)


@api
def softplus(x: Any) -> Tracer:
    """log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): no overflow, softplus'(0) = 1/2."""
    t = _float("softplus", x)
    return np_api.maximum(t, 0.0) + np_api.log1p(np_api.exp(-np_api.abs(t)))


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
    return np_api.where(inside, t, np_api.where(t >= 6, np.asarray(6, t.dtype), np.asarray(0, t.dtype)))
