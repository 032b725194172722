"""irgrad/dialects/upstream/: upstream MLIR's ops that xDSL lacks (arith.remf, arith.index_castui,
tensor.generate, linalg.map/batch_matmul/matvec/dot), the short form of linalg.reduce and
arith.select with a tensor condition: read, printed back, verified, and run on the reference
interpreter and the CPU backend against numpy in float64."""

from __future__ import annotations

import numpy as np
import pytest


from irgrad.backends.cpu import compile_module
from irgrad.backends.interpreter.runner import run_function
from irgrad.context import make_context
from irgrad.diagnostics import IrgradError, IRParseError, parse_module, verify_module
from irgrad.pipelines import CPU_PIPELINE
from irgrad.registry import run_pipeline

PROGRAM = """
func.func @main(%a: tensor<2x4x8xf64>, %b: tensor<2x8x3xf64>, %m: tensor<4x8xf64>, %x: tensor<8xf64>, %w: tensor<8xf64>)
    -> (tensor<2x4x3xf64>, tensor<4xf64>, tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<4x8xf64>, tensor<4xf64>, tensor<4xf64>) {
  %z = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %half = arith.constant 0.5 : f64
  %e3 = tensor.empty() : tensor<2x4x3xf64>
  %c = linalg.fill ins(%half : f64) outs(%e3 : tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf64>, tensor<2x8x3xf64>) outs(%c : tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
  %e1 = tensor.empty() : tensor<4xf64>
  %y = linalg.fill ins(%z : f64) outs(%e1 : tensor<4xf64>) -> tensor<4xf64>
  %1 = linalg.matvec ins(%m, %x : tensor<4x8xf64>, tensor<8xf64>) outs(%y : tensor<4xf64>) -> tensor<4xf64>
  %e0 = tensor.empty() : tensor<f64>
  %s = linalg.fill ins(%z : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %2 = linalg.dot ins(%x, %w : tensor<8xf64>, tensor<8xf64>) outs(%s : tensor<f64>) -> tensor<f64>
  %e8 = tensor.empty() : tensor<8xf64>
  %3 = linalg.map { arith.remf } ins(%x, %w : tensor<8xf64>, tensor<8xf64>) outs(%e8 : tensor<8xf64>)
  %4 = linalg.map ins(%x : tensor<8xf64>) outs(%e8 : tensor<8xf64>)
    (%v: f64) {
      %sq = arith.mulf %v, %v : f64
      %r = arith.remf %sq, %half : f64
      linalg.yield %r : f64
    }
  %g = tensor.generate {
  ^bb0(%p: index, %q: index):
    %pi = arith.index_castui %p : index to i32
    %qi = arith.index_castui %q : index to i64
    %pf = arith.uitofp %pi : i32 to f64
    %qf = arith.uitofp %qi : i64 to f64
    %v = tensor.extract %m[%p, %q] : tensor<4x8xf64>
    %k = arith.mulf %pf, %qf : f64
    %u = arith.addf %v, %k : f64
    tensor.yield %u : f64
  } : tensor<4x8xf64>
  %lowest = linalg.fill ins(%ninf : f64) outs(%e1 : tensor<4xf64>) -> tensor<4xf64>
  %5 = linalg.reduce { arith.maximumf } ins(%g : tensor<4x8xf64>) outs(%lowest : tensor<4xf64>) dimensions = [1]
  %6 = linalg.reduce { arith.addf } ins(%m : tensor<4x8xf64>) outs(%y : tensor<4xf64>) dimensions = [1]
  return %0, %1, %2, %3, %4, %g, %5, %6
      : tensor<2x4x3xf64>, tensor<4xf64>, tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<4x8xf64>, tensor<4xf64>, tensor<4xf64>
}
"""


def _parse(text: str):
    module = parse_module(make_context(), text)
    verify_module(module)
    return module


def _inputs():
    rng = np.random.default_rng(25)
    shapes = [(2, 4, 8), (2, 8, 3), (4, 8), (8,), (8,)]
    return [rng.normal(size=s) * 3 for s in shapes]


def _expected(a, b, m, x, w):
    g = m + np.arange(4.0)[:, None] * np.arange(8.0)[None, :]
    return [0.5 + a @ b, m @ x, np.dot(x, w), np.fmod(x, w), np.fmod(x * x, 0.5), g, g.max(axis=1), m.sum(axis=1)]


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_the_upstream_ops_compute_numpys_values(backend):
    module = _parse(PROGRAM)
    inputs = _inputs()
    if backend == "interp":
        results = run_function(module, "main", inputs)
    else:
        func = next(op for op in module.walk() if getattr(op, "sym_name", None) and op.name == "func.func")
        types = func.function_type
        compiled = compile_module(run_pipeline(module.clone(), CPU_PIPELINE))
        results = compiled.function("main", list(types.inputs.data), list(types.outputs.data))(*inputs)
    for k, (got, want) in enumerate(zip(results, _expected(*inputs))):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12, err_msg=f"result {k}")


