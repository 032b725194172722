"""What every public array function shares: eager execution, operand lifting, broadcasting
(the last two are the tracing core's, irgrad/tracing/broadcasting.py, re-exported here).

`@api` makes a function work both ways, as jax.numpy does: inside a trace it stages ops; called
on concrete numpy values with no trace active, it traces itself as a tiny program, runs it on
the reference interpreter at once and returns numpy arrays (programs cached per signature).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.errors import DTypeError, user_site
from irgrad.tracing.pytree import tree_flatten, tree_unflatten
from irgrad.tracing.broadcasting import (
    broadcast_shapes,
    broadcast_to,
    dtype_of,
    is_scalar,
    lift,
    normalize_axes,
    operands,
    result_dtype,
    shape_of,
)
from irgrad.tracing.tracer import Program, ShapeDtype, Tracer, current_frame, install_executor, trace


class _ReferenceInterpreter:
    """Traced programs run eagerly on the reference interpreter (loaded on the first run)."""

    @staticmethod
    def expand(module: Any) -> Any:
        from irgrad.backends.interpreter.runner import expand_autodiff

        return expand_autodiff(module)

    @staticmethod
    def run(module: Any, entry: str, inputs: Sequence[Any], listeners: Sequence[Any]) -> Sequence[Any]:
        from irgrad.backends.interpreter.runner import run_function

        return run_function(module, entry, inputs, listeners)


install_executor(_ReferenceInterpreter)

F = TypeVar("F", bound=Callable[..., Any])

Scalar = bool | int | float


def is_array_like(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic)) or isinstance(x, Tracer)


def api(fn: F) -> F:
    """Marks a public array function: staged under a trace, eager on numpy values otherwise."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if current_frame() is not None:
            return fn(*args, **kwargs)
        return _run_eagerly(fn, args, kwargs)

    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


_eager_cache: dict[Any, Program] = {}


def _run_eagerly(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    leaves, tree = tree_flatten((args, kwargs))
    for leaf in leaves:
        if isinstance(leaf, Tracer):
            raise RuntimeError(
                f"{leaf!r} is used outside the trace that created it; traced values cannot "
                "escape ig.trace / ig.jit"
            )
    # Arrays and float scalars become the program's parameters; numpy integer and bool scalars
    # stay static, as Python ints do (a section count, a repeat, an axis: `ig.split(x,
    # np.int64(2))`), each value its own program, with the same dtype a parameter would have.
    array_positions = [
        i for i, leaf in enumerate(leaves)
        if isinstance(leaf, np.ndarray) or (isinstance(leaf, np.generic) and not isinstance(leaf, (np.integer, np.bool_)))
    ]
    arrays = [np.asarray(leaves[i]) for i in array_positions]
    statics = tuple(
        (i, _static_key(leaf)) for i, leaf in enumerate(leaves) if i not in array_positions
    )
    avals = [ShapeDtype.of(a) for a in arrays]
    key = (fn, tree, statics, tuple(array_positions), tuple(avals))
    program = _eager_cache.get(key)
    if program is None:

        def staged(*traced_arrays: Tracer) -> Any:
            filled = list(leaves)
            for i, t in zip(array_positions, traced_arrays):
                filled[i] = t
            a, k = tree_unflatten(tree, filled)
            return fn(*a, **k)

        staged.__name__ = getattr(fn, "__name__", "main")
        program = trace(staged, *avals)
        if len(_eager_cache) > 4096:
            _eager_cache.clear()
        _eager_cache[key] = program
    inputs = [a.astype(v.dtype, copy=False) for a, v in zip(arrays, avals)]
    return program(*inputs)


def _static_key(x: Any) -> Any:
    if isinstance(x, float):
        return (float, repr(x))  # -0.0 == 0.0 but they stage different constants
    try:
        hash(x)
        return (type(x), x)
    except TypeError:
        return (type(x), repr(x))


def require_float(op_name: str, x: Tracer, complex_ok: bool = False) -> Tracer:
    """Integer and bool inputs to float-only functions (exp, log, ...) become float32, as in JAX.
    A complex input passes where the function takes one (`complex_ok`) and is a DTypeError
    otherwise, never silently its real part."""
    if dtypes.is_float(x.dtype):
        return x
    if dtypes.is_complex(x.dtype):
        if complex_ok:
            return x
        raise DTypeError(
            f"{op_name}: complex input (dtype {x.dtype}, shape {x.shape}) is not supported{user_site()}"
        )
    return lax.convert(x, dtypes.float32)


def check_dtype(op_name: str, x: Tracer, allowed: Sequence[np.dtype], what: str = "operand") -> None:
    if x.dtype not in allowed:
        raise DTypeError(
            f"{op_name}: {what} has dtype {x.dtype}; expected one of "
            f"{', '.join(str(a) for a in allowed)}{user_site()}"
        )


__all__ = [
    "Scalar", "api", "broadcast_shapes", "broadcast_to", "check_dtype", "dtype_of", "is_array_like", "is_scalar",
    "lift", "normalize_axes", "operands", "require_float", "result_dtype", "shape_of",
]
