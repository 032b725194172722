"""Rules for scf control flow: scf.if, scf.for, scf.while, in both modes and to any order.

Each rule outlines its regions into functions (outline.py: `@<f>_if_then`, `@<f>_for_body`, ...), has
them differentiated by the ordinary drivers, and builds control flow of the same shape that calls the
derived functions. The generated IR holds only scf, func, nn, arith and tensor ops, all with rules, so a
derivative of a loop can be differentiated again; loops are never unrolled, so the IR stays the size of
one iteration.

- scf.if: an scf.if on the same condition whose branches call each branch's JVP (forward) or VJP
  (reverse); the VJP recomputes the taken branch's forward values rather than the forward scf.if
  yielding them.
- scf.for. Forward: the tangents of the carried values are extra iter_args. Reverse (loops.py): a tape
  when the bounds are constants, recomputation from the initial values when they are not.
- scf.while. Forward: tangents as extra carried values. Reverse: the forward loop counts its iterations
  and the reverse loop recomputes each iteration's carried values (loops.py). Only the form
  `ig.while_loop` traces is supported: the condition region forwards its own arguments.

Their batching (vmap) rules are in scf_batching.py.
Details: docs/autodiff.md, "irgrad/autodiff/rules/scf.py".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from irgrad.autodiff.activity import captured_values
from irgrad.autodiff.builder import RuleBuilder, or_zeros
from irgrad.autodiff.errors import AutodiffError
from irgrad.autodiff.loops import (
    Loop,
    ReverseLoop,
    as_index,
    body_wrt,
    build_reverse_loop,
    constant_int,
    empty_tape,
    find_useful,
    find_varied,
    name_values,
    needed_carries,
    symbol,
    tape_type,
    write_row,
)
from irgrad.autodiff.outline import clone_ops, is_canonical_while
from irgrad.autodiff.registry import (
    Cotangents,
    Tangent,
    augment_rule,
    jvp_rule,
    not_supported_yet,
    vjp_rule,
)

T = SSAValue | None

not_supported_yet(
    "only scf.if, scf.for and scf.while have rules (rewrite the region with those)",
    scf.IndexSwitchOp,
    scf.ParallelOp,
    scf.ExecuteRegionOp,
)


def _outline(b: RuleBuilder, kind: str, block: Block, captured: Sequence[SSAValue]) -> func.FuncOp:
    assert b.deriver is not None and b.function is not None
    return b.deriver.outline(b.function, kind, block, captured)


def _derive(
    b: RuleBuilder, function: func.FuncOp, mode: str, wrt: Sequence[int], at: Operation, seeds: Sequence[int]
) -> func.FuncOp:
    return b.derive(symbol(function), mode, wrt, at, seeds)


# ---------------------------------------------------------------------------------------------------------------
# scf.if
# ---------------------------------------------------------------------------------------------------------------


def _branches(b: RuleBuilder, op: scf.IfOp) -> list[func.FuncOp]:
    """Both branches outlined with the same arguments: every value either branch captures."""
    return [
        _outline(b, "if_then", op.true_region.block, b.captured),
        _outline(b, "if_else", op.false_region.block, b.captured),
    ]


@vjp_rule(scf.IfOp)
def _if_vjp(b: RuleBuilder, op: Operation, *cts: T) -> Cotangents:
    """An scf.if on the same condition; each branch calls its branch's VJP (which recomputes the branch)."""
    if_op = cast(scf.IfOp, op)
    wrt = [i for i in range(len(b.captured)) if b.needs(1 + i)]
    if not wrt:
        return [None] * (1 + len(b.captured))
    seeds = [j for j, ct in enumerate(cts) if ct is not None]
    seeded = [ct if ct is not None else b.zeros_like(r) for ct, r in zip(cts, if_op.results)]
    regions = []
    for branch in _branches(b, if_op):
        vjp = _derive(b, branch, "vjp", wrt, if_op, seeds)
        block = Block()
        inner = b.nested(block)
        outputs = inner.call(vjp, [*b.captured, *seeded])
        inner.emit(scf.YieldOp(*outputs[len(cts) :]))
        regions.append(Region(block))
    reverse = b.emit(scf.IfOp(if_op.cond, [b.captured[i].type for i in wrt], *regions))
    gradients = dict(zip(wrt, reverse.results))
    return [None, *(gradients.get(i) for i in range(len(b.captured)))]


