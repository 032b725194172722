"""Rules for func.call: differentiate the callee once (cached by the transform) and call the result.

Reverse mode calls `@g_vjp(args..., cts...)`, which recomputes `@g`'s forward values inside: a call acts as
a checkpoint (nothing of `@g` is kept from the forward sweep). Results nothing flowed back to get zero
cotangents. Forward mode calls `@g_jvp(args..., tangents...)`, whose primal results replace the call's, so
`@g` runs once.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.builder import RuleBuilder
from irgrad.autodiff.registry import Cotangents, Tangent, jvp_rule, vjp_rule


@vjp_rule(func.CallOp)
def _call_vjp(b: RuleBuilder, op: Operation, *cts: SSAValue | None) -> Cotangents:
    call = cast(func.CallOp, op)
    wrt = [i for i in range(len(call.arguments)) if b.needs(i)]
    seeds = [i for i, ct in enumerate(cts) if ct is not None]
    vjp = b.derive(call.callee, "vjp", wrt, call, seeds)
    seeds = [ct if ct is not None else b.zeros_like(result) for ct, result in zip(cts, call.results)]
    results = b.call(vjp, [*call.arguments, *seeds])
    gradients = iter(results[len(call.results) :])
    return [next(gradients) if i in wrt else None for i in range(len(call.arguments))]


@jvp_rule(func.CallOp)
def _call_jvp(b: RuleBuilder, op: Operation, *tangents: SSAValue | None) -> Tangent:
    call = cast(func.CallOp, op)
    wrt = [i for i, t in enumerate(tangents) if t is not None]
    seeds = [i for i in range(len(call.results)) if b.result_needed(i)]
    jvp = b.derive(call.callee, "jvp", wrt, call, seeds)
    results = b.call(jvp, [*call.arguments, *(tangents[i] for i in wrt)])  # type: ignore[misc]
    count = len(call.results)
    b.replace_primal(call, results[:count])
    return list(results[count:])
