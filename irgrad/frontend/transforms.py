"""JAX-style transforms: grad, value_and_grad, vjp, jvp, stop_gradient, custom_vjp, checkpoint.

Every transform traces its function into its own `func.func` and emits an `autodiff` op that
names it; the `autodiff` pass later turns the request into ordinary IR. Derivatives are never
computed by a Python-side tape, so `ig.trace(ig.grad(f), x)` shows the request and
`irgrad-opt -p autodiff` shows its expansion.

Called on numpy values with no trace active, a transformed function traces itself as a small
program and runs it on the reference interpreter (see `api_support.api`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType

from irgrad.dialects import autodiff as ad
from irgrad.tracing import dtypes
from irgrad.numpy.support import api, dtype_of, is_scalar, lift, shape_of
from irgrad.tracing.tracer import (
    ShapeDtype,
    TracedFunction,
    Tracer,
    current_frame,
    full,
    function_name,
    trace_function,
)
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.tracing.pytree import TreeDef, tree_flatten, tree_unflatten


def _frame():
    frame = current_frame()
    assert frame is not None
    return frame


def _trace_child(fn: Callable[..., Any], args: Sequence[Any], name: str | None = None) -> TracedFunction:
    frame = _frame()
    return trace_function(fn, args, module=frame.module, name=name or function_name(fn, "fn"))


def _emit_results(op) -> list[Tracer]:
    frame = _frame()
    frame.emit(op)
    return [frame.wrap(r) for r in op.results]


def _call_operands(traced: TracedFunction, leaves: Sequence[Any]) -> list[Any]:
    """The SSA operands for a call of `traced`: the flat arguments, then the captured values."""
    frame = _frame()
    values = [lift(x, a.dtype).value for x, a in zip(leaves, traced.in_avals)]
    values += [frame.resolve(c).value for c in traced.captures]
    return values


def _argnum_leaves(args: Sequence[Any], argnums: int | Sequence[int]) -> tuple[list[int], TreeDef, bool]:
    """Flat leaf positions of `args[argnums]` and the tree of the differentiated arguments."""
    single = isinstance(argnums, int)
    nums = [argnums] if single else list(argnums)
    for n in nums:
        if not -len(args) <= n < len(args):
            raise ValueError(f"argnums {argnums} out of range for {len(args)} positional arguments")
    nums = [n % len(args) for n in nums]
    positions: list[int] = []
    offset = 0
    for i, a in enumerate(args):
        count = len(tree_flatten(a)[0])
        if i in nums:
            positions.extend(range(offset, offset + count))
        offset += count
    # Reorder to follow argnums' order (it may not be sorted).
    ordered: list[int] = []
    for n in nums:
        start = sum(len(tree_flatten(a)[0]) for a in args[:n])
        ordered.extend(range(start, start + len(tree_flatten(args[n])[0])))
    tree = tree_flatten(args[nums[0]] if single else tuple(args[n] for n in nums))[1]
    return ordered, tree, single


def _check_differentiable(name: str, traced: TracedFunction, positions: Sequence[int]) -> None:
    for p in positions:
        aval = traced.in_avals[p]
        if not dtypes.is_float(aval.dtype):
            raise DTypeError(
                f"{name} requires floating-point inputs, but flat argument {p} has dtype "
                f"{aval.dtype} (shape {aval.shape}); integer and bool inputs have no gradient{user_site()}"
            )


# ---------------------------------------------------------------------------------------------
# Reverse mode
# ---------------------------------------------------------------------------------------------


def value_and_grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """`(value, grad)` of a scalar-valued `fn` w.r.t. `args[argnums]` (pytrees allowed).

    Keyword arguments are passed through and not differentiated, as in JAX.
    """

    @functools.wraps(fn)
    def staged(*args: Any, **kwargs: Any) -> Any:
        leaves, _ = tree_flatten(list(args))
        positions, grad_tree, _ = _argnum_leaves(args, argnums)
        bound = functools.partial(fn, **kwargs) if kwargs else fn
        traced = _trace_child(bound, args, name=function_name(fn, "fn"))
        _check_differentiable("grad", traced, positions)
        if has_aux and (traced.out_tree.kind != "tuple" or len(traced.out_tree.children) != 2):
            raise TypeError(
                f"grad with has_aux=True needs fn to return a pair (value, aux), got "
                f"{traced.out_tree!r}{user_site()}"
            )
        # With has_aux, fn returns (value, aux): the value is the first flat output.
        out_leaves = traced.out_avals
        if len(out_leaves) < 1 or out_leaves[0].shape != () or not dtypes.is_float(out_leaves[0].dtype):
            raise TypeError(
                f"grad requires a function returning a float scalar, got outputs "
                f"{[(a.shape, str(a.dtype)) for a in out_leaves]}{user_site()}"
            )
        if not has_aux and len(out_leaves) != 1:
            raise TypeError(
                f"grad requires a scalar output; the function returned {len(out_leaves)} values "
                f"(use has_aux=True to return auxiliary data){user_site()}"
            )
        operands = _call_operands(traced, leaves)
        callee = traced.func_op
        if has_aux:
            # A vjp with cotangent 1 for the value and zeros for the auxiliary outputs.
            cts = [full((), 1.0, out_leaves[0].dtype).value]
            cts += [full(a.shape, 0, a.dtype).value for a in out_leaves[1:]]
            op = ad.VJPOp(callee, operands, cts, positions)
            results = _emit_results(op)
            outs, grads = results[: len(out_leaves)], results[len(out_leaves) :]
        else:
            op = ad.ValueAndGradOp(callee, operands, positions)
            results = _emit_results(op)
            outs, grads = results[:1], results[1:]
        out = tree_unflatten(traced.out_tree, outs)
        grad = tree_unflatten(grad_tree, grads)
        return (out, grad)

    return _eager_capable(staged)


def grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar-valued `fn`; with `has_aux`, returns `(grad, aux)` as JAX does."""
    vg = value_and_grad(fn, argnums, has_aux)

    @functools.wraps(fn)
    def g(*args: Any, **kwargs: Any) -> Any:
        value, gradient = vg(*args, **kwargs)
        if has_aux:
            return gradient, value[1]
        return gradient

    return g


