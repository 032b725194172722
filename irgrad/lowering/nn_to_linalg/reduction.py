"""`nn.reduce_sum`, `reduce_max`, `reduce_min` to a `linalg.generic` with reduction iterators.

The generic reads the operand through the identity map and writes an accumulator indexed by
the kept dimensions only; the accumulator is a `linalg.fill` of the reduction's identity:
- sum: 0 (+0.0 for floats, as numpy starts its sums, so a sum of negative zeros is +0.0);
- max: -inf, the minimum integer, false for i1; min: +inf, the maximum integer, true for i1.
The body combines with `arith.addf`/`addi` and `arith.maximumf`/`minimumf` (NaN propagates),
`maxsi`/`minsi`, and on i1 `maxui`/`minui`. f16 and bf16 sums accumulate in f32 and round once
at the end, as the interpreter does. `keepdims` restores the reduced dimensions as size 1 with a
`tensor.expand_shape` of the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import RewritePattern

from irgrad.dialects import nn
from irgrad.dialects.nn import is_bool, is_float
from irgrad.lowering.nn_to_linalg.common import (
    PARALLEL,
    REDUCTION,
    Emitter,
    LoweringPattern,
    affine_map,
    compute_type,
    convert_float_tensor,
    dims,
    element_of,
    extend,
    filled_constant,
    generic,
    highest,
    identity_map,
    lowest,
    reshape,
    shape_of,
)


def _combine(kind: str, t: Attribute) -> type[Operation]:
    """The arith op combining an accumulator of type `t` with one element."""
    if kind == "sum":
        return arith.AddfOp if is_float(t) else arith.AddiOp
    if is_float(t):
        return arith.MaximumfOp if kind == "max" else arith.MinimumfOp
    if is_bool(t):
        return arith.MaxUIOp if kind == "max" else arith.MinUIOp
    return arith.MaxSIOp if kind == "max" else arith.MinSIOp


def _identity(kind: str, t: Attribute) -> float | int | bool:
    if kind == "sum":
        return 0
    return lowest(t) if kind == "max" else highest(t)


def reduce(b: Emitter, x: SSAValue, axes: Sequence[int], kind: str) -> SSAValue:
    """`x` reduced over `axes` without keepdims; f16/bf16 sums accumulate in f32."""
    shape, t = shape_of(x), element_of(x)
    acc_t = compute_type(t) if kind == "sum" else t
    kept = [d for d in range(len(shape)) if d not in axes]
    init = filled_constant(b, _identity(kind, acc_t), [shape[d] for d in kept], acc_t)
    combine = _combine(kind, acc_t)

    def body(e: Emitter, element: SSAValue, acc: SSAValue) -> list[SSAValue]:
        return [e(combine(acc, extend(e, element, acc_t)))]

    (result,) = generic(
        b,
        [x],
        [identity_map(len(shape))],
        [init],
        [affine_map(len(shape), dims(kept))],
        [REDUCTION if d in axes else PARALLEL for d in range(len(shape))],
        body,
    )
    return convert_float_tensor(b, result, t) if acc_t != t else result


class ReducePattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.ReduceSumOp, nn.ReduceMaxOp, nn.ReduceMinOp)
    KINDS: ClassVar[dict[type[Operation], str]] = {
        nn.ReduceSumOp: "sum",
        nn.ReduceMaxOp: "max",
        nn.ReduceMinOp: "min",
    }

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.ReduceOp, op)
        axes = cast(tuple[int, ...], op.axes.get_values())
        if not axes:
            return op.operand
        result = reduce(b, op.operand, axes, self.KINDS[type(op)])
        return reshape(b, result, cast(TensorType, op.result.type).get_shape())


def populate_reduction_patterns(patterns: list[RewritePattern]) -> None:
    patterns.append(ReducePattern())
