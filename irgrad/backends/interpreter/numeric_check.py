"""`irgrad-opt --verify-each=numeric`: find the pass that changes a program's results.

Before the first pass, every public function with a body is run on the reference interpreter on
seeded random inputs; after each pass it runs again on the same inputs and the results are
compared (float tolerances by precision, integers and NaN positions exactly); for a function
that takes memrefs, what it leaves in them is compared too. The first pass
that changes a result stops the pipeline with a diagnostic naming it: that is how a miscompile
is found.

Functions keep their names through the pipeline; when `bufferize` turns tensor results into
trailing memref out-parameters (destination-passing style), the checker allocates those
buffers, passes them, and reads the results back from them.

Once a function is in the `llvm` dialect (after `convert-to-llvm`) the interpreter cannot run
it: the module is compiled by the CPU backend instead and the function is called through its
packed entry with the same inputs, so `-p irgrad-cpu --verify-each=numeric` checks the whole
pipeline, code generation included. IR between the two (a function half in `llvm`, as after
a single `convert-arith-to-llvm`) runs on neither: such a pass is reported as not checked on
stderr and the next pass is checked as usual.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute

from irgrad.backends.interpreter.errors import InterpreterError
from irgrad.diagnostics import PassError

_TOLERANCE = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-12}


@dataclass
class _Case:
    inputs: list[object]
    result_types: list[Attribute]
    outputs: list[np.ndarray]
    memref_positions: list[int]
    """Inputs that were memrefs in the baseline signature: their final contents count."""
    signature: tuple[list[Attribute], list[Attribute]] = field(default_factory=lambda: ([], []))
    """The function's parameter and result types at the last pass that left a `func.func`:
    how to call its compiled form (the llvm dialect keeps no memref types)."""


def _public_functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {
        op.sym_name.data: op
        for op in module.ops
        if isinstance(op, func.FuncOp)
        and op.body.blocks
        and (op.sym_visibility is None or op.sym_visibility.data == "public")
    }


def _random_value(t: Attribute, rng: np.random.Generator) -> object | None:
    from irgrad.ir_numpy import numpy_dtype

    if isinstance(t, IndexType):
        return int(rng.integers(0, 2))
    if isinstance(t, (TensorType, MemRefType)):
        shape = tuple(t.get_shape())
        if any(d < 0 for d in shape):
            return None  # a dynamic shape: no random input to make (the function is skipped)
        element = t.get_element_type()
    else:
        shape, element = (), t
    try:
        dtype = numpy_dtype(element)
    except Exception:
        return None
    if isinstance(element, IntegerType):
        if element.width.data == 1:
            data = rng.random(shape) < 0.5
        else:
            data = rng.integers(0, 3, shape)
    else:
        data = rng.standard_normal(shape)
    array = np.asarray(data).astype(dtype)
    return array if shape or isinstance(t, (TensorType, MemRefType)) else array[()]


def _run(
    module: ModuleOp,
    name: str,
    inputs: list[object],
    result_types: list[Attribute],
    memref_positions: list[int],
) -> list[np.ndarray]:
    """Runs `@name` on `inputs` and returns its results in the original signature's order.

    After `bufferize`, tensor results are trailing memref out-parameters (in result order) and
    scalar results stay results: the checker allocates the buffers and re-interleaves.
    """
    from irgrad.backends.interpreter import run_function

    fn = _public_functions(module)[name]
    arg_types = fn.function_type.inputs.data
    args = [np.array(x, copy=True) if isinstance(x, np.ndarray) else x for x in inputs]
    out_buffers = []
    for t in arg_types[len(inputs) :]:
        buffer = _random_value(t, np.random.default_rng(1))
        out_buffers.append(buffer)
        args.append(buffer)
    returned = list(run_function(module, name, args))
    # A memref argument of the checked signature is observable: its contents after the call
    # are results too (a pass on memref IR must not change what a function leaves in them).
    written = [args[k] for k in memref_positions]
    if not out_buffers:
        return [np.asarray(r) for r in returned] + written
    buffers, scalars = iter(out_buffers), iter(returned)
    ordered = [next(buffers) if isinstance(t, TensorType) else next(scalars) for t in result_types]
    return [np.asarray(r) for r in ordered] + written


def _differs(expected: np.ndarray, actual: np.ndarray) -> str | None:
    if expected.shape != actual.shape:
        return f"shape {actual.shape}, expected {expected.shape}"
    if expected.dtype.kind in "f" or str(expected.dtype) == "bfloat16":
        e, a = expected.astype(np.float64), actual.astype(np.float64)
        nan_e, nan_a = np.isnan(e), np.isnan(a)
        if (nan_e != nan_a).any():
            k = int(np.argmax(nan_e != nan_a))
            return f"NaN mismatch at flat index {k}: expected {e.flat[k]!r}, got {a.flat[k]!r}"
        rtol = _TOLERANCE.get(str(expected.dtype), 1e-5)
        ok = np.isclose(a, e, rtol=rtol, atol=rtol, equal_nan=True) | (a == e)
        if not ok.all():
            k = int(np.argmin(ok))
            return f"flat index {k}: expected {e.flat[k]!r}, got {a.flat[k]!r}"
        return None
    if not np.array_equal(expected, actual):
        k = int(np.argmax(expected != actual))
        return f"flat index {k}: expected {expected.flat[k]!r}, got {actual.flat[k]!r}"
    return None


class NumericChecker:
    """Runs the module's public functions before and after each pass and compares."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.cases: dict[str, _Case] = {}

    def baseline(self, module: ModuleOp) -> None:
        self.cases = {}  # a new input (--split-input-file): forget the previous one's
        rng = np.random.default_rng(self.seed)
        for name, fn in _public_functions(module).items():
            inputs = [_random_value(t, rng) for t in fn.function_type.inputs.data]
            if any(x is None for x in inputs):
                continue
            result_types = list(fn.function_type.outputs.data)
            positions = [k for k, t in enumerate(fn.function_type.inputs.data) if isinstance(t, MemRefType)]
            try:
                outputs = _run(module, name, inputs, result_types, positions)
            except InterpreterError as err:  # e.g. an assert or a division by zero on these
                # random inputs: the program itself gives no baseline to compare with
                print(
                    f"irgrad-opt: --verify-each=numeric: @{name} not checked: it fails on random "
                    f"inputs before any pass: {err}",
                    file=sys.stderr,
                )
                continue
            self.cases[name] = _Case(inputs, result_types, outputs, positions)

    def check(self, module: ModuleOp, pass_name: str) -> None:
        functions = _public_functions(module)
        stage_llvm = _has_llvm_ops(module)
        compiled = None
        for name, case in self.cases.items():
            if name in functions and not stage_llvm:
                fn_type = functions[name].function_type
                case.signature = (list(fn_type.inputs.data), list(fn_type.outputs.data))
                try:
                    outputs = _run(module, name, case.inputs, case.result_types, case.memref_positions)
                except Exception as err:  # the program no longer runs: that is the pass's doing
                    raise PassError(
                        f"--verify-each=numeric: after pass '{pass_name}', @{name} no longer runs "
                        f"on the reference interpreter: {err}"
                    ) from None
            elif name not in functions and not _has_llvm_function(module, name):
                raise PassError(f"--verify-each=numeric: pass '{pass_name}' removed function @{name}")
            elif name in functions or not _fully_llvm(module):
                print(
                    f"irgrad-opt: --verify-each=numeric: pass '{pass_name}' not checked: @{name} is "
                    "part in the llvm dialect, which neither the interpreter nor the CPU backend runs",
                    file=sys.stderr,
                )
                continue
            else:
                if compiled is None:
                    compiled = _compile(module, pass_name)
                outputs = _run_compiled(compiled, name, case, pass_name)
            if len(outputs) != len(case.outputs):
                raise PassError(
                    f"--verify-each=numeric: pass '{pass_name}' changed the number of results of "
                    f"@{name} from {len(case.outputs)} to {len(outputs)}"
                )
            for i, (expected, actual) in enumerate(zip(case.outputs, outputs)):
                problem = _differs(expected, actual)
                if problem is not None:
                    raise PassError(
                        f"--verify-each=numeric: pass '{pass_name}' changed result {i} of @{name}: "
                        f"{problem}"
                    )


