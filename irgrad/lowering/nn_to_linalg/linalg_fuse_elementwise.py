"""`linalg-fuse-elementwise`: producer-consumer fusion of `linalg.generic`s on tensors.

MLIR's ElementwiseOpFusion for irgrad's stage "linalg": a generic that reads, as one of its
inputs, the result of an all-parallel generic (the producer) absorbs the producer's body, so a
chain of elementwise ops becomes one generic, hence one loop nest after bufferize and
linalg-to-loops, and the intermediate tensors disappear. The fused op computes every element
with the same scalar ops in the same order as the two ops did, so results are bit-identical.

The rules, in short: only `linalg.generic` consumers on tensors, through an input operand; a
fill of a constant is fused into every reader; a producer is a one-result all-parallel generic
whose output map is a permutation; pure data movement is fused into every consumer; a producer
that computes is fused only into its only user in the same block, and into a broadcasting read
only when it is cheap (`recompute-limit` ops, no transcendental op or division); every loop of
the fused op must stay bounded by some operand's map; a body grows past `max-body-ops` only by
data movement and fills (LLVM's loop optimizations take time superlinear in one loop's body).

Cleanup: operands that are the same value read through the same map are merged, and inputs
whose block argument is unused are dropped. Producers, fills, their `tensor.empty`s and
constants left without uses are erased.
How one fusion works, and the rules in full: docs/design/cpu-pipeline.md,
"irgrad/lowering/nn_to_linalg/linalg_fuse_elementwise.py".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irgrad.diagnostics import PassError
from irgrad.lowering.nn_to_linalg.fusion_chain import ChainFusion
from irgrad.lowering.nn_to_linalg.fusion_rules import (
    deduplicate,
    fuse_fill,
    fuse_generic,
    is_cheap,
    is_data_movement,
    may_fuse,
    on_tensors,
)
from irgrad.lowering.rewriting import walk_ops

# ---------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------


def _erase_dead(op: Operation, erase: Callable[[Operation], None]) -> None:
    """Erase `op` if nothing uses it, then the producers of its operands that become dead
    (fills, `tensor.empty`s, constants, parallel generics)."""
    erasable = (linalg.GenericOp, linalg.FillOp, tensor.EmptyOp, arith.ConstantOp)
    if not isinstance(op, erasable) or any(r.uses for r in op.results):
        return
    operands = list(op.operands)
    erase(op)
    for value in operands:
        owner = value.owner
        if isinstance(owner, Operation):
            _erase_dead(owner, erase)


def fuse_step(
    op: linalg.GenericOp, recompute_limit: int, max_body_ops: int | None = None
) -> tuple[linalg.GenericOp, Operation | None] | None:
    """One rewrite of the generic `op`: its duplicate inputs merged, or else the first of its
    inputs' producers the rules allow fused in. Returns the op to put in `op`'s place and the
    fused producer (None after a merge), or None when nothing applies. `op`'s body is reused
    by the result, so `op` must be replaced by it."""
    if not on_tensors(op):
        return None
    # Merged first, so that a producer read twice through one map is inlined once.
    if (smaller := deduplicate(op)) is not None:
        return smaller, None
    for index, operand in enumerate(op.inputs):
        producer = operand.owner
        fused: linalg.GenericOp | None = None
        if isinstance(producer, linalg.FillOp):
            fused = fuse_fill(op, index, producer)
        elif isinstance(producer, linalg.GenericOp) and may_fuse(op, index, producer, recompute_limit, max_body_ops):
            fused = fuse_generic(op, index, producer)
        if fused is not None:
            return fused, producer
    return None


def fuse_module(
    module: ModuleOp, recompute_limit: int, chain: bool = True, max_body_ops: int | None = None
) -> None:
    """Every generic of `module`, last first, fused until no rule applies to it.

    Consumers come before their producers (rule 6 counts on it), and a generic is offered
    again only when it changed, as its replacement. What a fusion erases is always a
    producer, earlier in the walk and not yet visited, so a fixed point is reached in one
    sweep: about one rule check per generic and fusion, where xDSL's greedy worklist
    re-offered every neighbour of each rewritten op (ten times as many checks). Once a
    consumer qualifies (`ChainFusion.applies`), its remaining fusions are made on its block
    and it is rebuilt once (fusion_chain.py); `chain=False` rebuilds it at every fusion."""
    for op in reversed(walk_ops(module)):
        if not isinstance(op, linalg.GenericOp) or op.parent is None:
            continue
        while True:
            if chain and ChainFusion.applies(op):
                ChainFusion(op, recompute_limit, max_body_ops).run()
                break
            if (step := fuse_step(op, recompute_limit, max_body_ops)) is None:
                break
            fused, producer = step
            Rewriter.replace_op(op, fused)
            if producer is not None:
                _erase_dead(producer, Rewriter.erase_op)
            op = fused


def check_yields(module: ModuleOp) -> None:
    """A located error at a `linalg.yield` of a generic on tensors whose values do not match
    the outputs' element types (MLIR's verifier rejects it, xDSL's does not). Fusion puts the
    yielded value in place of the consumer's block argument, so a mismatch would surface as a
    type error in the consumer's body, far from its cause."""
    for op in walk_ops(module):
        if not isinstance(op, linalg.GenericOp):
            continue
        outputs = op.outputs  # decoded from the segment sizes at every read: read once
        if len(op.res) != len(outputs) or not all(isinstance(v.type, TensorType) for v in outputs):
            continue  # not on tensors (fusion_rules.on_tensors)
        yield_op = op.body.block.last_op
        if not isinstance(yield_op, linalg.YieldOp):
            continue
        if len(yield_op.operands) != len(outputs):
            raise PassError(
                f"expected number of yield values ({len(yield_op.operands)}) to match the "
                f"number of outs operands of the enclosing linalg.generic ({len(outputs)})",
                yield_op,
            )
        for k, (value, out) in enumerate(zip(yield_op.operands, outputs), start=1):
            element = out.type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue]
            if value.type != element:
                raise PassError(
                    f"type of yield operand {k} ('{value.type}') doesn't match the element "
                    f"type of the enclosing linalg.generic op ('{element}')",
                    yield_op,
                )


