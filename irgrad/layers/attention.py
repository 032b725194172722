"""`MultiHeadAttention`: scaled dot-product attention over several heads (Vaswani et al., 2017).

Written with `ig.einsum`, so the IR shows each product as one batched `nn.matmul` between
reshapes, and the gradient is the autodiff pass's, as for every other layer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import irgrad as ig
from irgrad.tracing import dtypes
from irgrad.tracing.errors import user_site
from irgrad.layers.base import Key, Layer, Params, host_rng, normal, zeros


class MultiHeadAttention(Layer):
    """Self-attention of `x` (batch, time, dim) with `num_heads` heads of `dim // num_heads`.

    Params: `wq`, `wk`, `wv`, `wo` (dim, dim) and `bq`, `bk`, `bv`, `bo` (dim,); weights
    `~ N(0, 1/dim)`, biases 0. `causal=True` lets position t attend to positions <= t only.
    `apply(params, x, mask=None)`: `mask` (broadcastable to (batch, heads, time, time), True where
    attention is allowed) is combined with the causal mask. Masked scores are the dtype's lowest
    finite value, not -inf, so a fully masked row gives a uniform average instead of NaN.
    """

    def __init__(self, dim: int, num_heads: int, causal: bool = False):
        if dim % num_heads:
            raise ValueError(f"MultiHeadAttention: dim {dim} is not a multiple of num_heads {num_heads}")
        self.dim, self.num_heads, self.causal = int(dim), int(num_heads), bool(causal)

    def init(self, key: Key, dtype: Any = dtypes.float32) -> Params:
        rng = host_rng(key)
        std = 1.0 / math.sqrt(self.dim)
        params: Params = {}
        for name in ("q", "k", "v", "o"):
            params[f"w{name}"] = normal(rng, (self.dim, self.dim), std, dtype)
            params[f"b{name}"] = zeros((self.dim,), dtype)
        return params

    def apply(self, params: Params, x: Any, mask: Any = None, **kwargs: Any) -> Any:
        shape = tuple(ig.ShapeDtype.of(x).shape)
        if len(shape) != 3 or shape[-1] != self.dim:
            raise ig.ShapeError(
                f"MultiHeadAttention(dim={self.dim}): input must be (batch, time, {self.dim}), got {shape}{user_site()}"
            )
        batch, time, _ = shape
        heads, head_dim = self.num_heads, self.dim // self.num_heads

        def project(name: str) -> Any:
            y = ig.add(ig.matmul(x, params[f"w{name}"]), params[f"b{name}"])
            return ig.reshape(y, (batch, time, heads, head_dim))

        q, k, v = project("q"), project("k"), project("v")
        scores = ig.einsum("bqhd,bkhd->bhqk", q, k) * (1.0 / math.sqrt(head_dim))
        allowed = None
        if self.causal:
            allowed = np.tril(np.ones((time, time), np.bool_))
        if mask is not None:
            allowed = mask if allowed is None else ig.bitwise_and(ig.astype(mask, ig.bool_), allowed)
        if allowed is not None:
            lowest = float(np.finfo(ig.ShapeDtype.of(scores).dtype).min)
            scores = ig.where(allowed, scores, lowest)
        weights = ig.softmax(scores, axis=-1)
        out = ig.einsum("bhqk,bkhd->bqhd", weights, v)
        out = ig.reshape(out, (batch, time, self.dim))
        return ig.add(ig.matmul(out, params["wo"]), params["bo"])
