"""Launch a real multi-process job (mpiexec, the `dist` extra's MPICH) from a test.

`launch(program, n)` runs tests/unit/_mpi_programs/<program>.py on `n` processes of this
machine (oversubscribed on small machines: fine for correctness) under a hard timeout, one
CPU-runtime thread each. A program reports with `report(...)`: one JSON file per process in the
job's results folder (stdout lines of several processes interleave), which `Job.results`
collects by rank.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irgrad.distributed.launch import find_mpiexec

PROGRAMS = Path(__file__).resolve().parent / "_mpi_programs"
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Job:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    folder: Path

    @property
    def results(self) -> dict[int, Any]:
        records = (json.loads(p.read_text()) for p in sorted(self.folder.glob("rank*.json")))
        return {r["rank"]: r for r in records}

    def describe(self) -> str:
        return f"exit {self.returncode} after {self.seconds:.1f} s\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def launch(program: str, n: int, *args: str, timeout: float = 240.0, env: dict[str, str] | None = None) -> Job:
    import tempfile
    import time

    folder = Path(tempfile.mkdtemp(prefix=f"irgrad-mpi-{program}-"))
    environment = dict(os.environ)
    environment.update({"IRGRAD_TEST_RESULTS": str(folder), "IRGRAD_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), str(PROGRAMS.parent)])})
    environment.update(env or {})
    cmd = [find_mpiexec(), "-n", str(n), sys.executable, str(PROGRAMS / f"{program}.py"), *args]
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=environment, cwd=ROOT)
    except subprocess.TimeoutExpired as err:
        raise AssertionError(
            f"{program} on {n} processes did not end within {timeout} s (a hang)\n"
            f"--- stdout\n{err.stdout}\n--- stderr\n{err.stderr}"
        ) from None
    return Job(done.returncode, done.stdout, done.stderr, time.monotonic() - start, folder)


def report(**fields: Any) -> None:
    """Write this process's results (call from a program, once)."""
    import irgrad as ig

    rank = ig.distributed.process_index()
    path = Path(os.environ["IRGRAD_TEST_RESULTS"]) / f"rank{rank}.json"
    path.write_text(json.dumps({"rank": rank, **fields}))
