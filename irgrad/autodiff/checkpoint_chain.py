"""The `checkpoint-chain` pass: keep O(sqrt n) values across the reverse sweep of an n-stage chain.

Reverse mode reads, in its reverse sweep, the forward values the rules need: for a chain of n stages
(`y1 = tanh(x); y2 = tanh(y1); ...`) all n of them are live from the forward sweep to the reverse sweep.
This pass, run before `autodiff`, splits the body of every function that a reverse-mode request
(`autodiff.grad`, `value_and_grad`, `vjp`) differentiates into k contiguous segments, each outlined to
`@<f>_segment<i>` and called through `autodiff.checkpoint`. The reverse sweep of `@f` then keeps only the
k segment boundaries; each segment's `@<f>_segment<i>_vjp` recomputes its n/k stages when its turn comes
and holds them only meanwhile. With k = sqrt(n) (the default, `segments=0`), O(sqrt n) values are live at
any time, for about one more forward evaluation (Griewank's classic two-level checkpointing).

The recomputed values are bit-identical to the first ones (the same ops in the same order), so the
gradients of a chain are too. (Where one value is used in several segments, its adjoint is a sum whose
terms are grouped per segment, which may round differently.)

Constants (`arith.constant`, `nn.full`, `nn.constant`, `nn.iota`) are copied into every segment that uses
them rather than passed in, so they are never live across segments.

    irgrad-opt model.mlir -p 'checkpoint-chain{segments=8},autodiff'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from irgrad.autodiff.activity import used_values
from irgrad.diagnostics import PassError
from irgrad.dialects import autodiff as ad, nn

REVERSE_REQUESTS = (ad.GradOp, ad.ValueAndGradOp, ad.VJPOp)
CONSTANT_OPS = (arith.ConstantOp, nn.FullOp, nn.ConstantOp, nn.IotaOp)


@dataclass(frozen=True)
class CheckpointChainPass(ModulePass):
    """Split functions differentiated in reverse mode into checkpointed segments (O(sqrt n) saved values).

    `segments=k` sets the number of segments; 0 (the default) takes the square root of the number of
    stages (ops that are not constants), rounded.
    """

    name = "checkpoint-chain"

    segments: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.segments < 0:
            raise PassError(f"checkpoint-chain: segments={self.segments}: must be 0 (the square root) or more")
        for function in _reverse_mode_targets(op):
            split_into_segments(function, self.segments)


def _reverse_mode_targets(module: ModuleOp) -> list[func.FuncOp]:
    """The functions reverse-mode requests name, each once, in the order first named."""
    targets: dict[func.FuncOp, None] = {}
    for op in module.walk():
        if isinstance(op, REVERSE_REQUESTS):
            callee = SymbolTable.lookup_symbol(op, op.callee)
            if isinstance(callee, func.FuncOp) and not callee.is_declaration:
                targets.setdefault(callee, None)
    return list(targets)


def split_into_segments(function: func.FuncOp, segments: int) -> list[func.FuncOp]:
    """Replace the body of `function` by checkpoint calls of `segments` outlined parts; return them."""
    if len(function.body.blocks) != 1:
        return []
    block = function.body.block
    ops = [op for op in block.ops if op is not block.last_op]
    stages = [op for op in ops if not isinstance(op, CONSTANT_OPS)]
    count = segments if segments > 0 else round(math.sqrt(len(stages)))
    count = min(count, len(stages))
    if count <= 1:
        return []
    anchor: func.FuncOp = function
    outlined = []
    for index, part in enumerate(_partition(ops, stages, count)):
        anchor = _outline_segment(function, part, index, anchor)
        outlined.append(anchor)
    for op in ops:  # constants the segments copied in
        if isinstance(op, CONSTANT_OPS) and op.parent is not None and not op.results[0].uses:
            block.erase_op(op)
    return outlined


def _partition(ops: Sequence[Operation], stages: Sequence[Operation], count: int) -> list[list[Operation]]:
    """`ops` cut into `count` contiguous parts with about the same number of stages each."""
    cut_after = {stages[(i * len(stages)) // count - 1] for i in range(1, count)}
    parts: list[list[Operation]] = [[]]
    for op in ops:
        parts[-1].append(op)
        if op in cut_after:
            parts.append([])
    return [part for part in parts if part]


def _outline_segment(function: func.FuncOp, part: list[Operation], index: int, anchor: func.FuncOp) -> func.FuncOp:
    """Move `part` into `@<f>_segment<index>(live-ins) -> (live-outs)`, placed after `anchor`; call it through
    autodiff.checkpoint. Constants of `part` that later ops use stay where they are (those copy them)."""
    inside = set(part)
    defined = {result for op in part for result in op.results}
    inputs = _live_ins(part, defined)
    outputs = [
        r
        for op in part
        if not isinstance(op, CONSTANT_OPS)
        for r in op.results
        if any(use.operation not in inside for use in r.uses)
    ]
    segment = _segment_function(function, part, index, inputs, outputs, anchor)
    block = function.body.block
    call = ad.CheckpointOp(segment, inputs)
    call.location = part[-1].location
    block.insert_op_before(call, part[0])
    for value, replacement in zip(outputs, call.results, strict=True):
        value.replace_all_uses_with(replacement)
    for op in reversed(part):
        if not (isinstance(op, CONSTANT_OPS) and op.results[0].uses):
            block.erase_op(op)
    return segment


def _live_ins(part: Sequence[Operation], defined: set[SSAValue]) -> list[SSAValue]:
    """Values `part` uses but does not define, except constants (copied in instead), in first-use order."""
    seen: dict[SSAValue, None] = {}
    for op in part:
        for value in used_values(op):
            if value not in defined and not isinstance(value.owner, CONSTANT_OPS):
                seen.setdefault(value, None)
    return list(seen)


def _segment_function(
    function: func.FuncOp,
    part: list[Operation],
    index: int,
    inputs: list[SSAValue],
    outputs: list[SSAValue],
    anchor: func.FuncOp,
) -> func.FuncOp:
    """A private function after `anchor` computing `outputs` from `inputs` by clones of `part`."""
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for value, arg in zip(inputs, body.args, strict=True):
        mapping[value] = arg
        arg.name_hint = value.name_hint
    defined = {result for op in part for result in op.results}
    for op in part:
        for value in used_values(op):
            owner = value.owner
            if value not in defined and value not in mapping and isinstance(owner, CONSTANT_OPS):
                body.add_op(owner.clone(mapping))
        body.add_op(op.clone(mapping))
    ret = func.ReturnOp(*(mapping[v] for v in outputs))
    ret.location = part[-1].location
    body.add_op(ret)
    name = _fresh_name(function, f"{function.sym_name.data}_segment{index}")
    signature = ([v.type for v in inputs], [v.type for v in outputs])
    segment = func.FuncOp(name, signature, Region(body), visibility="private")
    segment.location = part[0].location
    parent = function.parent_block()
    assert parent is not None
    parent.insert_op_after(segment, anchor)
    return segment


def _fresh_name(at: Operation, base: str) -> str:
    name, n = base, 0
    while SymbolTable.lookup_symbol(at, name) is not None:
        n += 1
        name = f"{base}_{n}"
    return name
