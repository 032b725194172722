"""`nn` ops that create tensors: constant, full, iota.

- `nn.constant` becomes `arith.constant` with the same dense attribute;
- `nn.full` becomes `linalg.fill` of a `tensor.empty` with a scalar `arith.constant`;
- `tensor.splat` becomes `linalg.fill` of a `tensor.empty` with its scalar;
- `nn.iota` becomes a generic without inputs whose body reads `linalg.index` of the counted
  dimension and casts it (`index_cast` to the integer type, or to i64 then `sitofp`).
"""

from __future__ import annotations

from typing import ClassVar, cast

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, IntegerType, TensorType, i64
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
    empty,
    filled,
    generic,
    identity_map,
)


class ConstantPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.ConstantOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        return b(arith.ConstantOp(cast(nn.ConstantOp, op).value))


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