def _has_llvm_ops(module: ModuleOp) -> bool:
    return any(op.dialect_name() == "llvm" for op in module.walk())


def _has_llvm_function(module: ModuleOp, name: str) -> bool:
    from xdsl.dialects import llvm

    return any(isinstance(op, llvm.FuncOp) and op.sym_name.data == name for op in module.ops)


def _fully_llvm(module: ModuleOp) -> bool:
    """Stage llvm: nothing but llvm ops (and the module) left to translate."""
    return all(op.dialect_name() in ("llvm", "builtin") for op in module.walk() if op is not module)


def _compile(module: ModuleOp, pass_name: str) -> object:
    from irgrad.backends.cpu import compile_module

    try:
        return compile_module(module.clone())
    except Exception as err:
        raise PassError(
            f"--verify-each=numeric: after pass '{pass_name}', the module no longer compiles for "
            f"the CPU: {err}"
        ) from None


def _run_compiled(compiled: object, name: str, case: _Case, pass_name: str) -> list[np.ndarray]:
    """`@name` called through its packed entry, results in the original signature's order
    (tensor results read from their out-parameter buffers), then the memref inputs."""
    params, scalar_results = case.signature
    n = len(case.inputs)
    out_params = iter(params[n:])
    scalars = iter(scalar_results)
    results = [next(out_params) if isinstance(t, TensorType) else next(scalars) for t in case.result_types]
    args = [np.array(x, copy=True) if isinstance(x, np.ndarray) else x for x in case.inputs]
    try:
        function = compiled.function(name, params[:n], results)  # type: ignore[attr-defined]
        outputs = function(*args)
    except Exception as err:
        raise PassError(
            f"--verify-each=numeric: after pass '{pass_name}', the compiled @{name} does not run: {err}"
        ) from None
    return [np.asarray(r) for r in outputs] + [args[k] for k in case.memref_positions]
