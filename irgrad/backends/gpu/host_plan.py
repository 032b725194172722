"""Straight-line host code run without the interpreter's per-op dispatch.

Host code is interpreted on every call (irgrad/backends/gpu/host_code.py), and a training
step's host code is mostly a straight line of allocations, launches, GEMMs and views: for
W2, about a hundred ops per step. xDSL's interpreter looks up each op's implementation and
each operand in a scoped environment every time; for such a function that costs more than
the implementations themselves. A `HostPlan` resolves both once: each op becomes a step
(its implementation, operand slots, result slots), a constant becomes its value in the list's
initial contents, and a call runs the steps over a copy of that list.

The implementations are the interpreter's own (the same `InterpreterFunctions`, called with
the same interpreter), so a plan means exactly what interpretation means. Errors are
reported on the op as the interpreter reports them. A function with a region-holding op
(`scf.for`, `scf.if`) or an op without an implementation gets no plan (None): it is then
interpreted as before. The implementations are looked up in the interpreter's table
(`Interpreter._impls`, private in xDSL 0.75, which the project pins): a new xDSL version is
where to look first if plans stop being built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import arith, func
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation, SSAValue


class HostPlan:
    """One host function as precomputed steps (module doc)."""

    def __init__(self, interpreter: Interpreter, function: func.FuncOp, plans: dict[str, HostPlan | None]):
        self.interpreter = interpreter
        self.function = function
        self.steps: list[tuple[Any, Any, Operation, tuple[int, ...], tuple[int, ...]]] = []
        self.returns: tuple[int, ...] = ()
        block = function.body.block
        slots: dict[SSAValue, int] = {arg: k for k, arg in enumerate(block.args)}
        self.arity = len(block.args)
        impls = interpreter._impls._impl_dict  # pyright: ignore[reportPrivateUsage]
        constants: dict[int, Any] = {}
        for op in block.ops:
            ins = tuple(slots[v] for v in op.operands)
            if isinstance(op, func.ReturnOp):
                self.returns = ins
                break
            for result in op.results:
                slots[result] = len(slots)
            outs = tuple(slots[r] for r in op.results)
            if op.regions:
                raise _NoPlan
            if isinstance(op, func.CallOp):
                callee = plan_for(interpreter, op.callee.string_value(), plans)
                if callee is None:
                    raise _NoPlan
                self.steps.append((None, callee, op, ins, outs))
                continue
            entry = impls.get(type(op))
            if entry is None:
                raise _NoPlan
            ft, impl = entry
            if isinstance(op, arith.ConstantOp):
                # A constant's value is the same on every call: computed here, once.
                (constants[outs[0]],) = impl(ft, interpreter, op, ()).values
                continue
            self.steps.append((impl, ft, op, ins, outs))
        self.size = len(slots)
        self.initial: list[Any] = [None] * self.size
        for slot, value in constants.items():
            self.initial[slot] = value

    def __call__(self, args: Sequence[Any]) -> tuple[Any, ...]:
        env = self.initial.copy()
        env[: self.arity] = args
        interpreter = self.interpreter
        for impl, ft, op, ins, outs in self.steps:
            values = tuple([env[i] for i in ins])
            if impl is None:
                results = ft(values)
            else:
                try:
                    results = impl(ft, interpreter, op, values).values
                except Exception as err:
                    op.emit_error("Error while interpreting op", err)
            for i, value in zip(outs, results):
                env[i] = value
        return tuple([env[i] for i in self.returns])


class _NoPlan(Exception):
    """The function holds something a plan does not run (module doc)."""


def plan_for(interpreter: Interpreter, name: str, plans: dict[str, HostPlan | None]) -> HostPlan | None:
    """The plan of host function `@name` (cached in `plans`), or None where it has none."""
    if name in plans:
        return plans[name]
    plans[name] = None  # recursion gets no plan
    function = next(
        (f for f in interpreter.module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name), None
    )
    if function is None or not function.body.blocks or len(function.body.blocks) != 1:
        return None
    try:
        plans[name] = HostPlan(interpreter, function, plans)
    except _NoPlan:
        plans[name] = None
    return plans[name]


__all__ = ["HostPlan", "plan_for"]
