"""Differential checks of the CPU backend against the reference interpreter.

`check_loops(text, entry, *inputs)` parses a stage-"loops" module, runs `@entry` on the
interpreter (memref arguments are numpy arrays; the trailing memref parameters after the
inputs are out-params, passed as zero arrays and read back), lowers a copy with
`convert-to-llvm`, compiles it, calls it with the same inputs and compares: floats within
the tolerance of their dtype (f32 1e-5 relative, f64 1e-12, f16/bf16 one ulp; `exact`
for bit equality, `normwise` for long computations), integers and bools exactly, NaN where
NaN, infinities and zeros with their signs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable

from irgrad.backends.cpu import CompiledFunction, CompiledModule, compile_module
from irgrad.ir_numpy import numpy_dtype
from irgrad.backends.interpreter.runner import make_interpreter
from irgrad.diagnostics import parse_module, verify_module
from irgrad.context import make_context
from irgrad.lowering.llvm.to_llvm import ConvertToLLVMPass

BF16 = np.dtype(ml_dtypes.bfloat16)

RTOL = {
    np.dtype(np.float16): 1e-3,  # one ulp is 2**-10 relative
    BF16: 8e-3,  # one ulp is 2**-7 relative
    np.dtype(np.float32): 1e-5,
    np.dtype(np.float64): 1e-12,
}


def parse(text: str) -> ModuleOp:
    module = parse_module(make_context(), text)
    verify_module(module)
    return module


def entry_function(module: ModuleOp, entry: str) -> FuncOp:
    func = SymbolTable.lookup_symbol(module, entry)
    assert isinstance(func, FuncOp), f"no @{entry}"
    return func


def lower(module: ModuleOp) -> ModuleOp:
    """A stage-"llvm" copy of a stage-"loops" module."""
    lowered = module.clone()
    ConvertToLLVMPass().apply(make_context(), lowered)
    return lowered


@functools.lru_cache(maxsize=64)
def compiled(text: str) -> tuple[ModuleOp, CompiledModule]:
    """Parse and compile `text` once per test session (modules are shared by many cases)."""
    module = parse(text)
    return module, compile_module(lower(module))


def signature(
    module: ModuleOp, entry: str, n_inputs: int
) -> tuple[list[Attribute], list[Attribute], list[Attribute]]:
    """(input types, out-param types, scalar result types) of `@entry`."""
    func = entry_function(module, entry)
    params = list(func.function_type.inputs.data)
    outs = params[n_inputs:]
    assert all(isinstance(t, MemRefType) for t in outs), "out-params must be memrefs"
    return params[:n_inputs], outs, list(func.function_type.outputs.data)


def interpret(module: ModuleOp, entry: str, inputs: Sequence[Any]) -> list[Any]:
    """Out-param arrays then returned values, as the interpreter computes them."""
    _, outs, _ = signature(module, entry, len(inputs))
    out_arrays = [np.zeros(t.get_shape(), dtype=numpy_dtype(t.get_element_type())) for t in outs]
    args = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in inputs]
    with np.errstate(all="ignore"):
        returned = make_interpreter(module).call_op(
            entry_function(module, entry), [*args, *out_arrays]
        )
    return [*out_arrays, *returned]


def function(text: str, entry: str, n_inputs: int) -> CompiledFunction:
    module, compiled_module = compiled(text)
    inputs, outs, results = signature(module, entry, n_inputs)
    return compiled_module.function(entry, inputs, [*outs, *results])


def assert_close(
    expected: Any, got: Any, *, exact: bool = False, normwise: bool = False, what: str = ""
) -> None:
    """Equal up to the dtype's tolerance, elementwise relative (see the module doc).

    `normwise`: relative to the largest magnitude in the array instead, for results of long
    computations where cancellation makes some elements' relative error meaningless (a
    gradient element that is a difference of nearly equal sums); NaN, infinities and zeros
    are still checked elementwise.
    """
    expected = np.asarray(expected)
    got = np.asarray(got)
    assert got.dtype == expected.dtype or (expected.dtype == np.int64 and got.dtype == np.int64), (
        f"{what}: dtype {got.dtype}, expected {expected.dtype}"
    )
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    if expected.dtype in RTOL:
        e = expected.astype(np.float64)
        g = got.astype(np.float64)
        nan = np.isnan(e)
        assert np.array_equal(nan, np.isnan(g)), (
            f"{what}: NaN at {np.isnan(g)}, expected {nan}\n{g}\n{e}"
        )
        inf = np.isinf(e)
        assert np.array_equal(e[inf], g[inf]), f"{what}: infinities differ\n{g}\n{e}"
        zero = e == 0
        if exact:
            assert np.array_equal(e[~nan], g[~nan]), f"{what}:\n{g}\n{e}"
            assert np.array_equal(np.signbit(e[zero]), np.signbit(g[zero])), (
                f"{what}: signs of zeros differ\n{g}\n{e}"
            )
            return
        rtol = RTOL[expected.dtype]
        finite = ~nan & ~inf
        # Relative to the expected value; a result that should be 0 must be tiny.
        floor = np.abs(e[finite]).max(initial=0.0) if normwise else 0.0
        scale = np.maximum(np.abs(e[finite]), max(floor, np.finfo(np.float32).tiny))
        err = np.abs(g[finite] - e[finite]) / scale
        assert np.all(err <= rtol), f"{what}: max relative error {err.max():.3g} > {rtol}\n{g}\n{e}"
        return
    np.testing.assert_array_equal(got, expected, err_msg=what)


def check_loops(
    text: str, entry: str, *inputs: Any, exact: bool = False
) -> tuple[list[Any], tuple[Any, ...]]:
    """Run `@entry` on the interpreter and compiled; assert the results agree."""
    module, _ = compiled(text)
    expected = interpret(module, entry, inputs)
    got = function(text, entry, len(inputs))(*inputs)
    assert len(got) == len(expected)
    for k, (e, g) in enumerate(zip(expected, got)):
        assert_close(e, g, exact=exact, what=f"@{entry} result #{k}")
    return expected, got
