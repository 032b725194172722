"""Batching (vmap) rules for scf control flow: scf.for, scf.if, scf.while (their derivatives: scf.py).

The rules keep the control flow and batch the regions (batching.py's `Batcher.batch_block`):
- scf.for with shared bounds: a carried value is batched when its initial value or what the body yields for
  it is (found by batching the body until the set stops growing).
- scf.for whose bounds depend on a mapped argument (a per-example trip count): as JAX turns such a fori_loop
  into a while_loop, the equivalent scf.while (`_for_as_while`) is batched as below, its induction variable
  a batched index (tensor<B x i64>).
- scf.if on an unbatched condition: both branches batched; a result batched in either is batched in both.
- scf.if on a batched condition (a batched scalar tensor<B x i1>): as JAX does, both branches run, on every
  example, and each result is an elementwise select (a NaN or inf in the branch not taken never reaches it).
- scf.while whose condition is the same for every example: like scf.for.
- scf.while whose condition differs per example (`_per_example_while`), with JAX's semantics: the loop
  carries a mask `running` of the examples whose condition still holds, runs while any example runs, and
  yields select(running, new, old), so each example's result is what the unbatched loop gives it. The
  batched loop is differentiated by the rules of scf.py like any other (grad of vmap, vmap of grad).
Details: docs/autodiff.md, "irgrad/autodiff/rules/scf_batching.py".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import i1, i32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from irgrad.autodiff.batching import BatchBuilder, Batched, Batcher, batched, batched_type, materialize
from irgrad.autodiff.builder import RuleBuilder, shape_of
from irgrad.autodiff.outline import clone_ops, is_canonical_while
from irgrad.autodiff.registry import batch_rule
from irgrad.dialects import nn


def _batched_types(types: Sequence[Attribute], mask: Sequence[bool], size: int) -> list[Attribute]:
    return [batched_type(t, size) if m else t for t, m in zip(types, mask)]


def _finish(
    b: BatchBuilder, block: Block, yielded: Sequence[Batched], mask: Sequence[bool], terminator: Operation
) -> None:
    """End `block` (a batched region body) with `terminator`'s kind, broadcasting what it yields unbatched
    where `mask` wants it batched."""
    inner = b.nested(block)
    values = [batched(inner, v, b.size) if m and not bt else v for (v, bt), m in zip(yielded, mask)]
    if isinstance(terminator, scf.ConditionOp):
        inner.emit(scf.ConditionOp(values[0], *values[1:]))
    else:
        inner.emit(scf.YieldOp(*values))


def _carried_fixed_point(
    mask: list[bool], batch_body: Callable[[list[bool]], tuple[list[Batched], list[Block]]]
) -> tuple[list[bool], list[Batched], list[Block]]:
    """Batch a loop body (into new blocks) with carried values batched as `mask` says, growing `mask` with
    what the body yields batched until it no longer changes (at most once per carried value). The blocks
    of the attempts that were too small are erased, so their ops leave no uses of outer values behind."""
    while True:
        yielded, blocks = batch_body(mask)
        grown = [m or bt for m, (_, bt) in zip(mask, yielded)]
        if grown == mask:
            return mask, yielded, blocks
        for block in blocks:
            block.erase(safe_erase=False)
        mask = grown


@batch_rule(scf.ForOp)
def _for_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool], batcher: Batcher
) -> list[Batched]:
    """The same loop over batched carried values (see the module docstring); with bounds that differ per
    example, the equivalent scf.while, batched (`_for_as_while`)."""
    for_op = cast(scf.ForOp, op)
    if any(is_batched[:3]):
        loop = _for_as_while(for_op)
        block = for_op.parent_block()
        if block is not None:  # in place of the scf.for for a moment, so the calls in it resolve their callees
            block.insert_op_before(loop, for_op)
        try:
            results = _while_batch(b, loop, [args[0], *args[3:]], [is_batched[0], *is_batched[3:]], batcher)
        finally:
            if loop.parent is not None:
                loop.detach()
            loop.erase(safe_erase=False)  # its regions use the scf.for's outer values: drop those uses
        return results[1:]
    lb, ub, step, *inits = args
    body = for_op.body.block

    def batch_body(mask: list[bool]) -> tuple[list[Batched], list[Block]]:
        block = Block(arg_types=[body.args[0].type, *_batched_types([a.type for a in body.args[1:]], mask, b.size)])
        for new, old in zip(block.args, body.args):
            new.name_hint = old.name_hint
        carried = [(block.args[0], False), *zip(block.args[1:], mask)]
        return batcher.batch_block(body, carried, block), [block]

    mask, yielded, (block,) = _carried_fixed_point(list(is_batched[3:]), batch_body)
    _finish(b, block, yielded, mask, body.last_op)  # type: ignore[arg-type]
    inits = [batched(b, v, b.size) if m and not bt else v for v, bt, m in zip(inits, is_batched[3:], mask)]
    new = b.emit(scf.ForOp(lb, ub, step, inits, block))
    return list(zip(new.results, mask))


def _for_as_while(op: scf.ForOp) -> scf.WhileOp:
    """`op` as the (unbatched) scf.while that JAX makes of a fori_loop with traced bounds: the induction
    variable is the first carried value, from lb while iv < ub, stepping by step. It only stands for `op`
    while it is batched: it uses `op`'s outer values (ub, step, what the body captures), and is erased."""
    body = op.body.block
    types = [a.type for a in body.args]
    before = Block(arg_types=types)
    for new, old in zip(before.args, body.args):
        new.name_hint = old.name_hint
    running = arith.CmpiOp(before.args[0], op.ub, "slt")
    before.add_ops([running, scf.ConditionOp(running.result, *before.args)])
    after = Block(arg_types=types)
    mapping: dict[SSAValue, SSAValue] = {}
    terminator = clone_ops(body, after, mapping)
    following = arith.AddiOp(after.args[0], op.step)
    after.add_ops([following, scf.YieldOp(following.result, *(mapping.get(v, v) for v in terminator.operands))])
    loop = scf.WhileOp([op.lb, *op.iter_args], types, Region(before), Region(after))
    loop.location = op.location
    return loop


