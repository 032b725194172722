"""The reference interpreter: runs `func.func`s of nn, func, arith, index, math, scf, cf,
tensor, memref, bufferization and linalg ops on numpy arrays, in each op's exact dtype.

It is the oracle every lowering is tested against, so it computes whole tensors with numpy
and decides every edge case the ops' docstrings define (see `numerics` for the shared rules
and each dialect module for the rest). Built on xDSL's interpreter framework: the numpy
implementations are `InterpreterFunctions` registered over xDSL's own.

Public API:
- `run_function(module, entry, args)`: run `@entry` on numpy arrays and scalars;
- `InterpreterInputError` (bad arguments, a `ValueError`), `InterpreterError` (the program
  cannot run: unsupported op, undefined behaviour) and its subclasses.
"""

from typing import TYPE_CHECKING, Any

from irgrad.backends.interpreter.errors import (
    InterpreterError,
    InterpreterInputError,
    InterpreterInternalError,
    UndefinedBehaviorError,
    UnsupportedOpError,
)

if TYPE_CHECKING:
    from irgrad.backends.interpreter.runner import run_function


def __getattr__(name: str) -> Any:
    """`run_function` on first use: the runner pulls in xDSL's interpreters, a costly import
    that importing the interpreter's errors never needs."""
    if name == "run_function":
        from irgrad.backends.interpreter.runner import run_function

        return run_function
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "InterpreterError",
    "InterpreterInputError",
    "InterpreterInternalError",
    "UndefinedBehaviorError",
    "UnsupportedOpError",
    "run_function",
]
