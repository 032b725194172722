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

An op whose reverse rule needs more than its own operands and results (a loop needs every iteration's
carried values; a custom_vjp needs its `fwd`'s residuals) has an *augment rule*, run in the forward sweep
right after the op is cloned: it replaces the clone by an op that also saves that (a tape) and hands it to
the VJP rule as `b.saved`. Ops with regions get and return cotangents for the values their regions
capture from outside too (`b.captured`), after their operands'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from xdsl.dialects import func
from xdsl.ir import Block, Operation, SSAValue

from irgrad.autodiff.activity import Activity, analyze, captured_values
from irgrad.autodiff.adjoint_locations import adjoint_location
from irgrad.autodiff.builder import RuleBuilder, or_zeros
from irgrad.autodiff.errors import RuleContractError
from irgrad.autodiff.protocol import DeriverProtocol
from irgrad.autodiff.registry import AUGMENT_RULES, VJP_RULES
from irgrad.autodiff.support import check_body, require_rule


def build_vjp(
    deriver: DeriverProtocol,
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

    value_map: dict[SSAValue, SSAValue] = dict(zip(source.args, target.args))
    # One builder for both sweeps: constants the forward sweep made are reused by the reverse sweep.
    b = RuleBuilder(target, deriver, function=primal)
    forward_ops, saved = _forward_sweep(b, ops, activity, target, value_map)
    b.on_replace_primal = None
    cts_in = target.args[len(source.args) :]
    adjoints = _reverse_sweep(b, ops, activity, terminator, cts_in, seeds, forward_ops, saved, value_map)

    b.at(adjoint_location(terminator))
    gradients = [or_zeros(b, adjoints.get(source.args[i]), source.args[i]) for i in wrt]
    results = [value_map.get(value, value) for value in terminator.arguments]
    b.emit(func.ReturnOp(*results, *gradients)).location = terminator.location


def _forward_sweep(
    b: RuleBuilder,
    ops: list[Operation],
    activity: Activity,
    target: Block,
    value_map: dict[SSAValue, SSAValue],
) -> tuple[dict[Operation, Operation], dict[Operation, Any]]:
    """Clone `ops` into `target`; an active op with an augment rule may replace its clone by one that also
    saves what its VJP needs. Returns the op now computing each primal op's results, and what was saved."""
    forward_ops: dict[Operation, Operation] = {}
    saved: dict[Operation, Any] = {}
    current: list[Operation] = []

    def replace_primal(clone: Operation, values: Sequence[SSAValue]) -> None:
        original = current[0]
        for result, clone_result, value in zip(original.results, clone.results, values, strict=True):
            clone_result.replace_all_uses_with(value)
            value_map[result] = value
        target.erase_op(clone)
        forward_ops[original] = values[0].owner if values else clone  # type: ignore[assignment]

    b.on_replace_primal = replace_primal
    for op in ops:
        clone = op.clone(value_map)
        target.add_op(clone)
        forward_ops[op] = clone
        augment = AUGMENT_RULES.get(type(op))
        if augment is None or not activity.is_active_op(op):
            continue
        current[:] = [op]
        b.at(op.location, _needs(activity, op), [activity.is_active(r) for r in op.results])
        b.captured = _captured(op, value_map)
        saved[op] = augment(b, clone)
    return forward_ops, saved


def _reverse_sweep(
    b: RuleBuilder,
    ops: list[Operation],
    activity: Activity,
    terminator: Operation,
    cts_in: Sequence[SSAValue],
    seeds: tuple[int, ...] | None,
    forward_ops: dict[Operation, Operation],
    saved: dict[Operation, Any],
    value_map: dict[SSAValue, SSAValue],
) -> dict[SSAValue, SSAValue]:
    """Visit the active ops in reverse program order, each once; returns the adjoint of every value."""
    adjoints: dict[SSAValue, SSAValue] = {}

    def accumulate(value: SSAValue, ct: SSAValue) -> None:
        previous = adjoints.get(value)
        adjoint = ct if previous is None else cast(SSAValue, b.add(previous, ct))
        if adjoint.name_hint is None and value.name_hint is not None:
            adjoint.name_hint = f"{value.name_hint}_bar"  # the adjoint x-bar, for readers of the IR
        adjoints[value] = adjoint

    b.at(adjoint_location(terminator))
    for index, (value, ct) in enumerate(zip(terminator.operands, cts_in, strict=True)):
        if activity.is_active(value) and (seeds is None or index in seeds):
            accumulate(value, ct)

    for op in reversed(ops):
        if not activity.is_active_op(op):
            continue
        cts = [adjoints.get(result) for result in op.results]
        if all(ct is None for ct in cts):
            continue  # every use of its results blocked the cotangent (a comparison, say)
        inputs = [*op.operands, *captured_values(op.regions)]
        needs = _needs(activity, op)
        b.at(adjoint_location(op), needs)  # marks the op's adjoint code (adjoint_locations.py)
        b.captured = _captured(op, value_map)
        b.saved = saved.get(op)
        rule = VJP_RULES[type(op)]
        operand_cts = list(rule(b, forward_ops[op], *cts))
        if len(operand_cts) != len(inputs):
            raise RuleContractError(
                f"the vjp rule {rule.__module__}.{rule.__qualname__} for '{op.name}' returned "
                f"{len(operand_cts)} cotangents for {len(op.operands)} operands"
                + (f" and {len(inputs) - len(op.operands)} captured values" if op.regions else "")
            )
        for index, (operand, ct, needed) in enumerate(zip(inputs, operand_cts, needs)):
            if ct is None or not needed:
                continue
            if ct.type != operand.type:
                raise RuleContractError(
                    f"the vjp rule {rule.__module__}.{rule.__qualname__} for '{op.name}' returned a cotangent "
                    f"of type {ct.type} for operand #{index} of type {operand.type}"
                )
            accumulate(operand, ct)
    return adjoints


def _needs(activity: Activity, op: Operation) -> list[bool]:
    """Which operands, then which captured values, of `op` are active (want a cotangent)."""
    return [activity.is_active(v) for v in (*op.operands, *captured_values(op.regions))]


def _captured(op: Operation, value_map: dict[SSAValue, SSAValue]) -> list[SSAValue]:
    """The values `op`'s regions use from outside, as they stand in the generated function."""
    return [value_map.get(v, v) for v in captured_values(op.regions)]
