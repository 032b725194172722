"""`Flatten`: merges the trailing axes into one (no parameters)."""

from __future__ import annotations

from typing import Any

import irgrad as ig
from irgrad.layers.base import Layer, Params


class Flatten(Layer):
    """Reshapes (d0, ..., d[start_axis-1], ...) to (d0, ..., d[start_axis-1], -1).

    The default `start_axis=1` keeps the batch axis: (N, C, H, W) -> (N, C*H*W).
    """

    def __init__(self, start_axis: int = 1):
        self.start_axis = int(start_axis)

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        shape = ig.ShapeDtype.of(x).shape
        return ig.reshape(x, (*shape[: self.start_axis], -1))
