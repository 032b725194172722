"""Test-session hooks for tests/unit."""

from __future__ import annotations

import gc

import pytest


def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave the heap to the operating system at exit.

    Why: a worker that has run a few hundred compilations holds a large heap of IR objects,
    and the interpreter's final garbage collection walked all of it: 0.7 s after 185 s of
    tests in one process (tests/unit/test_gpu_ptx.py and test_frontend_jit.py), 0.04 s with
    the heap frozen. Under `-n auto` on a loaded machine that stretched past pytest-xdist's
    shutdown timeout, and the worker was interrupted inside hypothesis's GC callback, which
    printed a PytestUnraisableExceptionWarning (KeyboardInterrupt) after the summary. Every
    test and report has finished here; nothing after it needs the collector.
    """
    gc.disable()
    gc.freeze()
