"""`run_function`: check the arguments, set up xDSL's interpreter, run, hand back numpy values.

The interpreter itself is xDSL's (`xdsl.interpreter.Interpreter`: scopes, regions, calls);
irgrad contributes numpy implementations per dialect and registers them over xDSL's. Before
running, every op reachable from the entry function is checked to have an implementation, so
an unsupported op fails fast with its location instead of halfway through a long loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp, TensorType
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.interpreters.cf import CfFunctions
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable

from irgrad import context, registry
from irgrad.backends.interpreter.arith import ArithFunctions
from irgrad.backends.interpreter.blas import BlasFunctions
from irgrad.backends.interpreter.debug import DebugFunctions
from irgrad.ir_numpy import is_float_dtype, numpy_dtype
from irgrad.tracing.dtypes import complex_as_pairs, pairs_as_complex
from irgrad.backends.interpreter.errors import (
    InterpreterError,
    InterpreterInputError,
    UnsupportedOpError,
)
from irgrad.backends.interpreter.index import IndexFunctions
from irgrad.backends.interpreter.linalg import LinalgFunctions
from irgrad.backends.interpreter.math import MathFunctions
from irgrad.backends.interpreter.memref import MemRefFunctions
from irgrad.backends.interpreter.nn_bitwise import NNBitwiseFunctions
from irgrad.backends.interpreter.nn_creation import NNCreationFunctions
from irgrad.backends.interpreter.nn_data_movement import NNDataMovementFunctions
from irgrad.backends.interpreter.nn_elementwise import NNElementwiseFunctions
from irgrad.backends.interpreter.nn_fft import NNFftFunctions
from irgrad.backends.interpreter.factorization_calls import IrgradFuncFunctions, is_tagged_declaration
from irgrad.backends.interpreter.nn_linalg import NNLinalgFunctions
from irgrad.backends.interpreter.nn_linear import NNLinearFunctions
from irgrad.backends.interpreter.nn_reduction import NNReductionFunctions
from irgrad.backends.interpreter.cf import CfAssertFunctions
from irgrad.backends.interpreter.scf import ScfFunctions
from irgrad.backends.interpreter.mpi import MpiFunctions
from irgrad.backends.interpreter.shard import ShardFunctions
from irgrad.backends.interpreter.tensor import TensorFunctions
from irgrad.backends.interpreter.values import ResultChecker, describe, is_scalar_type

Value = np.ndarray | np.generic | int | float | bool

# xDSL's func (with calls of tagged factorization declarations added) and cf implementations
# only pass values along, so they serve as they are.
FUNCTIONS: tuple[type[InterpreterFunctions], ...] = (
    IrgradFuncFunctions,
    CfFunctions,
    CfAssertFunctions,
    ScfFunctions,
    ArithFunctions,
    IndexFunctions,
    MathFunctions,
    TensorFunctions,
    MemRefFunctions,
    LinalgFunctions,
    NNCreationFunctions,
    NNElementwiseFunctions,
    NNBitwiseFunctions,
    NNReductionFunctions,
    NNDataMovementFunctions,
    NNLinearFunctions,
    NNLinalgFunctions,
    NNFftFunctions,
    BlasFunctions,
    ShardFunctions,
    MpiFunctions,
    DebugFunctions,
)


def supported_op_types() -> frozenset[type[Operation]]:
    """The op classes some registered implementation handles."""
    # `_impls` is how xDSL's own registry reads an InterpreterFunctions class.
    impls = (functions._impls() for functions in FUNCTIONS)  # pyright: ignore[reportPrivateUsage]
    return frozenset(op_type for pairs in impls for op_type, _ in pairs)


def make_interpreter(module: ModuleOp, listeners: Sequence[Interpreter.Listener] = ()) -> Interpreter:
    """An xDSL interpreter over `module` with irgrad's numpy implementations registered, and
    `listeners` (nan_checks.NaNChecker, say) beside the result type checks."""
    interpreter = Interpreter(module, index_bitwidth=64, listeners=(ResultChecker(), *listeners))
    for functions in FUNCTIONS:
        interpreter.register_implementations(functions(), override=True)
    return interpreter


# ---------------------------------------------------------------------------------------------
# Checks before running
# ---------------------------------------------------------------------------------------------


def _function_names(module: ModuleOp) -> list[str]:
    return [op.sym_name.data for op in module.ops if isinstance(op, FuncOp)]


def lookup_function(module: ModuleOp, entry: str) -> FuncOp:
    func = SymbolTable.lookup_symbol(module, entry)
    if not isinstance(func, FuncOp):
        names = ", ".join(f"@{n}" for n in _function_names(module)) or "none"
        raise InterpreterInputError(f"no function @{entry} in the module (functions: {names})")
    if not func.body.blocks:
        raise InterpreterInputError(f"@{entry} is a declaration without a body; nothing to run")
    return func


def check_supported(module: ModuleOp, entry: FuncOp) -> None:
    """Every op in the entry function and the functions it calls has an implementation."""
    supported = supported_op_types()
    pending, seen = [entry], {entry}
    while pending:
        func = pending.pop()
        for op in func.walk():
            if op is func:
                continue
            if type(op) not in supported:
                raise UnsupportedOpError("is not supported by the reference interpreter", op)
            if isinstance(op, CallOp):
                callee = SymbolTable.lookup_symbol(module, op.callee)
                if not isinstance(callee, FuncOp):
                    raise InterpreterError(
                        f"calls {op.callee}, which is not a function in the module", op
                    )
                if not callee.body.blocks and not is_tagged_declaration(callee):
                    raise UnsupportedOpError(
                        f"calls {op.callee}, a declaration without a body (external functions "
                        "cannot run on the interpreter)",
                        op,
                    )
                if callee not in seen:
                    seen.add(callee)
                    pending.append(callee)


def _argument(index: int, value: Any, t: Attribute) -> Any:
    """`value` in the interpreter's representation of type `t`, or InterpreterInputError."""

    def fail(got: str) -> InterpreterInputError:
        return InterpreterInputError(f"argument #{index}: expected {t}, got {got}")

    if isinstance(t, (TensorType, MemRefType)):
        # A memref argument is the caller's array itself (no copy), so out-parameters written
        # by the function are visible to the caller, as with a compiled function.
        if isinstance(value, np.generic):
            value = np.asarray(value)
        if not isinstance(value, np.ndarray):
            raise fail(f"a {type(value).__name__} (pass a numpy array)")
        expected = numpy_dtype(t.get_element_type())
        shape = t.get_shape()
        shape_ok = len(shape) == value.ndim and all(
            d < 0 or d == n for d, n in zip(shape, value.shape)
        )
        if not shape_ok or value.dtype != expected:
            raise fail(f"shape {tuple(value.shape)} and dtype {value.dtype}")
        return value
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise fail(f"an array of shape {tuple(value.shape)}")
        value = value[()]
    if isinstance(t, IndexType):
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
            raise fail(describe(value))
        return int(value)
    if is_scalar_type(t):
        expected = numpy_dtype(t)
        if isinstance(value, np.generic):
            if value.dtype != expected:
                raise fail(f"a {value.dtype} scalar")
            return value
        return _python_scalar(value, expected, fail)
    raise InterpreterInputError(
        f"argument #{index}: the interpreter cannot take arguments of type {t}"
    )


