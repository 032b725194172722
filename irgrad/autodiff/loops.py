"""What the loop rules (rules/scf.py) share: per-carry activity, tapes, and the reverse loop.

A loop is seen through its outlined body `@<f>_<kind>(lead..., carries..., captured...) -> carries`, where
`lead` is the induction variable of an scf.for (none for scf.while). Its reverse sweep is one scf.for over
the iterations in reverse order, k = n-1 down to 0, carrying the cotangents of the carried values and
accumulating those of the captured values (values defined outside the loop and used inside). Each
iteration calls the body's VJP, which recomputes the iteration's forward values from its carried values
(a call acts as a checkpoint); what differs between loops is where the carried values of iteration k
come from:
- tape (scf.for with constant bounds): the forward loop also writes them, at row k of a tensor with a
  leading trip-count dimension (`nn.dynamic_update_slice`; `tensor.insert` for scalars); the reverse loop
  reads row k (`nn.dynamic_slice` / `tensor.extract`). O(n) memory, O(n) compute.
- recompute (scf.while, and scf.for with dynamic bounds, whose tape shape is unknown): the forward loop
  only counts its iterations; the reverse loop recomputes iteration k's carried values from the initial
  ones by an inner scf.for of k steps of the body. No tape and no dynamic shapes, O(n^2) compute.
Only carried values the body's VJP reads (its cotangent results depend on them) are taped or recomputed: a
sum accumulator needs neither, and at second order a first-order tape carried by the loop is not taped
again. The shape of the reverse loop: docs/autodiff.md, "irgrad/autodiff/loops.py: the reverse loop".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, SymbolRefAttr, TensorType
from xdsl.ir import Attribute, Block, SSAValue

from irgrad.autodiff.activity import analyze
from irgrad.autodiff.builder import RuleBuilder
from irgrad.autodiff.outline import needed_arguments


@dataclass
class Loop:
    """One loop being differentiated: its outlined body and which carried values carry derivatives."""

    body: func.FuncOp
    """`(lead..., carries..., captured...) -> carries`; lead is scf.for's induction variable, or nothing."""
    inits: list[SSAValue]
    captured: list[SSAValue]
    """The values the body captures, in the generated function (the outlined body's last arguments)."""
    active_captured: list[int]
    """Positions in `captured` of the active ones: their cotangents (tangents) are wanted."""
    varied: list[int] = field(default_factory=list)
    """Carried values that depend on a differentiated input (they carry tangents)."""
    useful: list[int] = field(default_factory=list)
    """Varied carried values that a differentiated result depends on (they carry cotangents)."""

    @property
    def lead_count(self) -> int:
        return len(self.body.body.block.args) - len(self.inits) - len(self.captured)

    def carry_arg(self, j: int) -> int:
        return self.lead_count + j

    def captured_arg(self, i: int) -> int:
        return self.lead_count + len(self.inits) + i


def name_values(values: Sequence[SSAValue], names: Sequence[str | None], suffix: str = "") -> None:
    """Give generated values readable names (`%h_tape`, `%h_dot`) after the values they stand for."""
    for value, name in zip(values, names):
        if name:
            value.name_hint = f"{name}{suffix}"


def symbol(function: func.FuncOp) -> SymbolRefAttr:
    return SymbolRefAttr(function.sym_name)


