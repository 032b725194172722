"""Outlining: a region's block becomes a function of its own, so the drivers can differentiate it.

Why outline instead of differentiating a region in place: a loop body or an `if` branch is then an ordinary
one-block `func.func`, and everything the pass has for functions applies to it unchanged: activity
analysis, every rule, nested control flow (a loop inside the body is a loop inside that function), the
cache of derived functions, higher order. A region rule asks for `@<f>_for_body_vjp` and calls it inside
the loop it builds; a call acts as a checkpoint, so the body's forward values are recomputed inside the
call, from the carried values the rule gives it (read from a tape, or recomputed).

The outlined function of a block with arguments `(a...)` whose ops use the outside values `(c...)` is
`func.func private @<f>_<kind>(a..., c...) -> (yielded...)`; an `scf.condition` terminator returns the
condition, then the values it forwards.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence

from xdsl.dialects import func, scf
from xdsl.ir import Block, Operation, Region, SSAValue

from irgrad.autodiff.activity import used_values


_ORIGINS: weakref.WeakKeyDictionary[func.FuncOp, str] = weakref.WeakKeyDictionary()


def describe(function: func.FuncOp) -> str:
    """`@name`, and for an outlined region where it came from: errors inside a loop body name the loop."""
    name = f"@{function.sym_name.data}"
    origin = _ORIGINS.get(function)
    return f"{name} ({origin})" if origin else name


def record_origin(function: func.FuncOp, origin: str) -> None:
    _ORIGINS[function] = origin


def outline_block(name: str, block: Block, captured: Sequence[SSAValue]) -> func.FuncOp:
    """A detached private function computing what `block` yields, from its arguments then `captured`."""
    arg_types = [a.type for a in block.args] + [v.type for v in captured]
    body = Block(arg_types=arg_types)
    mapping: dict[SSAValue, SSAValue] = {}
    for original, arg in zip([*block.args, *captured], body.args, strict=True):
        mapping[original] = arg
        arg.name_hint = original.name_hint
    terminator = block.last_op
    assert terminator is not None
    for op in block.ops:
        if op is terminator:
            break
        body.add_op(op.clone(mapping))
    returned = [mapping.get(v, v) for v in terminator.operands]
    ret = func.ReturnOp(*returned)
    ret.location = terminator.location
    body.add_op(ret)
    function = func.FuncOp(name, (arg_types, [v.type for v in returned]), Region(body), visibility="private")
    if block.parent_op() is not None:
        function.location = block.parent_op().location  # type: ignore[union-attr]
    return function


def clone_ops(source: Block, target: Block, mapping: dict[SSAValue, SSAValue]) -> Operation:
    """Clone every op of `source` but its terminator into `target`, its arguments mapped to `target`'s;
    return the terminator (for the caller to rebuild, its operands looked up in `mapping`)."""
    for old, new in zip(source.args, target.args):
        mapping[old] = new
        new.name_hint = old.name_hint
    terminator = source.last_op
    assert terminator is not None
    for op in source.ops:
        if op is terminator:
            break
        target.add_op(op.clone(mapping))
    return terminator


def same_function_body(a: func.FuncOp, b: func.FuncOp) -> bool:
    """The two functions have the same signature, ops and locations: one can stand for the other."""
    if a.function_type != b.function_type or not a.body.is_structurally_equivalent(b.body):
        return False
    return all(x.location == y.location for x, y in zip(a.walk(), b.walk()))


def needed_arguments(function: func.FuncOp, outputs: Iterable[int]) -> set[int]:
    """The argument positions that the returned values at `outputs` depend on (a backward slice).

    A loop's reverse sweep calls the body's VJP for its cotangent results only; carried values that those
    do not depend on need no tape and no recomputation (a tape carried by a first-order derivative, say).
    """
    block = function.body.block
    terminator = block.last_op
    assert terminator is not None
    live = {terminator.operands[i] for i in outputs}
    for op in reversed(list(block.ops)):
        if any(result in live for result in op.results):
            live.update(used_values(op))
    return {i for i, arg in enumerate(block.args) if arg in live}


def is_canonical_while(op: scf.WhileOp) -> bool:
    """The before region forwards its own arguments, unchanged and in order, to the body (as `ig.while_loop`
    traces it): then the carried values are the same on both sides of the condition."""
    before = op.before_region.block
    condition = before.last_op
    return isinstance(condition, scf.ConditionOp) and list(condition.args) == list(before.args)
