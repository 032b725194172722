"""Reverse mode: build `@f_vjp(args..., cts...) -> (results..., arg_cts...)` from `@f`.

One function, two sweeps, micrograd's `backward()` in IR:
1. Forward sweep: `@f`'s body cloned as is. Values are immutable SSA tensors, so "saving" a forward value
   for the reverse sweep is just reading it later; bufferization frees it after its last use.
2. Reverse sweep: the active ops of `@f` in reverse program order, each visited once. The adjoint of each
   value is the sum of the cotangents its users send back (a value used twice gets both: fan-out sums),
   complete by the time its defining op is visited because every user comes later in program order.

Only active ops (activity.py) get derivative code; a result cotangent of an inactive result is ignored, and
a `wrt` argument that no result depends on gets zeros. A `func.call` differentiates its callee once (cached
by the transform) and calls `@g_vjp`, which recomputes `@g`'s forward values: calls behave as checkpoints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.activity import analyze
from irgrad.autodiff.builder import RuleBuilder, or_zeros
from irgrad.autodiff.errors import RuleContractError
from irgrad.autodiff.registry import VJP_RULES
from irgrad.autodiff.support import check_body, require_rule

if TYPE_CHECKING:
    from irgrad.autodiff.transform import Deriver


def build_vjp(
    deriver: Deriver,
    primal: func.FuncOp,
    wrt: tuple[int, ...],
    derived: func.FuncOp,
    seeds: tuple[int, ...] | None = None,
) -> None:
    """Fill the declared function `derived` with the VJP of `primal` with respect to arguments `wrt`,
    pulling back the cotangents of the results `seeds` (all when None; the others are ignored)."""
    check_body(primal, "reverse")
    activity = analyze(primal, wrt, seeds)
    source = primal.body.block
    target = derived.body.block
    terminator = source.last_op
    assert isinstance(terminator, func.ReturnOp)
    ops = [op for op in source.ops if op is not terminator]

    # Every missing rule is reported before any code is built.
    for op in ops:
        if activity.is_active_op(op):
            require_rule(op, "vjp", activity)

    # 1. Forward sweep.
    value_map: dict[SSAValue, SSAValue] = dict(zip(source.args, target.args))
    clones: dict[Operation, Operation] = {}
    for op in ops:
        clone = op.clone(value_map)
        target.add_op(clone)
        clones[op] = clone

    # 2. Reverse sweep.
    b = RuleBuilder(target, deriver)
    adjoints: dict[SSAValue, SSAValue] = {}

    def accumulate(value: SSAValue, ct: SSAValue) -> None:
        previous = adjoints.get(value)
        adjoint = ct if previous is None else cast(SSAValue, b.add(previous, ct))
        if adjoint.name_hint is None and value.name_hint is not None:
            adjoint.name_hint = f"{value.name_hint}_bar"  # the adjoint x-bar, for readers of the IR
        adjoints[value] = adjoint

    b.at(terminator.location)
    cts_in = target.args[len(source.args) :]
    for index, (value, ct) in enumerate(zip(terminator.arguments, cts_in, strict=True)):
        if activity.is_active(value) and (seeds is None or index in seeds):
            accumulate(value, ct)

    for op in reversed(ops):
        if not activity.is_active_op(op):
            continue
        cts = [adjoints.get(result) for result in op.results]
        if all(ct is None for ct in cts):
            continue  # every use of its results blocked the cotangent (a comparison, say)
        needs = activity.active_operands(op)
        b.at(op.location, needs)
        rule = VJP_RULES[type(op)]
        operand_cts = list(rule(b, clones[op], *cts))
        if len(operand_cts) != len(op.operands):
            raise RuleContractError(
                f"the vjp rule {rule.__module__}.{rule.__qualname__} for '{op.name}' returned "
                f"{len(operand_cts)} cotangents for {len(op.operands)} operands"
            )
        for index, (operand, ct, needed) in enumerate(zip(op.operands, operand_cts, needs)):
            if ct is None or not needed:
                continue
            if ct.type != operand.type:
                raise RuleContractError(
                    f"the vjp rule {rule.__module__}.{rule.__qualname__} for '{op.name}' returned a cotangent "
                    f"of type {ct.type} for operand #{index} of type {operand.type}"
                )
            accumulate(operand, ct)

    b.at(terminator.location)
    gradients = [or_zeros(b, adjoints.get(source.args[i]), source.args[i]) for i in wrt]
    results = [value_map.get(value, value) for value in terminator.arguments]
    b.emit(func.ReturnOp(*results, *gradients))
