"""`ig.debug_nans`: run a function op by op on the reference interpreter and stop at the first
op that makes a NaN (or, with `infs=True`, an infinity) from operands without one.

    grads = ig.debug_nans(ig.grad(loss))(params, x)
    # NaNError: model.py:14:12: error: 'nn.log' made a NaN (1 of 32 elements) from operands
    #   without one, in @loss: operand #0: shape (32,), finite values in [-0.5, 3.1], 2 negative

The gradient is ordinary IR, so the same check covers the backward pass: an op of
`@loss_vjp` (the derivative of `@loss`) carries the location of the op it differentiates.
Slow (the interpreter), exact, and for debugging only: `ig.jit` does not check.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from irgrad.tracing.tracer import trace


def debug_nans(fn: Callable[..., Any], *, infs: bool = False) -> Callable[..., Any]:
    """`fn` that, when called, traces itself and runs on the interpreter with a NaN check
    (irgrad/backends/interpreter/nan_checks.py): it returns what `fn` returns, or raises
    `NaNError` (a FloatingPointError) at the op that made the first NaN or infinity."""
    from irgrad.backends.interpreter.nan_checks import NaNChecker

    @functools.wraps(fn)
    def checked(*args: Any) -> Any:
        return trace(fn, *args).call_with_listeners([NaNChecker(infs=infs)], *args)

    return checked


__all__ = ["debug_nans"]
