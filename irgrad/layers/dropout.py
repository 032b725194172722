"""`Dropout`: zeroes entries where a caller-given keep-mask is false, scaling the rest up."""

from __future__ import annotations

from typing import Any

import irgrad as ig
from irgrad.numpy.support import shape_of
from irgrad.layers.base import Layer, Params


class Dropout(Layer):
    """`where(mask, x / (1 - rate), 0)`; the identity when `mask` is None or `rate == 0`.

    The randomness is explicit: the caller passes either `key`, an `ig.random` key from which
    the keep-mask is drawn inside the program (`ig.random.bernoulli(key, 1 - rate, x.shape)`,
    so it works traced with the key as an argument), or `mask`, a keep-mask broadcastable to `x`
    (bool, or numbers where nonzero means keep). Evaluation simply passes neither.
    """

    def __init__(self, rate: float):
        if not 0.0 <= rate < 1.0:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}")
        self.rate = float(rate)

    def apply(self, params: Params, x: Any, mask: Any = None, key: Any = None, **kwargs: Any) -> Any:
        if key is not None and mask is None and self.rate > 0.0:
            mask = ig.random.bernoulli(key, 1.0 - self.rate, shape_of(x))
        if mask is None or self.rate == 0.0:
            return x
        return ig.where(mask, ig.divide(x, 1.0 - self.rate), 0.0)
