"""What a collective between processes raises: located at the op, naming the process.

Each is an `InterpreterError` (an `IrgradError` located at the collective's op), so the
message carries the user's source line as the simulated grid's errors do.
"""

from __future__ import annotations

from irgrad.backends.interpreter.errors import InterpreterError


class CollectiveError(InterpreterError):
    """A collective between processes failed; the message names the process and the op."""


class CollectiveTimeout(CollectiveError):
    """Some processes of the group did not reach the collective before its deadline."""


class RanksDisagree(CollectiveError):
    """The processes of a group reached different collectives (shapes, programs or steps)."""
