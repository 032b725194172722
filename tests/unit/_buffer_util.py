"""Differential and leak checks for the buffer stages ("bufferized", "loops").

`check_lowering(text, *args, passes=...)` runs a stage-"linalg" program on the reference
interpreter, lowers a copy with the given passes, runs that too and asserts the results are
identical. The lowered run goes through `BufferTracker`, which instruments the interpreter's
`memref.alloc`, `memref.dealloc` and `memref.get_global`:
- every alloc must be freed exactly once before the function returns (no leak, no double
  free, no free of an argument, a global or a view);
- a freed buffer is poisoned (NaN, or a sentinel integer) and made read-only, so a use after
  free changes the results or raises;
- function arguments and globals are read-only arrays, so a write into either raises;
- out-parameters start out poisoned, so an element the function forgets to write shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, MemRefType, ModuleOp, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable

from _interpreter_util import assert_same, parse
from irgrad.backends.interpreter import run_function
from irgrad.ir_numpy import from_attribute, numpy_dtype
from irgrad.backends.interpreter.runner import lookup_function, make_interpreter
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.diagnostics import verify_module
from irgrad.context import make_context
from irgrad.registry import build_pipeline
from irgrad.lowering.contracts import assert_stage_bufferized, assert_stage_loops


def _poison(a: np.ndarray) -> None:
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        a[...] = np.nan
    elif a.dtype.kind in "iu":
        a[...] = 77
    elif a.dtype.kind == "b":
        a[...] = True


@register_impls
class BufferTracker(InterpreterFunctions):
    """Counts and checks allocations; see the module docstring."""

    def __init__(self) -> None:
        self.live: dict[int, np.ndarray] = {}
        self.allocs = 0
        self.deallocs = 0
        self.peak = 0

    @numpy_impl(memref.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues):
        t = op.memref.type
        buffer = np.zeros(t.get_shape(), dtype=numpy_dtype(t.get_element_type()))
        self.live[id(buffer)] = buffer
        self.allocs += 1
        self.peak = max(self.peak, len(self.live))
        return (buffer,)

    @numpy_impl(memref.DeallocOp)
    def run_dealloc(self, interpreter: Interpreter, op: memref.DeallocOp, args: PythonValues):
        (buffer,) = args
        if self.live.pop(id(buffer), None) is None:
            raise AssertionError(
                f"dealloc at {op.location} of a buffer that is not live (a double free, or a "
                "free of an argument, a global or a view)"
            )
        self.deallocs += 1
        _poison(buffer)
        buffer.setflags(write=False)
        return ()

    @numpy_impl(memref.LoadOp)
    def run_load(self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues):
        # The interpreter's memref.load takes scalar indices only; inside a vectorized linalg
        # body (a gather reading another buffer) they are index arrays, as tensor.extract's are.
        x, *indices = args
        if any(isinstance(i, np.ndarray) and i.ndim > 0 for i in indices):
            grid = np.broadcast_arrays(*(np.asarray(i, dtype=np.int64) for i in indices))
            for i, n in zip(grid, x.shape):
                assert not np.any((i < 0) | (i >= n)), f"load out of bounds at {op.location}"
            return (x[tuple(grid)],)
        index = tuple(int(i) for i in indices)
        assert all(0 <= i < n for i, n in zip(index, x.shape)), f"load out of bounds at {op.location}"
        return (x[index],)

    @numpy_impl(memref.GetGlobalOp)
    def run_get_global(self, interpreter: Interpreter, op: memref.GetGlobalOp, args: PythonValues):
        def create() -> np.ndarray:
            glob = SymbolTable.lookup_symbol(op, op.name_)
            assert isinstance(glob, memref.GlobalOp)
            t = cast(MemRefType, glob.type)
            assert isinstance(glob.initial_value, DenseIntOrFPElementsAttr)
            value = np.array(from_attribute(glob.initial_value)).reshape(t.get_shape())
            value.setflags(write=False)
            return value

        return (interpreter.get_data(BufferTracker, f"global {op.name_}", create),)


def run_buffers(
    module: ModuleOp,
    entry: str,
    args: Sequence[Any],
    outputs: Sequence[Attribute],
    tracker: BufferTracker | None = None,
) -> tuple[list[Any], BufferTracker]:
    """Run a bufferized `@entry` whose original results had types `outputs`; no leak allowed."""
    function = lookup_function(module, entry)
    inputs: list[Any] = []
    for value, t in zip(args, function.function_type.inputs):
        if isinstance(t, MemRefType):
            array = np.array(value, dtype=numpy_dtype(t.get_element_type()))
            array.setflags(write=False)
            inputs.append(array)
        else:
            inputs.append(value)
    outs: list[np.ndarray] = []
    for t in outputs:
        if isinstance(t, TensorType):
            out = np.zeros(t.get_shape(), dtype=numpy_dtype(t.get_element_type()))
            _poison(out)
            outs.append(out)
    tracker = tracker or BufferTracker()
    interpreter = make_interpreter(module)
    interpreter.register_implementations(tracker, override=True)
    with np.errstate(all="ignore"):
        scalars = list(interpreter.call_op(function, (*inputs, *outs)))
    assert not tracker.live, f"{len(tracker.live)} buffer(s) leaked by @{entry}"
    results: list[Any] = []
    out_iter, scalar_iter = iter(outs), iter(scalars)
    for t in outputs:
        results.append(next(out_iter) if isinstance(t, TensorType) else next(scalar_iter))
    return results, tracker


@dataclass
class Lowered:
    module: ModuleOp
    tracker: BufferTracker

    def count(self, op_type: type[Operation]) -> int:
        return sum(isinstance(op, op_type) for op in self.module.walk())


def lower_text(text: str, passes: str) -> ModuleOp:
    module = parse(text)
    build_pipeline(passes).apply(make_context(), module)
    return module


def check_lowered(
    module: ModuleOp,
    args: Sequence[Any],
    *,
    passes: str = "bufferize",
    entry: str = "main",
) -> Lowered:
    """Lower a copy of stage-"linalg" `module` with `passes`; its results must equal the input's."""
    expected = run_function(module, entry, list(args))
    outputs = list(lookup_function(module, entry).function_type.outputs)
    lowered = module.clone()
    build_pipeline(passes).apply(make_context(), lowered)
    verify_module(lowered)
    if "convert-linalg-to-parallel-loops" in passes:
        assert_stage_loops(lowered)
    else:
        assert_stage_bufferized(lowered)
    got, tracker = run_buffers(lowered, entry, args, outputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if isinstance(e, np.ndarray):
            assert_same(g, e)
        else:
            assert type(g) is type(e) and (g == e or (g != g and e != e)), (g, e)
    # A second run: same results (nothing a run leaves behind changes the next one).
    again, _ = run_buffers(lowered, entry, args, outputs, tracker)
    for g, e in zip(again, expected):
        if isinstance(e, np.ndarray):
            assert_same(g, e)
    return Lowered(lowered, tracker)


def check_text(text: str, *args: Any, passes: str = "bufferize", entry: str = "main") -> Lowered:
    return check_lowered(parse(text), args, passes=passes, entry=entry)


def functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