def vjp(fn: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`(out, vjp_fn)`; `vjp_fn(cotangent)` returns one cotangent per primal (a tuple).

    With `has_aux`, `fn` returns `(out, aux)` and vjp returns `(out, vjp_fn, aux)`, as in JAX.
    """
    if current_frame() is None:
        return _eager_vjp(fn, primals, has_aux)
    leaves, _ = tree_flatten(list(primals))
    traced = _trace_child(fn, primals)
    positions = [i for i, a in enumerate(traced.in_avals) if dtypes.is_float(a.dtype)]
    operands = _call_operands(traced, leaves)
    call = func.CallOp(traced.name, operands, [TensorType(dtypes.element_type(a.dtype), list(a.shape)) for a in traced.out_avals])
    outs = _emit_results(call)
    out_tree = traced.out_tree
    if has_aux:
        if out_tree.kind != "tuple" or len(out_tree.children) != 2:
            raise TypeError(f"vjp with has_aux=True needs fn to return a pair (out, aux), got {out_tree!r}")
        out_tree, aux_tree = out_tree.children
    n_out = out_tree.num_leaves
    out = tree_unflatten(out_tree, outs[:n_out])

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree_flatten(cotangent)
        if ct_tree != out_tree:
            raise ValueError(f"vjp_fn: cotangent structure {ct_tree!r} differs from the output's {out_tree!r}")
        cts = []
        for c, a in zip(ct_leaves, traced.out_avals):
            t = lift(c, a.dtype)
            if t.shape != a.shape:
                raise ShapeError(f"vjp_fn: cotangent shape {t.shape} differs from the output's {a.shape}{user_site()}")
            cts.append(t.value)
        cts += [full(a.shape, 0, a.dtype).value for a in traced.out_avals[n_out:]]  # aux: no cotangent
        op = ad.VJPOp(traced.func_op, _call_operands(traced, leaves), cts, positions)
        results = _emit_results(op)[len(traced.out_avals) :]
        flat: list[Any] = []
        it = iter(results)
        for i, a in enumerate(traced.in_avals):
            flat.append(next(it) if i in positions else full(a.shape, 0, a.dtype))
        return tuple(tree_unflatten(traced.in_tree, flat))

    if has_aux:
        return out, vjp_fn, tree_unflatten(aux_tree, outs[n_out:])
    return out, vjp_fn


def _eager_vjp(fn: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool) -> tuple[Any, ...]:
    out = _eager_capable(lambda *p: fn(*p))(*primals)

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        def staged(p: Any, c: Any) -> Any:
            return vjp(fn, *p, has_aux=has_aux)[1](c)

        return _eager_capable(staged)(tuple(primals), cotangent)

    if has_aux:
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError("vjp with has_aux=True needs fn to return a pair (out, aux)")
        return out[0], vjp_fn, out[1]
    return out, vjp_fn


# ---------------------------------------------------------------------------------------------
# Forward mode
# ---------------------------------------------------------------------------------------------


def jvp(fn: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """`(fn(*primals), J @ tangents)`; tangents match the primals' structure and shapes."""

    def staged(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
        p_leaves, p_tree = tree_flatten(list(primals))
        t_leaves, t_tree = tree_flatten(list(tangents))
        if p_tree != t_tree:
            raise ValueError(f"jvp: tangents structure {t_tree!r} differs from primals {p_tree!r}")
        traced = _trace_child(fn, tuple(primals))
        positions = [i for i, a in enumerate(traced.in_avals) if dtypes.is_float(a.dtype)]
        tans = []
        for i in positions:
            a = traced.in_avals[i]
            t = lift(t_leaves[i], a.dtype)
            if t.shape != a.shape:
                raise ShapeError(f"jvp: tangent shape {t.shape} differs from primal shape {a.shape}{user_site()}")
            tans.append(t.value)
        op = ad.JVPOp(traced.func_op, _call_operands(traced, p_leaves), tans, positions)
        results = _emit_results(op)
        n = len(traced.out_avals)
        return (tree_unflatten(traced.out_tree, results[:n]), tree_unflatten(traced.out_tree, results[n:]))

    return _eager_capable(staged)(tuple(primals), tuple(tangents))


# ---------------------------------------------------------------------------------------------
# Derivative control
# ---------------------------------------------------------------------------------------------


@api
def stop_gradient(x: Any) -> Any:
    """Identity in value; blocks derivatives (`autodiff.stop_gradient`). Applies to pytrees."""
    leaves, tree = tree_flatten(x)
    outs = []
    for leaf in leaves:
        t = lift(leaf)
        outs.append(_emit_results(ad.StopGradientOp(t.value))[0])
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
        return _eager_capable(self._staged)(*args)

    def _staged(self, *args: Any) -> Any:
        assert self.fwd is not None and self.bwd is not None
        fwd_rule, bwd_rule = self.fwd, self.bwd
        leaves, _ = tree_flatten(list(args))
        primal = _trace_child(self.fn, args)
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
            fwd = _trace_child(fwd_flat, args, name=f"{primal.name}_fwd")
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
            bwd_flat, bwd_avals, module=_frame().module, name=f"{primal.name}_bwd", in_avals=bwd_avals
        )
        for traced in (primal, fwd, bwd):
            if traced.captures:
                raise TypeError(
                    f"custom_vjp: {traced.name} closes over traced values; pass them as arguments"
                )
        op = ad.CustomVJPOp(primal.func_op, fwd.func_op, bwd.func_op, _call_operands(primal, leaves))
        return tree_unflatten(primal.out_tree, _emit_results(op))


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
        return _eager_capable(self._staged)(*args)

    def _staged(self, *args: Any) -> Any:
        assert self.jvp is not None
        rule = self.jvp
        leaves, _ = tree_flatten(list(args))
        primal = _trace_child(self.fn, args)
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
                jvp_flat, avals, module=_frame().module, name=f"{primal.name}_jvp_rule", in_avals=avals
            )
        finally:
            self._in_rule -= 1
        for traced in (primal, jvp):
            if traced.captures:
                raise TypeError(f"custom_jvp: {traced.name} closes over traced values; pass them as arguments")
        op = ad.CustomJVPOp(primal.func_op, jvp.func_op, _call_operands(primal, leaves))
        return tree_unflatten(primal.out_tree, _emit_results(op))


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
        traced = _trace_child(call_fn, args)
        op = ad.CheckpointOp(traced.func_op, _call_operands(traced, leaves))
        return tree_unflatten(traced.out_tree, _emit_results(op))

    return _eager_capable(staged)


