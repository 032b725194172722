"""Rules for the autodiff dialect's derivative-control ops: stop_gradient, custom_vjp, checkpoint.

`stop_gradient` is non-differentiable by declaration: its result is never active, so nothing flows through
it at any order (the op stays in generated functions, so a derivative of a derivative respects it, and the
pass turns it into the identity at the end).

`custom_vjp @f fwd @f_fwd bwd @f_bwd`, reverse mode: the forward sweep calls `@f_fwd` instead of `@f` (its
augment rule), keeping its residuals; the reverse sweep calls `@f_bwd(residuals..., cts...)`. Forward mode
differentiates `@f` itself (the user's rule only applies in reverse mode).

`custom_jvp @f jvp @f_jvp`: forward mode calls the user's `@f_jvp(args..., tangents...)`; reverse mode
transposes the rule, as JAX does. `@f` is never differentiated, in either mode.

`checkpoint @g`: the forward sweep keeps only `@g`'s arguments and results; the reverse sweep calls
`@g_vjp`, which re-runs `@g`'s body (bit-identical values) before pulling the cotangents back: exactly a
call's rule (rules/func.py).

Batching (vmap) keeps each op's meaning: the callee, and a custom rule's functions, are batched too.
Details: docs/autodiff.md, "irgrad/autodiff/rules/autodiff.py".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import func
from xdsl.dialects.builtin import SymbolRefAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched, batched
from irgrad.autodiff.builder import RuleBuilder, is_float_type
from irgrad.autodiff.registry import (
    Cotangents,
    Tangent,
    augment_rule,
    batch_rule,
    jvp_rule,
    non_differentiable,
    vjp_rule,
)
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
# custom_jvp
# ---------------------------------------------------------------------------------------------------------------


@jvp_rule(ad.CustomJVPOp)
def _custom_jvp_jvp(b: RuleBuilder, op: Operation, *tangents: SSAValue | None) -> Tangent:
    """Call the user's rule with a tangent per argument (zeros where none); its primal results replace the op's."""
    custom = cast(ad.CustomJVPOp, op)
    rule = b.lookup(custom.jvp, custom)
    args = list(custom.args)
    filled = [t if t is not None else b.zeros_like(a) for t, a in zip(tangents, args)]
    results = b.call(rule, [*args, *filled])
    count = len(custom.res)
    b.replace_primal(custom, results[:count])
    return list(results[count:])


def _tangent_map(b: RuleBuilder, custom: ad.CustomJVPOp, rule: func.FuncOp) -> func.FuncOp:
    """`@<rule>_tangents(args..., tangents...) -> result tangents`: the linear map reverse mode transposes
    (built once per rule)."""
    deriver = b.deriver
    assert deriver is not None
    key = ("custom_jvp_tangents", rule)
    if key not in deriver.cache:
        count = len(custom.res)
        deriver.cache[key] = _wrapper(  # type: ignore[index]
            b, rule, f"{rule.sym_name.data}_tangents", rule, lambda wb, values: values[count:]
        )
    return deriver.cache[key]  # type: ignore[index]


@vjp_rule(ad.CustomJVPOp)
def _custom_jvp_vjp(b: RuleBuilder, op: Operation, *cts: SSAValue | None) -> Cotangents:
    """The transpose of the user's rule: the VJP of its tangent map w.r.t. the tangents, at zero tangents."""
    custom = cast(ad.CustomJVPOp, op)
    args = list(custom.args)
    n = len(args)
    wrt = [n + i for i in range(n) if b.needs(i) and is_float_type(args[i].type)]
    seeds = [i for i, ct in enumerate(cts) if ct is not None]
    if not wrt or not seeds:
        return [None] * n
    tangent_map = _tangent_map(b, custom, b.lookup(custom.jvp, custom))
    vjp = b.derive(SymbolRefAttr(tangent_map.sym_name), "vjp", wrt, custom, seeds)
    seeded = [ct if ct is not None else b.zeros_like(result) for ct, result in zip(cts, custom.results)]
    results = b.call(vjp, [*args, *(b.zeros_like(a) for a in args), *seeded])
    gradients = iter(results[len(custom.res) :])
    return [next(gradients) if n + i in wrt else None for i in range(n)]


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


# ---------------------------------------------------------------------------------------------------------------
# Batching (vmap)
# ---------------------------------------------------------------------------------------------------------------


@batch_rule(ad.StopGradientOp)
def _stop_gradient_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]
) -> Batched:
    return b.value(ad.StopGradientOp(args[0])), True


@batch_rule(ad.CheckpointOp)
def _checkpoint_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]
) -> list[Batched]:
    """A checkpoint of the batched callee: its intermediates are recomputed, for all examples at once."""
    checkpoint = cast(ad.CheckpointOp, op)
    assert b.deriver is not None
    callee = b.lookup(checkpoint.callee, checkpoint)
    function, mask = b.deriver.derive_batched(callee, tuple(is_batched), b.size, checkpoint)
    new = b.emit(ad.CheckpointOp(function, list(args)))
    return list(zip(new.results, mask))


