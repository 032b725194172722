"""`ig.debug.print`: jax.debug.print, a `debug.print` op in the traced program.

    @ig.jit
    def step(w, x):
        h = ig.tanh(x @ w)
        ig.debug.print("h mean {m:.4f}, first row {}", h[0], m=ig.mean(h))
        return ig.sum(h)

The values print each time the compiled code runs them (a fori_loop body: every iteration),
formatted by Python's `str.format` with numpy arrays, on every backend but the GPU. Outside
a trace (numpy inputs) it prints at once. Under `ig.grad` the forward computation prints
(once per evaluation), never a derivative; under `ig.vmap` the batched values print once,
batch first. See irgrad/dialects/debug.py for the op's contract.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irgrad.tracing.errors import user_site
from irgrad.tracing.tracer import Tracer, as_tracer, current_frame


def _check(fmt: str, positional: int, names: list[str]) -> None:
    from irgrad.dialects.debug import MAX_OPERANDS, format_fields

    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a str, got {type(fmt).__name__}{user_site()}")
    try:
        wanted, used = format_fields(fmt)
    except ValueError as err:
        raise ValueError(f"debug.print: bad format string {fmt!r}: {err}{user_site()}") from None
    if wanted > positional:
        raise ValueError(f"debug.print: {fmt!r} has {wanted} positional fields but {positional} "
                         f"positional arguments were given{user_site()}")
    missing = sorted(used - set(names))
    if missing:
        raise ValueError(f"debug.print: {fmt!r} uses {', '.join(missing)}, which no keyword "
                         f"argument gives{user_site()}")
    if positional + len(names) > MAX_OPERANDS:
        raise ValueError(f"debug.print: at most {MAX_OPERANDS} values per print, got "
                         f"{positional + len(names)}{user_site()}")


def _array_like(what: str, value: Any) -> Any:
    if isinstance(value, (Tracer, np.ndarray, np.generic, bool, int, float)):
        return value
    raise TypeError(f"debug.print: {what} must be an array or a scalar, got "
                    f"{type(value).__name__}{user_site()}")


def debug_print(fmt: str, *args: Any, **kwargs: Any) -> None:
    """Print `fmt.format(*args, **kwargs)` with the values as numpy arrays, when they are
    computed (jax.debug.print). Arguments are arrays or scalars; at most 8 per call."""
    names = list(kwargs)
    _check(fmt, len(args), names)
    values = [_array_like(f"argument {k}", a) for k, a in enumerate(args)]
    values += [_array_like(f"keyword argument {n!r}", kwargs[n]) for n in names]
    frame = current_frame()
    if frame is None:
        from irgrad.backends.debug_print import emit

        emit(fmt, [""] * len(args) + names, [np.asarray(v) for v in values])
        return
    from irgrad.dialects.debug import PrintOp

    operands = [as_tracer(frame, v).value for v in values]
    frame.emit(PrintOp(fmt, operands, [""] * len(args) + names))


__all__ = ["debug_print"]
