"""`nn` ops that create tensors: constant, full, iota.

- `nn.constant` becomes `arith.constant` with the same dense attribute, except a splat of two
  or more elements (all elements the same bits), which becomes what `nn.full` becomes: a
  `dense<0.5> : tensor<16777216xf32>` read as an array would be a 64 MiB global in the
  compiled module, read back from memory at every use;
- `nn.full` becomes `linalg.fill` of a `tensor.empty` with a scalar `arith.constant`;
- `tensor.splat` becomes `linalg.fill` of a `tensor.empty` with its scalar;
- `nn.iota` becomes a generic without inputs whose body reads `linalg.index` of the counted
  dimension and casts it (`index_cast` to the integer type, or to i64 then `sitofp`).
"""

from __future__ import annotations

import math
from typing import ClassVar, cast

import numpy as np

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IndexType, IntegerType, TensorType, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from irgrad.dialects import nn
from irgrad.dialects.nn import is_float
from irgrad.lowering.nn_to_linalg.common import (
    PARALLEL,
    Emitter,
    LoweringPattern,
    constant,
    empty,
    filled,
    generic,
    identity_map,
)


def splat_value(attr: DenseIntOrFPElementsAttr) -> float | int | None:
    """The one value of a dense attribute of two or more elements that all have the same
    bits (stored once or repeated), else None."""
    count = math.prod(attr.get_shape())
    stored = attr.data.data
    if count < 2 or not stored or len(stored) % count and len(stored) > count:
        return None
    width = len(stored) // count if len(stored) >= count else len(stored)
    rows = np.frombuffer(stored, np.uint8).reshape(-1, width)
    if not (rows == rows[0]).all():
        return None
    return next(iter(attr.iter_values()))  # type: ignore[return-value]


class ConstantPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.ConstantOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        value = cast(nn.ConstantOp, op).value
        splat = splat_value(value) if isinstance(value, DenseIntOrFPElementsAttr) else None
        if splat is None or isinstance(splat, tuple):  # complex element types stay arrays
            return b(arith.ConstantOp(value))
        t = cast(TensorType, op.results[0].type)
        return filled(b, constant(b, splat, t.get_element_type()), t.get_shape())


class FullPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.FullOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.FullOp, op)
        value = b(arith.ConstantOp(op.value))
        return filled(b, value, cast(TensorType, op.result.type).get_shape())


class IotaPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.IotaOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.IotaOp, op)
        t = cast(TensorType, op.result.type)
        shape, element = t.get_shape(), t.get_element_type()
        dim = op.dimension.value.data

        def body(e: Emitter, _out: SSAValue) -> list[SSAValue]:
            i = e(linalg.IndexOp(dim))
            if is_float(element):
                return [e(arith.SIToFPOp(e(arith.IndexCastOp(i, i64)), element))]
            return [e(arith.IndexCastOp(i, cast(IntegerType, element)))]

        rank = len(shape)
        (result,) = generic(
            b, [], [], [empty(b, shape, element)], [identity_map(rank)], [PARALLEL] * rank, body
        )
        return result


class SplatPattern(RewritePattern):
    """`tensor.splat` (the autodiff pass emits it for a loop's tape of index counters; valid
    input IR too) becomes `linalg.fill` of a `tensor.empty`, as `nn.full` does."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, tensor.SplatOp):
            return
        b = Emitter(op.location)
        t = cast(TensorType, op.result.type)
        shape = t.get_shape()
        if isinstance(t.get_element_type(), IndexType):
            # xDSL's linalg.fill takes no index element: a generic yielding the scalar.
            rank = len(shape)
            init = empty(b, shape, t.get_element_type())
            (value,) = generic(
                b, [], [], [init], [identity_map(rank)], [PARALLEL] * rank, lambda e, _: [op.input]
            )
        else:
            value = filled(b, op.input, shape)
        rewriter.insert(b.ops, InsertPoint.before(op))
        rewriter.replace(op, [], [value])


def populate_creation_patterns(patterns: list[RewritePattern]) -> None:
    patterns.extend([ConstantPattern(), FullPattern(), IotaPattern(), SplatPattern()])
