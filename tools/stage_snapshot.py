"""Print the IR of every stage of the example and benchmark programs into a folder, for a
refactoring that must leave the compiler's output byte-identical.

    .venv/bin/python tools/stage_snapshot.py build/snapshot-before
    ... change the code ...
    .venv/bin/python tools/stage_snapshot.py build/snapshot-after
    diff -r build/snapshot-before build/snapshot-after

Each script of examples/ (and the benchmark workloads named below) runs until it has compiled
a few programs through `ig.jit`; every compile is recorded at every stage (`Lowered.as_text`),
then the script is stopped. The textual IR of examples/*.mlir goes through `irgrad-opt` with
`--print-ir-after-all`, for both named pipelines.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = [
    "examples/mlp.py", "examples/cnn.py", "examples/rnn.py", "examples/matrix_completion.py",
    "examples/mixed_precision.py", "examples/dp_sgd.py", "examples/transformer.py",
]
BENCHMARKS = [("benchmarks/mlp.py", ["W1", "W2"]), ("benchmarks/elementwise.py", [])]
COMPILES_PER_SCRIPT = 3
STAGES = ("nn", "autodiff", "linalg", "bufferized", "loops", "llvm")


class _Enough(BaseException):
    """Stops a script once it has compiled what the snapshot keeps."""


def _record_scripts(out: str) -> None:
    import numpy as np

    import irgrad as ig

    lowered_class = type(ig.jit(lambda x: x).lower(np.ones(1, np.float32)))
    original = lowered_class.__init__
    state = {"name": "", "count": 0}

    def recording_init(self, program, *args, keep_stages=True, **kwargs):
        original(self, program, *args, keep_stages=True, **kwargs)
        state["count"] += 1
        for stage in STAGES:
            path = os.path.join(out, f"{state['name']}.{state['count']}.{stage}.mlir")
            with open(path, "w") as file:
                file.write(self.as_text(stage))
        if state["count"] >= COMPILES_PER_SCRIPT:
            raise _Enough

    lowered_class.__init__ = recording_init
    runs = [(script, []) for script in SCRIPTS] + BENCHMARKS
    for script, argv in runs:
        state["name"], state["count"] = script.replace("/", "_").removesuffix(".py"), 0
        sys.argv = [script, *argv]
        sys.path.insert(0, os.path.dirname(os.path.join(ROOT, script)))
        try:
            runpy.run_path(os.path.join(ROOT, script), run_name="__main__")
        except (_Enough, SystemExit):
            pass
        print(f"{script}: {state['count']} programs", file=sys.stderr)


def _record_textual_ir(out: str) -> None:
    opt = os.path.join(os.path.dirname(sys.executable), "irgrad-opt")
    for name in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if not name.endswith(".mlir"):
            continue
        for pipeline in ("irgrad-cpu", "irgrad-gpu"):
            result = subprocess.run(
                [opt, os.path.join("examples", name), "-p", pipeline, "--print-ir-after-all"],
                capture_output=True, text=True, cwd=ROOT,
            )
            with open(os.path.join(out, f"{name}.{pipeline}.txt"), "w") as file:
                file.write(result.stdout + result.stderr + f"exit {result.returncode}\n")


def main() -> None:
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    os.chdir(ROOT)
    os.environ["IRGRAD_CACHE_DIR"] = "off"
    os.environ["BENCH_FRAMEWORKS"] = "irgrad"
    _record_textual_ir(out)
    _record_scripts(out)


if __name__ == "__main__":
    main()
