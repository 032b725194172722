"""The unrealized casts that let each `convert-*-to-llvm` pass run on its own, and their
removal once every dialect is converted.

Why unrealized casts: each pass converts only its own dialect (as MLIR's conversions do). An
op it rewrites takes its operands through `builtin.unrealized_conversion_cast` to their
`llvm` types and casts its results back to the original types, so the IR stays well typed
between passes; `reconcile_casts` removes the cast pairs once every dialect is converted
(the last step of `convert-to-llvm`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import UnrealizedConversionCastOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.reconcile_unrealized_casts import _try_remove_cast_chain  # pyright: ignore[reportPrivateUsage]

from irgrad.lowering.llvm.type_conversion import convert_type
from irgrad.lowering.rewriting import walk_ops


def unrealized_cast(value: SSAValue, t: Attribute) -> UnrealizedConversionCastOp:
    """A `builtin.unrealized_conversion_cast` of `value` to type `t` (not inserted)."""
    return UnrealizedConversionCastOp.create(operands=[value], result_types=[t])


def reconcile_casts(root: Operation) -> None:
    """xDSL's `reconcile-unrealized-casts` (each chain of casts that cancels out removed, the
    others left for `assert_stage_llvm` to name), offered the casts only.

    xDSL's pass runs its greedy worklist over every op of the module, and re-offers each op
    whose operands changed, though casts are about one op in ten of a lowered module. Here the casts are taken from one list walk and swept until a sweep removes nothing
    (one sweep, but for a cast whose user was a multi-input cast), each chain by xDSL's own
    `_try_remove_cast_chain`, with the same result."""
    rewriter = _DirectRewriter()
    casts = [op for op in walk_ops(root) if isinstance(op, UnrealizedConversionCastOp)]
    while casts:
        for cast in casts:
            if cast.parent is not None:
                _try_remove_cast_chain(cast, rewriter, False)  # pyright: ignore[reportArgumentType]
        survivors = [cast for cast in casts if cast.parent is not None]
        if len(survivors) == len(casts):
            return
        casts = survivors


class _DirectRewriter:
    """The two rewriter calls `_try_remove_cast_chain` makes, without a PatternRewriter's
    listeners and bookkeeping."""

    @staticmethod
    def replace(op: Operation, new_ops: Sequence[Operation], new_results: Sequence[SSAValue]) -> None:
        Rewriter.replace_op(op, new_ops, new_results)

    @staticmethod
    def erase(op: Operation) -> None:
        Rewriter.erase_op(op)


def convert_block_arguments(rewriter: PatternRewriter, block: Block) -> None:
    """Give `block`'s arguments their llvm types; uses see the old types through casts."""
    for index, arg in enumerate(block.args):
        target = convert_type(arg.type)
        if target == arg.type:
            continue
        new_arg = rewriter.insert_block_argument(block, index, target)
        old_arg = block.args[index + 1]
        cast = unrealized_cast(new_arg, old_arg.type)
        rewriter.insert(cast, InsertPoint.at_start(block))
        rewriter.replace_all_uses_with(old_arg, cast.results[0])
        rewriter.erase_block_argument(old_arg)
