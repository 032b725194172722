"""Activity analysis: which values of a function carry derivatives.

A value is *varied* when it depends, through differentiable ops, on a differentiated (`wrt`) argument, and
*useful* when a differentiated result depends on it. Only values that are both, the *active* ones, get
tangents or adjoints; only ops with an active result get derivative code. So a value computed from
constants, or from non-`wrt` arguments, or one that never reaches a result, costs nothing.

Rules of the analysis (one forward walk for varied, one backward walk for useful, over one block):
- only float values (f16/bf16/f32/f64 scalars and tensors) can be varied: integer and i1 values never are;
- ops declared `non_differentiable` (comparisons, sign, creation, `autodiff.stop_gradient`, rounding) have no
  varied results, whatever their operands;
- an op with regions is treated as a whole: its results are varied when an operand or a value its regions
  use from outside is varied. The scf rules refine this per carried value (rules/scf.py), after outlining
  the region into a function of its own and analysing that.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.ir import BlockArgument, Operation, Region, SSAValue

from irgrad.autodiff.builder import is_float_type
from irgrad.autodiff.registry import NON_DIFFERENTIABLE


def used_values(op: Operation) -> Iterator[SSAValue]:
    """The operands of `op` and the values its regions use from outside them."""
    yield from op.operands
    if not op.regions:
        return
    inner: set[SSAValue] = set()
    for nested in op.walk():
        if nested is not op:
            inner.update(nested.results)
        for region in nested.regions:
            for block in region.blocks:
                inner.update(block.args)
    for nested in op.walk():
        if nested is op:
            continue
        for operand in nested.operands:
            if operand not in inner:
                yield operand


def captured_values(regions: Sequence[Region]) -> list[SSAValue]:
    """The values defined outside `regions` that ops inside them use, each once, in first-use order.

    The order is the walk order, so an op and its clone list corresponding values at the same positions
    (the reverse driver relies on it to pair a primal op's captured values with its clone's).
    """
    inner: set[SSAValue] = set()
    for region in regions:
        for nested in region.walk():
            inner.update(nested.results)
            for sub in nested.regions:
                for block in sub.blocks:
                    inner.update(block.args)
        for block in region.blocks:
            inner.update(block.args)
    seen: dict[SSAValue, None] = {}
    for region in regions:
        for nested in region.walk():
            for operand in nested.operands:
                if operand not in inner:
                    seen.setdefault(operand, None)
    return list(seen)


@dataclass
class Activity:
    """The result of the analysis for one function and one (wrt, seeds) pattern."""

    function: func.FuncOp
    wrt: tuple[int, ...]
    varied: set[SSAValue] = field(default_factory=set)
    useful: set[SSAValue] = field(default_factory=set)
    origin: dict[SSAValue, int] = field(default_factory=dict)
    """For each varied value, the index of a `wrt` argument it depends on (for error messages)."""

    def is_active(self, value: SSAValue) -> bool:
        return value in self.varied and value in self.useful

    def is_active_op(self, op: Operation) -> bool:
        return any(self.is_active(result) for result in op.results)

    def active_operands(self, op: Operation) -> list[bool]:
        return [self.is_active(operand) for operand in op.operands]

    def why_active(self, op: Operation) -> str:
        """A phrase naming the operand that made `op` active and the argument it depends on."""
        for index, value in enumerate(used_values(op)):
            if value in self.varied:
                arg = self.origin.get(value, self.wrt[0])
                name = f" (%{value.name_hint})" if value.name_hint else ""
                where = f"operand #{index}{name}" if index < len(op.operands) else f"a value its body uses{name}"
                arg_name = self.function.body.block.args[arg].name_hint
                arg_text = f" (%{arg_name})" if arg_name else ""
                return (
                    f"its {where} depends on differentiated argument #{arg}{arg_text} "
                    f"of @{self.function.sym_name.data}"
                )
        return f"it depends on a differentiated argument of @{self.function.sym_name.data}"


def analyze(function: func.FuncOp, wrt: Sequence[int], seeds: Sequence[int] | None = None) -> Activity:
    """Activity of `function`'s values for derivatives with respect to arguments `wrt`.

    `seeds` lists the result indices whose derivatives are wanted (all results when None).
    """
    block = function.body.block
    activity = Activity(function, tuple(wrt))
    for index in wrt:
        arg: BlockArgument = block.args[index]
        if is_float_type(arg.type):
            activity.varied.add(arg)
            activity.origin[arg] = index

    ops = list(block.ops)
    for op in ops:
        if type(op) in NON_DIFFERENTIABLE:
            continue
        source = next((v for v in used_values(op) if v in activity.varied), None)
        if source is None:
            continue
        for result in op.results:
            if is_float_type(result.type):
                activity.varied.add(result)
                activity.origin[result] = activity.origin[source]

    terminator = block.last_op
    if isinstance(terminator, func.ReturnOp):
        returned = terminator.arguments
        for index in range(len(returned)) if seeds is None else seeds:
            activity.useful.add(returned[index])
    for op in reversed(ops):
        if any(result in activity.useful for result in op.results):
            activity.useful.update(v for v in used_values(op) if is_float_type(v.type))
    return activity