@jvp_rule(scf.IfOp)
def _if_jvp(b: RuleBuilder, op: Operation, t_cond: T, *captured_tangents: T) -> Tangent:
    """An scf.if on the same condition yielding results and tangents; it replaces the primal one."""
    if_op = cast(scf.IfOp, op)
    count = len(if_op.results)
    wrt = [i for i, t in enumerate(captured_tangents) if t is not None]
    seeds = [j for j in range(count) if b.result_needed(j)]
    if not wrt or not seeds:
        return [None] * count
    tangents = [captured_tangents[i] for i in wrt]
    regions = []
    for branch in _branches(b, if_op):
        jvp = _derive(b, branch, "jvp", wrt, if_op, seeds)
        block = Block()
        inner = b.nested(block)
        outputs = inner.call(jvp, [*b.captured, *tangents])  # type: ignore[list-item]
        inner.emit(scf.YieldOp(*outputs[:count], *(outputs[count + j] for j in seeds)))
        regions.append(Region(block))
    types = [*if_op.result_types, *(if_op.results[j].type for j in seeds)]
    forward = b.emit(scf.IfOp(if_op.cond, types, *regions))
    b.replace_primal(if_op, forward.results[:count])
    tangent_of = dict(zip(seeds, forward.results[count:]))
    return [tangent_of.get(j) for j in range(count)]


# ---------------------------------------------------------------------------------------------------------------
# scf.for
# ---------------------------------------------------------------------------------------------------------------


def _for_loop(b: RuleBuilder, op: scf.ForOp, varied_inits: Sequence[int], active_captured: list[int]) -> Loop:
    body = _outline(b, "for_body", op.body.block, b.captured)
    loop = Loop(body, list(op.iter_args), list(b.captured), active_captured)
    find_varied(loop, varied_inits)
    return loop


