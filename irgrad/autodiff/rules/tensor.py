"""Rules for tensor element access: extract, insert, from_elements, splat; empty is a creation op.

All three are linear in their float operands (JAX's `deflinear`), so each JVP applies the op to the
tangents and each VJP is the op's transpose, written with the same three ops so it can be differentiated
again: extract <-> insert into zeros, from_elements <-> one extract per element, splat <-> a sum. Indices are integers and
get no cotangent. They matter for control flow: `ig.cond` tests a `tensor.extract` of a `tensor<i1>`,
`ig.fori_loop` turns its counter into a tensor with `tensor.from_elements`, and a loop's tape of scalar
carried values is written with `tensor.insert` and read with `tensor.extract`.
"""

from __future__ import annotations

import itertools
from typing import cast

from xdsl.dialects import tensor
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.builder import RuleBuilder, element_type, shape_of
from irgrad.autodiff.registry import Cotangents, Tangent, jvp_rule, non_differentiable, vjp_rule

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
