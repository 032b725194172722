"""`Linear`: the affine map `x @ w + b`, with `w` of shape (in_features, out_features)."""

from __future__ import annotations

from typing import Any

import irgrad as ig
from irgrad.tracing import dtypes
from irgrad.layers.base import Key, Layer, Params, he_normal, host_rng, zeros


class Linear(Layer):
    """`y = x @ w + b` over the last axis of `x`.

    Params: `{"w": (in_features, out_features), "b": (out_features,)}` (no `"b"` when
    `bias=False`). Init: `w ~ N(0, 2 / in_features)` (He normal), `b = 0`.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        self.bias = bool(bias)

    def init(self, key: Key, dtype: Any = dtypes.float32) -> Params:
        rng = host_rng(key)
        shape = (self.in_features, self.out_features)
        params = {"w": he_normal(rng, shape, self.in_features, dtype)}
        if self.bias:
            params["b"] = zeros((self.out_features,), dtype)
        return params

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        y = ig.matmul(x, params["w"])
        return ig.add(y, params["b"]) if self.bias else y
