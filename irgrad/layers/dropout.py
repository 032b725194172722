"""`Dropout`: zeroes entries where a caller-given keep-mask is false, scaling the rest up."""

from __future__ import annotations

from typing import Any

import irgrad as ig
from irgrad.layers.base import Layer, Params


class Dropout(Layer):
    """`where(mask, x / (1 - rate), 0)`; the identity when `mask` is None or `rate == 0`.

    The randomness is explicit: the caller passes `mask`, a keep-mask broadcastable to `x`
    (bool, or numbers where nonzero means keep), drawn with keep probability `1 - rate`. Today
    it is drawn on the host (`rng.random(shape) >= rate`); `ig.random.bernoulli(key, 1 - rate,
    shape)` will draw it inside the program. Evaluation simply passes no mask.
    """

    def __init__(self, rate: float):
        if not 0.0 <= rate < 1.0:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}")
        self.rate = float(rate)

    def apply(self, params: Params, x: Any, mask: Any = None, **kwargs: Any) -> Any:
        if mask is None or self.rate == 0.0:
            return x
        return ig.where(mask, ig.divide(x, 1.0 - self.rate), 0.0)