remat = checkpoint


def _eager_capable(staged: Callable[..., Any]) -> Callable[..., Any]:
    """Staged under a trace; otherwise traced as its own program and run at once."""

    @functools.wraps(staged)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if current_frame() is not None:
            return staged(*args, **kwargs)
        return api(staged)(*args, **kwargs)

    return wrapper


def eval_shape(fn: Callable[..., Any], *args: Any) -> Any:
    """The shapes and dtypes of `fn(*args)` as a pytree of `ShapeDtype`s, traced, never run
    (`jax.eval_shape`). `args` may hold arrays or `ShapeDtype`s."""
    from irgrad.tracing.tracer import ShapeDtype, trace

    program = trace(fn, *args)
    outs = [ShapeDtype(a.shape, a.dtype) for a in program.traced.out_avals]
    return tree_unflatten(program.traced.out_tree, outs)


def linearize(fn: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """`(fn(*primals), f_jvp)` where `f_jvp(*tangents)` is the JVP at `primals` (`jax.linearize`).

    Each call of `f_jvp` is a forward-mode derivative request on the same primals; the primal
    output is computed once, here."""
    out = fn(*primals)

    def f_jvp(*tangents: Any) -> Any:
        if len(tangents) != len(primals):
            raise TypeError(f"linearize: f_jvp takes {len(primals)} tangents, one per primal, got {len(tangents)}")
        return jvp(fn, primals, tangents)[1]

    return out, f_jvp