def _wrapper(
    b: BatchBuilder,
    near: func.FuncOp,
    base: str,
    inner: func.FuncOp,
    adjust: Callable[[RuleBuilder, list[SSAValue]], list[SSAValue]],
) -> func.FuncOp:
    """`@<base>`: calls `inner` with its own arguments and returns `adjust` of the results (placed after
    `near`; removed by the pass if nothing ends up calling it)."""
    deriver = b.deriver
    assert deriver is not None
    arg_types = list(inner.function_type.inputs.data)
    block = Block(arg_types=arg_types)
    for arg, inner_arg in zip(block.args, inner.body.block.args):
        arg.name_hint = inner_arg.name_hint
    wb = RuleBuilder(block, deriver)
    wb.location = b.location
    outputs = adjust(wb, list(wb.call(inner, list(block.args))))
    wb.emit(func.ReturnOp(*outputs))
    function = func.FuncOp(
        deriver.fresh_name(near, base), (arg_types, [v.type for v in outputs]), Region(block), visibility="private"
    )
    function.location = near.location
    deriver.place(function, near)
    deriver.outlined.append(function)
    return function


def _all_batched(
    size: int, count: int, mask: Sequence[bool]
) -> Callable[[RuleBuilder, list[SSAValue]], list[SSAValue]]:
    """Broadcast the first `count` results to the batch where `mask` says they are unbatched."""

    def adjust(wb: RuleBuilder, values: list[SSAValue]) -> list[SSAValue]:
        return [batched(wb, v, size) if i < count and not mask[i] else v for i, v in enumerate(values)]

    return adjust


@batch_rule(ad.CustomVJPOp)
def _custom_vjp_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]
) -> list[Batched]:
    """A custom_vjp of the batched callee whose fwd and bwd are the user's, batched (as JAX batches a
    custom_vjp): every result is batched (broadcast where the callee's is not, so the batched fwd and callee
    agree and bwd always gets per-example cotangents); bwd, batched over the residuals fwd batches and all the
    cotangents, yields per-example cotangents of the arguments: summed over the examples for an unbatched
    argument (B times the value when bwd's is the same for every example), broadcast for a batched argument
    whose cotangent bwd computes from unbatched values."""
    custom = cast(ad.CustomVJPOp, op)
    deriver = b.deriver
    assert deriver is not None
    size, mask, count = b.size, tuple(is_batched), len(custom.res)
    callee, fwd, bwd = (b.lookup(ref, custom) for ref in (custom.callee, custom.fwd, custom.bwd))
    callee_b, callee_mask = deriver.derive_batched(callee, mask, size, custom)
    fwd_b, fwd_mask = deriver.derive_batched(fwd, mask, size, custom)
    bwd_b, bwd_mask = deriver.derive_batched(bwd, (*fwd_mask[count:], *[True] * count), size, custom)
    if not all(callee_mask):
        all_batched = _all_batched(size, count, callee_mask)
        callee_b = _wrapper(b, callee, f"{callee_b.sym_name.data}_all", callee_b, all_batched)
    if not all(fwd_mask[:count]):
        fwd_b = _wrapper(b, fwd, f"{fwd_b.sym_name.data}_all", fwd_b, _all_batched(size, count, fwd_mask))
    if bwd_mask != mask:

        def per_argument(wb: RuleBuilder, cts: list[SSAValue]) -> list[SSAValue]:
            out = []
            for ct, want, got, arg_type in zip(cts, mask, bwd_mask, callee.function_type.inputs.data):
                if want and not got:
                    ct = batched(wb, ct, size)
                elif got and not want:
                    total = wb.reduce_sum(ct, [0])
                    ct = total if isinstance(arg_type, TensorType) else wb.extract(total, [])
                elif not got and not want and size != 1 and is_float_type(ct.type):
                    ct = cast(SSAValue, wb.mul(ct, wb.full(size, ct.type)))  # the same for every example
                out.append(ct)
            return out

        bwd_b = _wrapper(b, bwd, f"{bwd_b.sym_name.data}_args", bwd_b, per_argument)
    new = b.emit(ad.CustomVJPOp(callee_b, fwd_b, bwd_b, list(args)))
    return [(result, True) for result in new.results]


@batch_rule(ad.CustomJVPOp)
def _custom_jvp_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool]
) -> list[Batched]:
    """A custom_jvp of the batched callee whose rule is the user's, batched with each tangent batched where its
    argument is; every result (and result tangent) is batched, broadcast where the batched function's is not,
    so the callee and the rule agree on the result types."""
    custom = cast(ad.CustomJVPOp, op)
    deriver = b.deriver
    assert deriver is not None
    size, mask, count = b.size, tuple(is_batched), len(custom.res)
    callee, rule = b.lookup(custom.callee, custom), b.lookup(custom.jvp, custom)
    callee_b, callee_mask = deriver.derive_batched(callee, mask, size, custom)
    rule_b, rule_mask = deriver.derive_batched(rule, (*mask, *mask), size, custom)
    if not all(callee_mask):
        callee_b = _wrapper(b, callee, f"{callee_b.sym_name.data}_all", callee_b, _all_batched(size, count, callee_mask))
    if not all(rule_mask):
        rule_b = _wrapper(b, rule, f"{rule_b.sym_name.data}_all", rule_b, _all_batched(size, 2 * count, rule_mask))
    new = b.emit(ad.CustomJVPOp(callee_b, rule_b, list(args)))
    return [(result, True) for result in new.results]
