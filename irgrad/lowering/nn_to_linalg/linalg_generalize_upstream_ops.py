"""`linalg-generalize-upstream-ops`: the upstream ops irgrad reads but does not lower itself,
rewritten into the `linalg.generic`s the rest of the pipeline lowers.

- `linalg.map`, `linalg.batch_matmul`, `linalg.matvec`, `linalg.dot`
  (irgrad/dialects/upstream/linalg.py) become a `linalg.generic` with the same operands, maps
  and body (upstream's `linalg-generalize-named-ops` for these four; xDSL's pass of that name
  would also generalize `linalg.matmul`, which irgrad keeps named for BLAS).
- `tensor.generate` of a static shape becomes a `linalg.generic` writing a `tensor.empty`,
  whose body reads each index with `linalg.index`.

Every op computes the same scalars in the same order, so results are bit-identical to the
named op's definition. A `tensor.generate` of a dynamic shape is an error naming the op
(irgrad's stages have static shapes).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irgrad.diagnostics import PassError

PASS = "linalg-generalize-upstream-ops"
_DIALECT_MODULES = ("irgrad.dialects.upstream.linalg", "irgrad.dialects.upstream.tensor")


def _generalize_map(op: Operation) -> linalg.GenericOp:
    from irgrad.dialects.upstream.linalg import MapOp

    assert isinstance(op, MapOp)
    rank = len(op.init.type.get_shape())
    identity = AffineMapAttr(AffineMap.identity(rank))
    body = op.mapper.clone()
    body.block.insert_arg(op.init.type.get_element_type(), len(body.block.args))  # the output's element, unread
    return linalg.GenericOp(
        list(op.inputs),
        [op.init],
        body,
        ArrayAttr([identity] * (len(op.inputs) + 1)),
        ArrayAttr([linalg.IteratorTypeAttr.parallel()] * rank),
        [r.type for r in op.results],
    )


def _generalize_contraction(op: Operation) -> linalg.GenericOp:
    from irgrad.dialects.upstream.linalg import Contraction

    assert isinstance(op, Contraction)
    return linalg.GenericOp(
        list(op.inputs),
        list(op.outputs),
        op.body.clone(),
        op.get_indexing_maps(),
        op.get_iterator_types(),
        [r.type for r in op.results],
    )


def _generalize_generate(op: Operation) -> list[Operation]:
    from irgrad.dialects.upstream.tensor import GenerateOp

    assert isinstance(op, GenerateOp)
    result_type = op.result.type
    assert isinstance(result_type, TensorType)
    if op.dynamicExtents:
        raise PassError(f"of the dynamic shape {result_type}: irgrad's stages have static shapes", op)
    rank = len(result_type.get_shape())
    empty = tensor.EmptyOp([], result_type)
    block = Block(arg_types=[result_type.get_element_type()])
    body = op.body.clone()
    old = body.block
    indices = [linalg.IndexOp(d) for d in range(rank)]
    block.add_ops(indices)
    for arg, index in zip(old.args, indices):
        arg.replace_all_uses_with(index.result)
    for inner in list(old.ops):
        inner.detach()
        if isinstance(inner, tensor.YieldOp):
            block.add_op(linalg.YieldOp(*inner.operands))
            inner.erase(safe_erase=False)
        else:
            block.add_op(inner)
    generic = linalg.GenericOp(
        [],
        [empty.tensor],
        Region(block),
        ArrayAttr([AffineMapAttr(AffineMap.identity(rank))]),
        ArrayAttr([linalg.IteratorTypeAttr.parallel()] * rank),
        [result_type],
    )
    return [empty, generic]


@dataclass(frozen=True)
class LinalgGeneralizeUpstreamOpsPass(ModulePass):
    """Rewrite linalg.map/batch_matmul/matvec/dot and static tensor.generate into linalg.generic."""

    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # The ops exist only once their dialect's module is loaded (parsing one loads it): a
        # traced program never holds them, and its compile skips the walk of every op.
        if not any(name in sys.modules for name in _DIALECT_MODULES):
            return
        from irgrad.dialects.upstream.linalg import MapOp, Contraction
        from irgrad.dialects.upstream.tensor import GenerateOp

        targets = [o for o in op.walk() if isinstance(o, MapOp | Contraction | GenerateOp)]
        for target in targets:
            if isinstance(target, MapOp):
                new_ops: list[Operation] = [_generalize_map(target)]
            elif isinstance(target, Contraction):
                new_ops = [_generalize_contraction(target)]
            else:
                new_ops = _generalize_generate(target)
            Rewriter.replace_op(target, new_ops, list(new_ops[-1].results))


__all__ = ["LinalgGeneralizeUpstreamOpsPass"]