def constant_int(value: SSAValue) -> int | None:
    """The value of an integer/index `arith.constant`, else None (a dynamic value)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


# ---------------------------------------------------------------------------------------------------------------
# Activity of carried values (fixed points over the outlined body)
# ---------------------------------------------------------------------------------------------------------------


def find_varied(loop: Loop, varied_inits: Sequence[int]) -> None:
    """Carried values varied in some iteration: varied on entry, or made varied by the body (from a varied
    captured value or another varied carried value). A fixed point, at most one round per carried value."""
    varied = set(varied_inits)
    returned = _returned(loop.body)
    while True:
        wrt = [loop.carry_arg(j) for j in sorted(varied)] + [loop.captured_arg(i) for i in loop.active_captured]
        activity = analyze(loop.body, wrt)
        grown = varied | {j for j in range(len(loop.inits)) if returned[j] in activity.varied}
        if grown == varied:
            break
        varied = grown
    loop.varied = sorted(varied)


def find_useful(loop: Loop, seeded_results: Sequence[int]) -> None:
    """Varied carried values that reach a seeded result through some number of iterations (a fixed point)."""
    useful = set(seeded_results) & set(loop.varied)
    args = loop.body.body.block.args
    while True:
        activity = analyze(loop.body, body_wrt(loop, loop.varied), sorted(useful))
        grown = useful | {j for j in loop.varied if args[loop.carry_arg(j)] in activity.useful}
        if grown == useful:
            break
        useful = grown
    loop.useful = sorted(useful)


def body_wrt(loop: Loop, carries: Sequence[int]) -> list[int]:
    """The body's arguments to differentiate: the given carried values, then the active captured values."""
    return [loop.carry_arg(j) for j in carries] + [loop.captured_arg(i) for i in loop.active_captured]


def _returned(function: func.FuncOp) -> Sequence[SSAValue]:
    terminator = function.body.block.last_op
    assert terminator is not None
    return terminator.operands


def needed_carries(loop: Loop, vjp: func.FuncOp) -> list[int]:
    """The carried values the body's VJP reads to compute its cotangents (the others need no tape)."""
    count = len(loop.inits)
    outputs = range(count, len(vjp.function_type.outputs.data))
    needed = needed_arguments(vjp, outputs)
    return [j for j in range(count) if loop.carry_arg(j) in needed]


# ---------------------------------------------------------------------------------------------------------------
# Tapes
# ---------------------------------------------------------------------------------------------------------------


def tape_type(value_type: Attribute, trips: int) -> TensorType:
    """A tensor with one row per iteration for a carried value of `value_type`."""
    if isinstance(value_type, TensorType):
        return TensorType(value_type.get_element_type(), [trips, *value_type.get_shape()])
    return TensorType(value_type, [trips])


def empty_tape(b: RuleBuilder, type: TensorType) -> SSAValue:
    """A tape before its rows are written: zeros (every row is written before it is read)."""
    return b.zeros(type)


def write_row(b: RuleBuilder, tape: SSAValue, value: SSAValue, k: SSAValue) -> SSAValue:
    """`tape` with row `k` (an index) set to `value`."""
    if not isinstance(value.type, TensorType):
        return b.insert(value, tape, [k])
    shape = list(value.type.get_shape())
    zero = b.full(0, IndexType())
    return b.dynamic_update_slice(tape, b.reshape(value, [1, *shape]), [k, *[zero] * len(shape)])


def read_row(b: RuleBuilder, tape: SSAValue, value_type: Attribute, k: SSAValue) -> SSAValue:
    """Row `k` (an index) of `tape`, as a value of `value_type`."""
    if not isinstance(value_type, TensorType):
        return b.extract(tape, [k])
    shape = list(value_type.get_shape())
    zero = b.full(0, IndexType())
    row = b.dynamic_slice(tape, [k, *[zero] * len(shape)], [1, *shape])
    return b.reshape(row, shape)


def as_index(b: RuleBuilder, value: SSAValue) -> SSAValue:
    """An integer loop counter as an `index` (tape positions and tensor.insert/extract want one)."""
    if isinstance(value.type, IndexType):
        return value
    return b.value(arith.IndexCastOp(value, IndexType()))


# ---------------------------------------------------------------------------------------------------------------
# The reverse loop
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class ReverseLoop:
    """How to run a loop's iterations backwards; filled by the scf.for and scf.while rules."""

    loop: Loop
    vjp: func.FuncOp
    induction: Callable[[RuleBuilder, SSAValue], list[SSAValue]]
    """The body's leading arguments of iteration k: scf.for's induction variable, nothing for scf.while."""
    count: SSAValue | None = None
    """The number of iterations (the counter type: index, or scf.for's integer type); set by the VJP rule
    when it is computed in the reverse sweep."""
    tapes: dict[int, SSAValue] = field(default_factory=dict)
    recompute: list[int] = field(default_factory=list)
    """Carried values to recompute from the initial ones (no tape); the others are placeholders."""


