"""`LayerNorm`: normalization over the trailing axes with a learned scale and offset."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import irgrad as ig
from irgrad.tracing import dtypes
from irgrad.tracing.errors import user_site
from irgrad.layers.base import Key, Layer, Params, ones, zeros


class LayerNorm(Layer):
    """`(x - mean) / sqrt(var + eps) * scale + offset` over the last `len(normalized_shape)` axes.

    The variance is the biased one (divided by the count), as in PyTorch and the paper.
    Params: `{"scale": normalized_shape, "offset": normalized_shape}`, initialized to ones and
    zeros.
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(d) for d in normalized_shape)
        self.eps = float(eps)

    def init(self, key: Key, dtype: Any = dtypes.float32) -> Params:
        return {"scale": ones(self.normalized_shape, dtype), "offset": zeros(self.normalized_shape, dtype)}

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        shape = ig.ShapeDtype.of(x).shape
        n = len(self.normalized_shape)
        if tuple(shape[len(shape) - n :]) != self.normalized_shape:
            raise ig.ShapeError(
                f"LayerNorm{self.normalized_shape}: input of shape {tuple(shape)} does not end "
                f"with the normalized shape{user_site()}"
            )
        axes = tuple(range(len(shape) - n, len(shape)))
        centered = ig.subtract(x, ig.mean(x, axis=axes, keepdims=True))
        var = ig.mean(ig.square(centered), axis=axes, keepdims=True)
        normalized = ig.multiply(centered, ig.rsqrt(ig.add(var, self.eps)))
        return ig.add(ig.multiply(normalized, params["scale"]), params["offset"])
