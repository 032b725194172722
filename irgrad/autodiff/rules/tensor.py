"""Rules for tensor element access: extract, insert, from_elements, splat; empty is a creation op.

All three are linear in their float operands (JAX's `deflinear`), so each JVP applies the op to the
tangents and each VJP is the op's transpose, written with the same three ops so it can be differentiated
again: extract <-> insert into zeros, from_elements <-> one extract per element, splat <-> a sum. Indices are integers and
get no cotangent. They matter for control flow: `ig.cond` tests a `tensor.extract` of a `tensor<i1>`,
`ig.fori_loop` turns its counter into a tensor with `tensor.from_elements`, and a loop's tape of scalar
carried values is written with `tensor.insert` and read with `tensor.extract`.

Batching (vmap): an element of a batched tensor is a *batched scalar*, tensor<B x t> (batching.py): the
predicate `ig.cond` extracts from a per-example comparison is one, and the scf.if rule selects on it. The
rules here move between batched scalars and batched tensors with nn ops (dynamic_slice,
dynamic_update_slice, reshape, concatenate, broadcast_in_dim). A position that differs per example (a
batched index, tensor<B x i64>: a loop counter of a per-example loop, or `arith.index_cast` of a per-example
integer) is read or written as the dynamic slice of one element at that start would be
(data_movement.py's `batch_dynamic_slice` / `batch_dynamic_update_slice`): a per-example gather,
result[b] = x[b, i_b, ...] (x[i_b, ...] when x is shared), and a per-example masked select for an insert.
Such positions are clamped into the tensor, as the dynamic slices clamp their starts (and as JAX clamps
dynamic indices): unbatched, an out-of-range tensor.extract is undefined, batched it reads the nearest
element.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import cast

from xdsl.dialects import tensor
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched, batched, materialize
from irgrad.autodiff.builder import RuleBuilder, element_type, shape_of
from irgrad.autodiff.errors import AutodiffError
from irgrad.autodiff.registry import Cotangents, Tangent, batch_rule, jvp_rule, non_differentiable, vjp_rule
from irgrad.autodiff.rules.data_movement import batch_dynamic_slice, batch_dynamic_update_slice

T = SSAValue | None

# Its contents are unspecified: nothing to differentiate (as nn.full).
non_differentiable(tensor.EmptyOp)


@vjp_rule(tensor.ExtractOp)
def _extract_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    """The element's cotangent, put back at its position in a tensor of zeros."""
    extract = cast(tensor.ExtractOp, op)
    indices = list(extract.indices)
    return [b.insert(ct, b.zeros_like(extract.tensor), indices), *[None] * len(indices)]


@jvp_rule(tensor.ExtractOp)
def _extract_jvp(b: RuleBuilder, op: Operation, t: SSAValue, *index_tangents: T) -> Tangent:
    return b.extract(t, list(cast(tensor.ExtractOp, op).indices))


@vjp_rule(tensor.InsertOp)
def _insert_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    """The scalar gets the cotangent at its position; the destination gets the rest (that position zeroed)."""
    insert = cast(tensor.InsertOp, op)
    indices = list(insert.indices)
    ct_scalar = b.extract(ct, indices) if b.needs(0) else None
    ct_dest = b.insert(b.zeros(element_type(ct)), ct, indices) if b.needs(1) else None
    return [ct_scalar, ct_dest, *[None] * len(indices)]


@jvp_rule(tensor.InsertOp)
def _insert_jvp(b: RuleBuilder, op: Operation, t_scalar: T, t_dest: T, *index_tangents: T) -> Tangent:
    insert = cast(tensor.InsertOp, op)
    scalar = t_scalar if t_scalar is not None else b.zeros_like(insert.scalar)
    dest = t_dest if t_dest is not None else b.zeros_like(insert.dest)
    return b.insert(scalar, dest, list(insert.indices))


@vjp_rule(tensor.FromElementsOp)
def _from_elements_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    """Element i (row-major) gets the cotangent's element i."""
    positions = itertools.product(*(range(n) for n in shape_of(ct)))
    cts: list[SSAValue | None] = []
    for k, position in enumerate(positions):
        if b.needs(k):
            cts.append(b.extract(ct, [b.full(i, IndexType()) for i in position]))
        else:
            cts.append(None)
    return cts


