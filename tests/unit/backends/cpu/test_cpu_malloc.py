"""Freed memory is reused, not page-faulted in again on every call (process.py, _keep_freed_memory)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

_CHILD = textwrap.dedent(
    """
    import resource, numpy as np, irgrad as ig
    # A 64 MiB result per call, dropped before the next: above glibc's largest adaptive mmap
    # threshold (32 MiB), so without the tuning every call maps fresh pages.
    f = ig.jit(lambda x: x * 2.0 + 1.0, backend="cpu")
    x = np.random.default_rng(0).standard_normal((4096, 4096)).astype(np.float32)
    for _ in range(3):
        f(x)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        f(x)
    print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
    """
)


def _faults_per_call(setting: str) -> float:
    env = dict(os.environ, IRGRAD_CACHE_DIR="off", IRGRAD_MALLOC_TUNING=setting)
    proc = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return float(proc.stdout.strip())


def test_steady_state_calls_do_not_page_fault():
    assert _faults_per_call("on") < 50


def test_without_the_tuning_the_pages_come_back_every_call():
    """The control: what the tuning prevents does happen here without it (16384 faults of 4 KiB
    pages, or a few hundred where numpy's large arrays get transparent huge pages)."""
    assert _faults_per_call("off") > 200