def _python_scalar(value: Any, dtype: np.dtype, fail: Any) -> np.generic:
    """A Python bool/int/float as a scalar of `dtype`, if it fits the kind and range."""
    if dtype == np.bool_:
        if not isinstance(value, bool):
            raise fail(describe(value))
        return np.bool_(value)
    if is_float_dtype(dtype):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise fail(describe(value))
        return np.array(value, dtype=np.float64).astype(dtype)[()]
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(describe(value))
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise fail(f"{value}, out of range for {dtype}")
    return np.array(value, dtype=dtype)[()]


def check_arguments(func: FuncOp, args: Sequence[Any]) -> tuple[Any, ...]:
    inputs = func.function_type.inputs.data
    if len(args) != len(inputs):
        raise InterpreterInputError(
            f"@{func.sym_name.data} takes {len(inputs)} argument(s), got {len(args)}"
        )
    return tuple(_argument(i, value, t) for i, (value, t) in enumerate(zip(args, inputs)))


def _export(value: Any) -> Value:
    """A result the caller owns: arrays are fresh, writeable and C-contiguous."""
    if isinstance(value, np.ndarray):
        return np.array(value, order="C", copy=True)
    return value


# ---------------------------------------------------------------------------------------------
# autodiff
# ---------------------------------------------------------------------------------------------