@jvp_rule(tensor.FromElementsOp)
def _from_elements_jvp(b: RuleBuilder, op: Operation, *tangents: T) -> Tangent:
    elements = [t if t is not None else b.zeros_like(x) for t, x in zip(tangents, op.operands)]
    return b.from_elements(elements, cast(TensorType, op.results[0].type))


@vjp_rule(tensor.SplatOp)
def _splat_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
    """The scalar was copied to every element: it gets the sum of their cotangents."""
    total = b.reduce_sum(ct, list(range(len(shape_of(ct)))))
    return [b.extract(total, []), *[None] * (len(op.operands) - 1)]


@jvp_rule(tensor.SplatOp)
def _splat_jvp(b: RuleBuilder, op: Operation, t: SSAValue, *size_tangents: T) -> Tangent:
    splat = cast(tensor.SplatOp, op)
    return b.value(tensor.SplatOp(t, list(splat.dynamicSizes), cast(TensorType, splat.result.type)))


# ---------------------------------------------------------------------------------------------------------------
# Batching (vmap)
# ---------------------------------------------------------------------------------------------------------------


@batch_rule(tensor.ExtractOp)
def _extract_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """Every example's element at the same position: the batched scalar [B], sliced out of [B, ...]. At a
    position that differs per example: the one-element dynamic slice at it, batched (a per-example gather)."""
    source, *indices = args
    shape = shape_of(op.operands[0])
    if any(is_batched[1:]):
        value, value_batched = batch_dynamic_slice(
            b, source, is_batched[0], indices, is_batched[1:], shape, [1] * len(shape)
        )
        if not value_batched:  # every per-example position is in a dimension of size 1
            value = batched(b, value, b.size)
        return b.reshape(value, [b.size]), True
    if not shape:
        return source, True  # tensor<B x t>, a rank-0 tensor per example, is already the batched scalar
    zero = b.full(0, IndexType())
    column = b.dynamic_slice(source, [zero, *indices], [b.size, *[1] * len(shape)])
    return b.reshape(column, [b.size]), True


@batch_rule(tensor.InsertOp)
def _insert_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """Every example's element written at the same position: a dynamic_update_slice of the [B] column. At a
    position that differs per example: the one-element dynamic_update_slice at it, batched (a select)."""
    shape = shape_of(op.operands[1])
    if any(is_batched[2:]):
        scalar, scalar_batched = args[0], is_batched[0]
        element = b.reshape(scalar, [b.size, *[1] * len(shape)]) if scalar_batched else b.value(
            tensor.SplatOp(scalar, [], TensorType(scalar.type, [1] * len(shape)))
        )
        return batch_dynamic_update_slice(
            b, (args[1], is_batched[1]), (element, scalar_batched), args[2:], is_batched[2:], shape, [1] * len(shape)
        )
    scalar, dest = materialize(b, args[:2], is_batched[:2])
    if not shape:
        return scalar, True
    column = b.reshape(scalar, [b.size, *[1] * len(shape)])
    zero = b.full(0, IndexType())
    return b.dynamic_update_slice(dest, column, [zero, *args[2:]]), True


@batch_rule(tensor.FromElementsOp)
def _from_elements_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]
) -> Batched:
    """The examples' elements side by side: [B] columns joined to [B, count], reshaped to [B, *shape]."""
    elements = materialize(b, args, is_batched)
    shape = shape_of(op.results[0])
    columns = [b.reshape(e, [b.size, 1]) for e in elements]
    return b.reshape(b.concatenate(columns, 1), [b.size, *shape]), True


@batch_rule(tensor.SplatOp)
def _splat_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> Batched:
    """Each example's scalar fills its own tensor: broadcast [B] along the new dimensions."""
    if len(args) > 1:
        raise AutodiffError("vmap: not supported yet: a tensor.splat with dynamic sizes", op)
    shape = shape_of(op.results[0])
    return b.broadcast(args[0], [b.size, *shape], [0]), True

