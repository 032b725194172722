"""nn programs through the whole CPU pipeline, against the interpreter on the nn IR.

`autodiff, ..., convert-nn-to-linalg, bufferize, convert-linalg-to-parallel-loops,
convert-to-llvm`, then the CPU backend; the results must match the reference interpreter
running the original nn function: f32 within 1e-5 and f64 within 1e-12 relative to the
largest magnitude of each result (its elements are sums computed in another order than
numpy's, and a gradient element can be a difference of nearly equal sums, whose own relative
error says nothing), integers exactly, NaN and infinities where the interpreter has them.
Tensor results come back from out-params, scalar results as returned values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.traits import SymbolTable

from _cpu_util import assert_close, parse
from irgrad.backends.cpu import compile_module
from irgrad.backends.interpreter import run_function
from irgrad.lowering.contracts import assert_stage_llvm
from irgrad.registry import run_pipeline

pytest.importorskip("irgrad.lowering.loops.linalg_to_parallel_loops")

TO_LLVM = (
    "autodiff,canonicalize,cse,dce,convert-nn-to-linalg,bufferize,"
    "convert-linalg-to-parallel-loops,convert-to-llvm"
)
ROOT = Path(__file__).resolve().parents[4]
RNG = np.random.default_rng(7)


def check_nn(module: ModuleOp, entry: str, *args: object) -> tuple[object, ...]:
    """Run `@entry` on the interpreter and compiled through the whole pipeline; compare."""
    expected = run_function(module, entry, args)
    func = SymbolTable.lookup_symbol(module, entry)
    assert isinstance(func, FuncOp)
    lowered = module.clone()
    run_pipeline(lowered, TO_LLVM)
    assert_stage_llvm(lowered)
    compiled = compile_module(lowered)
    fn = compiled.function(
        entry, list(func.function_type.inputs.data), list(func.function_type.outputs.data)
    )
    got = fn(*args)
    assert len(got) == len(expected)
    for k, (e, g) in enumerate(zip(expected, got)):
        assert_close(e, g, normwise=True, what=f"@{entry} result #{k}")
    return got


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_mlp_example() -> None:
    module = parse((ROOT / "examples" / "mlp.mlir").read_text())
    check_nn(module, "mlp", f32(4, 3), f32(3, 8), f32(8), f32(8, 2), f32(2))


def test_relu_index_result_and_nan_max() -> None:
    text = """
func.func @main(%x: tensor<2x3xf32>, %n: index) -> (tensor<2x3xf32>, index, tensor<f32>) {
  %y = nn.relu %x : tensor<2x3xf32>
  %c1 = arith.constant 1 : index
  %m = arith.addi %n, %c1 : index
  %s = nn.reduce_max %y axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  func.return %y, %m, %s : tensor<2x3xf32>, index, tensor<f32>
}"""
    x = np.array([[1, -2, 3], [-4, 5, np.nan]], np.float32)
    y, m, s = check_nn(parse(text), "main", x, 7)
    assert m == 8 and np.isnan(s)


def _traced_programs():
    """(name, function, arguments) of traced programs: forward, gradients, control flow."""
    import irgrad as ig

    def mlp(x, w1, w2):
        h = ig.tanh(x @ w1)
        return ((h @ w2) ** 2).mean()

    def softmax_rows(z):
        e = ig.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def classifier_loss(w, b, x, labels):
        logits = x @ w + b
        return -(ig.log_softmax(logits, axis=1) * labels).sum(axis=1).mean()

    def loop_sum(x):
        return ig.fori_loop(0, 5, lambda i, acc: acc * 0.5 + ig.sin(x), ig.zeros_like(x))

    x, w1, w2 = f32(5, 4), f32(4, 6), f32(6, 3)
    labels = np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]]
    return [
        ("mlp_value_and_grad", ig.value_and_grad(mlp, argnums=(1, 2)), (x, w1, w2)),
        ("softmax", softmax_rows, (f32(3, 5),)),
        (
            "classifier_grad",
            ig.grad(classifier_loss, argnums=(0, 1)),
            (f32(4, 3), f32(3), f32(5, 4), labels),
        ),
        ("fori_loop", loop_sum, (f32(2, 3),)),
        ("f64_tanh_grad", ig.grad(lambda v: ig.tanh(v).sum()), (RNG.standard_normal((3, 4)),)),
    ]


@pytest.mark.parametrize("name", [n for n, _, _ in _traced_programs()])
def test_traced_programs(name: str) -> None:
    import irgrad as ig

    for n, fn, args in _traced_programs():
        if n == name:
            program = ig.trace(fn, *args)
            check_nn(program.module.clone(), program.traced.name, *args)
            return
    pytest.fail(f"no program {name}")
