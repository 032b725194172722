"""Rules for func.call: differentiate the callee once (cached by the transform) and call the result.

Reverse mode calls `@g_vjp(args..., cts...)`, which recomputes `@g`'s forward values inside: a call acts as
a checkpoint (nothing of `@g` is kept from the forward sweep). Results nothing flowed back to get zero
cotangents. Forward mode calls `@g_jvp(args..., tangents...)`, whose primal results replace the call's, so
`@g` runs once. `call_vjp`/`call_jvp` also serve the call-like autodiff ops (checkpoint, and custom_vjp in
forward mode: rules/autodiff.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import func
from xdsl.dialects.builtin import SymbolRefAttr
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.builder import RuleBuilder
from irgrad.autodiff.registry import Cotangents, Tangent, jvp_rule, vjp_rule


def call_vjp(
    b: RuleBuilder, op: Operation, callee: SymbolRefAttr, args: Sequence[SSAValue], cts: Sequence[SSAValue | None]
) -> Cotangents:
    """Cotangents of `args` for the call-like `op` of `callee`: a call of `@callee_vjp`."""
    wrt = [i for i in range(len(args)) if b.needs(i)]
    seeds = [i for i, ct in enumerate(cts) if ct is not None]
    vjp = b.derive(callee, "vjp", wrt, op, seeds)
    seeded = [ct if ct is not None else b.zeros_like(result) for ct, result in zip(cts, op.results)]
    results = b.call(vjp, [*args, *seeded])
    gradients = iter(results[len(op.results) :])
    return [next(gradients) if i in wrt else None for i in range(len(args))]


def call_jvp(
    b: RuleBuilder, op: Operation, callee: SymbolRefAttr, args: Sequence[SSAValue], tangents: Sequence[SSAValue | None]
) -> Tangent:
    """Result tangents of the call-like `op` of `callee`: a call of `@callee_jvp`, which replaces `op`."""
    wrt = [i for i, t in enumerate(tangents) if t is not None]
    seeds = [i for i in range(len(op.results)) if b.result_needed(i)]
    jvp = b.derive(callee, "jvp", wrt, op, seeds)
    results = b.call(jvp, [*args, *(tangents[i] for i in wrt)])  # type: ignore[misc]
    count = len(op.results)
    b.replace_primal(op, results[:count])
    return list(results[count:])


@vjp_rule(func.CallOp)
def _call_vjp(b: RuleBuilder, op: Operation, *cts: SSAValue | None) -> Cotangents:
    call = cast(func.CallOp, op)
    return call_vjp(b, call, call.callee, list(call.arguments), cts)


@jvp_rule(func.CallOp)
def _call_jvp(b: RuleBuilder, op: Operation, *tangents: SSAValue | None) -> Tangent:
    call = cast(func.CallOp, op)
    return call_jvp(b, call, call.callee, list(call.arguments), tangents)
