"""The tools load the dialects and passes they run, never the Python API (`irgrad/api.py` and
the library under it): `from irgrad import registry` is a submodule import, not an `ig.<name>`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

CHILD = """
import sys
sys.argv = ["irgrad-opt", "-p", "convert-nn-to-linalg,canonicalize", "examples/mlp.mlir"]
from irgrad import context, registry  # noqa: F401  (submodules, as the tools import them)
from irgrad.driver.opt import main
try:
    main()
except SystemExit as done:
    assert not done.code, done.code
loaded = sorted(m for m in sys.modules if m == "irgrad.api" or m.startswith(("irgrad.numpy", "irgrad.frontend")))
print("LOADED", loaded)
"""


def test_irgrad_opt_runs_a_pipeline_without_loading_the_api():
    result = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "linalg.generic" in result.stdout
    assert "LOADED []" in result.stdout, result.stdout.splitlines()[-1]


def test_api_names_still_load_the_api_on_first_use():
    code = "import sys, irgrad as ig; assert 'irgrad.api' not in sys.modules; ig.jit; print('irgrad.api' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "True", result.stderr