def _static_trip_count(op: scf.ForOp) -> int | None:
    """(ub - lb + step - 1) / step when the bounds are constants (0 when ub <= lb), else None."""
    lb, ub, step = (constant_int(v) for v in (op.lb, op.ub, op.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, (ub - lb + step - 1) // step)


def _is_zero_based(op: scf.ForOp) -> bool:
    return constant_int(op.lb) == 0 and constant_int(op.step) == 1


def _induction(op: scf.ForOp) -> Callable[[RuleBuilder, SSAValue], list[SSAValue]]:
    """Iteration k's induction variable, lb + k * step (k itself for 0, 1, 2, ...)."""
    lb, step = op.lb, op.step
    if _is_zero_based(op):
        return lambda b, k: [k]
    return lambda b, k: [b.int_op(arith.AddiOp, lb, b.int_op(arith.MuliOp, k, step))]


def _iteration(b: RuleBuilder, op: scf.ForOp, iv: SSAValue) -> SSAValue:
    """The iteration number of induction value `iv`, (iv - lb) / step, as an index."""
    if _is_zero_based(op):
        return as_index(b, iv)
    return as_index(b, b.int_op(arith.DivSIOp, b.int_op(arith.SubiOp, iv, op.lb), op.step))


def _trip_count(b: RuleBuilder, op: scf.ForOp, trips: int | None) -> SSAValue:
    """The number of iterations: a constant, or max(0, ceildiv(ub - lb, step)) computed at run time."""
    if trips is not None and _is_zero_based(op):
        return op.ub  # the constant bound is the count
    if trips is not None:
        return b.full(trips, op.lb.type)
    span = op.ub if constant_int(op.lb) == 0 else b.int_op(arith.SubiOp, op.ub, op.lb)
    count = span if constant_int(op.step) == 1 else b.int_op(arith.CeilDivSIOp, span, op.step)
    return b.int_op(arith.MaxSIOp, count, b.full(0, op.lb.type))


@jvp_rule(scf.ForOp)
def _for_jvp(b: RuleBuilder, op: Operation, *tangents: T) -> Tangent:
    """The tangents of the varied carried values ride along as extra iter_args; the body calls its JVP."""
    for_op = cast(scf.ForOp, op)
    count = len(for_op.iter_args)
    init_t, captured_t = tangents[3 : 3 + count], tangents[3 + count :]
    active = [i for i, t in enumerate(captured_t) if t is not None]
    loop = _for_loop(b, for_op, [j for j, t in enumerate(init_t) if t is not None], active)
    if not loop.varied:
        return [None] * count
    jvp = _derive(b, loop.body, "jvp", body_wrt(loop, loop.varied), for_op, loop.varied)
    t_inits = [or_zeros(b, init_t[j], loop.inits[j]) for j in loop.varied]
    block = Block(arg_types=[for_op.lb.type, *(v.type for v in loop.inits), *(t.type for t in t_inits)])
    inner = b.nested(block)
    carries, t_args = block.args[1 : 1 + count], block.args[1 + count :]
    names = [a.name_hint for a in for_op.body.block.args]
    name_values(block.args[: 1 + count], names)
    name_values(t_args, [names[1 + j] for j in loop.varied], "_dot")
    outputs = inner.call(jvp, [block.args[0], *carries, *loop.captured, *t_args, *(captured_t[i] for i in active)])
    inner.emit(scf.YieldOp(*outputs[:count], *(outputs[count + j] for j in loop.varied)))
    forward = b.emit(scf.ForOp(for_op.lb, for_op.ub, for_op.step, [*loop.inits, *t_inits], block))
    b.replace_primal(for_op, forward.results[:count])
    tangent_of = dict(zip(loop.varied, forward.results[count:]))
    return [tangent_of.get(j) for j in range(count)]


@dataclass
class ForSaved:
    """What an scf.for's forward sweep hands its VJP rule."""

    op: scf.ForOp
    trips: int | None
    reverse: ReverseLoop | None
    """None when no cotangent flows through the loop, or it runs 0 times."""


@augment_rule(scf.ForOp)
def _for_augment(b: RuleBuilder, op: Operation) -> ForSaved:
    """Differentiate the body; with constant bounds, make the forward loop write a tape of the carried
    values the body's VJP reads (with dynamic bounds they are recomputed in the reverse sweep instead)."""
    for_op = cast(scf.ForOp, op)
    count = len(for_op.iter_args)
    trips = _static_trip_count(for_op)
    if trips == 0:
        return ForSaved(for_op, 0, None)
    active = [i for i in range(len(b.captured)) if b.needs(3 + count + i)]
    loop = _for_loop(b, for_op, [j for j in range(count) if b.needs(3 + j)], active)
    find_useful(loop, [j for j in range(count) if b.result_needed(j)])
    if not loop.useful:
        return ForSaved(for_op, trips, None)
    vjp = _derive(b, loop.body, "vjp", body_wrt(loop, loop.useful), for_op, loop.useful)
    needed = needed_carries(loop, vjp)
    reverse = ReverseLoop(loop, vjp, _induction(for_op))
    if needed and trips is not None:
        for_op, reverse.tapes = _taped_loop(b, for_op, loop, needed, trips)
    else:
        reverse.recompute = needed
    return ForSaved(for_op, trips, reverse)


def _taped_loop(
    b: RuleBuilder, op: scf.ForOp, loop: Loop, needed: Sequence[int], trips: int
) -> tuple[scf.ForOp, dict[int, SSAValue]]:
    """Replace the forward loop by one that also writes row k of a tape for each needed carried value,
    with the value entering iteration k. Returns the new loop and the tapes."""
    count = len(loop.inits)
    types = [tape_type(loop.inits[j].type, trips) for j in needed]
    empties = [empty_tape(b, t) for t in types]
    b.full(0, IndexType())  # made before the body, so the rows' start indices share it
    old = op.body.block
    block = Block(arg_types=[*(a.type for a in old.args), *types])
    mapping: dict[SSAValue, SSAValue] = {}
    terminator = clone_ops(old, block, mapping)
    tape_names = [old.args[1 + j].name_hint for j in needed]
    name_values(empties, tape_names, "_tape")
    name_values(block.args[1 + count :], tape_names, "_tape")
    inner = b.nested(block)
    k = _iteration(inner, op, block.args[0])
    rows = [write_row(inner, tape, block.args[1 + j], k) for tape, j in zip(block.args[1 + count :], needed)]
    inner.emit(scf.YieldOp(*(mapping.get(v, v) for v in terminator.operands), *rows))
    forward = cast(scf.ForOp, b.emit(scf.ForOp(op.lb, op.ub, op.step, [*loop.inits, *empties], block)))
    b.replace_primal(op, forward.results[:count])
    name_values(forward.results[count:], tape_names, "_tape")
    return forward, dict(zip(needed, forward.results[count:]))


@vjp_rule(scf.ForOp)
def _for_vjp(b: RuleBuilder, op: Operation, *cts: T) -> Cotangents:
    """A reverse scf.for over the iterations (loops.py); 0 iterations pass the cotangents through."""
    saved = cast(ForSaved, b.saved)
    count = len(cts)
    if saved.trips == 0:
        return [None] * 3 + list(cts) + [None] * len(b.captured)
    if saved.reverse is None:
        return [None] * (3 + count + len(b.captured))
    saved.reverse.count = _trip_count(b, saved.op, saved.trips)
    init_cts, captured_cts = build_reverse_loop(b, saved.reverse, cts)
    return [
        None,
        None,
        None,
        *(init_cts.get(j) for j in range(count)),
        *(captured_cts.get(i) for i in range(len(b.captured))),
    ]


# ---------------------------------------------------------------------------------------------------------------
# scf.while
# ---------------------------------------------------------------------------------------------------------------


def _while_loop(
    b: RuleBuilder, op: scf.WhileOp, varied_inits: Sequence[int], is_active: Callable[[int], bool], mode: str
) -> tuple[Loop, list[int]]:
    """The outlined body (the after region) and, for each value it captures, its position in the op's
    captured values (the condition region may capture others, which get no derivative)."""
    if not is_canonical_while(op):
        raise AutodiffError(
            f"not supported yet: an scf.while whose condition region passes the body values other than its own "
            f"arguments ({mode}); ig.while_loop never makes one: compute them at the start of the body instead",
            op,
        )
    after = op.after_region
    captured = captured_values([after])
    positions = [b.captured.index(v) for v in captured]
    active = [i for i, p in enumerate(positions) if is_active(p)]
    body = _outline(b, "while_body", after.block, captured)
    loop = Loop(body, list(op.arguments), captured, active)
    find_varied(loop, varied_inits)
    return loop, positions


@jvp_rule(scf.WhileOp)
def _while_jvp(b: RuleBuilder, op: Operation, *tangents: T) -> Tangent:
    """The tangents of the varied carried values are extra carried values: the condition region forwards
    them unchanged, the body region calls the body's JVP."""
    while_op = cast(scf.WhileOp, op)
    count = len(while_op.arguments)
    init_t, captured_t = tangents[:count], tangents[count:]
    varied_inits = [j for j, t in enumerate(init_t) if t is not None]
    loop, positions = _while_loop(b, while_op, varied_inits, lambda p: captured_t[p] is not None, "forward mode")
    if not loop.varied:
        return [None] * count
    jvp = _derive(b, loop.body, "jvp", body_wrt(loop, loop.varied), while_op, loop.varied)
    t_inits = [or_zeros(b, init_t[j], loop.inits[j]) for j in loop.varied]
    types = [*(v.type for v in loop.inits), *(t.type for t in t_inits)]
    before = _forwarding_condition(while_op, types)
    after = Block(arg_types=types)
    names = [a.name_hint for a in while_op.after_region.block.args]
    name_values(after.args, names)
    name_values(after.args[count:], [names[j] for j in loop.varied], "_dot")
    name_values(before.args[count:], [while_op.before_region.block.args[j].name_hint for j in loop.varied], "_dot")
    inner = b.nested(after)
    t_captured = [captured_t[positions[i]] for i in loop.active_captured]
    outputs = inner.call(jvp, [*after.args[:count], *loop.captured, *after.args[count:], *t_captured])
    inner.emit(scf.YieldOp(*outputs[:count], *(outputs[count + j] for j in loop.varied)))
    forward = b.emit(scf.WhileOp([*loop.inits, *t_inits], types, Region(before), Region(after)))
    b.replace_primal(while_op, forward.results[:count])
    tangent_of = dict(zip(loop.varied, forward.results[count:]))
    return [tangent_of.get(j) for j in range(count)]


def _forwarding_condition(op: scf.WhileOp, types: Sequence[Attribute]) -> Block:
    """The condition region of `op` over carried values of `types` (the original ones first): the same
    condition, forwarding every argument, the extra ones unchanged."""
    old = op.before_region.block
    block = Block(arg_types=list(types))
    mapping: dict[SSAValue, SSAValue] = {}
    condition = cast(scf.ConditionOp, clone_ops(old, block, mapping))
    forward = scf.ConditionOp(mapping.get(condition.condition, condition.condition), *block.args)
    forward.location = condition.location
    block.add_op(forward)
    return block


@dataclass
class WhileSaved:
    """What an scf.while's forward sweep hands its VJP rule."""

    reverse: ReverseLoop
    positions: list[int]


@augment_rule(scf.WhileOp)
def _while_augment(b: RuleBuilder, op: Operation) -> WhileSaved | None:
    """Differentiate the body, and make the forward loop count its iterations (an extra carried index)."""
    while_op = cast(scf.WhileOp, op)
    count = len(while_op.arguments)
    varied_inits = [j for j in range(count) if b.needs(j)]
    loop, positions = _while_loop(b, while_op, varied_inits, lambda p: b.needs(count + p), "reverse mode")
    find_useful(loop, [j for j in range(count) if b.result_needed(j)])
    if not loop.useful:
        return None
    vjp = _derive(b, loop.body, "vjp", body_wrt(loop, loop.useful), while_op, loop.useful)
    needed = needed_carries(loop, vjp)
    iterations = _counting_while(b, while_op)
    reverse = ReverseLoop(loop, vjp, lambda inner, k: [], iterations, recompute=needed)
    return WhileSaved(reverse, positions)


def _counting_while(b: RuleBuilder, op: scf.WhileOp) -> SSAValue:
    """Replace the forward loop by one that also counts the iterations (the body runs); return the count."""
    count = len(op.arguments)
    types = [*(v.type for v in op.arguments), IndexType()]
    zero, one = b.full(0, IndexType()), b.full(1, IndexType())
    before = _forwarding_condition(op, types)
    after = Block(arg_types=types)
    mapping: dict[SSAValue, SSAValue] = {}
    terminator = clone_ops(op.after_region.block, after, mapping)
    inner = b.nested(after)
    before.args[count].name_hint = after.args[count].name_hint = "count"
    next_count = inner.int_op(arith.AddiOp, after.args[count], one)
    inner.emit(scf.YieldOp(*(mapping.get(v, v) for v in terminator.operands), next_count))
    counting = b.emit(scf.WhileOp([*op.arguments, zero], types, Region(before), Region(after)))
    b.replace_primal(op, counting.results[:count])
    counting.results[count].name_hint = "iterations"
    return counting.results[count]


@vjp_rule(scf.WhileOp)
def _while_vjp(b: RuleBuilder, op: Operation, *cts: T) -> Cotangents:
    """A reverse scf.for over the counted iterations, recomputing each one's carried values (loops.py)."""
    saved = cast(WhileSaved | None, b.saved)
    count = len(cts)
    if saved is None:
        return [None] * (count + len(b.captured))
    init_cts, captured_cts = build_reverse_loop(b, saved.reverse, cts)
    by_position: dict[int, SSAValue] = {saved.positions[i]: ct for i, ct in captured_cts.items()}
    return [*(init_cts.get(j) for j in range(count)), *(by_position.get(p) for p in range(len(b.captured)))]
