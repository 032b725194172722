"""Rules for max_pool2d: the cotangent of each window goes to its maximum; tied maxima share it equally.

Windows are taken apart with `nn.gather` on compile-time indices (im2col): the input, padded with -inf as
the op pads it, is flattened to [N, C, Hp*Wp] and gathered into patches [N, C, OH, OW, KH*KW]. The mask of
positions equal to the window's maximum, and its count, give each tied position `ct / count`;
`nn.scatter_add` with the same indices sums the contributions of overlapping windows back into place. This
is the same convention as reduce_max (one window is one reduce_max).

Batching (vmap) folds the examples into the images: [B, N, C, H, W] -> [B*N, C, H, W].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, TensorType
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched
from irgrad.autodiff.builder import RuleBuilder, element_type, shape_of
from irgrad.autodiff.registry import Cotangents, Tangent, batch_rule, jvp_rule, vjp_rule
from irgrad.dialects import nn


def _ints(values: DenseArrayBase) -> list[int]:
    return [int(v) for v in values.get_values()]


class _Windows:
    """The geometry of one max_pool2d and the gather indices of its windows."""

    def __init__(self, b: RuleBuilder, op: nn.MaxPool2DOp):
        self.n, self.c, self.h, self.w = shape_of(op.input)
        _, _, self.oh, self.ow = shape_of(op.result)
        self.kernel = _ints(op.kernel)
        self.stride = _ints(op.stride)
        self.padding = _ints(op.padding)
        top, bottom, left, right = self.padding
        self.hp, self.wp = self.h + top + bottom, self.w + left + right
        kh, kw = self.kernel
        i = np.arange(self.oh).reshape(-1, 1, 1, 1)
        j = np.arange(self.ow).reshape(1, -1, 1, 1)
        a = np.arange(kh).reshape(1, 1, -1, 1)
        c = np.arange(kw).reshape(1, 1, 1, -1)
        flat = (i * self.stride[0] + a) * self.wp + (j * self.stride[1] + c)
        self.indices = b.index_constant(flat.reshape(self.oh, self.ow, kh * kw))
        self.patch_shape = [self.n, self.c, self.oh, self.ow, kh * kw]

    def patches(self, b: RuleBuilder, value: SSAValue, fill: float) -> SSAValue:
        """[N, C, OH, OW, KH*KW]: each window of `value` padded with `fill`."""
        top, bottom, left, right = self.padding
        padded = b.pad(value, [0, 0, top, left], [0, 0, bottom, right], fill)
        flat = b.reshape(padded, [self.n, self.c, self.hp * self.wp])
        return b.gather(flat, self.indices, 2)

    def window_sum_back(self, b: RuleBuilder, contributions: SSAValue) -> SSAValue:
        """The adjoint of `patches`: sum each window position's contribution into the input's shape."""
        flat_type = TensorType(element_type(contributions), [self.n, self.c, self.hp * self.wp])
        flat = b.scatter_add(b.zeros(flat_type), self.indices, contributions, 2)
        padded = b.reshape(flat, [self.n, self.c, self.hp, self.wp])
        top, _, left, _ = self.padding
        return b.slice(padded, [0, 0, top, left], [self.n, self.c, top + self.h, left + self.w])


def _argmax_mask(b: RuleBuilder, op: nn.MaxPool2DOp, windows: _Windows) -> tuple[SSAValue, SSAValue]:
    """(mask of the window positions equal to the window's max, number of them per window)."""
    patches = windows.patches(b, op.input, -np.inf)
    maxima = b.broadcast(op.result, windows.patch_shape, [0, 1, 2, 3])
    mask = b.compare("eq", patches, maxima)
    count = b.reduce_sum(b.convert(mask, element_type(op.input)), [4])
    return mask, count


@vjp_rule(nn.MaxPool2DOp)
def _max_pool2d_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    pool = cast(nn.MaxPool2DOp, op)
    windows = _Windows(b, pool)
    mask, count = _argmax_mask(b, pool, windows)
    share = b.broadcast(b.div(ct, count), windows.patch_shape, [0, 1, 2, 3])  # type: ignore[arg-type]
    contributions = b.select(mask, share, None)
    assert contributions is not None
    return [windows.window_sum_back(b, contributions)]


@jvp_rule(nn.MaxPool2DOp)
def _max_pool2d_jvp(b: RuleBuilder, op: Operation, t: SSAValue) -> Tangent:
    pool = cast(nn.MaxPool2DOp, op)
    windows = _Windows(b, pool)
    mask, count = _argmax_mask(b, pool, windows)
    tied = b.select(mask, windows.patches(b, t, 0.0), None)
    assert tied is not None
    return b.div(b.reduce_sum(tied, [4]), count)


@batch_rule(nn.MaxPool2DOp)
def _max_pool2d_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """Windows never cross images: the examples' images are more images, [B*N, C, H, W]."""
    pool = cast(nn.MaxPool2DOp, op)
    n, c, h, w = shape_of(pool.input)
    _, _, oh, ow = shape_of(pool.result)
    images = b.reshape(args[0], [b.size * n, c, h, w])
    pooled = b.value(nn.MaxPool2DOp(images, _ints(pool.kernel), _ints(pool.stride), _ints(pool.padding)))
    return b.reshape(pooled, [b.size, n, c, oh, ow]), True
