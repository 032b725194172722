"""The derivative-rule tables: one VJP rule and one JVP rule per op class, and the ops that need none.

A rule is a small function declared next to its siblings in `irgrad/autodiff/rules/`:

    @vjp_rule(nn.ExpOp, math.ExpOp)
    def _exp_vjp(b: RuleBuilder, op: Operation, ct: SSAValue) -> Cotangents:
        return [b.strong_mul(ct, op.results[0])]

The rules fill these tables when irgrad/autodiff/rules/ is imported (`load_rules` there); this module
imports no rule, so every rule module can import its decorators.

Contracts (the drivers in reverse.py and forward.py check them): a VJP rule `rule(b, op, *cts)` gets one
cotangent per result and returns one per operand (`None` where there is none or `b.needs(i)` is false),
each of its operand's exact type; a JVP rule `rule(b, op, *tangents)` gets one tangent per operand (`None`
is a symbolic zero) and returns the result's tangent, or a list with one per result. Rules emit through
`b` and never mutate `op`. Region ops, augment rules: docs/autodiff.md, "irgrad/autodiff/registry.py".

Ops whose derivative is zero everywhere (creation ops, comparisons, sign, stop_gradient, rounding) are
declared `non_differentiable`; ops the transform cannot differentiate yet are `not_supported_yet`, so
their error says so. Everything else without a rule fails with an error naming the op, the mode, the
value that made it active and the file to add the rule to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from xdsl.ir import Operation, SSAValue

Cotangents: TypeAlias = Sequence[SSAValue | None]
"""What a VJP rule returns: one cotangent per operand."""

Tangent: TypeAlias = SSAValue | None | Sequence[SSAValue | None]
"""What a JVP rule returns: the result's tangent, or one per result."""

VJPRule: TypeAlias = Callable[..., Cotangents]
"""`rule(b: RuleBuilder, op: Operation, *cts: SSAValue | None) -> Cotangents`"""

JVPRule: TypeAlias = Callable[..., Tangent]
"""`rule(b: RuleBuilder, op: Operation, *tangents: SSAValue | None) -> Tangent`"""

OpClass: TypeAlias = type[Operation]

MODES = ("vjp", "jvp")
"""`vjp`: reverse mode (cotangents flow from results to operands); `jvp`: forward mode."""

AugmentRule: TypeAlias = Callable[..., Any]
"""`rule(b: RuleBuilder, op: Operation) -> saved`, reverse mode's forward sweep; see `augment_rule`."""

BatchRule: TypeAlias = Callable[..., Any]
"""`rule(b: BatchBuilder, op, args, batched) -> (value, is_batched) | list of them` (batching.py)."""

BATCH_RULES: dict[OpClass, BatchRule] = {}
VJP_RULES: dict[OpClass, VJPRule] = {}
JVP_RULES: dict[OpClass, JVPRule] = {}
AUGMENT_RULES: dict[OpClass, AugmentRule] = {}
NON_DIFFERENTIABLE: set[OpClass] = set()
NOT_SUPPORTED_YET: dict[OpClass, str] = {}
"""Op class -> why (a clause of the error message)."""


def _register(table: dict[OpClass, Any], kind: str, op_types: Sequence[OpClass], rule: Any) -> None:
    for op_type in op_types:
        if op_type in table:
            raise ValueError(f"{op_type.name} already has a {kind} rule: {table[op_type].__qualname__}")
        if op_type in NON_DIFFERENTIABLE:
            raise ValueError(f"{op_type.name} is declared non-differentiable; it cannot have a {kind} rule")
        table[op_type] = rule


def vjp_rule(*op_types: OpClass) -> Callable[[VJPRule], VJPRule]:
    """Register the decorated function as the reverse-mode rule of each op class in `op_types`."""

    def register(rule: VJPRule) -> VJPRule:
        _register(VJP_RULES, "vjp", op_types, rule)
        return rule

    return register


def jvp_rule(*op_types: OpClass) -> Callable[[JVPRule], JVPRule]:
    """Register the decorated function as the forward-mode rule of each op class in `op_types`."""

    def register(rule: JVPRule) -> JVPRule:
        _register(JVP_RULES, "jvp", op_types, rule)
        return rule

    return register


def batch_rule(*op_types: OpClass) -> Callable[[BatchRule], BatchRule]:
    """Register the decorated function as the batching (vmap) rule of each op class in `op_types`.

    Unlike derivative rules, ops without a derivative (comparisons, iota, integer ops) need one too:
    every op that can see a batched operand does. See irgrad/autodiff/batching.py for the contract.
    """

    def register(rule: BatchRule) -> BatchRule:
        for op_type in op_types:
            if op_type in BATCH_RULES:
                raise ValueError(f"{op_type.name} already has a batch rule: {BATCH_RULES[op_type].__qualname__}")
            BATCH_RULES[op_type] = rule
        return rule

    return register


def augment_rule(*op_types: OpClass) -> Callable[[AugmentRule], AugmentRule]:
    """Register the decorated function as the forward-sweep half of each op class's reverse-mode rule.

    Why a separate hook: a loop's reverse sweep needs every iteration's carried values, which only the
    forward loop sees; the augment rule rewrites that loop (in the forward sweep, before any later op uses
    it) to also write them to a tape, and hands the tape to the VJP rule as `b.saved`.
    """

    def register(rule: AugmentRule) -> AugmentRule:
        _register(AUGMENT_RULES, "augment", op_types, rule)
        return rule

    return register


def non_differentiable(*op_types: OpClass) -> None:
    """Declare ops whose results carry no derivative (their derivative is zero wherever it exists)."""
    for op_type in op_types:
        if op_type in VJP_RULES or op_type in JVP_RULES:
            raise ValueError(f"{op_type.name} has a derivative rule; it cannot be non-differentiable")
        NON_DIFFERENTIABLE.add(op_type)


def not_supported_yet(reason: str, *op_types: OpClass) -> None:
    """Declare ops the transform cannot differentiate yet; `reason` ends the error message."""
    for op_type in op_types:
        NOT_SUPPORTED_YET[op_type] = reason


def rules_for(mode: str) -> dict[OpClass, Any]:
    """The rule table of `mode` ('vjp' or 'jvp')."""
    if mode == "vjp":
        return VJP_RULES
    if mode == "jvp":
        return JVP_RULES
    raise ValueError(f"unknown differentiation mode {mode!r}; expected one of {MODES}")


def rule_file(op_name: str) -> str:
    """Where a rule for the op named `op_name` belongs, for error messages."""
    dialect = op_name.split(".", 1)[0]
    if dialect in ("arith", "math"):
        return "irgrad/autodiff/rules/elementwise.py"
    if dialect == "nn":
        return "irgrad/autodiff/rules/, next to its siblings (elementwise, reduction, data_movement, linear, linalg, pooling)"
    return f"irgrad/autodiff/rules/{dialect}.py"
