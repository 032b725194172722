"""`debug.print`: no derivative rules, on purpose, and one batching rule.

The op has no results, so activity analysis never makes it active: reverse mode clones it
into the forward sweep (it prints the primal values once per evaluation, never a
cotangent) and forward mode clones it beside the tangent computation. Under vmap it prints
the batched operands (the batch on axis 0) once, as jax.debug.print does.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched
from irgrad.autodiff.registry import batch_rule
from irgrad.dialects import debug


@batch_rule(debug.PrintOp)
def _print_batch(b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]) -> list[Batched]:
    printed = op if isinstance(op, debug.PrintOp) else None
    assert printed is not None
    b.emit(debug.PrintOp(printed.format.data, list(args), printed.operand_names()))
    return []
