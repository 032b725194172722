"""Rules for the autodiff dialect's derivative-control ops: stop_gradient, custom_vjp, checkpoint.

`stop_gradient` is non-differentiable by declaration: its result is never active, so nothing flows through
it at any order (the op stays in generated functions, so a derivative of a derivative respects it, and the
pass turns it into the identity at the end).

`custom_vjp @f fwd @f_fwd bwd @f_bwd`, reverse mode: the forward sweep calls `@f_fwd` instead of `@f` (its
augment rule), keeping the residuals it returns after `@f`'s results; the reverse sweep calls
`@f_bwd(residuals..., cts...)`. `@f`'s body is never differentiated. Forward mode (JAX cannot take a jvp of
a custom_vjp function): irgrad differentiates `@f` itself in forward mode, so `jvp` and `jvp`-of-`grad`
work; the user's rule is not consulted there (a custom rule that deliberately differs from `@f`'s
derivative, a clipped gradient say, only applies in reverse mode).

`checkpoint @g`: the forward sweep keeps only `@g`'s arguments and results; the reverse sweep calls
`@g_vjp`, whose forward sweep re-runs `@g`'s body (the same ops in the same order, so the recomputed values
are bit-identical) before pulling the cotangents back. That is exactly a call's rule (rules/func.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from irgrad.autodiff.builder import RuleBuilder
from irgrad.autodiff.registry import Cotangents, Tangent, augment_rule, jvp_rule, non_differentiable, vjp_rule
from irgrad.autodiff.rules.func import call_jvp, call_vjp
from irgrad.dialects import autodiff as ad

non_differentiable(ad.StopGradientOp)


# ---------------------------------------------------------------------------------------------------------------
# custom_vjp
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class CustomVJPSaved:
    """What the forward sweep of a custom_vjp keeps for its reverse sweep."""

    bwd: func.FuncOp
    residuals: list[SSAValue]
    results: list[SSAValue]


@augment_rule(ad.CustomVJPOp)
def _custom_vjp_augment(b: RuleBuilder, op: Operation) -> CustomVJPSaved:
    """Call the user's `fwd` in place of the callee: its first results are the callee's, the rest residuals."""
    custom = cast(ad.CustomVJPOp, op)
    fwd = b.lookup(custom.fwd, custom)
    bwd = b.lookup(custom.bwd, custom)
    outputs = b.call(fwd, list(custom.args))
    count = len(custom.res)
    b.replace_primal(custom, outputs[:count])
    return CustomVJPSaved(bwd, list(outputs[count:]), list(outputs[:count]))


@vjp_rule(ad.CustomVJPOp)
def _custom_vjp_vjp(b: RuleBuilder, op: Operation, *cts: SSAValue | None) -> Cotangents:
    """Call the user's `bwd` with the residuals and one cotangent per result (zeros where none flowed)."""
    saved = cast(CustomVJPSaved, b.saved)
    seeded = [ct if ct is not None else b.zeros_like(result) for ct, result in zip(cts, saved.results)]
    gradients = b.call(saved.bwd, [*saved.residuals, *seeded])
    return [gradient if b.needs(i) else None for i, gradient in enumerate(gradients)]


@jvp_rule(ad.CustomVJPOp)
def _custom_vjp_jvp(b: RuleBuilder, op: Operation, *tangents: SSAValue | None) -> Tangent:
    """Forward mode differentiates the callee itself (see the module docstring)."""
    custom = cast(ad.CustomVJPOp, op)
    return call_jvp(b, custom, custom.callee, list(custom.args), tangents)


# ---------------------------------------------------------------------------------------------------------------
# checkpoint
# ---------------------------------------------------------------------------------------------------------------


@vjp_rule(ad.CheckpointOp)
def _checkpoint_vjp(b: RuleBuilder, op: Operation, *cts: SSAValue | None) -> Cotangents:
    """`@g_vjp` re-runs `@g`'s forward inside the reverse sweep: nothing inside `@g` was saved."""
    checkpoint = cast(ad.CheckpointOp, op)
    return call_vjp(b, checkpoint, checkpoint.callee, list(checkpoint.args), cts)


@jvp_rule(ad.CheckpointOp)
def _checkpoint_jvp(b: RuleBuilder, op: Operation, *tangents: SSAValue | None) -> Tangent:
    """Forward mode saves nothing anyway: the call's rule."""
    checkpoint = cast(ad.CheckpointOp, op)
    return call_jvp(b, checkpoint, checkpoint.callee, list(checkpoint.args), tangents)