@dataclass(frozen=True)
class LinalgFuseElementwisePass(ModulePass):
    """Fuse elementwise linalg.generic producers into their consumers, on tensors.

    Input invariant: stage "linalg" of docs/design/cpu-pipeline.md (the output of
    convert-nn-to-linalg): linalg ops on tensors in destination-passing style, static shapes.

    Output IR: stage "linalg" still, with fewer ops: each chain of all-parallel generics (and
    the broadcasts, transposes and constant fills at its inputs) is one `linalg.generic`, which
    may also be a reduction that absorbed its elementwise producers. The fusion rules are in
    the module docstring; in short, a producer that computes is fused into its only user, pure
    data movement and constant fills into every user, nothing with a reduction iterator is
    fused into another op, and work is repeated at the points of a broadcast only when it is
    cheap (at most `recompute-limit` ops, no transcendental function, no division), and a
    computing producer only while the fused body stays within `max-body-ops` ops. Bodies
    hold the same scalar ops in the same order per element, so results are bit-identical.
    Dead producers are erased; duplicate inputs (same value, same map) are merged. Run
    `canonicalize,cse` afterwards to share the constants the bodies repeat.
    """

    name = "linalg-fuse-elementwise"

    recompute_limit: int = 8
    """Most ops a producer may have to be recomputed at each point of a broadcast."""

    max_body_ops: int = 1000
    """Most ops a fused body may reach by taking in a producer that computes (rule 8)."""

    def __post_init__(self) -> None:
        if self.recompute_limit < 0:  # a ValueError: irgrad-opt reports it as a bad option
            raise ValueError(f"recompute_limit must be at least 0, got {self.recompute_limit}")
        if self.max_body_ops < 1:
            raise ValueError(f"max_body_ops must be at least 1, got {self.max_body_ops}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_yields(op)
        fuse_module(op, self.recompute_limit, max_body_ops=self.max_body_ops)


__all__ = [
    "LinalgFuseElementwisePass",
    "deduplicate",
    "fuse_fill",
    "fuse_generic",
    "fuse_module",
    "fuse_step",
    "is_cheap",
    "is_data_movement",
    "may_fuse",
]
