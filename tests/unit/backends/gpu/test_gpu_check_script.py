"""benchmarks/gpu_check.py, the GPU machine's check script, dry-run on the emulated GPU: its
disk-cache row (two fresh processes sharing a cache folder, the second forbidden to
compile) must pass here, so that a GPU session spends its minutes on the GPU, not on the
script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]


def test_the_disk_cache_row_passes_on_the_emulator():
    env = {k: v for k, v in os.environ.items() if k != "IRGRAD_CACHE_DIR"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--emulate", "--only", "cache"],
        env=env, capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "| ig.jit(backend='gpu') from the disk cache (mlp_value_and_grad) | 1/1 | ok |" in done.stdout
