"""`linalg` on numpy arrays, running each body once per slice rather than once per element.

Why not xDSL's linalg interpreter: it runs the body once per point of the iteration space
(about 10k points/s) on `ShapedArray`s, a value model the rest of this interpreter does not
use. Here a structured op's parallel loops are vectorized: the body runs once per point of
the *reduction* loops, with every block argument an array over all parallel points (each
operand gathered through its indexing map with numpy index arrays). The arith and math
implementations are elementwise numpy, so they run unchanged on those arrays; `linalg.index`
gives the index grid of its loop. Reductions thus stay sequential in their loop order, as a
lowering to loops computes them.

Tensor operands give results; memref outputs are written in place.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Operation
from xdsl.ir.affine import AffineDimExpr, AffineMap

from irgrad.backends.interpreter import numerics
from irgrad.backends.interpreter.errors import UnsupportedOpError
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects.upstream.linalg import Linalg, MapOp


def loop_ranges(op: Operation, maps: Sequence[AffineMap], values: Sequence[Any]) -> list[int]:
    """Each loop's trip count: the size of an operand dimension indexed by that loop alone."""
    ranges: list[int | None] = [None] * maps[0].num_dims
    for value, amap in zip(values, maps):
        if not isinstance(value, np.ndarray):
            continue
        for dim, expr in enumerate(amap.results):
            if isinstance(expr, AffineDimExpr) and ranges[expr.position] is None:
                ranges[expr.position] = value.shape[dim]
    if any(r is None for r in ranges):
        raise UnsupportedOpError("has a loop that no operand dimension bounds", op)
    return cast(list[int], ranges)


def _index_stack(interpreter: Interpreter) -> list[list[Any]]:
    """The loop index values of the structured ops being run (innermost last)."""
    return interpreter.get_data(LinalgFunctions, "loop indices", list)


Body = Callable[..., Sequence[Any]]


def _pooling_max_body(x: Any, window: Any, acc: Any) -> Sequence[Any]:
    # MLIR's linalg.pooling_nchw_max yields max(acc, x). xDSL 0.75 builds its hidden region
    # as max(x, window) instead, which ignores the accumulator, so the body is not run.
    return (numerics.maximum(acc, x),)


# Named ops whose semantics are applied directly instead of running xDSL's hidden region.
NAMED_BODIES: dict[type[Operation], Body] = {linalg.PoolingNchwMaxOp: _pooling_max_body}


def run_structured(interpreter: Interpreter, op: LinalgStructuredOperation, args: PythonValues):
    """One structured op: the body once per reduction point, vectorized over parallel loops."""
    maps = [m.data for m in op.get_indexing_maps()]
    kinds = [str(t.data) for t in op.get_iterator_types()]
    ranges = loop_ranges(op, maps, args)
    n_inputs = len(op.inputs)
    on_tensors = len(op.res) > 0
    outputs = [np.array(a) if on_tensors else a for a in args[n_inputs:]]

    parallel = [d for d, k in enumerate(kinds) if "parallel" in k]
    reduction = [d for d, k in enumerate(kinds) if "parallel" not in k]
    # One broadcastable index grid per parallel loop, over all parallel loops.
    grid: list[Any] = [0] * len(kinds)
    for position, d in enumerate(parallel):
        shape = [1] * len(parallel)
        shape[position] = ranges[d]
        grid[d] = np.arange(ranges[d], dtype=np.int64).reshape(shape)

    stack = _index_stack(interpreter)
    for point in itertools.product(*(range(ranges[d]) for d in reduction)):
        for d, i in zip(reduction, point):
            grid[d] = i
        indices = [tuple(e.eval(grid, []) for e in m.results) for m in maps]
        block_args = [
            value[index] if isinstance(value, np.ndarray) else value
            for value, index in zip([*args[:n_inputs], *outputs], indices)
        ]
        if (body := NAMED_BODIES.get(type(op))) is not None:
            results = body(*block_args)
        else:
            stack.append(grid)
            try:
                results = interpreter.run_ssacfg_region(op.body, tuple(block_args), op.name)
            finally:
                stack.pop()
        for out, index, result in zip(outputs, indices[n_inputs:], results):
            out[index] = result
    return tuple(outputs) if on_tensors else ()


def _structured_impl(op_type: type[Operation]) -> Any:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        return run_structured(interpreter, cast(LinalgStructuredOperation, op), args)

    return numpy_impl(op_type)(run)


STRUCTURED = [
    op_type
    for op_type in Linalg.operations
    if issubclass(op_type, LinalgStructuredOperation)
]


class LinalgFunctions(InterpreterFunctions):
    """Every structured linalg op through `run_structured` (upstream's batch_matmul, matvec
    and dot too), plus broadcast, reduce, map, index."""

    @numpy_impl(linalg.IndexOp)
    def run_index(self, interpreter: Interpreter, op: linalg.IndexOp, args: PythonValues):
        stack = _index_stack(interpreter)
        if not stack:
            raise UnsupportedOpError("outside a structured op body", op)
        return (stack[-1][op.dim.value.data],)

    @impl_terminator(linalg.YieldOp)
    def run_yield(self, interpreter: Interpreter, op: linalg.YieldOp, args: PythonValues):
        return ReturnedValues(args), ()

    @numpy_impl(linalg.BroadcastOp)
    def run_broadcast(self, interpreter: Interpreter, op: linalg.BroadcastOp, args: PythonValues):
        x, init = args
        added = set(op.dimensions.get_values())
        shape = [1 if d in added else n for d, n in enumerate(init.shape)]
        value = np.broadcast_to(np.reshape(x, shape), init.shape)
        if isinstance(op.init.type, TensorType):
            return (np.array(value),)
        np.copyto(init, value)
        return ()

    @numpy_impl(linalg.ReduceOp)
    def run_reduce(self, interpreter: Interpreter, op: linalg.ReduceOp, args: PythonValues):
        x, init = args
        on_tensors = isinstance(op.init.type, TensorType)
        accumulator = np.array(init) if on_tensors else init
        reduced = sorted(op.dimensions.get_values())
        for point in itertools.product(*(range(x.shape[d]) for d in reduced)):
            index: list[Any] = [slice(None)] * x.ndim
            for d, i in zip(reduced, point):
                index[d] = i
            (result,) = interpreter.run_ssacfg_region(
                op.region, (x[tuple(index)], accumulator), op.name
            )
            accumulator[...] = result
        return (accumulator,) if on_tensors else ()

    @numpy_impl(MapOp)
    def run_map(self, interpreter: Interpreter, op: MapOp, args: PythonValues):
        """The body once, on whole arrays (its ops are elementwise numpy)."""
        *inputs, init = args
        (result,) = interpreter.run_ssacfg_region(op.mapper, tuple(inputs), op.name)
        value = np.broadcast_to(np.asarray(result, dtype=np.asarray(init).dtype), np.shape(init))
        if isinstance(op.init.type, TensorType):
            return (np.array(value),)
        np.copyto(init, value)
        return ()


for _op_type in STRUCTURED:
    setattr(LinalgFunctions, f"run_{_op_type.name[7:]}", _structured_impl(_op_type))
register_impls(LinalgFunctions)

