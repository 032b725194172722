"""`Conv2d`: 2-D convolution over NCHW inputs with OIHW weights (`ig.conv2d`) plus a bias."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import irgrad as ig
from irgrad.tracing import dtypes
from irgrad.layers.base import Key, Layer, Params, he_normal, host_rng, zeros


def pair(v: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    a, b = v
    return (int(a), int(b))


class Conv2d(Layer):
    """`y = conv2d(x, w) + b[None, :, None, None]`, x of shape (N, in_channels, H, W).

    Params: `{"w": (out_channels, in_channels, kh, kw), "b": (out_channels,)}` (no `"b"` when
    `bias=False`). Init: `w ~ N(0, 2 / (in_channels * kh * kw))` (He normal), `b = 0`.
    `stride`, `padding` and `dilation` are as in `ig.conv2d` (an int or a pair; padding also
    ((top, bottom), (left, right))).
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[Any] = 0,
        dilation: int | Sequence[int] = 1,
        bias: bool = True,
    ):
        self.in_channels = int(in_channels)
        self.out_channels = int(out_channels)
        self.kernel_size = pair(kernel_size)
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.bias = bool(bias)

    def init(self, key: Key, dtype: Any = dtypes.float32) -> Params:
        rng = host_rng(key)
        kh, kw = self.kernel_size
        shape = (self.out_channels, self.in_channels, kh, kw)
        params = {"w": he_normal(rng, shape, self.in_channels * kh * kw, dtype)}
        if self.bias:
            params["b"] = zeros((self.out_channels,), dtype)
        return params

    def apply(self, params: Params, x: Any, **kwargs: Any) -> Any:
        y = ig.conv2d(x, params["w"], self.stride, self.padding, self.dilation)
        if not self.bias:
            return y
        return ig.add(y, ig.reshape(params["b"], (1, self.out_channels, 1, 1)))
