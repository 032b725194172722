"""`nn` ops that move data through an index tensor: gather and scatter_add (torch-mlir's
IndirectDataMovement).

Both read an index the way `nn` defines it: a negative index counts from the end once, then
the index is clamped into the axis (`wrap_and_clamp_index`), so every index reads something.

- `nn.gather` is a generic over the result shape: its only input is the index tensor (mapped
  to the result dimensions it spans), and its body computes the index and reads the operand
  with `tensor.extract` at `(d_0 .. d_axis-1, index, d_axis+r .. )`;
- `nn.scatter_add` is an `scf.for` over the index positions (in row-major order, so repeated
  indices accumulate in the interpreter's order) carrying the result tensor: each iteration
  adds one row of updates (`tensor.extract_slice` of both, an elementwise add) and writes it
  back with `tensor.insert_slice`. f16 and bf16 accumulate in f32 and round once at the end.
"""

from __future__ import annotations

import math
from typing import ClassVar, cast

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import RewritePattern

from irgrad.dialects import nn
from irgrad.dialects.nn import is_float
from irgrad.lowering.nn_to_linalg.common import (
    PARALLEL,
    Emitter,
    LoweringPattern,
    affine_map,
    compute_type,
    constant,
    convert_float_tensor,
    dims,
    element_of,
    elementwise,
    empty,
    generic,
    identity_map,
    reshape,
    shape_of,
    wrap_and_clamp_index,
)
from irgrad.lowering.nn_to_linalg.data_movement import extract, insert


class GatherPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.GatherOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.GatherOp, op)
        x, indices = op.operand, op.indices
        axis, size = op.axis.value.data, shape_of(op.operand)[op.axis.value.data]
        index_rank = len(shape_of(indices))
        shape = cast(TensorType, op.result.type).get_shape()
        rank = len(shape)

        def body(e: Emitter, raw: SSAValue, _out: SSAValue) -> list[SSAValue]:
            index = wrap_and_clamp_index(e, raw, size)
            before = [e(linalg.IndexOp(d)) for d in range(axis)]
            after = [e(linalg.IndexOp(d)) for d in range(axis + index_rank, rank)]
            return [e(tensor.ExtractOp(x, [*before, index, *after], element_of(x)))]

        (result,) = generic(
            b,
            [indices],
            [affine_map(rank, dims(range(axis, axis + index_rank)))],
            [empty(b, shape, element_of(x))],
            [identity_map(rank)],
            [PARALLEL] * rank,
            body,
        )
        return result


class ScatterAddPattern(LoweringPattern):
    OPS: ClassVar[tuple[type[Operation], ...]] = (nn.ScatterAddOp,)

    def lower(self, b: Emitter, op: Operation) -> SSAValue:
        op = cast(nn.ScatterAddOp, op)
        x, indices, updates = op.operand, op.indices, op.updates
        shape, t = shape_of(x), element_of(x)
        axis = op.axis.value.data
        index_shape = shape_of(indices)
        count = math.prod(index_shape)
        if count == 0:
            return x
        # One index per position, and the updates with the index dimensions as one dimension.
        row_shape = [*shape[:axis], 1, *shape[axis + 1 :]]
        flat_indices = reshape(b, indices, [count])
        flat_updates = reshape(b, updates, [*shape[:axis], count, *shape[axis + 1 :]])
        work = compute_type(t)
        if work != t:
            x = convert_float_tensor(b, x, work)
            flat_updates = convert_float_tensor(b, flat_updates, work)

        def offsets(at: SSAValue) -> list[SSAValue | int]:
            return [at if d == axis else 0 for d in range(len(shape))]

        body = Block(arg_types=[IndexType(), x.type])
        position, accumulator = body.args
        e = Emitter(b.location)
        raw = e(tensor.ExtractOp(flat_indices, [position], element_of(flat_indices)))
        index = wrap_and_clamp_index(e, raw, shape[axis])
        row = extract(e, accumulator, offsets(index), row_shape)
        update = extract(e, flat_updates, offsets(position), row_shape)
        add = arith.AddfOp if is_float(work) else arith.AddiOp
        total = elementwise(e, [row, update], work, lambda s, p, q, _out: [s(add(p, q))])
        e.add(scf.YieldOp(insert(e, total, accumulator, offsets(index))))
        body.add_ops(e.ops)

        zero, step = constant(b, 0, IndexType()), constant(b, 1, IndexType())
        loop = b(scf.ForOp(zero, constant(b, count, IndexType()), step, [x], body))
        return convert_float_tensor(b, loop, t) if work != t else loop


def populate_indirect_patterns(patterns: list[RewritePattern]) -> None:
    patterns.extend([GatherPattern(), ScatterAddPattern()])