def test_printing_reads_back_to_the_same_text():
    text = str(_parse(PROGRAM))
    assert "linalg.map { arith.remf } ins(" in text
    assert "linalg.batch_matmul ins(" in text and "linalg.matvec ins(" in text and "linalg.dot ins(" in text
    assert "tensor.generate  {" in text and "arith.index_castui %p : index to i32" in text
    assert "arith.remf %sq, %half : f64" in text
    assert str(_parse(text)) == text


def test_remf_keeps_the_dividends_sign_and_index_castui_zero_extends():
    text = """
func.func @main(%a: f64, %b: f64, %i: i32) -> (f64, index) {
  %r = arith.remf %a, %b : f64
  %j = arith.index_castui %i : i32 to index
  return %r, %j : f64, index
}
"""
    module = _parse(text)
    types = next(op for op in module.walk() if op.name == "func.func").function_type
    compiled = compile_module(run_pipeline(module.clone(), CPU_PIPELINE))
    run_cpu = compiled.function("main", list(types.inputs.data), list(types.outputs.data))
    for a, b, i in [(-7.5, 2.0, -1), (7.5, -2.0, 5), (-0.0, 3.0, -(2**31))]:
        want = (np.fmod(a, b), np.int64(np.uint32(np.int32(i))))
        for got in (run_function(module, "main", [np.float64(a), np.float64(b), np.int32(i)]), run_cpu(a, b, np.int32(i))):
            assert float(got[0]) == want[0] and np.signbit(float(got[0])) == np.signbit(want[0])
            assert int(got[1]) == want[1]


def test_arith_select_with_a_tensor_condition_reads_and_prints_as_upstream():
    text = """
func.func @f(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>, %s: i1, %x: f32) -> (tensor<4xf32>, f32) {
  %0 = arith.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>
  %1 = arith.select %s, %x, %x : f32
  return %0, %1 : tensor<4xf32>, f32
}
"""
    printed = str(_parse(text))
    assert "arith.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>" in printed
    assert "arith.select %s, %x, %x : f32" in printed
    assert run_function(_parse(text), "f", [np.array([True, False, True, False]), np.arange(4, dtype=np.float32),
                                            -np.arange(4, dtype=np.float32), np.True_, np.float32(2)])[0].tolist() == [0, -1, 2, -3]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("%0 = arith.select %c, %a, %a : tensor<3xi1>, tensor<4xf32>", "condition is i1 or a TensorType of i1"),
        ("%0 = arith.index_castui %i : index to index", "casts between index and an integer"),
        (
            "%0 = linalg.dot ins(%a, %h : tensor<4xf32>, tensor<4xf16>) outs(%t : tensor<f32>) -> tensor<f32>",
            "mixed element types",
        ),
        (
            "%0 = linalg.map { arith.addf } ins(%a, %d : tensor<4xf32>, tensor<5xf32>) outs(%a : tensor<4xf32>)",
            "input #1 has shape \\[5\\], its output \\[4\\]",
        ),
        (
            "%0 = tensor.generate %i {\n  ^bb0(%p: index):\n    tensor.yield %x : f32\n  } : tensor<4xf32>",
            "one extent operand per dynamic dimension",
        ),
        (
            "%0 = tensor.generate {\n  ^bb0(%p: index):\n    tensor.yield %i : index\n  } : tensor<4xf32>",
            "yields index, the element type",
        ),
    ],
)
def test_malformed_upstream_ops_are_verifier_errors(body, message):
    text = (
        "func.func @f(%c: tensor<3xi1>, %a: tensor<4xf32>, %h: tensor<4xf16>, %d: tensor<5xf32>, %t: tensor<f32>, "
        f"%i: index, %x: f32) {{\n  {body}\n  return\n}}\n"
    )
    with pytest.raises(IrgradError, match=message):
        _parse(text)


def test_a_short_form_naming_an_unknown_op_is_a_located_parse_error():
    text = """
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.map { arith.nosuch } ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>)
  return %0 : tensor<4xf32>
}
"""
    with pytest.raises(IRParseError, match="unknown op 'arith.nosuch' in a short-form body"):
        _parse(text)
