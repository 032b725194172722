"""Test-session hooks for tests/unit."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

# tests/unit mirrors irgrad/; the shared helpers (_cpu_util.py, ...) stand here, on the path as
# this file's folder. A few test modules are case tables that other tests reuse (the op table
# of convert-nn-to-linalg, the derivative-rule and control-flow tables of autodiff, the
# bufferization programs): their folders are on the path too, so they import by name.
_HERE = Path(__file__).resolve().parent
for _folder in ("lowering/nn_to_linalg", "autodiff", "lowering/bufferization"):
    if str(_HERE / _folder) not in sys.path:
        sys.path.insert(1, str(_HERE / _folder))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave the heap to the operating system at exit.

    Why: a worker that has run a few hundred compilations holds a large heap of IR objects,
    and the interpreter's final garbage collection walked all of it: 0.7 s after 185 s of
    tests in one process (tests/unit/backends/gpu/test_gpu_ptx.py and test_frontend_jit.py), 0.04 s with
    the heap frozen. Under `-n auto` on a loaded machine that stretched past pytest-xdist's
    shutdown timeout, and the worker was interrupted inside hypothesis's GC callback, which
    printed a PytestUnraisableExceptionWarning (KeyboardInterrupt) after the summary. Every
    test and report has finished here; nothing after it needs the collector.
    """
    gc.disable()
    gc.freeze()
