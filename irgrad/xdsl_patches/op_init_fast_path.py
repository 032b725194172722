"""An IRDL op's builder without its per-call bookkeeping: the same ops, built faster.

Every `SomeOp(...)` runs xDSL's `irdl_op_init`, which for each operand, result, region and
successor group re-reads the op definition's kinds (single, optional, variadic) through
`isinstance` checks against `Sequence` and the def classes (abc's `__instancecheck__`, in
Python), formats an error prefix it almost never uses, and builds a fresh `DenseArrayBase`
for each segment-size attribute. Op construction was the largest single cost of the CPU
pipeline's passes on a large program (a seventh of them under cProfile: 13,600 ops built by
convert-nn-to-linalg alone for a 1,000-op gradient; benchmarks/RESULTS.md, "Compile time: the
per-op constant (issue 26), 2026-12-04").

The replacement reads a plan made once per op definition (the kinds and the segment-size
options), classifies arguments by their concrete type (the `isinstance(arg, Sequence)`
answer cached per type, as abc's own cache does, without its Python frame) and reuses the
segment-size attribute of a given size list (attributes are immutable values). Whenever an
argument is not what the plan expects (a count that does not match, None for a required
group, a list for a single one, unequal same-size variadics, an option it does not know), it
calls xDSL's own `irdl_op_init`, so every error is xDSL's, word for word. A definition whose
lists are replaced after its plan was made gets a new plan; one whose list items are
replaced in place by a def of another kind would not (no code does that: upstream_op_syntax
replaces one `OperandDef` by another). Upstream: not reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.ir import Operation, Region, SSAValue
from xdsl.irdl import operations

from irgrad.xdsl_patches.patching import install, is_patched, require_source

_SINGLE, _VARIADIC, _OPTIONAL = 0, 1, 2
_NOT_FAST = object()
_SEGMENT_CACHE_LIMIT = 4096
"""Segment-size attributes kept for reuse; the cache is emptied when it grows past this."""


def _kind(arg_def: Any) -> int:
    if isinstance(arg_def, operations.OptionalDef):
        return _OPTIONAL
    if isinstance(arg_def, operations.VariadicDef):
        return _VARIADIC
    return _SINGLE


class _Plan:
    """What irdl_op_init reads of one op definition, read once: each group's kinds, the
    segment-size attributes to set and the same-size checks to make."""

    __slots__ = ("sources", "kinds", "segments", "same_size")

    def __init__(self, op_def: operations.OpDef):
        self.sources = (op_def.operands, op_def.results, op_def.regions, op_def.successors, op_def.options)
        self.kinds = tuple(tuple(_kind(d) for _, d in defs) for defs in self.sources[:4])
        self.segments: list[tuple[bool, str, int]] = []  # (as property, name, group)
        self.same_size: list[tuple[int, tuple[int, ...]]] = []  # (group, its variadic positions)
        for option in op_def.options:
            group = _option_group(option)
            if isinstance(option, operations.AttrSizedSegments):
                self.segments.append((option.as_property, option.attribute_name, group))
            elif isinstance(option, operations.SameVariadicSize):
                self.same_size.append((group, tuple(k for k, kind in enumerate(self.kinds[group]) if kind)))

    def current(self, op_def: operations.OpDef) -> bool:
        """Whether the definition still has the lists this plan was made from."""
        s = self.sources
        return (s[0] is op_def.operands and s[1] is op_def.results and s[2] is op_def.regions
                and s[3] is op_def.successors and s[4] is op_def.options)


_GROUP_OF = {
    operations.AttrSizedOperandSegments: 0,
    operations.AttrSizedResultSegments: 1,
    operations.AttrSizedRegionSegments: 2,
    operations.AttrSizedSuccessorSegments: 3,
    operations.SameVariadicOperandSize: 0,
    operations.SameVariadicResultSize: 1,
    operations.SameVariadicRegionSize: 2,
    operations.SameVariadicSuccessorSize: 3,
}


def _option_group(option: Any) -> int:
    """The group (operands 0, results 1, regions 2, successors 3) a size option is about;
    -1 for an option irdl_op_init ignores; a KeyError for a size option it does not know
    (the plan is then not made: xDSL's builder raises its own error)."""
    if isinstance(option, operations.AttrSizedSegments | operations.SameVariadicSize):
        return _GROUP_OF[type(option)]
    return -1


_plans: dict[int, tuple[operations.OpDef, _Plan | None]] = {}
_is_sequence: dict[type, bool] = {list: True, tuple: True}
_is_value: dict[type, bool] = {}
_segments: dict[tuple[int, ...], Any] = {}


def _plan(op_def: operations.OpDef) -> _Plan | None:
    entry = _plans.get(id(op_def))
    if entry is not None and entry[0] is op_def and (entry[1] is None or entry[1].current(op_def)):
        return entry[1]
    try:
        plan: _Plan | None = _Plan(op_def)
    except KeyError:
        plan = None
    _plans[id(op_def)] = (op_def, plan)
    return plan


def _sequence(arg: Any) -> bool:
    """isinstance(arg, Sequence), answered once per type."""
    kind = type(arg)
    answer = _is_sequence.get(kind)
    if answer is None:
        answer = _is_sequence[kind] = isinstance(arg, Sequence)
    return answer


def _group(args: Sequence[Any], kinds: tuple[int, ...]) -> tuple[list[Any], list[int]] | None:
    """irdl_build_arg_list's list and sizes, or None where it would raise."""
    if len(args) != len(kinds):
        return None
    built: list[Any] = []
    sizes: list[int] = []
    for arg, kind in zip(args, kinds):
        if arg is None:
            if kind != _OPTIONAL:
                return None
            sizes.append(0)
        elif _sequence(arg):
            n = len(arg)
            if (kind == _SINGLE and n != 1) or (kind == _OPTIONAL and n > 1):
                return None
            built.extend(arg)
            sizes.append(n)
        else:
            built.append(arg)
            sizes.append(1)
    return built, sizes


def _value(operand: Any) -> bool:
    """isinstance(operand, SSAValue), answered once per type."""
    kind = type(operand)
    answer = _is_value.get(kind)
    if answer is None:
        answer = _is_value[kind] = isinstance(operand, SSAValue)
    return answer


def _operand(operand: Any) -> Any:
    """irdl_build_operations_arg, its common cases (an SSA value, a list or tuple of them)
    first: SSAValue.get returns a value as it is."""
    if _value(operand):
        return operand
    if type(operand) in (list, tuple) and all(_value(item) for item in operand):
        return list(operand)
    return operations.irdl_build_operations_arg(operand)


def _region(region: Any) -> Any:
    """irdl_build_regions_arg for a Region or None; _NOT_FAST for what it would build a
    region from (ops or blocks, which that attaches: left to xDSL's builder, so that a
    fallback after it never attaches them twice)."""
    if type(region) is Region:
        return region
    return [] if region is None else _NOT_FAST


def _segment_sizes(sizes: list[int]) -> Any:
    """DenseArrayBase.from_list(i32, sizes), one instance per size list."""
    key = tuple(sizes)
    attr = _segments.get(key)
    if attr is None:
        from xdsl.dialects.builtin import DenseArrayBase, i32

        if len(_segments) >= _SEGMENT_CACHE_LIMIT:
            _segments.clear()
        attr = _segments[key] = DenseArrayBase.from_list(i32, sizes)
    return attr


def _without_none(mapping: Any) -> dict[str, Any]:
    return {name: attr for name, attr in mapping.items() if attr is not None}


def apply() -> None:
    original = operations.irdl_op_init
    if is_patched(original):
        return
    require_source(
        original,
        "operands_arg = [irdl_build_operations_arg(operand) for operand in operands]",
        "regions_arg = [irdl_build_regions_arg(region) for region in regions]",
        "VarIRConstruct.SUCCESSOR, successors, op_def.successors, error_prefix",
        "DenseArrayBase.from_list(i32, operand_sizes)",
        "if any(size != variadic_sizes[0] for size in variadic_sizes[1:]):",
        "Operation.__init__(",
        patch="op_init_fast_path",
    )
    require_source(operations.irdl_build_arg_list, "elif isinstance(arg, Sequence):", patch="op_init_fast_path")
    require_source(operations.IRDLOperation.__init__, "irdl_op_init(", patch="op_init_fast_path")

    def irdl_op_init(self, op_def, *, operands, result_types, properties, attributes, successors, regions):  # type: ignore[no-untyped-def]
        plan = _plan(op_def)
        if plan is None:
            return original(self, op_def, operands=operands, result_types=result_types, properties=properties,
                            attributes=attributes, successors=successors, regions=regions)
        kinds = plan.kinds
        built_regions = [_region(region) for region in regions]
        groups = (
            _group([_operand(operand) for operand in operands], kinds[0]),
            _group(result_types, kinds[1]),
            None if any(r is _NOT_FAST for r in built_regions) else _group(built_regions, kinds[2]),
            _group(successors, kinds[3]),
        )
        if None in groups or any(
            any(groups[group][1][k] != groups[group][1][positions[0]] for k in positions[1:])  # type: ignore[index]
            for group, positions in plan.same_size if positions
        ):
            return original(self, op_def, operands=operands, result_types=result_types, properties=properties,
                            attributes=attributes, successors=successors, regions=regions)
        built_properties = _without_none(properties)
        built_attributes = _without_none(attributes)
        for as_property, name, group in plan.segments:
            (built_properties if as_property else built_attributes)[name] = _segment_sizes(groups[group][1])  # type: ignore[index]
        Operation.__init__(
            self,
            operands=groups[0][0],  # type: ignore[index]
            result_types=groups[1][0],  # type: ignore[index]
            properties=built_properties,
            attributes=built_attributes,
            successors=groups[3][0],  # type: ignore[index]
            regions=groups[2][0],  # type: ignore[index]
        )

    install(operations, "irdl_op_init", irdl_op_init, original)
