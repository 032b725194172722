"""Elementwise activations as layers (no parameters): `ReLU`, `Tanh`, `GELU`, `SiLU`."""

from __future__ import annotations

from typing import Any

import irgrad as ig
from irgrad.layers.base import Layer, Params


class ReLU(Layer):
    """`max(x, 0)` elementwise (`nn.relu`)."""

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        return ig.relu(x)


class Tanh(Layer):
    """`tanh(x)` elementwise (`nn.tanh`)."""

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        return ig.tanh(x)


class GELU(Layer):
    """`x * Phi(x)` elementwise (`ig.gelu`; the tanh form unless `approximate=False`)."""

    def __init__(self, approximate: bool = True):
        self.approximate = approximate

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        return ig.gelu(x, approximate=self.approximate)


class SiLU(Layer):
    """`x * sigmoid(x)` elementwise (`ig.silu`)."""

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        return ig.silu(x)
