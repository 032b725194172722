"""`ig.jacrev`, `ig.jacfwd`, `ig.jacobian`, `ig.hessian`: whole Jacobians, as JAX builds them.

A Jacobian is one derivative per basis vector, and the basis is a batch: `jacrev` maps the
pullback (`ig.vjp`) over the rows of the identity of the output space, `jacfwd` maps the
pushforward (`ig.jvp`) over the rows of the identity of the input space. Both are `ig.vmap`
of an ordinary derivative request, so the IR holds one batched backward (or forward) sweep, not
one sweep per basis vector: a `jacrev` of a function with M outputs is one pullback whose
cotangents carry a batch of M. Reverse mode suits few outputs, forward mode few inputs;
`hessian` is `jacfwd(jacrev(f))`, forward over reverse, as in JAX.

Shapes follow JAX: for an output leaf of shape `out` and a differentiated argument leaf of shape
`in`, the block is `out + in`. The result has the output's structure, each leaf of it the
structure of the differentiated arguments (a tuple when `argnums` is a tuple). Dtypes are checked
as JAX checks them, with its messages: jacrev takes real and complex inputs and real outputs,
jacfwd real inputs; `holomorphic=True` takes complex inputs and outputs of a holomorphic `fn`
(blocks df/dz); jacrev's `allow_int=True` takes integer inputs (integer zero blocks, as JAX's).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes
from irgrad.numpy.support import api, dtype_of, lift, shape_of
from irgrad.tracing.errors import DTypeError, user_site
from irgrad.tracing.pytree import TreeDef, tree_flatten, tree_unflatten
from irgrad.frontend.transforms import (
    check_input_dtype_revderiv, check_output_dtype_revderiv, jvp, vjp,
)
from irgrad.frontend.vmap import vmap


def _argnums(argnums: int | Sequence[int], count: int, name: str) -> list[int]:
    nums = [argnums] if isinstance(argnums, int) else list(argnums)
    if not nums:
        raise ValueError(f"{name}: argnums must name at least one argument")
    for n in nums:
        if not -count <= n < count:
            raise ValueError(f"{name}: argnums {argnums} out of range for {count} positional arguments")
    return [n % count for n in nums]


def _check_inputs(name: str, leaves: Sequence[Any], holomorphic: bool, allow_int: bool) -> None:
    """JAX's input checks: jacrev takes real and complex inputs (integers with `allow_int`),
    jacfwd real ones; with `holomorphic`, both only complex ones. JAX's messages."""
    for leaf in leaves:
        dtype, shape = dtype_of(leaf), tuple(shape_of(leaf))
        if name == "jacrev":
            check_input_dtype_revderiv(name, holomorphic, allow_int, dtype, shape)
        elif holomorphic and not dtypes.is_complex(dtype):
            raise DTypeError(
                f"jacfwd with holomorphic=True requires inputs with complex dtype, but got {np.dtype(dtype).name} "
                f"(shape {shape}){user_site()}"
            )
        elif not holomorphic and not dtypes.is_float(dtype):
            raise DTypeError(
                f"jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but got "
                f"{np.dtype(dtype).name} (shape {shape}). For holomorphic differentiation, pass holomorphic=True. "
                f"For differentiation of non-holomorphic functions involving complex inputs or integer inputs, "
                f"use ig.jvp directly{user_site()}"
            )


def _check_outputs(name: str, leaves: Sequence[Any], holomorphic: bool) -> None:
    """JAX's output checks: jacrev's are grad's (real outputs, complex ones with `holomorphic`);
    jacfwd's outputs are complex with `holomorphic` and otherwise anything inexact (irgrad has no
    float0 tangent for an integer output, so those are refused)."""
    for leaf in leaves:
        dtype, shape = dtype_of(leaf), tuple(shape_of(leaf))
        if name == "jacrev":
            check_output_dtype_revderiv(name, holomorphic, dtype, shape)
        elif holomorphic and not dtypes.is_complex(dtype):
            raise DTypeError(
                f"jacfwd with holomorphic=True requires outputs with complex dtype, but got {np.dtype(dtype).name} "
                f"(shape {shape}){user_site()}"
            )
        elif not dtypes.is_inexact(dtype):
            raise DTypeError(
                f"jacfwd requires real- or complex-valued outputs, but got {np.dtype(dtype).name} (shape {shape}); "
                f"integer outputs have no tangent here (JAX's would be float0){user_site()}"
            )


def _split(flat: Any, shapes: Sequence[tuple[int, ...]], dtype_list: Sequence[Any]) -> list[Any]:
    """A vector of length sum(prod(shapes)) cut into leaves of the given shapes and dtypes."""
    leaves, offset = [], 0
    for shape, dtype in zip(shapes, dtype_list):
        size = math.prod(shape)
        leaves.append(flat[offset : offset + size].reshape(shape).astype(dtype))
        offset += size
    return leaves


class _Partial:
    """`fn` as a function of the arguments named by argnums only, the others fixed."""

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any], nums: Sequence[int], has_aux: bool):
        self.fn, self.args, self.nums, self.has_aux = fn, list(args), list(nums), has_aux

    def __call__(self, *diff: Any) -> Any:
        full = list(self.args)
        for n, value in zip(self.nums, diff):
            full[n] = value
        out = self.fn(*full)
        if self.has_aux and (not isinstance(out, tuple) or len(out) != 2):
            raise TypeError(f"has_aux=True needs the function to return a pair (out, aux), got {type(out).__name__}")
        return out

    def without_aux(self, *diff: Any) -> Any:
        out = self(*diff)
        return out[0] if self.has_aux else out


