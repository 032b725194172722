"""The factorizations' reference loops (irgrad/tracing/reference_loops.py) stand on the tracing
core alone: `nn-expand-factorizations` traces and inlines all six of them, batched, tall and
wide, in a fresh interpreter that never imports the numpy-style library (irgrad.numpy installs
Tracer's operators, so a loop written with `a - b` would fail there), and the inlined loops
compute what the interpreter's numpy references of the ops compute.

Their IR is pinned elsewhere: tests/filecheck/transforms/nn/nn-expand-factorizations.mlir, and
tests/unit/numpy/test_linalg.py runs them on every pipeline against numpy and scipy.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

SCRIPT = textwrap.dedent('''
    import sys

    import numpy as np

    from irgrad.backends.interpreter import run_function
    from irgrad.context import make_context
    from irgrad.diagnostics import parse_module
    from irgrad.registry import build_pipeline

    TEXT = """
    func.func @main(%a: tensor<2x4x4xf64>, %b: tensor<2x4x3xf64>, %t: tensor<5x3xf32>, %w: tensor<2x3x5xf64>)
        -> (tensor<2x4x4xf64>, tensor<2x4x3xf64>, tensor<2x4x3xf64>, tensor<2x4x4xf64>, tensor<2x4xi32>,
            tensor<2x4xi32>, tensor<2x4xf64>, tensor<2x4x4xf64>, tensor<5x3xf32>, tensor<3xf32>, tensor<3x3xf32>,
            tensor<2x3x3xf64>, tensor<2x3xf64>, tensor<2x3x5xf64>, tensor<5x3xf32>, tensor<3x3xf32>) {
      %l = nn.cholesky %a : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
      %x = nn.triangular_solve %l, %b lower : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
      %y = nn.triangular_solve %a, %b unit_diagonal : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
      %lu, %piv, %perm = nn.lu %a : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x4xi32>, tensor<2x4xi32>)
      %e, %v = nn.eigh %a : (tensor<2x4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4x4xf64>)
      %u, %s, %vt = nn.svd %t : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3xf32>, tensor<3x3xf32>)
      %u2, %s2, %vt2 = nn.svd %w : (tensor<2x3x5xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xf64>, tensor<2x3x5xf64>)
      %q, %r = nn.qr %t : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>)
      func.return %l, %x, %y, %lu, %piv, %perm, %e, %v, %u, %s, %vt, %u2, %s2, %vt2, %q, %r
          : tensor<2x4x4xf64>, tensor<2x4x3xf64>, tensor<2x4x3xf64>, tensor<2x4x4xf64>, tensor<2x4xi32>,
            tensor<2x4xi32>, tensor<2x4xf64>, tensor<2x4x4xf64>, tensor<5x3xf32>, tensor<3xf32>, tensor<3x3xf32>,
            tensor<2x3x3xf64>, tensor<2x3xf64>, tensor<2x3x5xf64>, tensor<5x3xf32>, tensor<3x3xf32>
    }
    """

    rng = np.random.default_rng(3)
    m = rng.standard_normal((2, 4, 4))
    spd = m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4)
    args = [spd, rng.standard_normal((2, 4, 3)), rng.standard_normal((5, 3)).astype(np.float32),
            rng.standard_normal((2, 3, 5))]
    expected = run_function(parse_module(make_context(), TEXT), "main", args)
    module = parse_module(make_context(), TEXT)
    build_pipeline("nn-expand-factorizations{outline=false}").apply(make_context(), module)
    text = str(module)
    assert "scf.for" in text and "nn.cholesky" not in text and "nn.svd" not in text, text[:2000]
    got = run_function(module, "main", args)
    for g, e in zip(got, expected, strict=True):
        if e.dtype.kind == "i":
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=2e-4 if e.dtype == np.float32 else 1e-9, atol=1e-5)
    library = sorted(name for name in sys.modules
                     if name.split(".")[:2] in (["irgrad", n] for n in ("numpy", "lax", "nn", "scipy", "api")))
    print("library modules:", library)
''')


def test_the_pass_traces_the_loops_without_the_library() -> None:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "library modules: []" in result.stdout, result.stdout
