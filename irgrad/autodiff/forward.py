"""Forward mode: build `@f_jvp(args..., tangents...) -> (results..., result_tangents...)` from `@f`.

One walk in program order: each op is cloned, and when it is active its JVP rule emits the tangent of its
results right after it, from the tangents of its operands (`None`, a symbolic zero, for inactive ones).
Nothing is saved: tangents travel beside the primal values. An op with regions also gets the tangents of
the values its regions capture from outside (`b.captured`), after its operands' ones. Results that do not
depend on a `wrt` argument get zero tangents (of their own type, integers included, as `autodiff.jvp`
promises).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.activity import analyze, captured_values
from irgrad.autodiff.builder import RuleBuilder, or_zeros
from irgrad.autodiff.errors import RuleContractError
from irgrad.autodiff.protocol import DeriverProtocol
from irgrad.autodiff.registry import JVP_RULES
from irgrad.autodiff.support import check_body, require_rule


def build_jvp(
    deriver: DeriverProtocol,
    primal: func.FuncOp,
    wrt: tuple[int, ...],
    derived: func.FuncOp,
    seeds: tuple[int, ...] | None = None,
) -> None:
    """Fill the declared function `derived` with the JVP of `primal` with respect to arguments `wrt`,
    computing the tangents of the results `seeds` (all when None; the others are zeros)."""
    check_body(primal, "forward")
    activity = analyze(primal, wrt, seeds)
    source = primal.body.block
    target = derived.body.block
    terminator = source.last_op
    assert isinstance(terminator, func.ReturnOp)
    ops = [op for op in source.ops if op is not terminator]
    for op in ops:
        if activity.is_active_op(op):
            require_rule(op, "jvp", activity)

    n_args = len(source.args)
    value_map: dict[SSAValue, SSAValue] = dict(zip(source.args, target.args))
    tangents: dict[SSAValue, SSAValue] = {}
    for k, index in enumerate(wrt):
        if activity.is_active(source.args[index]):
            tangents[source.args[index]] = target.args[n_args + k]

    b = RuleBuilder(target, deriver, function=primal)
    current: list[Operation] = []

    def replace_primal(clone: Operation, values: Sequence[SSAValue]) -> None:
        original = current[0]
        for result, clone_result, value in zip(original.results, clone.results, values, strict=True):
            clone_result.replace_all_uses_with(value)
            value_map[result] = value
        target.erase_op(clone)

    b.on_replace_primal = replace_primal

    for op in ops:
        clone = op.clone(value_map)
        target.add_op(clone)
        if not activity.is_active_op(op):
            continue
        current[:] = [op]
        b.at(op.location, results=[activity.is_active(result) for result in op.results])
        rule = JVP_RULES[type(op)]
        captured = captured_values(op.regions)
        b.captured = [value_map.get(v, v) for v in captured]
        operand_tangents = [tangents.get(value) for value in (*op.operands, *captured)]
        out = rule(b, clone, *operand_tangents)
        result_tangents = [out] if out is None or isinstance(out, SSAValue) else list(out)
        if len(result_tangents) != len(op.results):
            raise RuleContractError(
                f"the jvp rule {rule.__module__}.{rule.__qualname__} for '{op.name}' returned "
                f"{len(result_tangents)} tangents for {len(op.results)} results"
            )
        for index, (result, tangent) in enumerate(zip(op.results, result_tangents)):
            if tangent is None or not activity.is_active(result):
                continue
            if tangent.type != result.type:
                raise RuleContractError(
                    f"the jvp rule {rule.__module__}.{rule.__qualname__} for '{op.name}' returned a tangent "
                    f"of type {tangent.type} for result #{index} of type {result.type}"
                )
            if tangent.name_hint is None and result.name_hint is not None:
                tangent.name_hint = f"{result.name_hint}_dot"  # the tangent x-dot, for readers of the IR
            tangents[result] = tangent

    b.at(terminator.location)
    results = [value_map.get(value, value) for value in terminator.arguments]
    result_tangents = [or_zeros(b, tangents.get(value), value) for value in terminator.arguments]
    b.emit(func.ReturnOp(*results, *result_tangents))