def _differentiated(
    name: str, fn: Callable[..., Any], args: Sequence[Any], argnums: int | Sequence[int], has_aux: bool,
    holomorphic: bool, allow_int: bool = False,
) -> tuple[tuple[Any, ...], list[Any], TreeDef, _Partial]:  # fmt: skip
    """The differentiated arguments, their leaves and tree (dtypes checked), and `fn` of them alone."""
    nums = _argnums(argnums, len(args), name)
    diff = tuple(args[n] for n in nums)
    in_leaves, in_tree = tree_flatten(list(diff))
    _check_inputs(name, in_leaves, holomorphic, allow_int)
    return diff, in_leaves, in_tree, _Partial(fn, args, nums, has_aux)


def _assemble(
    blocks: list[list[Any]], out_tree: TreeDef, in_tree: TreeDef, single: bool
) -> Any:
    """blocks[j][k] (output leaf j, input leaf k) into the output structure of input structures."""
    per_output = []
    for row in blocks:
        inner = tree_unflatten(in_tree, row)
        per_output.append(inner[0] if single else tuple(inner))
    return tree_unflatten(out_tree, per_output)


def jacrev(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:  # fmt: skip
    """The Jacobian of `fn` w.r.t. `args[argnums]` by reverse mode: one pullback batched over the
    rows of the output space's identity. With `has_aux`, returns `(jacobian, aux)`. JAX's
    options: `holomorphic=True` for a holomorphic complex `fn` (complex inputs and outputs; the
    blocks are df/dz, the pullback of the complex identity's rows), `allow_int=True` for integer
    inputs, whose blocks are zeros of the input's integer dtype (JAX's jacrev gives the same)."""

    @functools.wraps(fn)
    def staged(*args: Any) -> Any:
        diff, in_leaves, in_tree, partial = _differentiated("jacrev", fn, args, argnums, has_aux, holomorphic, allow_int)
        if has_aux:
            out, pullback, aux = vjp(partial, *diff, has_aux=True)
        else:
            out, pullback = vjp(partial, *diff)
        out_leaves, out_tree = tree_flatten(out)
        _check_outputs("jacrev", out_leaves, holomorphic)
        out_shapes = [tuple(shape_of(y)) for y in out_leaves]
        out_dtypes = [dtype_of(y) for y in out_leaves]
        rows = sum(math.prod(s) for s in out_shapes)
        basis = np.eye(rows, dtype=np.result_type(*out_dtypes))

        def pull(row: Any) -> Any:
            return pullback(tree_unflatten(out_tree, _split(row, out_shapes, out_dtypes)))

        # One leaf per differentiated input leaf, each (rows, *in_shape).
        cts = tree_flatten(list(vmap(pull)(lift(basis))))[0]
        in_shapes = [tuple(shape_of(x)) for x in in_leaves]
        blocks, offset = [], 0
        for shape in out_shapes:
            size = math.prod(shape)
            blocks.append([ct[offset : offset + size].reshape(shape + s) for ct, s in zip(cts, in_shapes)])
            offset += size
        jac = _assemble(blocks, out_tree, in_tree, isinstance(argnums, int))
        return (jac, aux) if has_aux else jac

    return _staged_or_eager(staged)


def jacfwd(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:  # fmt: skip
    """The Jacobian of `fn` w.r.t. `args[argnums]` by forward mode: one pushforward batched over
    the rows of the input space's identity. With `has_aux`, returns `(jacobian, aux)`. Real
    inputs (JAX's rule); `holomorphic=True` for a holomorphic complex `fn`, whose blocks are
    df/dz (the pushforward of the complex identity's rows)."""

    @functools.wraps(fn)
    def staged(*args: Any) -> Any:
        diff, in_leaves, in_tree, partial = _differentiated("jacfwd", fn, args, argnums, has_aux, holomorphic)
        in_shapes = [tuple(shape_of(x)) for x in in_leaves]
        in_dtypes = [dtype_of(x) for x in in_leaves]
        columns = sum(math.prod(s) for s in in_shapes)
        basis = np.eye(columns, dtype=np.result_type(*in_dtypes))

        def push(column: Any) -> Any:
            tangents = tree_unflatten(in_tree, _split(column, in_shapes, in_dtypes))
            return jvp(partial.without_aux, diff, tuple(tangents))[1]

        # One leaf per output leaf, each (columns, *out_shape): move the batch to the end.
        tangent_leaves, out_tree = tree_flatten(vmap(push)(lift(basis)))
        _check_outputs("jacfwd", tangent_leaves, holomorphic)
        blocks = []
        for t in tangent_leaves:
            rank = len(t.shape) - 1
            moved = t.transpose(tuple(range(1, rank + 1)) + (0,))
            row, offset = [], 0
            for s in in_shapes:
                size = math.prod(s)
                row.append(moved[..., offset : offset + size].reshape(moved.shape[:rank] + s))
                offset += size
            blocks.append(row)
        jac = _assemble(blocks, out_tree, in_tree, isinstance(argnums, int))
        return (jac, partial(*diff)[1]) if has_aux else jac

    return _staged_or_eager(staged)


jacobian = jacrev
"""JAX's alias: `jacobian` is reverse mode."""


def hessian(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable[..., Any]:  # fmt: skip
    """The Hessian of a scalar `fn`: `jacfwd(jacrev(fn))`, forward over reverse (one batched
    forward sweep over the reverse sweep's IR). Blocks have shape `in_i + in_j`; `holomorphic`
    passes to both, as in JAX."""
    return jacfwd(jacrev(fn, argnums, has_aux, holomorphic=holomorphic), argnums, has_aux, holomorphic=holomorphic)


def _staged_or_eager(staged: Callable[..., Any]) -> Callable[..., Any]:
    """Staged under a trace; on numpy values, traced as one program and run (cached by shape)."""
    return functools.wraps(staged)(api(staged))
