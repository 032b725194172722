"""How the interpreter represents runtime values, and the checks that keep them honest.

The value model (every implementation follows it):
- a tensor or memref is an `np.ndarray` whose dtype is exactly `numpy_dtype` of the element
  type and whose shape is the runtime shape (possibly a read-only view: values are immutable,
  so an implementation that writes copies first);
- an integer or float scalar is a numpy scalar of its exact dtype (`np.float32`,
  `ml_dtypes.bfloat16`, `np.bool_` for i1), so one numpy expression serves scalars and
  tensors alike;
- an `index` scalar is a Python int.
Inside a vectorized region (a linalg body run once for a whole iteration space) a scalar
may instead be an array of its dtype; the checks accept that.

numpy turns 0-d results into scalars and scalars into 0-d arrays freely, so implementations
do not fight it: `numpy_impl` boxes each result to its IR type's container kind (never its
dtype, which a `ResultChecker` verifies after every op instead).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerType,
    MemRefType,
    TensorType,
    VectorType,
)
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl
from xdsl.ir import Attribute, Operation

from irgrad.ir_numpy import FLOAT_DTYPES, numpy_dtype
from irgrad.backends.interpreter.errors import InterpreterError, InterpreterInternalError

ShapedTypes = (TensorType, MemRefType, VectorType)


def is_scalar_type(t: Attribute) -> bool:
    """Integer and float types: values are numpy scalars (or arrays in vectorized regions)."""
    try:
        dtype = numpy_dtype(t)
    except TypeError:  # a type the interpreter has no dtype for (i128, f80, ...)
        return False
    return isinstance(t, IntegerType) or dtype in FLOAT_DTYPES


def box(value: Any, t: Attribute) -> Any:
    """`value` in the container kind its IR type asks for (0-d array vs scalar, int for index)."""
    if isinstance(t, ShapedTypes):
        return value if isinstance(value, np.ndarray) else np.asarray(value)
    if isinstance(t, IndexType):
        if isinstance(value, np.ndarray) and value.ndim > 0:
            return value
        return int(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and is_scalar_type(t):
        return value[()]
    return value


def describe(value: Any) -> str:
    """A short description of a runtime value for error messages."""
    if isinstance(value, np.ndarray):
        shape = "x".join(str(d) for d in value.shape) or "0-d"
        return f"array {shape} of {value.dtype}"
    if isinstance(value, np.generic):
        return f"{type(value).__name__} scalar"
    return type(value).__name__


def mismatch(value: Any, t: Attribute) -> str | None:
    """Why `value` does not represent a value of type `t`, or None when it does."""
    if isinstance(t, ShapedTypes):
        if not isinstance(value, np.ndarray):
            return f"expected an array for {t}, got {describe(value)}"
        shape = t.get_shape()
        if len(shape) != value.ndim or any(
            d != DYNAMIC_INDEX and d != n for d, n in zip(shape, value.shape)
        ):
            return f"expected {t}, got {describe(value)}"
        if value.dtype != numpy_dtype(t.get_element_type()):
            return f"expected {t}, got {describe(value)}"
        return None
    if isinstance(t, IndexType):
        if isinstance(value, int) and not isinstance(value, bool):
            return None
        if isinstance(value, np.ndarray) and value.dtype == np.int64:
            return None
        return f"expected an index (Python int), got {describe(value)}"
    if is_scalar_type(t):
        if isinstance(value, np.generic | np.ndarray) and value.dtype == numpy_dtype(t):
            return None
        return f"expected a {numpy_dtype(t)} scalar for {t}, got {describe(value)}"
    return None


class ResultChecker(Interpreter.Listener):
    """Checks every op's results against their IR types: a mismatch is an interpreter bug."""

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        for index, (result, value) in enumerate(zip(op.results, results)):
            if (problem := mismatch(value, result.type)) is not None:
                raise InterpreterInternalError(
                    f"internal error: the interpreter produced a wrong value for result #{index}: "
                    f"{problem}",
                    op,
                )


def numpy_impl(
    op_type: type[Operation],
) -> Callable[[Callable[..., Sequence[Any]]], Callable[..., Any]]:
    """`@impl(op_type)` for an implementation that computes with numpy.

    Its results are boxed to the op's result types; any exception that is not already an
    interpreter diagnostic becomes an internal error naming the op.
    """

    def annot(fn: Callable[..., Sequence[Any]]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(
            self: InterpreterFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
        ) -> PythonValues:
            try:
                values = fn(self, interpreter, op, args)
            except InterpreterError:
                raise
            except Exception as err:
                raise InterpreterInternalError(
                    f"internal error while interpreting: {type(err).__name__}: {err}", op
                ) from err
            return tuple(box(v, r.type) for v, r in zip(values, op.results, strict=True))

        return impl(op_type)(run)

    return annot

