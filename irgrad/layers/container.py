"""Layers made of layers: `Sequential` and `MLP`.

Children's parameters sit under their position as a string key, so the pytree reads like the
model (`params["0"]["w"]`) and traced parameters get names like `%params_0_w`. Pytrees visit
dict keys in sorted order, so with ten or more children the flat order is "0", "1", "10",
"2", ...; the names, not the order, are what stays stable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from irgrad.tracing import dtypes
from irgrad.layers.activation import ReLU
from irgrad.layers.base import Key, Layer, Params, split
from irgrad.layers.linear import Linear


class Sequential(Layer):
    """Applies its layers in order.

    Params: `{"0": params_of_layer_0, "1": ..., ...}`, one entry per layer, `{}` for layers
    without parameters (so keys are positions). Each child is initialized from its own stream
    split off `key`.

    Keyword arguments for particular layers (a Dropout's mask) go in `layer_kwargs`, keyed by
    position: `seq.apply(params, x, layer_kwargs={2: {"mask": keep}})`.
    """

    def __init__(self, layers: Sequence[Layer]):
        self.layers = list(layers)
        for i, layer in enumerate(self.layers):
            if not isinstance(layer, Layer):
                raise TypeError(f"Sequential: item {i} is a {type(layer).__name__}, not a Layer")

    def init(self, key: Key, dtype: Any = dtypes.float32) -> Params:
        keys = split(key, len(self.layers))
        return {str(i): layer.init(k, dtype) for i, (layer, k) in enumerate(zip(self.layers, keys))}

    def apply(
        self,
        params: Params,
        x: Any,
        layer_kwargs: Mapping[int | str, Mapping[str, Any]] | None = None,
        **kwargs: Any,
    ) -> Any:
        per_layer = {str(k): dict(v) for k, v in (layer_kwargs or {}).items()}
        unknown = set(per_layer) - {str(i) for i in range(len(self.layers))}
        if unknown:
            raise ValueError(f"Sequential: layer_kwargs names no layer at {sorted(unknown)}")
        for i, layer in enumerate(self.layers):
            x = layer.apply(params[str(i)], x, **per_layer.get(str(i), {}))
        return x

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, i: int) -> Layer:
        return self.layers[i]


class MLP(Layer):
    """A multilayer perceptron: `Linear` layers of the given sizes with `activation` between
    them (not after the last).

    `MLP([784, 256, 256, 10])` has three Linear layers. `activation` is a Layer class
    (instantiated without arguments) or a Layer instance.

    Params: `{"0": {"w", "b"}, "1": {"w", "b"}, ...}`, one entry per Linear layer.
    """

    def __init__(self, sizes: Sequence[int], activation: type[Layer] | Layer = ReLU, bias: bool = True):
        self.sizes = [int(s) for s in sizes]
        if len(self.sizes) < 2:
            raise ValueError(f"MLP: needs at least an input and an output size, got {self.sizes}")
        self.activation = activation() if isinstance(activation, type) else activation
        self.bias = bool(bias)

    @property
    def linears(self) -> list[Linear]:
        return [Linear(a, b, self.bias) for a, b in zip(self.sizes[:-1], self.sizes[1:])]

    def init(self, key: Key, dtype: Any = dtypes.float32) -> Params:
        linears = self.linears
        keys = split(key, len(linears))
        return {str(i): layer.init(k, dtype) for i, (layer, k) in enumerate(zip(linears, keys))}

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        linears = self.linears
        last = len(linears) - 1
        for i, layer in enumerate(linears):
            x = layer.apply(params[str(i)], x)
            if i != last:
                x = self.activation.apply({}, x)
        return x
