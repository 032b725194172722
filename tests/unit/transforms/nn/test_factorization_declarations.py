"""The CPU pipeline's factorizations as tagged declarations (`nn-expand-factorizations
{references=false}`): no reference loop is traced or lowered, the interpreter runs such a call
as its kind's numpy reference at every stage (tensors before bufferize, out-parameters after),
and convert-factorizations-to-lapack gives each declaration its LAPACK body."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func

from irgrad.backends.interpreter import run_function
from irgrad.diagnostics import PassError, parse_module
from irgrad.context import make_context
from irgrad.registry import build_pipeline, lower

TEXT = """
func.func @main(%a: tensor<2x4x4xf64>, %b: tensor<2x4x3xf64>, %m: tensor<5x3xf32>)
    -> (tensor<2x4x3xf64>, tensor<2x4x4xf64>, tensor<2x4xi32>, tensor<2x4xf64>, tensor<2x4x4xf64>,
        tensor<3xf32>, tensor<5x3xf32>, tensor<3x3xf32>) {
  %l = nn.cholesky %a : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
  %x = nn.triangular_solve %l, %b lower : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
  %lu, %piv, %perm = nn.lu %a : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x4xi32>, tensor<2x4xi32>)
  %w, %v = nn.eigh %a : (tensor<2x4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4x4xf64>)
  %u, %s, %vt = nn.svd %m : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3xf32>, tensor<3x3xf32>)
  %q, %r = nn.qr %m : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>)
  func.return %x, %lu, %perm, %w, %v, %s, %q, %r : tensor<2x4x3xf64>, tensor<2x4x4xf64>, tensor<2x4xi32>,
      tensor<2x4xf64>, tensor<2x4x4xf64>, tensor<3xf32>, tensor<5x3xf32>, tensor<3x3xf32>
}
"""


def inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4, 4))
    spd = x @ np.swapaxes(x, -1, -2) + 4 * np.eye(4)
    return [spd, rng.standard_normal((2, 4, 3)), rng.standard_normal((5, 3)).astype(np.float32)]


def module():
    return parse_module(make_context(), TEXT)


@pytest.mark.parametrize("stage", ["linalg", "fused", "bufferized", "loops"])
def test_every_stage_runs_on_the_interpreter(stage: str) -> None:
    args = inputs()
    expected = run_function(module(), "main", args)
    lowered = lower(module(), stage)
    declarations = [f for f in lowered.ops if isinstance(f, func.FuncOp) and "irgrad.factorization" in f.attributes]
    assert len(declarations) == 6
    # Before the LAPACK pass they are bodiless declarations; from "loops" on they have a body.
    assert all(bool(f.body.blocks) == (stage == "loops") for f in declarations)
    if stage in ("bufferized", "loops"):  # results come back in caller-provided buffers
        got = [np.full(e.shape, -7, e.dtype) for e in expected]
        run_function(lowered, "main", [*args, *got])
    else:
        got = run_function(lowered, "main", args)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=2e-5 if e.dtype == np.float32 else 1e-12, atol=1e-6)


def test_no_reference_loop_is_traced_for_the_cpu() -> None:
    text = str(lower(module(), "bufferized"))
    assert "scf.for" not in text
    assert "func.func private @irgrad_syevd_2x4x4xf64(memref<2x4x4xf64>, memref<2x4xf64>, memref<2x4x4xf64>)" in text


def test_references_false_needs_outlining() -> None:
    with pytest.raises(PassError, match="references=false needs outline=true"):
        build_pipeline("nn-expand-factorizations{outline=false references=false}").apply(make_context(), module())
