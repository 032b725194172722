"""What every public array function shares: eager execution, operand lifting, broadcasting.

`@api` makes a function work both ways, as jax.numpy does: inside a trace it stages ops; called
on concrete numpy values with no trace active, it traces itself as a tiny program, runs it on
the reference interpreter at once and returns numpy arrays (programs cached per signature).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from irgrad.tracing import dtypes
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.tracing.pytree import tree_flatten, tree_unflatten
from irgrad.tracing.tracer import (
    Program,
    ShapeDtype,
    Tracer,
    as_tracer,
    current_frame,
    install_executor,
    trace,
)

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


def is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


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
    array_positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, (np.ndarray, np.generic))]
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


def lift(x: Any, dtype: np.dtype | None = None) -> Tracer:
    """Any array-like (tracer, numpy array, Python scalar, nested list) as a tracer."""
    frame = current_frame()
    assert frame is not None
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    t = as_tracer(frame, x, dtype)
    if dtype is not None and t.dtype != dtype:
        from irgrad.tracing import primitives as lax

        t = lax.convert(t, dtype)
    return t


def dtype_of(x: Any) -> np.dtype:
    if isinstance(x, Tracer):
        return x.dtype
    if is_scalar(x):
        return dtypes.scalar_dtype(x)
    return dtypes.array_dtype_of(np.asarray(x))


def shape_of(x: Any) -> tuple[int, ...]:
    if isinstance(x, Tracer):
        return x.shape
    if is_scalar(x):
        return ()
    return np.shape(x)


def result_dtype(*xs: Any) -> np.dtype:
    """JAX promotion over several operands: strong operands first, then weak Python scalars."""
    strong = [dtype_of(x) for x in xs if not is_scalar(x)]
    weak = [x for x in xs if is_scalar(x)]
    if not strong:
        # Only scalars: the widest kind wins, at default width.
        kinds = [dtypes.scalar_dtype(x) for x in weak]
        d = kinds[0]
        for k in kinds[1:]:
            d = dtypes.promote(d, k)
        return d
    d = strong[0]
    for s in strong[1:]:
        d = dtypes.promote(d, s)
    for w in weak:
        d = dtypes.promote_weak(d, w)
    return d


def broadcast_shapes(op_name: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(
            f"{op_name}: shapes {', '.join(str(tuple(s)) for s in shapes)} do not broadcast"
            f"{user_site()}"
        ) from None


def broadcast_to(x: Tracer, shape: Sequence[int]) -> Tracer:
    """numpy broadcasting as one explicit `nn.broadcast_in_dim` (or nothing if not needed)."""
    from irgrad.tracing import primitives as lax

    shape = tuple(shape)
    if x.shape == shape:
        return x
    if any(d < 0 for d in shape):
        raise ShapeError(f"broadcast_to: negative dimension in shape {shape}{user_site()}")
    offset = len(shape) - x.ndim
    if offset < 0:
        raise ShapeError(f"broadcast_to: cannot broadcast {x.shape} to {shape}{user_site()}")
    for i, d in enumerate(x.shape):
        if d != 1 and d != shape[offset + i]:
            raise ShapeError(f"broadcast_to: cannot broadcast {x.shape} to {shape}{user_site()}")
    return lax.broadcast_in_dim(x, shape, list(range(offset, len(shape))))


def operands(op_name: str, *xs: Any, dtype: np.dtype | None = None) -> tuple[list[Tracer], np.dtype]:
    """Lifts, promotes and broadcasts operands of an elementwise op to one shape and dtype."""
    d = dtype if dtype is not None else result_dtype(*xs)
    shape = broadcast_shapes(op_name, *[shape_of(x) for x in xs])
    out: list[Tracer] = []
    for x in xs:
        if is_scalar(x):
            from irgrad.tracing.tracer import full

            out.append(full(shape, x, d))
        else:
            out.append(broadcast_to(lift(x, d), shape))
    return out, d


def normalize_axes(op_name: str, axis: int | Sequence[int] | None, ndim: int) -> list[int]:
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        axes = [axis]
    elif isinstance(axis, (tuple, list)) and all(
        isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axis
    ):
        axes = list(axis)
    else:
        raise TypeError(f"{op_name}: axis must be an int or a tuple of ints, got {axis!r}{user_site()}")
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise ShapeError(f"{op_name}: axis {a} is out of range for an array of rank {ndim}{user_site()}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ShapeError(f"{op_name}: repeated axis in {axis}{user_site()}")
    return sorted(out)


def require_float(op_name: str, x: Tracer) -> Tracer:
    """Integer and bool inputs to float-only functions (exp, log, ...) become float32, as in JAX."""
    from irgrad.tracing import primitives as lax

    if dtypes.is_float(x.dtype):
        return x
    return lax.convert(x, dtypes.float32)


def check_dtype(op_name: str, x: Tracer, allowed: Sequence[np.dtype], what: str = "operand") -> None:
    if x.dtype not in allowed:
        raise DTypeError(
            f"{op_name}: {what} has dtype {x.dtype}; expected one of "
            f"{', '.join(str(a) for a in allowed)}{user_site()}"
        )