def build_reverse_loop(
    b: RuleBuilder, rev: ReverseLoop, cts: Sequence[SSAValue | None]
) -> tuple[dict[int, SSAValue], dict[int, SSAValue]]:
    """Emit the reverse loop; return the cotangents of the initial carried values (by carry) and of the
    captured values (by position in `loop.captured`)."""
    loop = rev.loop
    assert rev.count is not None
    counter = rev.count.type
    one, zero = b.full(1, counter), b.full(0, counter)
    last = b.int_op(arith.SubiOp, rev.count, one)
    ct_inits = [cts[j] if cts[j] is not None else b.zeros_like(loop.inits[j]) for j in loop.useful]
    acc_inits = [b.zeros_like(loop.captured[i]) for i in loop.active_captured]
    unseeded = {j: b.zeros_like(v) for j, v in enumerate(loop.inits) if j not in loop.useful}

    block = Block(arg_types=[counter, *(v.type for v in ct_inits), *(v.type for v in acc_inits)])
    inner = b.nested(block)
    k = inner.int_op(arith.SubiOp, last, block.args[0])
    k.name_hint = "k"  # the iteration being reversed: n-1, ..., 0
    lead = rev.induction(inner, k)
    carried = _carries_at(inner, rev, k, zero, one)
    ct_args = iter(block.args[1 : 1 + len(ct_inits)])
    seeded = [next(ct_args) if j in loop.useful else unseeded[j] for j in range(len(loop.inits))]
    outputs = inner.call(rev.vjp, [*lead, *carried, *loop.captured, *seeded])
    gradients = outputs[len(loop.inits) :]
    new_cts = list(gradients[: len(loop.useful)])
    accumulators = block.args[1 + len(ct_inits) :]
    new_accs = [inner.add(a, g) for a, g in zip(accumulators, gradients[len(loop.useful) :], strict=True)]
    inner.emit(scf.YieldOp(*new_cts, *new_accs))  # type: ignore[arg-type]
    reverse = b.emit(scf.ForOp(zero, rev.count, one, [*ct_inits, *acc_inits], block))
    results = reverse.results
    return (
        dict(zip(loop.useful, results[: len(loop.useful)])),
        dict(zip(loop.active_captured, results[len(loop.useful) :])),
    )


def _carries_at(b: RuleBuilder, rev: ReverseLoop, k: SSAValue, zero: SSAValue, one: SSAValue) -> list[SSAValue]:
    """The carried values entering iteration k, as far as the body's VJP reads them: read from a tape,
    recomputed, or (not read) the initial values as placeholders of the right type."""
    loop = rev.loop
    values = list(loop.inits)
    if rev.recompute:
        recomputed = _recompute(b, rev, k, zero, one)
        for j in rev.recompute:
            values[j] = recomputed[j]
    if rev.tapes:
        position = as_index(b, k)
        for j, tape in rev.tapes.items():
            values[j] = read_row(b, tape, loop.inits[j].type, position)
    return values


def _recompute(b: RuleBuilder, rev: ReverseLoop, k: SSAValue, zero: SSAValue, one: SSAValue) -> list[SSAValue]:
    """The carried values entering iteration k: k steps of the body from the initial values (scf.for)."""
    loop = rev.loop
    block = Block(arg_types=[k.type, *(v.type for v in loop.inits)])
    inner = b.nested(block)
    lead = rev.induction(inner, block.args[0])
    outputs = inner.call(loop.body, [*lead, *block.args[1:], *loop.captured])
    inner.emit(scf.YieldOp(*outputs))
    return list(b.emit(scf.ForOp(zero, k, one, loop.inits, block)).results)
