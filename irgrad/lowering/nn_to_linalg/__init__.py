"""`convert-nn-to-linalg`: every `nn` op to linalg and tensor ops, on tensors.

The patterns live by category, as torch-mlir splits TorchToLinalg, each module exporting its
`populate_*_patterns`: creation (constant, full, iota), elementwise (unary, binary, compare,
select, convert, bitwise), reduction, data_movement (broadcast, reshape, transpose, slices,
concatenate, pad), indirect (gather, scatter_add), linear (matmul, conv2d), pooling
(max_pool2d). `common` holds the builders they share. The output is stage "linalg" of
docs/design/cpu-pipeline.md; `irgrad.lowering.contracts.assert_stage_linalg` checks it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import RewritePattern

from irgrad.diagnostics import PassError
from irgrad.lowering.rewriting import apply_conversion, walk_ops
from irgrad.lowering.nn_to_linalg.creation import populate_creation_patterns
from irgrad.lowering.nn_to_linalg.data_movement import populate_data_movement_patterns
from irgrad.lowering.nn_to_linalg.elementwise import populate_elementwise_patterns
from irgrad.lowering.nn_to_linalg.indirect import populate_indirect_patterns
from irgrad.lowering.nn_to_linalg.linear import populate_linear_patterns
from irgrad.lowering.nn_to_linalg.pooling import populate_pooling_patterns
from irgrad.lowering.nn_to_linalg.reduction import populate_reduction_patterns


def populate_nn_to_linalg_patterns(patterns: list[RewritePattern]) -> None:
    """Every pattern of the pass (one per `nn` op family)."""
    populate_creation_patterns(patterns)
    populate_elementwise_patterns(patterns)
    populate_reduction_patterns(patterns)
    populate_data_movement_patterns(patterns)
    populate_indirect_patterns(patterns)
    populate_linear_patterns(patterns)
    populate_pooling_patterns(patterns)


@dataclass(frozen=True)
class ConvertNNToLinalgPass(ModulePass):
    """Lower every nn op to linalg (generic, named ops, fill) and tensor ops, on tensors.

    Input invariant: verified IR with static shapes whose `autodiff` requests are expanded (run
    `autodiff` first); `nn` ops anywhere, including inside `scf` regions on tensors.

    Output IR: stage "linalg" of docs/design/cpu-pipeline.md. No `nn` op remains; functions keep
    their signatures; elementwise ops, broadcasts, transposes, slices, reductions, iota, gather,
    batched matmul, conv2d and max_pool2d are `linalg.generic`s with scalar arith/math bodies;
    `nn.full` is `linalg.fill`, a 2-D matmul `linalg.matmul`, `nn.constant` a dense
    `arith.constant`; reshapes, dynamic slices, concatenate and pad are `tensor` ops, and
    `nn.scatter_add` an `scf.for` of `tensor.extract_slice`/`insert_slice`. Every linalg op
    writes into a `tensor.empty` or a `linalg.fill` of one. Results equal the interpreter's on
    the input, bit for bit except for the order of accumulation in sums, matmul and conv2d.
    """

    name = "convert-nn-to-linalg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in walk_ops(op):
            if inner.name.startswith("autodiff."):
                raise PassError(
                    "is an unexpanded autodiff op; convert-nn-to-linalg lowers differentiated "
                    "IR only: run the autodiff pass first (-p autodiff,convert-nn-to-linalg)",
                    inner,
                )
            if inner.name in ("nn.cholesky", "nn.triangular_solve", "nn.lu", "nn.eigh", "nn.svd", "nn.qr"):
                raise PassError(
                    "is a factorization: run nn-expand-factorizations first, which writes it as "
                    "loops of nn ops (-p nn-expand-factorizations,convert-nn-to-linalg)",
                    inner,
                )
        patterns: list[RewritePattern] = []
        populate_nn_to_linalg_patterns(patterns)
        # Each op once, offered the patterns in order (what xDSL's greedy walker without
        # recursion did), but only ops of the dialects the patterns lower: nn, tensor.splat,
        # and arith/math ops on tensors.
        apply_conversion(op, patterns, dialect=("nn", "tensor", "arith", "math"))
        for inner in walk_ops(op):
            if inner.name.startswith("nn."):
                raise PassError("cannot be lowered by convert-nn-to-linalg (no pattern for it)", inner)


__all__ = ["ConvertNNToLinalgPass", "populate_nn_to_linalg_patterns"]
