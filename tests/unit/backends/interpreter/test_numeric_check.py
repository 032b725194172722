"""`--verify-each=numeric`: the checker follows functions through bufferization's calling
convention and names the first pass that changes a result."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from irgrad.diagnostics import PassError
from irgrad.backends.interpreter.numeric_check import NumericChecker
from irgrad.registry import run_pipeline


def _program():
    def loss(w, x, labels):
        logits = ig.tanh(x @ w)
        return ig.mean(-ig.take_along_axis(ig.log_softmax(logits, -1), labels[:, None], 1))

    return ig.trace(
        ig.value_and_grad(loss), ig.ShapeDtype((3, 4)), ig.ShapeDtype((5, 3)), ig.ShapeDtype((5,), ig.int32)
    )


@pytest.mark.parametrize(
    "passes",
    [
        ["autodiff", "canonicalize", "cse", "dce"],
        ["autodiff", "canonicalize", "cse", "dce", "convert-nn-to-linalg", "bufferize",
         "convert-linalg-to-parallel-loops"],
    ],
)
def test_a_correct_pipeline_passes_the_numeric_check(passes):
    module = _program().module.clone()
    checker = NumericChecker(seed=3)
    checker.baseline(module)
    assert checker.cases, "the entry function must be checked"
    for name in passes:
        run_pipeline(module, name)
        checker.check(module, name)


def test_mixed_scalar_and_tensor_results_after_bufferize():
    # A function returning a tensor and an index keeps its order through out-parameters.
    text = """
    func.func @f(%x: tensor<3xf32>, %i: index) -> (tensor<3xf32>, index) {
      %y = nn.exp %x : tensor<3xf32>
      func.return %y, %i : tensor<3xf32>, index
    }
    """
    from irgrad.diagnostics import parse_module
    from irgrad.context import make_context

    module = parse_module(make_context(), text)
    checker = NumericChecker()
    checker.baseline(module)
    for name in ("convert-nn-to-linalg", "bufferize"):
        run_pipeline(module, name)
        checker.check(module, name)
    expected = checker.cases["f"].outputs
    assert expected[0].shape == (3,) and np.asarray(expected[1]).shape == ()


def test_a_miscompile_is_named():
    module = _program().module.clone()
    checker = NumericChecker()
    checker.baseline(module)
    run_pipeline(module, "autodiff")
    checker.check(module, "autodiff")
    run_pipeline(module, "test-miscompile")
    with pytest.raises(PassError, match="pass 'test-miscompile' changed result"):
        checker.check(module, "test-miscompile")
