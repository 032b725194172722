"""`ig.debug`, as jax.debug: `ig.debug.print(fmt, *args, **kwargs)` prints traced values when
the program computes them (irgrad/frontend/debug_print.py); `ig.debug.nans(fn)` is
`ig.debug_nans` (stop at the first op that makes a NaN)."""

from irgrad.frontend.debug_print import debug_print as print  # noqa: A001  (jax.debug.print)
from irgrad.frontend.debugging import debug_nans as nans

__all__ = ["nans", "print"]
