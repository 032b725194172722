"""Structured control flow traced to `scf`: ig.cond, ig.fori_loop, ig.while_loop, ig.scan.

Bodies are traced once, into regions of the function being traced (no unrolling, so a loop's
IR and its derivative stay the size of one iteration). Bodies may use outer values directly;
values made inside a body leave it only through its results. Carried values keep their shapes
and dtypes across iterations; a mismatch is a ShapeError/DTypeError naming both. The region
tracing and `fori_loop` itself are the tracing core's (irgrad/tracing/loops.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Region

from irgrad.dialects import nn
from irgrad.tracing import dtypes, loops, primitives as lax
from irgrad.tracing.tracer import ShapeDtype, Tracer, as_tracer, full
from irgrad.numpy.support import api, is_scalar, lift, result_dtype
from irgrad.tracing.errors import DTypeError, ShapeError, user_site
from irgrad.tracing.pytree import TreeDef, tree_flatten, tree_unflatten


@api
def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any], *operands: Any) -> Any:
    """`true_fn(*operands) if pred else false_fn(*operands)`, with a traced predicate (`scf.if`)."""
    if isinstance(pred, (bool, np.bool_)):
        return (true_fn if pred else false_fn)(*operands)
    p = lift(pred)
    if p.shape != ():
        raise ShapeError(f"cond: the predicate must be a scalar, got shape {p.shape}{user_site()}")
    if p.dtype != dtypes.bool_:
        p = lax.compare("ne", p, lax.convert(lift(0), p.dtype))
    frame = loops.frame()
    flat_ops, ops_tree = tree_flatten(list(operands))
    op_tracers = [lift(x) for x in flat_ops]

    def branch(fn: Callable[..., Any]) -> tuple[Block, list[Any], TreeDef]:
        block = Block()
        frame.scopes.append(block)
        try:
            args = tree_unflatten(ops_tree, [frame.resolve(t) for t in op_tracers])
            leaves, tree = tree_flatten(fn(*args))
            # Weak Python scalars are lifted once both branches are known (lift_scalars).
            leaves = [leaf if is_scalar(leaf) else as_tracer(frame, leaf) for leaf in leaves]
        finally:
            frame.scopes.pop()
        return block, leaves, tree

    def lift_scalars(block: Block, leaves: list[Any], others: list[Any]) -> list[Tracer]:
        """A scalar result takes the other branch's dtype where it fits (JAX's weak typing)."""
        others = others + [None] * (len(leaves) - len(others))
        frame.scopes.append(block)
        try:
            return [
                leaf if isinstance(leaf, Tracer)
                else as_tracer(frame, leaf, result_dtype(leaf, other) if is_scalar(other)
                               else loops.weak_dtype(leaf, other.dtype if isinstance(other, Tracer) else None))
                for leaf, other in zip(leaves, others)
            ]
        finally:
            frame.scopes.pop()

    t_block, t_leaves, t_tree = branch(true_fn)
    f_block, f_leaves, f_tree = branch(false_fn)
    t_res = lift_scalars(t_block, t_leaves, f_leaves)
    f_res = lift_scalars(f_block, f_leaves, t_leaves)
    want = [ShapeDtype(r.shape, r.dtype) for r in t_res]
    f_res = loops.match("cond", "false_fn", f_res, f_tree, t_tree, want)
    t_block.add_op(scf.YieldOp(*[r.value for r in t_res]))
    f_block.add_op(scf.YieldOp(*[r.value for r in f_res]))
    condition = lax.extract_scalar(p)
    op = scf.IfOp(condition, [r.value.type for r in t_res], Region(t_block), Region(f_block))
    frame.emit(op)
    return tree_unflatten(t_tree, [frame.wrap(r) for r in op.results])


@api
def fori_loop(lower: Any, upper: Any, body_fn: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """`for i in range(lower, upper): val = body_fn(i, val)`, traced to one `scf.for`.

    `i` is an int32 scalar; bounds may be Python ints or traced integer scalars.
    """
    return loops.fori_loop(lower, upper, body_fn, init_val)


@api
def while_loop(cond_fn: Callable[[Any], Any], body_fn: Callable[[Any], Any], init_val: Any) -> Any:
    """`while cond_fn(val): val = body_fn(val)`, traced to one `scf.while`."""
    frame = loops.frame()
    carry, tree, avals = loops.carry(init_val)

    before, c_res, (_, c_tree) = loops.trace_region(
        lambda *vals: cond_fn(tree_unflatten(tree, list(vals))), avals
    )
    if len(c_res) != 1 or c_res[0].shape != () or c_res[0].dtype != dtypes.bool_:
        raise DTypeError(
            f"while_loop: cond_fn must return a bool scalar, got "
            f"{[(r.shape, str(r.dtype)) for r in c_res]}{user_site()}"
        )
    frame.scopes.append(before)
    try:
        condition = lax.extract_scalar(c_res[0])
    finally:
        frame.scopes.pop()
    before.add_op(scf.ConditionOp(condition, *before.args))

    after, b_res, (_, b_tree) = loops.trace_region(
        lambda *vals: body_fn(tree_unflatten(tree, list(vals))), avals, result_avals=avals
    )
    b_res = loops.match("while_loop", "body_fn", b_res, b_tree, tree, avals)
    after.add_op(scf.YieldOp(*[r.value for r in b_res]))
    op = scf.WhileOp([t.value for t in carry], [a.tensor_type() for a in avals], Region(before), Region(after))
    frame.emit(op)
    return tree_unflatten(tree, [frame.wrap(r) for r in op.results])


@api
def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False) -> tuple[Any, Any]:
    """JAX's `lax.scan`: `carry, y = f(carry, x)` for each slice `x` of `xs` along its first axis;
    returns the last carry and the `y`s stacked along a new first axis.

    Traced to one `scf.for` whose body reads row i of each `xs` leaf (`nn.dynamic_slice`) and
    writes `y` into row i of a carried result buffer (`nn.dynamic_update_slice`); with `reverse`,
    row `length - 1 - i`. The reverse sweep tapes only the carried values the body's derivative
    reads: the result buffers are written, never read, so the tape stays one row per iteration of
    the true carry and the derivative stays linear in `length`.
    """
    frame = loops.frame()
    carry, tree, avals = loops.carry(init)
    x_leaves, x_tree = tree_flatten(xs)
    x_tracers = [lift(x) for x in x_leaves]
    lengths = {t.shape[0] if t.shape else None for t in x_tracers}
    if None in lengths:
        raise ShapeError(f"scan: every leaf of xs needs a leading axis, got shapes {[t.shape for t in x_tracers]}{user_site()}")
    if length is not None:
        lengths.add(int(length))
    if not lengths:
        raise ValueError(f"scan: with no xs, length must be given{user_site()}")
    if len(lengths) != 1:
        raise ShapeError(
            f"scan: xs leaves and length disagree on the number of steps: shapes "
            f"{[t.shape for t in x_tracers]}, length={length}{user_site()}"
        )
    (n,) = lengths
    y_tree: list[TreeDef] = []
    row_of: list[Any] = []

    def body(iv: Tracer, *vals: Tracer) -> Any:
        row = iv.value
        if reverse:
            last = arith.ConstantOp.from_int_and_width(n - 1, IndexType())
            frame.emit(last)
            flip = arith.SubiOp(last.result, row)
            frame.emit(flip)
            row = flip.result
        row_of.append(row)
        zero = arith.ConstantOp.from_int_and_width(0, IndexType())
        frame.emit(zero)
        x_rows = []
        for t in x_tracers:
            outer = frame.resolve(t)
            sliced = frame.emit(nn.DynamicSliceOp(outer.value, [row] + [zero.result] * (len(t.shape) - 1), [1, *t.shape[1:]]))
            x_rows.append(lax.reshape(frame.wrap(sliced.results[0]), t.shape[1:]))
        out = f(tree_unflatten(tree, list(vals)), tree_unflatten(x_tree, x_rows))
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError(f"scan: f must return a pair (carry, y), got {type(out).__name__}{user_site()}")
        new_carry, y = out
        c_leaves, c_tree = tree_flatten(new_carry)
        y_leaves, tree_y = tree_flatten(y)
        y_tree.append((c_tree, tree_y, len(c_leaves)))
        return [*c_leaves, *y_leaves]

    block, results, _ = loops.trace_region(body, avals, leading_block_types=[IndexType()], result_avals=avals)
    c_tree, tree_y, count = y_tree[0]
    carried = loops.match("scan", "f's carry", results[:count], c_tree, tree, avals)
    ys = results[count:]
    # The stacked results: a zero buffer per y leaf, carried through the loop, row i written.
    buffers = [full((n, *y.shape), 0, y.dtype) for y in ys]
    buffer_args = [block.insert_arg(b.value.type, len(block.args)) for b in buffers]
    frame.scopes.append(block)
    try:
        zero = arith.ConstantOp.from_int_and_width(0, IndexType())
        frame.emit(zero)
        written = []
        for y, buf in zip(ys, buffer_args):
            update = lax.reshape(y, (1, *y.shape))
            op = frame.emit(nn.DynamicUpdateSliceOp(buf, update.value, [row_of[0]] + [zero.result] * len(y.shape)))
            written.append(op.results[0])
        block.add_op(scf.YieldOp(*[r.value for r in carried], *written))
    finally:
        frame.scopes.pop()
    lb = loops.index(0)
    ub = loops.index(n)
    one = loops.index(1)
    op = scf.ForOp(lb, ub, one, [t.value for t in carry] + [b.value for b in buffers], block)
    frame.emit(op)
    final = [frame.wrap(r) for r in op.results]
    return tree_unflatten(tree, final[: len(carry)]), tree_unflatten(tree_y, final[len(carry) :])
