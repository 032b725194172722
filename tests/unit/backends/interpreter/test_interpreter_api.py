"""The reference interpreter's public API: dtype mapping, dense attributes, argument checks,
errors (unsupported ops, internal result checks) and the autodiff hook.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.dialects.arith import MulSIExtendedOp
from xdsl.interpreter import InterpreterFunctions, register_impls
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from _interpreter_util import Scalar, assert_same, build, parse, run_ops
from irgrad.backends.interpreter import (
    InterpreterError,
    InterpreterInputError,
    InterpreterInternalError,
    UnsupportedOpError,
    run_function,
    runner,
)
from irgrad.ir_numpy import element_type_for, from_attribute, numpy_dtype, tensor_type_for, to_attribute
from irgrad.backends.interpreter.values import numpy_impl
from irgrad.dialects import autodiff, nn
from irgrad import registry

BF16 = np.dtype(ml_dtypes.bfloat16)

# ---------------------------------------------------------------------------------------------
# dtypes and attributes
# ---------------------------------------------------------------------------------------------

PAIRS = [
    (Float16Type(), np.float16),
    (BFloat16Type(), BF16),
    (Float32Type(), np.float32),
    (Float64Type(), np.float64),
    (i1, np.bool_),
    (IntegerType(8), np.int8),
    (i32, np.int32),
    (i64, np.int64),
]


@pytest.mark.parametrize("element_type, dtype", PAIRS, ids=lambda v: str(v))
def test_dtype_mapping_round_trips(element_type, dtype):
    assert numpy_dtype(element_type) == np.dtype(dtype)
    assert element_type_for(np.dtype(dtype)) == element_type
    assert tensor_type_for(np.zeros((2, 0, 3), dtype)) == TensorType(element_type, [2, 0, 3])


def test_dtype_mapping_errors():
    assert numpy_dtype(IndexType()) == np.int64
    with pytest.raises(TypeError, match="uint32"):
        element_type_for(np.uint32)
    with pytest.raises(TypeError, match="complex256"):
        element_type_for(np.clongdouble)
    assert numpy_dtype(element_type_for(np.complex128)) == np.complex128


@pytest.mark.parametrize("dtype", [d for _, d in PAIRS], ids=str)
@pytest.mark.parametrize("shape", [(), (3,), (2, 0), (2, 3)])
def test_attributes_round_trip(dtype, shape):
    g = np.random.default_rng(0)
    values = (g.standard_normal(shape) * 50).astype(dtype)
    attr = to_attribute(values)
    assert attr.type == tensor_type_for(values)
    assert_same(from_attribute(attr), values)
    # Printed and parsed back, the attribute holds the same values.
    module = parse(
        f"func.func @main() -> {attr.type} {{\n  %c = arith.constant {attr}\n  func.return %c : {attr.type}\n}}"
    )
    (back,) = run_function(module, "main", [])
    assert_same(back, values)


def test_attribute_packing_matches_xdsl():
    values = np.array([True, False, True])
    attr = to_attribute(values)
    assert attr == DenseIntOrFPElementsAttr.from_list(TensorType(i1, [3]), [1, 0, 1])
    assert attr.data.data == b"\xff\x00\xff"
    floats = np.array([1.5, -2.0], np.float32)
    assert to_attribute(floats) == DenseIntOrFPElementsAttr.from_list(TensorType(f32, [2]), [1.5, -2.0])


def test_from_attribute_views_floats_and_expands_one_element_splats():
    attr = to_attribute(np.array([1.0, 2.0, 3.0], np.float32))
    view = from_attribute(attr)
    assert not view.flags.writeable  # a view of the attribute's bytes, not a copy
    splat = DenseIntOrFPElementsAttr(TensorType(f32, [2, 2]), BytesAttr(np.float32(7).tobytes()))
    assert_same(from_attribute(splat), np.full((2, 2), 7, np.float32))
    index_attr = DenseIntOrFPElementsAttr.from_list(TensorType(IndexType(), [2]), [4, -1])
    assert_same(from_attribute(index_attr), np.array([4, -1], np.int64))


def test_non_finite_floats_survive_attributes():
    values = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)
    assert_same(from_attribute(to_attribute(values)), values)


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------


def relu_module() -> ModuleOp:
    return build([TensorType(f32, [2, 3]), IndexType(), i32], lambda x, n, k: [nn.ReluOp(x), n, k])


def test_arguments_are_checked_before_running():
    module = relu_module()
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(InterpreterInputError, match=r"@main takes 3 argument\(s\), got 1"):
        run_function(module, "main", [x])
    with pytest.raises(InterpreterInputError, match=r"argument #0: expected tensor<2x3xf32>, got shape \(3, 2\) and dtype float32"):
        run_function(module, "main", [x.T, 1, 1])
    with pytest.raises(InterpreterInputError, match=r"argument #0: expected tensor<2x3xf32>, got shape \(2, 3\) and dtype float64"):
        run_function(module, "main", [x.astype(np.float64), 1, 1])
    with pytest.raises(InterpreterInputError, match=r"argument #0: expected tensor<2x3xf32>, got a list"):
        run_function(module, "main", [[[0.0] * 3] * 2, 1, 1])
    with pytest.raises(InterpreterInputError, match=r"argument #1: expected index, got float"):
        run_function(module, "main", [x, 1.0, 1])
    with pytest.raises(InterpreterInputError, match=r"argument #2: expected i32, got 4294967296, out of range"):
        run_function(module, "main", [x, 1, 2**32])
    with pytest.raises(InterpreterInputError, match=r"argument #2: expected i32, got a int64 scalar"):
        run_function(module, "main", [x, 1, np.int64(3)])
    assert issubclass(InterpreterInputError, ValueError)


def test_scalar_arguments_accept_python_numbers_numpy_scalars_and_0d_arrays():
    module = relu_module()
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    for n, k in [(3, 4), (np.int64(3), np.int32(4)), (np.array(3), np.array(4, np.int32))]:
        y, n_out, k_out = run_function(module, "main", [x, n, k])
        assert_same(y, np.maximum(x, 0))
        assert n_out == 3 and type(n_out) is int
        assert k_out == 4 and k_out.dtype == np.int32


def test_unknown_entry_and_declarations():
    module = parse(
        "func.func private @ext(tensor<2xf32>) -> tensor<2xf32>\n"
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = func.call @ext(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}"
    )
    with pytest.raises(InterpreterInputError, match=r"no function @nope in the module \(functions: @ext, @main\)"):
        run_function(module, "nope", [])
    with pytest.raises(InterpreterInputError, match="@ext is a declaration without a body"):
        run_function(module, "ext", [np.zeros(2, np.float32)])
    with pytest.raises(UnsupportedOpError, match=r"test.mlir:3:\d+: error: 'func.call' op calls @ext, a declaration without a body"):
        run_function(module, "main", [np.zeros(2, np.float32)])


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


def test_unsupported_op_is_reported_before_running_with_its_location():
    text = """
    func.func @main(%x: i32) -> i32 {
      %y, %z = arith.mulsi_extended %x, %x : i32
      func.return %y : i32
    }
    """
    with pytest.raises(UnsupportedOpError) as info:
        run_function(parse(text), "main", [np.int32(1)])
    message = "test.mlir:3:7: error: 'arith.mulsi_extended' op is not supported by the reference interpreter"
    assert str(info.value).startswith(message)
    # With the source text at hand (irgrad-run has it), the diagnostic shows the line.
    assert "      %y, %z = arith.mulsi_extended %x, %x : i32\n      ^" in info.value.format({"test.mlir": text})


def test_unsupported_op_without_a_location_names_its_function():
    module = build([i32], lambda x: MulSIExtendedOp(x, x).low)
    with pytest.raises(UnsupportedOpError, match=r"^error: 'arith.mulsi_extended' op is not supported by the reference interpreter \(in function @main\)$"):
        run_function(module, "main", [np.int32(1)])


@register_impls
class _WrongExp(InterpreterFunctions):
    """An implementation with a bug: nn.exp on f32 returning f64."""

    @numpy_impl(nn.ExpOp)
    def run_exp(self, interpreter, op, args):
        return (args[0].astype(np.float64),)


def test_a_result_of_the_wrong_dtype_is_an_internal_error(monkeypatch):
    monkeypatch.setattr(runner, "FUNCTIONS", (*runner.FUNCTIONS, _WrongExp))
    with pytest.raises(
        InterpreterInternalError,
        match=r"'nn.exp' op internal error: .* result #0: expected tensor<2xf32>, got array 2 of float64",
    ):
        run_ops(lambda x: nn.ExpOp(x), np.zeros(2, np.float32))


def test_interpreter_errors_are_diagnostics():
    from irgrad.diagnostics import IrgradError

    assert issubclass(InterpreterError, IrgradError)
    assert issubclass(InterpreterInputError, IrgradError)


# ---------------------------------------------------------------------------------------------
# autodiff
# ---------------------------------------------------------------------------------------------

STOP_GRADIENT = """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = autodiff.stop_gradient %x : tensor<2xf32>
  %z = nn.add %y, %y : tensor<2xf32>
  func.return %z : tensor<2xf32>
}
"""


def test_autodiff_ops_without_the_pass_are_a_clear_error(monkeypatch):
    monkeypatch.delitem(registry._PASSES, "autodiff", raising=False)
    with pytest.raises(InterpreterError, match=r"test.mlir:3:\d+: error: 'autodiff.stop_gradient' op is an autodiff request, but the autodiff pass is not available yet"):
        run_function(parse(STOP_GRADIENT), "main", [np.ones(2, np.float32)])


class _DropStopGradient(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: autodiff.StopGradientOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, [], [op.input])


@dataclass(frozen=True)
class _FakeAutodiffPass(ModulePass):
    name = "autodiff"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_DropStopGradient()).rewrite_module(op)


def test_autodiff_pass_runs_first_when_registered(monkeypatch):
    monkeypatch.setitem(registry._PASSES, "autodiff", lambda: _FakeAutodiffPass)
    module = parse(STOP_GRADIENT)
    (y,) = run_function(module, "main", [np.array([1.0, 2.5], np.float32)])
    assert_same(y, np.array([2.0, 5.0], np.float32))
    assert "autodiff.stop_gradient" in str(module)  # the caller's module is left alone


def test_scalar_helper_types():
    (y,) = run_ops(lambda n: [n], Scalar(np.float32(1.5), f32))
    assert y == np.float32(1.5) and y.dtype == np.float32
