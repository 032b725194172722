"""Bodies traced into regions, and `fori_loop` traced to one `scf.for`: the core of the
library's structured control flow (irgrad/numpy/control_flow.py builds ig.cond, ig.fori_loop,
ig.while_loop and ig.scan on it).

Why here: a pass's reference code (irgrad/tracing/reference_loops.py, the bitonic sort of
irgrad/tracing/sorting.py) loops on the tracing core. A body is traced once, into a region of
the function being traced (no unrolling: the IR stays the size of one iteration); it may use
outer values directly, and values made inside it leave only through its results. Carried
values keep their shapes and dtypes; a mismatch is a ShapeError/DTypeError naming both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, SSAValue

from irgrad.tracing import dtypes, primitives as lax
from irgrad.tracing.broadcasting import is_scalar, lift
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.tracing.pytree import TreeDef, tree_flatten, tree_unflatten
from irgrad.tracing.tracer import FunctionFrame, ShapeDtype, Tracer, as_tracer, current_frame


def frame() -> FunctionFrame:
    f = current_frame()
    assert f is not None
    return f


def trace_region(
    fn: Callable[..., Any],
    arg_avals: Sequence[ShapeDtype],
    leading_block_types: Sequence[Any] = (),
    make_args: Callable[[list[Any]], Sequence[Any]] | None = None,
    result_avals: Sequence[ShapeDtype] = (),
) -> tuple[Block, list[Tracer], Any]:
    """Traces `fn` into a fresh block whose arguments are `leading_block_types` then the avals.

    Returns the block (without terminator), the flat results as tracers of that block, and
    the raw Python output. A Python scalar result takes the dtype of `result_avals` at its
    position where it fits (weak typing), so `lambda i, c: 0.0` can carry a float64.
    """
    f = frame()
    block = Block(arg_types=[*leading_block_types, *[a.tensor_type() for a in arg_avals]])
    f.scopes.append(block)
    try:
        args = [Tracer(a, f, block) for a in block.args]
        out = fn(*(make_args(args) if make_args else args))
        leaves, tree = tree_flatten(out)
        want = list(result_avals) + [None] * (len(leaves) - len(result_avals))
        results = [as_tracer(f, leaf, weak_dtype(leaf, w and w.dtype)) for leaf, w in zip(leaves, want)]
    finally:
        f.scopes.pop()
    return block, results, (out, tree)


def weak_dtype(leaf: Any, other: np.dtype | None) -> np.dtype | None:
    """The dtype a weak Python scalar result takes next to `other` (the carried dtype, or the
    other branch's): `other` where the scalar fits it (JAX's weak typing), else its own."""
    if not is_scalar(leaf) or other is None or dtypes.promote_weak(other, leaf) != other:
        return None
    return other


def carry(init: Any) -> tuple[list[Tracer], TreeDef, list[ShapeDtype]]:
    """The carried values of a loop as tracers, their tree and their avals."""
    leaves, tree = tree_flatten(init)
    tracers = [lift(x) for x in leaves]
    return tracers, tree, [ShapeDtype(t.shape, t.dtype) for t in tracers]


def match(op_name: str, what: str, results: list[Tracer], tree: TreeDef, want_tree: TreeDef,
          want: Sequence[ShapeDtype]) -> list[Tracer]:
    """Checks a body's outputs against the carried avals (weak scalars were lifted to fit)."""
    if tree != want_tree:
        raise ShapeError(f"{op_name}: {what} returned structure {tree!r}, expected {want_tree!r}{user_site()}")
    out = []
    for i, (r, a) in enumerate(zip(results, want)):
        if r.shape != a.shape:
            raise ShapeError(f"{op_name}: {what} output {i} has shape {r.shape}, expected {a.shape}{user_site()}")
        if r.dtype != a.dtype:
            raise DTypeError(f"{op_name}: {what} output {i} has dtype {r.dtype}, expected {a.dtype}{user_site()}")
        out.append(r)
    return out


def index(bound: Any) -> SSAValue:
    """A loop bound as an `index` value: a constant for a Python int, else cast from a tracer."""
    f = frame()
    if isinstance(bound, (int, np.integer)):
        c = arith.ConstantOp.from_int_and_width(int(bound), IndexType())
        f.emit(c)
        return c.result
    return lax.to_index(lift(bound))


def fori_loop(lower: Any, upper: Any, body_fn: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """`for i in range(lower, upper): val = body_fn(i, val)`, traced to one `scf.for`.

    `i` is an int32 scalar; bounds may be Python ints or traced integer scalars.
    """
    f = frame()
    init, tree, avals = carry(init_val)
    lb, ub = index(lower), index(upper)
    one = arith.ConstantOp.from_int_and_width(1, IndexType())
    f.emit(one)

    def body(iv: Tracer, *vals: Tracer) -> Any:
        i = lax.scalar_to_tensor(iv.value)
        return body_fn(i, tree_unflatten(tree, list(vals)))

    block, results, (_, out_tree) = trace_region(body, avals, leading_block_types=[IndexType()], result_avals=avals)
    results = match("fori_loop", "body_fn", results, out_tree, tree, avals)
    block.add_op(scf.YieldOp(*[r.value for r in results]))
    op = scf.ForOp(lb, ub, one.result, [t.value for t in init], block)
    f.emit(op)
    return tree_unflatten(tree, [f.wrap(r) for r in op.results])
