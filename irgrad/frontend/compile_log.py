"""Compile logging of `ig.jit`: a slow first compile says so, a recompile says why.

Every compile of a jitted function is logged on the `irgrad.jit` logger: at INFO, and at
WARNING (shown by Python's default handler, as torch.compile's recompile warnings are) when it
took longer than `$IRGRAD_LOG_COMPILES_THRESHOLD` seconds (default 2), or always with
`IRGRAD_LOG_COMPILES=1` (JAX's `jax_log_compiles`). A recompile of the same function names the
argument whose shape, dtype or structure changed (`Jitted._explain`). Each signature compiles
once, so each message appears once.
"""

from __future__ import annotations

import logging
import math
import os

logger = logging.getLogger("irgrad.jit")

LOG_ALL_ENV = "IRGRAD_LOG_COMPILES"
THRESHOLD_ENV = "IRGRAD_LOG_COMPILES_THRESHOLD"
DEFAULT_THRESHOLD_SECONDS = 2.0


def threshold_seconds() -> float:
    """The compile time above which a compile is a WARNING: `$IRGRAD_LOG_COMPILES_THRESHOLD`
    (seconds; `inf` for never), else 2 s."""
    raw = os.environ.get(THRESHOLD_ENV, "").strip()
    if not raw:
        return DEFAULT_THRESHOLD_SECONDS
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{THRESHOLD_ENV}={raw!r}: expected a number of seconds") from None
    if math.isnan(value) or value < 0:
        raise ValueError(f"{THRESHOLD_ENV}={raw!r}: expected a number of seconds >= 0")
    return value


def log_compile(function: str, seconds: float, reason: str | None) -> None:
    """Log one compile of `function` that took `seconds`; `reason` says why a recompile
    happened (None for the function's first compile)."""
    loud = os.environ.get(LOG_ALL_ENV, "").strip() == "1" or seconds > threshold_seconds()
    level = logging.WARNING if loud else logging.INFO
    if not logger.isEnabledFor(level):
        return
    why = "" if reason is None else f": recompiled for a new signature, {reason}"
    logger.log(level, "irgrad.jit: compiling %s (%.1f s)%s", function, seconds, why)
