"""The example scripts run to completion (they are documentation; broken docs are bugs)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("script", ["mlp.py", "cnn.py", "rnn.py"])
def test_example_runs(script):
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", script)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "func.func" in result.stdout  # each example prints its traced IR
