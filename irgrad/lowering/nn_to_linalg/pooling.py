"""`nn.max_pool2d` to a windowed reduction.

The input is padded with -inf where its padding is not zero (a `linalg.fill` and a
`tensor.insert_slice`), then a generic with six loops `(n, c, oh, ow, kh, kw)`, the last two
reductions, reads it at `(n, c, oh * stride_h + kh, ow * stride_w + kw)` and combines with
`arith.maximumf` (NaN propagates) into a `linalg.fill` of -inf. A `tensor.empty` of the kernel's
shape is a second input that only bounds the window loops (as `linalg.pooling_*` ops do); its
elements are never read.
"""

from __future__ import annotations

import math
from typing import ClassVar, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import RewritePattern

from irgrad.dialects import nn
from irgrad.lowering.nn_to_linalg.common import (
    PARALLEL,
    REDUCTION,
    Emitter,
    LoweringPattern,
    affine_map,
    constant,
    dims,
    element_of,
    empty,
    filled_constant,
    generic,
)
from irgrad.lowering.nn_to_linalg.data_movement import pad_with


class MaxPool2DPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.MaxPool2DOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.MaxPool2DOp, op)
        t = element_of(op.input)
        kernel = cast(tuple[int, ...], op.kernel.get_values())
        stride = cast(tuple[int, ...], op.stride.get_values())
        top, bottom, left, right = cast(tuple[int, ...], op.padding.get_values())
        x = op.input
        if any((top, bottom, left, right)):
            x = pad_with(b, x, constant(b, -math.inf, t), [0, 0, top, left], [0, 0, bottom, right])
        window = empty(b, kernel, t)
        shape = cast(TensorType, op.result.type).get_shape()
        init = filled_constant(b, -math.inf, shape, t)
        n, c, oh, ow, kh, kw = dims(range(6))
        (result,) = generic(
            b,
            [x, window],
            [affine_map(6, [n, c, oh * stride[0] + kh, ow * stride[1] + kw]), affine_map(6, [kh, kw])],
            [init],
            [affine_map(6, [n, c, oh, ow])],
            [PARALLEL] * 4 + [REDUCTION] * 2,
            lambda e, v, _window, acc: [e(arith.MaximumfOp(acc, v))],
        )
        return result


def populate_pooling_patterns(patterns: list[RewritePattern]) -> None:
    patterns.append(MaxPool2DPattern())
