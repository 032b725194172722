"""`ig.jit`: trace once per input signature, cache, and run on a backend.

The cache key is the signature: the pytree structure, each leaf's shape and dtype, and the
values of static arguments. A call with a new signature traces a new specialization. The
`interp` backend runs the reference interpreter; `cpu` and `gpu` land with their issues.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any


from irgrad.frontend.errors import UnsupportedError
from irgrad.frontend.pytree import tree_flatten, tree_unflatten
from irgrad.frontend.tracing import Program, ShapeDtype, Tracer, current_frame, function_name, trace

BACKENDS = ("interp", "cpu", "gpu")


class Jitted:
    """A function compiled per input signature; call it like the original."""

    def __init__(self, fn: Callable[..., Any], backend: str, static_argnums: Sequence[int]):
        if backend not in BACKENDS:
            raise ValueError(f"jit: unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.backend = backend
        self.static_argnums = tuple(static_argnums)
        self._cache: dict[Any, Program] = {}

    def _split(self, args: tuple[Any, ...]) -> tuple[list[Any], tuple[Any, ...]]:
        dynamic = [a for i, a in enumerate(args) if i not in self.static_argnums]
        static = tuple((i, args[i]) for i in self.static_argnums if i < len(args))
        return dynamic, static

    def signature(self, *args: Any) -> Any:
        dynamic, static = self._split(args)
        leaves, tree = tree_flatten(dynamic)
        return (tree, tuple(ShapeDtype.of(x) for x in leaves), static)

    def lower(self, *args: Any) -> Program:
        """The traced program for these arguments' signature (cached)."""
        key = self.signature(*args)
        program = self._cache.get(key)
        if program is None:
            if os.environ.get("IRGRAD_EXPLAIN_CACHE_MISSES") == "1":
                print(f"irgrad.jit: tracing {function_name(self.fn)} for a new signature {key}", file=sys.stderr)
            dynamic, static = self._split(args)
            static_values = dict(static)

            def staged(*dyn: Any) -> Any:
                it = iter(dyn)
                full_args = [static_values[i] if i in static_values else next(it) for i in range(len(args))]
                return self.fn(*full_args)

            staged.__name__ = function_name(self.fn)
            leaves, tree = tree_flatten(dynamic)
            avals = [ShapeDtype.of(x) for x in leaves]
            program = trace(staged, *tree_unflatten(tree, avals))
            self._cache[key] = program
        return program

    def __call__(self, *args: Any) -> Any:
        if current_frame() is not None or any(isinstance(x, Tracer) for x in tree_flatten(list(args))[0]):
            # Inside a trace, jit is transparent: the function is traced inline.
            return self.fn(*args)
        if self.backend != "interp":
            raise UnsupportedError(
                f"jit backend {self.backend!r} is not available yet (CPU backend issue / GPU backend "
                "issue); use backend='interp'"
            )
        program = self.lower(*args)
        dynamic, _ = self._split(args)
        leaves, _ = tree_flatten(dynamic)
        # Leaves go as they are: the program gives Python scalars their traced dtype (float32),
        # which np.asarray would have made float64.
        return program(*tree_unflatten(program.traced.in_tree, leaves))


def jit(fn: Callable[..., Any] | None = None, *, backend: str = "interp", static_argnums: int | Sequence[int] = ()) -> Any:
    """Compile `fn` per input signature; usable as `@ig.jit` or `ig.jit(fn, backend=...)`."""
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if fn is None:
        return lambda f: Jitted(f, backend, nums)
    return Jitted(fn, backend, nums)
