"""The `Layer` contract and the host-side randomness that initializes parameters.

A layer is an object holding only hyperparameters. Its parameters live outside it, in a pytree
(nested dicts of arrays), so a whole training step is a pure function of (params, batch) that
`ig.trace` turns into one program:

    layer = Linear(3, 4)
    params = layer.init(0)          # {"b": (4,), "w": (3, 4)}
    y = layer.apply(params, x)      # eager on numpy arrays, staged inside ig.trace

Keys: `init(key)` takes an integer seed, an `ig.random` key (an int32 array of shape (2,)) or a
`numpy.random.Generator`, and draws on the host with numpy (seeded from the key's bits),
returning numpy arrays. Containers give each child its own stream (`Generator.spawn`), so a
child's initial values do not depend on its siblings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes

Params = dict[str, Any]
Key = int | np.random.Generator


def host_rng(key: Key) -> np.random.Generator:
    """The numpy generator standing for `key` (an integer seed or a Generator, used as is)."""
    if isinstance(key, np.random.Generator):
        return key
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return np.random.default_rng(int(key))
    if isinstance(key, np.ndarray) and key.shape == (2,) and key.dtype.kind in "iu":
        # An ig.random key: its two 32-bit words seed the host generator.
        return np.random.default_rng([int(w) & 0xFFFFFFFF for w in key])
    raise TypeError(
        "init: key must be an integer seed, an ig.random key or a numpy.random.Generator, "
        f"got {type(key).__name__}"
    )


def split(key: Key, n: int) -> list[np.random.Generator]:
    """`n` independent generators derived from `key`, one per child layer."""
    return host_rng(key).spawn(n)


def normal(rng: np.random.Generator, shape: Sequence[int], std: float, dtype: Any) -> np.ndarray:
    """N(0, std**2) samples, drawn in float64 so every dtype rounds the same draw."""
    return (rng.standard_normal(tuple(shape)) * std).astype(dtypes.canonical(dtype))


def zeros(shape: Sequence[int], dtype: Any) -> np.ndarray:
    return np.zeros(tuple(shape), dtypes.canonical(dtype))


def ones(shape: Sequence[int], dtype: Any) -> np.ndarray:
    return np.ones(tuple(shape), dtypes.canonical(dtype))


def he_normal(rng: np.random.Generator, shape: Sequence[int], fan_in: int, dtype: Any) -> np.ndarray:
    """He initialization: N(0, 2 / fan_in), suited to ReLU networks."""
    return normal(rng, shape, math.sqrt(2.0 / fan_in), dtype)


class Layer:
    """Base class: `init(key, dtype)` builds the parameter pytree, `apply(params, x)` runs.

    `apply` is written with `ig.*` functions only, so it stages ops inside a trace and runs at
    once on numpy arrays outside one. Layers without parameters return `{}` from `init`.
    """

    def init(self, key: Key, dtype: Any = dtypes.float32) -> Params:
        return {}

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.apply")

    def __call__(self, params: Params, x: Any, **kwargs: Any) -> Any:
        return self.apply(params, x, **kwargs)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"