@batch_rule(scf.IfOp)
def _if_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool], batcher: Batcher
) -> list[Batched]:
    """An unbatched condition keeps the scf.if; a batched one runs both branches and selects per example."""
    if_op = cast(scf.IfOp, op)
    regions = [r for r in (if_op.true_region, if_op.false_region) if r.blocks]
    count = len(if_op.results)
    if is_batched[0]:
        return _select_branches(b, if_op, args[0], [batcher.inline_block(r.block, []) for r in regions])
    blocks = [Block() for _ in regions]
    yielded = [batcher.batch_block(r.block, [], block) for r, block in zip(regions, blocks)]
    mask = [any(branch[j][1] for branch in yielded) for j in range(count)]
    for region, block, branch in zip(regions, blocks, yielded):
        _finish(b, block, branch, mask, region.block.last_op)  # type: ignore[arg-type]
    types = _batched_types(if_op.result_types, mask, b.size)
    new = b.emit(scf.IfOp(args[0], types, Region(blocks[0]), Region(blocks[1]) if len(blocks) > 1 else None))
    return list(zip(new.results, mask))


def _select_branches(
    b: BatchBuilder, op: scf.IfOp, condition: SSAValue, branches: Sequence[Sequence[Batched]]
) -> list[Batched]:
    """Each result: the then-branch's value where the example's condition (tensor<B x i1>) holds, else the
    else-branch's; one value both branches yield unbatched stays unbatched."""
    if not op.results:
        return []
    (then_values, else_values) = branches
    results: list[Batched] = []
    for (t, t_batched), (f, f_batched) in zip(then_values, else_values):
        if t is f and not t_batched:
            results.append((t, False))
            continue
        t = t if t_batched else batched(b, t, b.size)
        f = f if f_batched else batched(b, f, b.size)
        shape = shape_of(t)
        pred = b.broadcast(condition, shape, [0])
        results.append((cast(SSAValue, b.select(pred, t, f)), True))
    return results


@batch_rule(scf.WhileOp)
def _while_batch(
    b: BatchBuilder, op: Operation, args: Sequence[SSAValue], is_batched: Sequence[bool], batcher: Batcher
) -> list[Batched]:
    """The same loop over batched carried values while the condition is the same for every example; a
    condition that differs per example runs the loop while any example's holds (`_per_example_while`)."""
    while_op = cast(scf.WhileOp, op)
    before, after = while_op.before_region.block, while_op.after_region.block
    forwarded: list[bool] = []
    condition: list[Batched] = []

    def batch_body(mask: list[bool]) -> tuple[list[Batched], list[Block]]:
        before_block = Block(arg_types=_batched_types([a.type for a in before.args], mask, b.size))
        out = batcher.batch_block(before, list(zip(before_block.args, mask)), before_block)
        forwarded[:] = [bt for _, bt in out[1:]]
        after_block = Block(arg_types=_batched_types([a.type for a in after.args], forwarded, b.size))
        for block, region_block in ((before_block, before), (after_block, after)):
            for new, old in zip(block.args, region_block.args):
                new.name_hint = old.name_hint
        condition[:] = out
        yielded = batcher.batch_block(after, list(zip(after_block.args, forwarded)), after_block)
        return yielded, [before_block, after_block]

    mask, yielded, (before_block, after_block) = _carried_fixed_point(list(is_batched), batch_body)
    if condition[0][1]:
        for block in (before_block, after_block):
            block.erase(safe_erase=False)
        return _per_example_while(b, while_op, args, is_batched, batcher)
    _finish(b, before_block, condition, [False, *forwarded], before.last_op)  # type: ignore[arg-type]
    _finish(b, after_block, yielded, mask, after.last_op)  # type: ignore[arg-type]
    inits = [batched(b, v, b.size) if m and not bt else v for v, bt, m in zip(args, is_batched, mask)]
    types = _batched_types(while_op.result_types, forwarded, b.size)
    new = b.emit(scf.WhileOp(inits, types, Region(before_block), Region(after_block)))
    return list(zip(new.results, forwarded))


