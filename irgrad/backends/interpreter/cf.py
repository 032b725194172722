"""`cf.assert` on the reference interpreter (xDSL's cf functions cover only the branches).

A failed assertion is a property of the program run on these inputs, reported like the
compiled code reports it (`generate-runtime-verification` messages start with the checked
op's file:line:col): an `AssertionFailedError` carrying the assert's message. So IR with
runtime checks in it runs on the interpreter too, and `--verify-each=numeric` can check
the passes after `generate-runtime-verification`.
"""

from __future__ import annotations

from xdsl.dialects import cf
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from irgrad.backends.interpreter.errors import InterpreterError


class AssertionFailedError(InterpreterError):
    """A `cf.assert` whose condition was false."""


@register_impls
class CfAssertFunctions(InterpreterFunctions):
    @impl(cf.AssertOp)
    def run_assert(self, interpreter: Interpreter, op: cf.AssertOp, args: PythonValues) -> PythonValues:
        if not bool(args[0]):
            raise AssertionFailedError(f"assertion failed: {op.msg.data}", op)
        return ()
