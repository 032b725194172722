"""Derivative control over traced code, below the rest of the library: `stop_gradient`,
`custom_vjp`, `custom_jvp` and `checkpoint` (jax.custom_derivatives' and jax.checkpoint's
peers). The library's own functions use them for their derivative contracts (irgrad/numpy/
linalg/'s custom JVPs, the stop_gradient of argsort), so they sit here rather than with grad
and vjp (irgrad/frontend/transforms.py), which build on them.

Each emits an `autodiff` op around a child function traced into the same module; the
`autodiff` pass decides what the derivative is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from irgrad.dialects import autodiff as ad
from irgrad.numpy.support import api, dtype_of, is_scalar, lift, shape_of
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.pytree import TreeDef, tree_flatten, tree_unflatten
from irgrad.tracing.tracer import (
    TracedFunction,
    Tracer,
    current_frame,
    full,
    function_name,
    trace_function,
)


def current_trace_frame():
    frame = current_frame()
    assert frame is not None
    return frame


def trace_child(fn: Callable[..., Any], args: Sequence[Any], name: str | None = None) -> TracedFunction:
    frame = current_trace_frame()
    return trace_function(fn, args, module=frame.module, name=name or function_name(fn, "fn"))


def emit_results(op) -> list[Tracer]:
    frame = current_trace_frame()
    frame.emit(op)
    return [frame.wrap(r) for r in op.results]


def call_operands(traced: TracedFunction, leaves: Sequence[Any]) -> list[Any]:
    """The SSA operands for a call of `traced`: the flat arguments, then the captured values."""
    frame = current_trace_frame()
    values = [lift(x, a.dtype).value for x, a in zip(leaves, traced.in_avals)]
    values += [frame.resolve(c).value for c in traced.captures]
    return values


@api
def stop_gradient(x: Any) -> Any:
    """Identity in value; blocks derivatives (`autodiff.stop_gradient`). Applies to pytrees."""
    leaves, tree = tree_flatten(x)
    outs = []
    for leaf in leaves:
        t = lift(leaf)
        outs.append(emit_results(ad.StopGradientOp(t.value))[0])
    return tree_unflatten(tree, outs)


class custom_vjp:
    """A function with a user-given VJP, as `jax.custom_vjp`:

        @ig.custom_vjp
        def f(x): ...
        def f_fwd(x): return f(x), residuals
        def f_bwd(residuals, g): return (grad_x,)
        f.defvjp(f_fwd, f_bwd)
    """

    def __init__(self, fn: Callable[..., Any]):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self._in_fwd = 0

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise TypeError(f"custom_vjp function {function_name(self.fn)} has no rule: call .defvjp(fwd, bwd)")
        if self._in_fwd:
            # `f(x)` inside f's own fwd rule (the documented pattern) is the primal function.
            return self.fn(*args)
        return eager_capable(self._staged)(*args)

    def _staged(self, *args: Any) -> Any:
        assert self.fwd is not None and self.bwd is not None
        fwd_rule, bwd_rule = self.fwd, self.bwd
        leaves, _ = tree_flatten(list(args))
        primal = trace_child(self.fn, args)
        residual_tree: list[TreeDef] = []

        def fwd_flat(*a: Any) -> tuple[Any, ...]:
            out, residuals = fwd_rule(*a)
            out_leaves, out_tree = tree_flatten(out)
            if out_tree != primal.out_tree:
                raise TypeError(
                    f"custom_vjp: fwd returned outputs {out_tree!r}, the function returns {primal.out_tree!r}"
                )
            for k, (leaf, aval) in enumerate(zip(out_leaves, primal.out_avals)):
                shape, dtype = tuple(shape_of(leaf)), dtype_of(leaf)
                if shape != tuple(aval.shape) or (not is_scalar(leaf) and dtype != aval.dtype):
                    raise ShapeError(
                        f"custom_vjp: fwd's output {k} is {dtype}{list(shape)}, but "
                        f"{function_name(self.fn)} returns {aval.dtype}{list(aval.shape)} there{user_site()}"
                    )
            res_leaves, res_tree = tree_flatten(residuals)
            residual_tree.append(res_tree)
            return (*out_leaves, *res_leaves)

        self._in_fwd += 1
        try:
            fwd = trace_child(fwd_flat, args, name=f"{primal.name}_fwd")
        finally:
            self._in_fwd -= 1
        residual_avals = fwd.out_avals[len(primal.out_avals) :]
        n_res = len(residual_avals)

        def bwd_flat(*flat: Any) -> tuple[Any, ...]:
            residuals = tree_unflatten(residual_tree[0], flat[:n_res])
            cts = tree_unflatten(primal.out_tree, flat[n_res:])
            grads = bwd_rule(residuals, cts)
            if not isinstance(grads, tuple) or len(grads) != len(args):
                raise TypeError(
                    f"custom_vjp: bwd must return a tuple with one cotangent per argument "
                    f"({len(args)}), got {type(grads).__name__}"
                )
            g_leaves, _ = tree_flatten(list(grads), is_leaf=lambda x: x is None)
            if len(g_leaves) != len(primal.in_avals):
                raise TypeError("custom_vjp: bwd's cotangents do not match the arguments' structure")
            for k, (g, a) in enumerate(zip(g_leaves, primal.in_avals)):
                if g is None:
                    continue
                shape, dtype = tuple(shape_of(g)), dtype_of(g)
                if shape != tuple(a.shape) or (not is_scalar(g) and dtype != a.dtype):
                    raise ShapeError(
                        f"custom_vjp: bwd's cotangent {k} is {dtype}{list(shape)}, but the argument "
                        f"it belongs to is {a.dtype}{list(a.shape)} (a cotangent has its "
                        f"argument's shape and dtype){user_site()}"
                    )
            return tuple(
                full(a.shape, 0, a.dtype) if g is None else lift(g, a.dtype)
                for g, a in zip(g_leaves, primal.in_avals)
            )

        bwd_avals = [*residual_avals, *primal.out_avals]
        bwd = trace_function(
            bwd_flat, bwd_avals, module=current_trace_frame().module, name=f"{primal.name}_bwd", in_avals=bwd_avals
        )
        for traced in (primal, fwd, bwd):
            if traced.captures:
                raise TypeError(
                    f"custom_vjp: {traced.name} closes over traced values; pass them as arguments"
                )
        op = ad.CustomVJPOp(primal.func_op, fwd.func_op, bwd.func_op, call_operands(primal, leaves))
        return tree_unflatten(primal.out_tree, emit_results(op))


class custom_jvp:
    """A function with a user-given JVP, as `jax.custom_jvp`:

        @ig.custom_jvp
        def f(x): ...
        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return f(x), <the tangent of f(x) along t>

    Forward mode calls the rule; reverse mode transposes it (its tangent output must be linear in
    the tangents, as in JAX), so one rule serves grad, jvp, and their compositions to any order.
    `f`'s own body is never differentiated. Integer arguments get zero tangents of their dtype.
    """

    def __init__(self, fn: Callable[..., Any]):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.jvp: Callable[..., Any] | None = None
        self._in_rule = 0

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """Sets the rule `jvp(primals, tangents) -> (primal_out, tangent_out)`; usable as a decorator."""
        self.jvp = jvp
        return jvp

    def __call__(self, *args: Any) -> Any:
        if self.jvp is None:
            raise TypeError(f"custom_jvp function {function_name(self.fn)} has no rule: use @f.defjvp")
        if self._in_rule:
            return self.fn(*args)  # `f(x)` inside f's own rule is the primal function
        return eager_capable(self._staged)(*args)

    def _staged(self, *args: Any) -> Any:
        assert self.jvp is not None
        rule = self.jvp
        leaves, _ = tree_flatten(list(args))
        primal = trace_child(self.fn, args)
        count = len(primal.in_avals)

        def jvp_flat(*flat: Any) -> tuple[Any, ...]:
            primals = tuple(tree_unflatten(primal.in_tree, list(flat[:count])))
            tangents = tuple(tree_unflatten(primal.in_tree, list(flat[count:])))
            result = rule(primals, tangents)
            if not isinstance(result, tuple) or len(result) != 2:
                raise TypeError(f"custom_jvp: the rule must return a pair (primal_out, tangent_out), got {type(result).__name__}")
            out, tangent_out = result
            out_leaves, out_tree = tree_flatten(out)
            t_leaves, t_tree = tree_flatten(tangent_out)
            for what, tree in (("primal_out", out_tree), ("tangent_out", t_tree)):
                if tree != primal.out_tree:
                    raise TypeError(
                        f"custom_jvp: the rule's {what} has structure {tree!r}, the function returns {primal.out_tree!r}"
                    )
            lifted = []
            for leaf, a in zip([*out_leaves, *t_leaves], [*primal.out_avals, *primal.out_avals]):
                t = lift(leaf, a.dtype)
                if t.shape != a.shape:
                    t = lift(np_broadcast_to(t, a.shape), a.dtype)
                lifted.append(t)
            return tuple(lifted)

        self._in_rule += 1
        try:
            avals = [*primal.in_avals, *primal.in_avals]
            jvp = trace_function(
                jvp_flat, avals, module=current_trace_frame().module, name=f"{primal.name}_jvp_rule", in_avals=avals
            )
        finally:
            self._in_rule -= 1
        for traced in (primal, jvp):
            if traced.captures:
                raise TypeError(f"custom_jvp: {traced.name} closes over traced values; pass them as arguments")
        op = ad.CustomJVPOp(primal.func_op, jvp.func_op, call_operands(primal, leaves))
        return tree_unflatten(primal.out_tree, emit_results(op))


def np_broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    from irgrad.numpy.shape import broadcast_to

    return broadcast_to(x, shape)


def checkpoint(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Rematerialization: values inside `fn` are recomputed in the reverse sweep, not saved."""

    @functools.wraps(fn)
    def staged(*args: Any, **kwargs: Any) -> Any:
        if kwargs:  # one more positional argument, differentiated like the others
            names = sorted(kwargs)
            call_fn = lambda *a: fn(*a[:-1], **dict(zip(names, a[-1])))  # noqa: E731
            call_fn.__name__ = getattr(fn, "__name__", "main")
            args = (*args, [kwargs[k] for k in names])
        else:
            call_fn = fn
        leaves, _ = tree_flatten(list(args))
        traced = trace_child(call_fn, args)
        op = ad.CheckpointOp(traced.func_op, call_operands(traced, leaves))
        return tree_unflatten(traced.out_tree, emit_results(op))

    return eager_capable(staged)


remat = checkpoint


def eager_capable(staged: Callable[..., Any]) -> Callable[..., Any]:
    """Staged under a trace; otherwise traced as its own program and run at once."""

    @functools.wraps(staged)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if current_frame() is not None:
            return staged(*args, **kwargs)
        return api(staged)(*args, **kwargs)

    return wrapper
