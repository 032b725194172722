"""Errors the reference interpreter raises, on irgrad's diagnostic hierarchy.

Why separate classes: callers react differently. A bad argument is the caller's mistake
(`InterpreterInputError`, also a `ValueError`, so plain Python code can catch it); an
unsupported op or undefined behaviour is a property of the program (`InterpreterError`,
located at the op like a verifier error); a result of the wrong shape or dtype is a bug in
the interpreter itself (`InterpreterInternalError`).
"""

from __future__ import annotations

from xdsl.dialects.func import FuncOp
from xdsl.dialects.builtin import UnknownLoc
from xdsl.ir import Operation

from irgrad.diagnostics import IrgradError


def _enclosing_function(op: Operation) -> str | None:
    parent: Operation | None = op
    while parent is not None:
        if isinstance(parent, FuncOp):
            return parent.sym_name.data
        parent = parent.parent_op()
    return None


def op_message(op: Operation, message: str) -> str:
    """`'nn.div' op <message>`, naming the enclosing function when the op has no location."""
    text = f"'{op.name}' op {message}"
    if isinstance(op.location, UnknownLoc) and (name := _enclosing_function(op)) is not None:
        text += f" (in function @{name})"
    return text


class InterpreterError(IrgradError):
    """The program cannot run on the reference interpreter (located at the op when given)."""

    op: Operation | None

    def __init__(self, message: str, op: Operation | None = None) -> None:
        self.op = op
        if op is None:
            super().__init__(message)
        else:
            super().__init__(op_message(op, message), op.location)


class UnsupportedOpError(InterpreterError):
    """An op the interpreter has no implementation for."""


class UndefinedBehaviorError(InterpreterError):
    """An op hit undefined behaviour or produced poison (arith.divsi by zero, say).

    The reference interpreter reports it instead of inventing a value, so a lowering that
    relies on undefined behaviour fails its oracle test.
    """


class InterpreterInternalError(InterpreterError):
    """A bug in the interpreter: an implementation produced a value that does not match the IR."""


class InterpreterInputError(IrgradError, ValueError):
    """The arguments given to `run_function` do not match the entry function's signature."""
