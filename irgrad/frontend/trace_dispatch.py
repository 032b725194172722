"""`ig.trace`: two meanings under one name, told apart by the first argument.

`ig.trace(fn, *example_args)` traces a Python function to a `Program` (irgrad's entry point to
the IR, as `jax.make_jaxpr`); `ig.trace(a, offset=0, axis1=0, axis2=1, dtype=None)` is numpy's
and jnp's matrix trace, the sum along a diagonal, so numpy code runs unchanged. A callable
first argument means the former; `ig.make_program` always means it.
"""

from __future__ import annotations

from typing import Any

from irgrad.numpy.arrays import diagonal
from irgrad.numpy.basic import sum as _sum
from irgrad.tracing.tracer import Program, trace as make_program


def trace(a: Any, *args: Any, **kwargs: Any) -> Any:
    """`make_program(a, *args)` for a callable `a`, else numpy's matrix trace of `a`."""
    if callable(a):
        return make_program(a, *args, **kwargs)
    return matrix_trace(a, *args, **kwargs)


def matrix_trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Any:
    """The sum along the diagonal `offset` of the axes `axis1`, `axis2` (numpy.trace): the
    other axes stay, in order; bool and integers sum as `sum` does (int32 for bool)."""
    return _sum(diagonal(a, offset=offset, axis1=axis1, axis2=axis2), axis=-1, dtype=dtype)


__all__ = ["Program", "make_program", "matrix_trace", "trace"]
