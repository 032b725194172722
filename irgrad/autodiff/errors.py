"""Errors of the autodiff transform.

Two kinds, as irgrad-opt tells them apart:
- `AutodiffError`: the input cannot be differentiated (an op without a rule, control flow this milestone does
  not handle, an external callee). It is a located `PassError`, printed `file:line:col: error: 'op' op ...`
  at the user's op, exit code 1.
- `RuleContractError`: a derivative rule broke its contract (wrong number or type of cotangents). That is a
  bug in irgrad, reported by irgrad-opt as an internal error (exit code 2).
"""

from __future__ import annotations

from xdsl.ir import Operation

from irgrad.diagnostics import PassError


class AutodiffError(PassError):
    """The autodiff pass cannot differentiate this input; the message says why and what to do."""

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(message, op)


class RuleContractError(Exception):
    """A derivative rule returned the wrong number or types of (co)tangents: a bug in the rule."""
