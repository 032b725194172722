"""Checks shared by the reverse and forward builders, with the errors a user reads."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation

from irgrad.autodiff.activity import Activity
from irgrad.autodiff.errors import AutodiffError
from irgrad.autodiff.outline import describe
from irgrad.autodiff.registry import NOT_SUPPORTED_YET, rule_file, rules_for

MODE_NAMES = {"vjp": "reverse mode", "jvp": "forward mode", "reverse": "reverse mode", "forward": "forward mode"}


def check_body(function: func.FuncOp, mode: str) -> None:
    """The function must have a body of one block ending in `func.return`."""
    name = function.sym_name.data
    if function.is_declaration:
        raise AutodiffError(
            f"cannot differentiate @{name}: it is a declaration without a body", function
        )
    if len(function.body.blocks) != 1:
        raise AutodiffError(
            f"not supported yet: @{name} has {len(function.body.blocks)} blocks; only functions of one block "
            f"(no cf branches) can be differentiated ({MODE_NAMES[mode]})",
            function,
        )


def require_rule(op: Operation, mode: str, activity: Activity) -> None:
    """Raise the user-facing error when the active op `op` has no `mode` rule."""
    if type(op) in rules_for(mode):
        return
    function = describe(activity.function)
    reason = NOT_SUPPORTED_YET.get(type(op))
    if reason is not None:
        raise AutodiffError(
            f"not supported yet: {op.name} inside a differentiated function ({function}, {MODE_NAMES[mode]}); "
            f"{reason}",
            op,
        )
    raise AutodiffError(
        f"has no {mode} rule ({MODE_NAMES[mode]}) but must be differentiated in {function}: "
        f"{activity.why_active(op)}; add one with @{mode}_rule({type(op).__name__}) "
        f"in {rule_file(op.name)}, or mark it non_differentiable",
        op,
    )
