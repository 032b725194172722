"""Neural-network layers as pure functions over parameter pytrees.

A layer holds hyperparameters; `params = layer.init(key)` builds its parameters (nested dicts
of numpy arrays) and `layer.apply(params, x)` runs it, eagerly on numpy arrays or staged inside
`ig.trace`. See `irgrad.layers.base` for the contract and docs/api/layers.md for examples.
"""

from irgrad.layers.activation import GELU, ReLU, SiLU, Tanh
from irgrad.layers.attention import MultiHeadAttention
from irgrad.layers.base import Layer, Params
from irgrad.layers.container import MLP, Sequential
from irgrad.layers.conv import Conv2d
from irgrad.layers.dropout import Dropout
from irgrad.layers.embedding import Embedding
from irgrad.layers.flatten import Flatten
from irgrad.layers.linear import Linear
from irgrad.layers.normalization import LayerNorm
from irgrad.layers.pooling import MaxPool2d

__all__ = [
    "Conv2d",
    "Dropout",
    "Embedding",
    "Flatten",
    "GELU",
    "Layer",
    "LayerNorm",
    "Linear",
    "MLP",
    "MaxPool2d",
    "MultiHeadAttention",
    "Params",
    "ReLU",
    "Sequential",
    "SiLU",
    "Tanh",
]
