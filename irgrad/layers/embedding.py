"""`Embedding`: a lookup table from integer ids to vectors."""

from __future__ import annotations

from typing import Any

import irgrad as ig
from irgrad.tracing import dtypes
from irgrad.layers.base import Key, Layer, Params, host_rng, normal


class Embedding(Layer):
    """`w[ids]`: ids of any shape (integers) give (*ids.shape, dim).

    Params: `{"w": (num_embeddings, dim)}`, initialized N(0, 1). As in `ig.take`, negative ids
    count from the end and ids past the end are clamped to the last row (no run-time error).
    """

    def __init__(self, num_embeddings: int, dim: int):
        self.num_embeddings = int(num_embeddings)
        self.dim = int(dim)

    def init(self, key: Key, dtype: Any = dtypes.float32) -> Params:
        return {"w": normal(host_rng(key), (self.num_embeddings, self.dim), 1.0, dtype)}

    def apply(self, params: Params, ids: Any, **kwargs: Any) -> Any:
        return ig.take(params["w"], ids, axis=0)