def _per_example_while(
    b: BatchBuilder, op: scf.WhileOp, args: Sequence[SSAValue], is_batched: Sequence[bool], batcher: Batcher
) -> list[Batched]:
    """A while loop whose condition differs per example, as JAX batches it: every carried value batched, plus
    a carried mask `running` (tensor<B x i1>) of the examples whose condition still holds, computed at the
    initial values before the loop and at the new values at the end of each iteration. The loop runs while
    any example runs (an nn.reduce_max of the mask); the body computes every example, and each carried value
    becomes select(running, new, old), so a finished example is frozen and ends with what the unbatched loop
    gives it. The batched condition region forwards its own arguments (whatever the original one forwards),
    so the batched loop can be differentiated like any other: when the original forwards other values than
    its arguments, the body recomputes them from the carried values first, and so does the code after the
    loop for its results."""
    before, after = op.before_region.block, op.after_region.block
    canonical = is_canonical_while(op)
    size = b.size
    inits = materialize(b, args, is_batched)
    types = [v.type for v in inits]
    mask_type = batched_type(i1, size)

    def condition_at(into: Block | None, values: Sequence[SSAValue]) -> tuple[SSAValue, list[Batched]]:
        """The per-example condition at carried `values`, and the values the condition region forwards
        (batched into `into`, or at the insertion point)."""
        carried = [(v, True) for v in values]
        out = batcher.inline_block(before, carried) if into is None else batcher.batch_block(before, carried, into)
        (value, value_batched), forwarded = out[0], out[1:]
        return value if value_batched else batched(b if into is None else b.nested(into), value, size), forwarded

    running, _ = condition_at(None, inits)
    running.name_hint = "running"

    before_block = Block(arg_types=[*types, mask_type])
    after_block = Block(arg_types=[*types, mask_type])
    for block in (before_block, after_block):
        for new, old in zip(block.args, (after if canonical else before).args):
            new.name_hint = old.name_hint
        block.args[-1].name_hint = "running"
    inner = b.nested(before_block)
    inner.emit(scf.ConditionOp(_any(inner, before_block.args[-1]), *before_block.args))

    olds, mask = list(after_block.args[:-1]), after_block.args[-1]
    forwarded = [(v, True) for v in olds] if canonical else condition_at(after_block, olds)[1]
    news = batcher.batch_block(after, forwarded, after_block)
    inner = b.nested(after_block)
    updated = []
    for (new, new_batched), old in zip(news, olds):
        new = new if new_batched else batched(inner, new, size)
        pred = inner.broadcast(mask, [size, *shape_of(old)[1:]], [0])
        updated.append(cast(SSAValue, inner.select(pred, new, old)))
        updated[-1].name_hint = old.name_hint
    still, _ = condition_at(after_block, updated)
    inner = b.nested(after_block)
    still = inner.value(nn.AndOp(mask, still))
    still.name_hint = "running"
    inner.emit(scf.YieldOp(*updated, still))

    new_op = b.emit(scf.WhileOp([*inits, running], [*types, mask_type], Region(before_block), Region(after_block)))
    finals = list(new_op.results[:-1])
    if canonical:
        for result, old in zip(finals, op.results):
            result.name_hint = old.name_hint
        return [(v, True) for v in finals]
    return condition_at(None, finals)[1]  # what the condition region forwards at the last carried values


def _any(b: RuleBuilder, mask: SSAValue) -> SSAValue:
    """Whether any element of the [B] i1 `mask` is set, as an i1 scalar (an scf.condition): the maximum of
    the mask as i32, compared with 0."""
    as_int = b.convert(mask, i32)
    most = b.value(nn.ReduceMaxOp(as_int, [0]))
    any_running = b.extract(b.compare("gt", most, b.full(0, most.type)), [])
    any_running.name_hint = "any"
    return any_running
