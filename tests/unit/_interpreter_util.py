"""Helpers shared by the reference-interpreter tests: build or parse a module, run it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects.builtin import FunctionType, IndexType, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from irgrad.backends.interpreter import run_function

from irgrad.ir_numpy import tensor_type_for
from irgrad.diagnostics import parse_module, verify_module
from irgrad.context import make_context


class Scalar:
    """A scalar argument with an explicit IR type (index, i32, f32, ...)."""

    def __init__(self, value: Any, type: Attribute):
        self.value = value
        self.type = type


def index(value: int) -> Scalar:
    return Scalar(value, IndexType())


def _values(results: Any) -> list[SSAValue]:
    if isinstance(results, Operation):
        return list(results.results)
    if isinstance(results, SSAValue):
        results = [results]
    return [SSAValue.get(r) for r in results]


def build(arg_types: Sequence[Attribute], body: Callable[..., Any]) -> ModuleOp:
    """A verified module with `func.func @main(arg_types)` whose body `body(*args)` builds.

    `body` returns the value(s) (or op(s)) to return.
    """
    block = Block(arg_types=arg_types)
    with ImplicitBuilder(block):
        results = _values(body(*block.args))
        ReturnOp(*results)
    func_type = FunctionType.from_lists(list(arg_types), [r.type for r in results])
    module = ModuleOp([FuncOp("main", func_type, Region(block))])
    module.verify()
    return module


def run_ops(body: Callable[..., Any], *args: Any) -> tuple[Any, ...]:
    """Build `body` over arguments typed after `args` (arrays, or `Scalar`s) and run it."""
    types = [a.type if isinstance(a, Scalar) else tensor_type_for(np.asarray(a)) for a in args]
    values = [a.value if isinstance(a, Scalar) else a for a in args]
    return run_function(build(types, body), "main", values)


def run1(body: Callable[..., Any], *args: Any) -> Any:
    (result,) = run_ops(body, *args)
    return result


def parse(text: str) -> ModuleOp:
    module = parse_module(make_context(), text, "test.mlir")
    verify_module(module, {"test.mlir": text})
    return module


def run_text(text: str, *args: Any, entry: str = "main") -> tuple[Any, ...]:
    return run_function(parse(text), entry, list(args))


def assert_same(actual: Any, expected: Any) -> None:
    """Equal values (NaN equal to NaN), equal dtype and shape, equal signs of zeros."""
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray), type(actual)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    wide_a = actual.astype(np.float64) if actual.dtype.kind not in "biu" else actual
    wide_e = expected.astype(np.float64) if expected.dtype.kind not in "biu" else expected
    np.testing.assert_array_equal(wide_a, wide_e)
    if actual.dtype.kind not in "biu":
        # The sign of a NaN carries no meaning (IEEE leaves it unspecified); of a zero it does.
        real = ~np.isnan(wide_e)
        np.testing.assert_array_equal(np.signbit(wide_a)[real], np.signbit(wide_e)[real])
