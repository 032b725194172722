"""`MaxPool2d`: max pooling over NCHW inputs (`ig.max_pool2d`); no parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import irgrad as ig
from irgrad.layers.base import Layer, Params


class MaxPool2d(Layer):
    """`ig.max_pool2d(x, kernel_size, stride, padding)`; stride defaults to the kernel size."""

    def __init__(
        self,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[Any] = 0,
    ):
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        return ig.max_pool2d(x, self.kernel_size, self.stride, self.padding)
