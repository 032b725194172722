"""`make bench`: runs every benchmark script in this folder, one after another.

Speed goals live here, never in timed tests. Each script prints its own table; see
../shared/benchmarks.md for the workload definitions (W1-W7).
"""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ["autodiff_cost.py"]


def main() -> int:
    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", MKL_NUM_THREADS="2")
    status = 0
    for script in SCRIPTS:
        print(f"\n##### {script}", flush=True)
        status |= subprocess.call([sys.executable, os.path.join(HERE, script)], env=env)
    return status


if __name__ == "__main__":
    sys.exit(main())
