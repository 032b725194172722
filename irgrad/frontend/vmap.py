"""`ig.vmap`: a function mapped over a batch axis of its arguments, as JAX's `vmap`.

Like the other transforms, it traces `fn` once, on one example (the mapped axes removed), and
emits an `autodiff.batch` request that names it; the `autodiff` pass builds the batched function
(irgrad/autodiff/batching.py). So `ig.trace(ig.vmap(f), xs)` shows the request, and the batched
program is ordinary IR: `ig.grad` of a vmapped function, `ig.vmap` of a gradient (per-example
gradients) and `ig.jit` of either work as for any other function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from irgrad.dialects import autodiff as ad
from irgrad.tracing.errors import ShapeError, user_site
from irgrad.tracing.pytree import tree_flatten, tree_unflatten
from irgrad.tracing.tracer import ShapeDtype, Tracer
from irgrad.numpy.custom_derivatives import call_operands, eager_capable, emit_results, trace_child
from irgrad.numpy.support import dtype_of, shape_of

Axis = int | None


def _leaf_axes(spec: Any, tree_of: Any, what: str) -> list[Axis]:
    """One axis per leaf of `tree_of`: `spec` is an int or None for all of them, or a pytree of
    those with the structure of `tree_of` (JAX's "prefix" rule, for one level)."""
    leaves, tree = tree_flatten(tree_of)
    if spec is None or isinstance(spec, int):
        return [spec] * len(leaves)
    specs, spec_tree = tree_flatten(spec, is_leaf=lambda s: s is None)
    if spec_tree != tree:
        raise ValueError(f"vmap: {what} has structure {spec_tree!r}, but the value has {tree!r}{user_site()}")
    return list(specs)


def _argument_axes(in_axes: Any, args: Sequence[Any]) -> list[Axis]:
    if in_axes is None or isinstance(in_axes, int):
        return _leaf_axes(in_axes, list(args), "in_axes")
    if not isinstance(in_axes, (list, tuple)) or len(in_axes) != len(args):
        raise ValueError(
            f"vmap: in_axes must be an int, None, or one entry per positional argument ({len(args)}), "
            f"got {in_axes!r}{user_site()}"
        )
    axes: list[Axis] = []
    for i, (spec, arg) in enumerate(zip(in_axes, args)):
        axes += _leaf_axes(spec, arg, f"in_axes[{i}]")
    return axes


def _with_keywords(fn: Callable[..., Any], in_axes: Any, out_axes: Any, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
    """vmap of a call with keywords: the keywords become one more positional argument, a dict
    mapped over axis 0 of each leaf."""
    names = sorted(kwargs)
    axes = [in_axes] * len(args) if in_axes is None or isinstance(in_axes, int) else list(in_axes)
    if len(axes) != len(args):
        raise ValueError(
            f"vmap: in_axes must be an int, None, or one entry per positional argument ({len(args)}), "
            f"got {in_axes!r}{user_site()}"
        )

    def positional(*call_args: Any) -> Any:
        *rest, values = call_args
        return fn(*rest, **dict(zip(names, values)))

    positional.__name__ = getattr(fn, "__name__", "main")
    return vmap(positional, (*axes, 0), out_axes)(*args, [kwargs[k] for k in names])


def vmap(fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0) -> Callable[..., Any]:
    """`fn` mapped over axis `in_axes` of its arguments; results stacked along `out_axes`.

    `in_axes`: an int (every argument), None (not mapped), or one entry per positional argument,
    each an int, None, or a pytree of those matching the argument. Negative axes count from the
    end. `out_axes` likewise for the result (None: the result must not depend on a mapped value).
    Every mapped axis must have the same size. Keyword arguments are mapped over their axis 0,
    as in JAX.
    """

    @functools.wraps(fn)
    def staged(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            return _with_keywords(fn, in_axes, out_axes, args, kwargs)
        leaves, tree = tree_flatten(list(args))
        axes = _argument_axes(in_axes, args)
        size = None
        example: list[Any] = []
        ir_axes: list[int] = []
        for i, (leaf, axis) in enumerate(zip(leaves, axes)):
            shape, dtype = tuple(shape_of(leaf)), dtype_of(leaf)
            if axis is None:
                example.append(leaf if isinstance(leaf, Tracer) else ShapeDtype(shape, dtype))
                ir_axes.append(-1)
                continue
            if not -len(shape) <= axis < len(shape):
                raise ShapeError(f"vmap: in_axes {axis} is out of range for argument leaf {i} of shape {shape}{user_site()}")
            axis %= len(shape)
            if size is None:
                size = shape[axis]
            elif shape[axis] != size:
                raise ShapeError(
                    f"vmap: mapped axes have different sizes: {size} and {shape[axis]} (argument leaf {i}, "
                    f"shape {shape}, axis {axis}){user_site()}"
                )
            example.append(ShapeDtype(shape[:axis] + shape[axis + 1 :], dtype))
            ir_axes.append(axis)
        if size is None:
            raise ValueError(f"vmap: in_axes maps no argument; there is nothing to map over{user_site()}")
        example_args = tree_unflatten(tree, [e if isinstance(e, ShapeDtype) else ShapeDtype(tuple(shape_of(e)), dtype_of(e)) for e in example])
        traced = trace_child(fn, example_args)
        out_axes_flat: list[int] = []
        for j, (axis, aval) in enumerate(zip(_leaf_axes(out_axes, tree_unflatten(traced.out_tree, traced.out_avals), "out_axes"), traced.out_avals)):
            if axis is None:
                out_axes_flat.append(-1)
                continue
            rank = len(aval.shape) + 1
            if not -rank <= axis < rank:
                raise ShapeError(f"vmap: out_axes {axis} is out of range for result {j} of shape {aval.shape}{user_site()}")
            out_axes_flat.append(axis % rank)
        operands = call_operands(traced, leaves)
        op_axes = ir_axes + [-1] * len(traced.captures)
        op = ad.BatchOp(traced.func_op, operands, op_axes, out_axes_flat, size)
        return tree_unflatten(traced.out_tree, emit_results(op))

    return eager_capable(staged)