def _first_autodiff_op(module: ModuleOp) -> Operation | None:
    return next((op for op in module.walk() if op.name.startswith("autodiff.")), None)


def expand_autodiff(module: ModuleOp) -> ModuleOp:
    """A copy of `module` with the `autodiff` pass applied, if it holds autodiff ops (and,
    where it holds complex values too, `nn-expand-fft` and `nn-expand-complex` before it, as in
    the pipelines: derivatives of complex values are those of their (re, im) pairs)."""
    first = _first_autodiff_op(module)
    if first is None:
        return module
    factory = registry.irgrad_passes().get("autodiff")
    if factory is None:
        raise InterpreterError(
            "is an autodiff request, but the autodiff pass is not available yet; "
            "the interpreter runs only differentiated IR",
            first,
        )
    module = module.clone()
    for name in ("nn-expand-fft", "nn-expand-complex"):
        registry.irgrad_passes()[name]()().apply(context.make_context(), module)
    factory()().apply(context.make_context(), module)
    return module


# ---------------------------------------------------------------------------------------------
# The entry point
# ---------------------------------------------------------------------------------------------


def run_function(
    module: ModuleOp, entry: str, args: Sequence[Value], listeners: Sequence[Interpreter.Listener] = ()
) -> tuple[Value, ...]:
    """Runs function `@entry` of `module` on `args` and returns its results.

    Tensors are numpy arrays of exactly the element type's dtype (bf16 is
    `ml_dtypes.bfloat16`, i1 is `np.bool_`); integer and float scalars are numpy scalars of
    their dtype (Python numbers are accepted as arguments); `index` values are Python ints.
    Raises `InterpreterInputError` for arguments that do not match the signature and
    `InterpreterError` (located at the op) for unsupported ops or undefined behaviour.
    """
    declared = lookup_function(module, entry).function_type
    module = expand_autodiff(module)
    func = lookup_function(module, entry)
    # IEEE inf and NaN are results, not errors (a Python float too big for an f16 argument
    # becomes inf, as numpy converts it).
    with np.errstate(all="ignore"):
        # A program expanded here (nn-expand-complex) takes and gives complex values as pairs.
        changed = declared != func.function_type
        args = [complex_as_pairs(a) if changed and isinstance(a, np.ndarray) else a for a in args]
        inputs = check_arguments(func, args)
        check_supported(module, func)
        interpreter = make_interpreter(module, listeners)
        try:
            results = interpreter.call_op(func, inputs)
        except InterpreterError as err:
            # xDSL attaches the whole module (printed once per enclosing region) as notes.
            if hasattr(err, "__notes__"):
                del err.__notes__
            raise
    if changed:
        return tuple(_from_pairs(_export(r), t) for r, t in zip(results, declared.outputs.data))
    return tuple(_export(r) for r in results)


def _from_pairs(value: Any, declared: Attribute) -> Any:
    if not isinstance(declared, TensorType):
        return value
    return pairs_as_complex(value, numpy_dtype(declared.get_element_type()), tuple(declared.get_shape()))
