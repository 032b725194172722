"""Elementwise activations as layers (no parameters): `ReLU`, `Tanh`."""

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
