"""Where did the NaN come from? The first op that makes a NaN (or an infinity) out of operands
without one, located at the user's source line.

A NaN in a gradient is usually born far from where it is seen: a `log` of 0 in the forward
pass, `0 * inf` in a derivative, a `sqrt` of a negative in an untaken branch. Running the
program on the reference interpreter with `NaNChecker` listening stops at the op that made
it, with the function it is in (`@loss_vjp` is the derivative of `@loss`), its location (the
traced program carries the user's file:line:col; autodiff gives each derivative op the
location of the op it differentiates) and a summary of its operands. The peers' equivalent
is `jax_debug_nans`; this one also names the operands' ranges.

What counts: a float result with a NaN (with `infs`, also an infinity) where no float operand
had one. Ops without operands (constants, `nn.full`) are written by the user or by a rule on
purpose and are not reported, and ops that hold regions (loops, ifs, calls) are not either:
the op inside that made the value is reported first.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Operation

from irgrad.diagnostics import NaNError


def _floats(value: Any) -> np.ndarray | None:
    array = np.asarray(value) if isinstance(value, (np.ndarray, np.generic, float)) else None
    if array is None or array.dtype.kind not in "fV" or array.dtype == np.bool_:
        return None
    try:
        return array.astype(np.float64, copy=False)
    except (TypeError, ValueError):
        return None


def _has(array: np.ndarray | None, what: str) -> bool:
    if array is None or array.size == 0:
        return False
    return bool(np.isnan(array).any()) if what == "NaN" else bool(np.isinf(array).any())


def _summary(index: int, value: Any) -> str:
    array = _floats(value)
    if array is None:
        shape = getattr(value, "shape", ())
        return f"operand #{index}: {np.asarray(value).dtype} {shape}"
    if array.size == 0:
        return f"operand #{index}: empty {array.shape}"
    finite = array[np.isfinite(array)]
    parts = [f"operand #{index}: shape {array.shape}"]
    if finite.size:
        parts.append(f"finite values in [{finite.min():.6g}, {finite.max():.6g}]")
    zeros = int(np.count_nonzero(array == 0))
    if zeros:
        parts.append(f"{zeros} zero{'s' if zeros > 1 else ''}")
    infs = int(np.count_nonzero(np.isinf(array)))
    if infs:
        parts.append(f"{infs} infinit{'ies' if infs > 1 else 'y'}")
    negatives = int(np.count_nonzero(array < 0))
    if negatives:
        parts.append(f"{negatives} negative")
    return ", ".join(parts)


def _function_of(op: Operation) -> str:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, FuncOp):
        parent = parent.parent_op()
    return f"@{parent.sym_name.data}" if isinstance(parent, FuncOp) else "the module"


class NaNChecker(Interpreter.Listener):
    """Raises NaNError at the first op that makes a NaN (with `infs`, or an infinity) from
    operands without one (module doc)."""

    def __init__(self, infs: bool = False):
        self.kinds = ("NaN", "infinity") if infs else ("NaN",)
        self._inputs: PythonValues = ()

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        self._inputs = args

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        if not op.operands or op.regions or isinstance(op, CallOp):
            return
        inputs = [_floats(v) for v in self._inputs]
        outputs = [_floats(v) for v in results]
        for kind in self.kinds:
            made = [out for out in outputs if _has(out, kind)]
            if not made or any(_has(i, kind) for i in inputs):
                continue
            if kind == "infinity" and any(_has(i, "NaN") for i in inputs):
                continue
            out = made[0]
            count = int(np.count_nonzero(np.isnan(out) if kind == "NaN" else np.isinf(out)))
            details = "; ".join(_summary(k, v) for k, v in enumerate(self._inputs))
            raise NaNError(
                f"'{op.name}' made {'a NaN' if kind == 'NaN' else 'an infinity'} ({count} of {out.size} elements) from operands without "
                f"one, in {_function_of(op)}: {details}",
                op.location,
            )


__all__ = ["NaNChecker", "NaNError"]
