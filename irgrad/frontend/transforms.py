"""JAX-style transforms: grad, value_and_grad, vjp, jvp, linearize, eval_shape (the derivative
controls they build on, stop_gradient, custom_vjp/jvp and checkpoint, are irgrad/numpy/custom_derivatives.py).

Every transform traces its function into its own `func.func` and emits an `autodiff` op that
names it; the `autodiff` pass later turns the request into ordinary IR. Derivatives are never
computed by a Python-side tape, so `ig.trace(ig.grad(f), x)` shows the request and
`irgrad-opt -p autodiff` shows its expansion.

Called on numpy values with no trace active, a transformed function traces itself as a small
program and runs it on the reference interpreter (see `irgrad.numpy.support.api`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType

from irgrad.dialects import autodiff as ad
from irgrad.tracing import dtypes
from irgrad.numpy.support import lift
from irgrad.tracing.tracer import Tracer, TracedFunction, current_frame, full, function_name
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.tracing.pytree import TreeDef, tree_flatten, tree_unflatten
from irgrad.numpy.custom_derivatives import call_operands, eager_capable, emit_results, trace_child


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


FLOAT0 = np.dtype([("float0", np.void, 0)])
"""JAX's float0 (`jax.dtypes.float0`): the dtype of the zero gradients of integer inputs that
`grad(allow_int=True)` returns, as numpy arrays (the IR has no such type, so they are made
outside the traced program)."""


def check_input_dtype_revderiv(name: str, holomorphic: bool, allow_int: bool, dtype: Any, shape: Any) -> None:
    """JAX's `_check_input_dtype_revderiv` for grad, value_and_grad and jacrev: complex inputs
    with `holomorphic`; integer and bool inputs only with `allow_int` (their gradient is float0
    zeros). The messages are JAX's, with the shape and the user's line."""
    dtype = np.dtype(dtype)
    if holomorphic and not dtypes.is_complex(dtype):
        raise DTypeError(
            f"{name} with holomorphic=True requires inputs with complex dtype, but got {dtype.name} "
            f"(shape {tuple(shape)}){user_site()}"
        )
    if not dtypes.is_inexact(dtype) and not allow_int:
        raise DTypeError(
            f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
            f"np.inexact), but got {dtype.name} (shape {tuple(shape)}). If you want to use Boolean- or "
            f"integer-valued inputs, use vjp or set allow_int to True{user_site()}"
        )


def check_output_dtype_revderiv(name: str, holomorphic: bool, dtype: Any, shape: Any) -> None:
    """JAX's `_check_output_dtype_revderiv`: a complex output needs `holomorphic` (a real loss
    otherwise: the gradient of a complex output is not defined without saying which), and with
    it the output must be complex; integer outputs have no derivative."""
    dtype = np.dtype(dtype)
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise DTypeError(
                f"{name} with holomorphic=True requires outputs with complex dtype, but got "
                f"{dtype.name} (shape {tuple(shape)}){user_site()}"
            )
    elif dtypes.is_complex(dtype):
        raise DTypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
            f"but got {dtype.name} (shape {tuple(shape)}). For holomorphic differentiation, pass "
            f"holomorphic=True. For differentiation of non-holomorphic functions involving complex "
            f"outputs, use ig.vjp directly{user_site()}"
        )
    elif not dtypes.is_float(dtype):
        raise DTypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
            f"but got {dtype.name} (shape {tuple(shape)}). For differentiation of functions with "
            f"integer outputs, use ig.vjp directly{user_site()}"
        )


def _check_scalar(out_avals: Sequence[Any], has_aux: bool) -> None:
    """JAX's `_check_scalar`: grad's function returns one scalar (the first output with has_aux)."""
    if not has_aux and len(out_avals) != 1:
        raise TypeError(
            f"grad requires a scalar output; the function returned {len(out_avals)} values "
            f"(use has_aux=True to return auxiliary data){user_site()}"
        )
    shape = tuple(out_avals[0].shape) if out_avals else None
    if shape != ():
        extract = ""
        if shape is not None and math.prod(shape) == 1:
            extract = "extract the scalar with output.reshape(())" + (" or output[0]" if len(shape) == 1 else "") + ", "
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output had shape: {shape}. To get "
            f"the gradient, {extract}reduce the output to a scalar with output.sum(), or use "
            f"ig.jacobian to differentiate a function with a non-scalar output{user_site()}"
        )


def float0_for_integers(tree: Any) -> Any:
    """The integer and bool leaves of a gradient tree (the zeros of `allow_int`'s integer inputs;
    a float input's gradient is never integer) as float0 zeros of their shape, as JAX returns.
    Under a trace (`ig.jit`) they stay integer zeros: the IR has no float0 type to return."""
    from irgrad.numpy.support import dtype_of, shape_of

    if current_frame() is not None:
        return tree
    leaves, treedef = tree_flatten(tree)
    out = [np.zeros(tuple(shape_of(g)), FLOAT0) if not dtypes.is_inexact(dtype_of(g)) else g for g in leaves]
    return tree_unflatten(treedef, out)


# ---------------------------------------------------------------------------------------------
# Reverse mode
# ---------------------------------------------------------------------------------------------


def value_and_grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:  # fmt: skip
    """`(value, grad)` of a scalar-valued `fn` w.r.t. `args[argnums]` (pytrees allowed), with
    JAX's checks and options: a real output (a complex input's gradient is then dL/dx - i dL/dy);
    with `holomorphic=True`, complex inputs and output and the gradient f'(z), the VJP with
    cotangent 1 (no conjugation); with `allow_int=True`, integer and bool inputs, whose gradient
    is float0 zeros (numpy arrays of `FLOAT0`, made outside the traced program; under `ig.jit`,
    integer zeros of the input's dtype).

    Keyword arguments are passed through and not differentiated, as in JAX.
    """

    @functools.wraps(fn)
    def staged(*args: Any, **kwargs: Any) -> Any:
        leaves, _ = tree_flatten(list(args))
        positions, grad_tree, _ = _argnum_leaves(args, argnums)
        bound = functools.partial(fn, **kwargs) if kwargs else fn
        traced = trace_child(bound, args, name=function_name(fn, "fn"))
        for p in positions:
            a = traced.in_avals[p]
            check_input_dtype_revderiv("grad", holomorphic, allow_int, a.dtype, a.shape)
        if has_aux and (traced.out_tree.kind != "tuple" or len(traced.out_tree.children) != 2):
            raise TypeError(
                f"grad with has_aux=True needs fn to return a pair (value, aux), got "
                f"{traced.out_tree!r}{user_site()}"
            )
        # With has_aux, fn returns (value, aux): the value is the first flat output.
        out_leaves = traced.out_avals
        _check_scalar(out_leaves, has_aux)
        check_output_dtype_revderiv("grad", holomorphic, out_leaves[0].dtype, out_leaves[0].shape)
        operands = call_operands(traced, leaves)
        callee = traced.func_op
        inexact = [p for p in positions if dtypes.is_inexact(traced.in_avals[p].dtype)]
        if has_aux or holomorphic or len(inexact) != len(positions):
            # A vjp with cotangent 1 for the value (of its dtype: complex 1 gives f'(z)) and
            # zeros for the auxiliary outputs.
            cts = [full((), 1.0, out_leaves[0].dtype).value]
            cts += [full(a.shape, 0, a.dtype).value for a in out_leaves[1:]]
            op = ad.VJPOp(callee, operands, cts, inexact)
            results = emit_results(op)
            outs, found = results[: len(out_leaves)], iter(results[len(out_leaves) :])
        else:
            op = ad.ValueAndGradOp(callee, operands, positions)
            results = emit_results(op)
            outs, found = results[:1], iter(results[1:])
        # Integer inputs (allow_int): integer zeros here, float0 outside the program.
        grads = [next(found) if p in inexact else full(traced.in_avals[p].shape, 0, traced.in_avals[p].dtype)
                 for p in positions]  # fmt: skip
        for k, g in zip(positions, grads):
            if k in inexact and isinstance(leaves[k], Tracer) and leaves[k].weak:
                g.frame.mark_weak(g)  # the cotangent of a weakly typed input is weak, as in JAX
        out = tree_unflatten(traced.out_tree, outs)
        grad = tree_unflatten(grad_tree, grads)
        return (out, grad)

    vg = eager_capable(staged)
    if not allow_int:
        return vg

    @functools.wraps(fn)
    def with_float0(*args: Any, **kwargs: Any) -> Any:
        value, gradient = vg(*args, **kwargs)
        return value, float0_for_integers(gradient)

    return with_float0


def grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:  # fmt: skip
    """The gradient of a scalar-valued `fn`; with `has_aux`, returns `(grad, aux)` as JAX does.
    `holomorphic` and `allow_int` as in `value_and_grad` (and JAX): f'(z) of a holomorphic
    complex function; float0 zeros for integer inputs."""
    vg = value_and_grad(fn, argnums, has_aux, holomorphic=holomorphic, allow_int=allow_int)

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
    traced = trace_child(fn, primals)
    positions = [i for i, a in enumerate(traced.in_avals) if dtypes.is_inexact(a.dtype)]
    operands = call_operands(traced, leaves)
    call = func.CallOp(traced.name, operands, [TensorType(dtypes.element_type(a.dtype), list(a.shape)) for a in traced.out_avals])
    outs = emit_results(call)
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
            _same_dtype("vjp_fn: cotangent", c, a.dtype, "the output's")
            t = lift(c, a.dtype)
            if t.shape != a.shape:
                raise ShapeError(f"vjp_fn: cotangent shape {t.shape} differs from the output's {a.shape}{user_site()}")
            cts.append(t.value)
        cts += [full(a.shape, 0, a.dtype).value for a in traced.out_avals[n_out:]]  # aux: no cotangent
        op = ad.VJPOp(traced.func_op, call_operands(traced, leaves), cts, positions)
        results = emit_results(op)[len(traced.out_avals) :]
        flat: list[Any] = []
        it = iter(results)
        for i, a in enumerate(traced.in_avals):
            flat.append(next(it) if i in positions else full(a.shape, 0, a.dtype))
        return tuple(tree_unflatten(traced.in_tree, flat))

    if has_aux:
        return out, vjp_fn, tree_unflatten(aux_tree, outs[n_out:])
    return out, vjp_fn


def _eager_vjp(fn: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool) -> tuple[Any, ...]:
    out = eager_capable(lambda *p: fn(*p))(*primals)

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        def staged(p: Any, c: Any) -> Any:
            return vjp(fn, *p, has_aux=has_aux)[1](c)

        return eager_capable(staged)(tuple(primals), cotangent)

    if has_aux:
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError("vjp with has_aux=True needs fn to return a pair (out, aux)")
        return out[0], vjp_fn, out[1]
    return out, vjp_fn


# ---------------------------------------------------------------------------------------------
# Forward mode
# ---------------------------------------------------------------------------------------------


def _same_dtype(what: str, value: Any, dtype: Any, whose: str) -> None:
    """JAX's check: an array tangent or cotangent has its primal's dtype (Python scalars,
    weakly typed, take it)."""
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        return
    if isinstance(value, Tracer) and value.weak:
        return
    got = value.dtype if isinstance(value, Tracer) else np.asarray(value).dtype
    if got != dtype and dtypes.is_inexact(dtype):
        raise TypeError(f"{what} has dtype {got}; {whose} dtype is {dtype}{user_site()}")


def jvp(fn: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:  # fmt: skip
    """`(fn(*primals), J @ tangents)`; tangents match the primals' structure, shapes and
    dtypes. With `has_aux`, `fn` returns `(out, aux)` and jvp `(out, tangent_out, aux)`."""

    def staged(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
        p_leaves, p_tree = tree_flatten(list(primals))
        t_leaves, t_tree = tree_flatten(list(tangents))
        if p_tree != t_tree:
            raise ValueError(f"jvp: tangents structure {t_tree!r} differs from primals {p_tree!r}")
        traced = trace_child(fn, tuple(primals))
        out_tree = traced.out_tree
        if has_aux and (out_tree.kind != "tuple" or len(out_tree.children) != 2):
            raise TypeError(f"jvp with has_aux=True needs fn to return a pair (out, aux), got {out_tree!r}{user_site()}")
        positions = [i for i, a in enumerate(traced.in_avals) if dtypes.is_inexact(a.dtype)]
        tans = []
        for i in positions:
            a = traced.in_avals[i]
            _same_dtype("jvp: tangent", t_leaves[i], a.dtype, "its primal's")
            t = lift(t_leaves[i], a.dtype)
            if t.shape != a.shape:
                raise ShapeError(f"jvp: tangent shape {t.shape} differs from primal shape {a.shape}{user_site()}")
            tans.append(t.value)
        op = ad.JVPOp(traced.func_op, call_operands(traced, p_leaves), tans, positions)
        results = emit_results(op)
        n = len(traced.out_avals)
        outs, tangent_outs = tree_unflatten(out_tree, results[:n]), tree_unflatten(out_tree, results[n:])
        if has_aux:
            return outs[0], tangent_outs[0], outs[1]
        return outs, tangent_outs

    return eager_capable(staged)(tuple(primals), tuple(tangents))


# ---------------------------------------------------------------------------------------------
# Derivative control
# ---------------------------------------------------------------------------------------------


def eval_shape(fn: Callable[..., Any], *args: Any) -> Any:
    """The shapes and dtypes of `fn(*args)` as a pytree of `ShapeDtype`s, traced, never run
    (`jax.eval_shape`). `args` may hold arrays or `ShapeDtype`s."""
    from irgrad.tracing.tracer import ShapeDtype, trace

    program = trace(fn, *args)
    outs = [ShapeDtype(a.shape, a.dtype) for a in program.traced.out_avals]
    return tree_unflatten(program.traced.out_tree, outs)


def linearize(fn: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`(fn(*primals), f_jvp)` where `f_jvp(*tangents)` is the JVP at `primals` (`jax.linearize`);
    with `has_aux`, `fn` returns `(out, aux)` and linearize `(out, f_jvp, aux)`.

    Each call of `f_jvp` is a forward-mode derivative request on the same primals; the primal
    output is computed once, here."""
    out = fn(*primals)
    if has_aux and (not isinstance(out, tuple) or len(out) != 2):
        raise TypeError(f"linearize with has_aux=True needs fn to return a pair (out, aux){user_site()}")

    def f_jvp(*tangents: Any) -> Any:
        if len(tangents) != len(primals):
            raise TypeError(f"linearize: f_jvp takes {len(primals)} tangents, one per primal, got {len(tangents)}")
        return jvp(fn, primals, tangents, has_aux=has_aux)[1]

    if has_aux:
        return out[0], f_jvp, out[1]
    return out, f_jvp


def linear_transpose(fn: Callable[..., Any], *primals: Any) -> Callable[..., tuple[Any, ...]]:
    """The transpose of a linear `fn` (`jax.linear_transpose`): `primals` (arrays or
    `ShapeDtype`s) give the input shapes and dtypes; the result maps an output cotangent to the
    tuple of input cotangents. It is fn's VJP at zero, which for a linear fn is its transpose
    everywhere (irgrad does not check that fn is linear; JAX does)."""
    from irgrad.tracing.tracer import ShapeDtype

    leaves, tree = tree_flatten(list(primals))
    zeros = [np.zeros(a.shape, a.dtype) for a in (ShapeDtype.of(x) for x in leaves)]
    at_zero = tree_unflatten(tree, zeros)

    def transposed(cotangent: Any) -> tuple[Any, ...]:
        return vjp(fn, *at_zero)[1](cotangent)

    return transposed
