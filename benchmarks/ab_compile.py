"""Compile time of this checkout against another commit, in fresh processes run alternately.

The shared 2-core machines this project runs on switch between a fast and a slow phase every
few seconds to minutes (docs/status.md, "Measured"), so two timings taken minutes apart
can differ by 1.5x. Here each measurement runs in a fresh process, alternating between
the two trees (base first on odd pairs), and the summary is the median of each side and the
median of the per-pair ratios, which the phase changes affect least.

Measurements:
  import        seconds of `import irgrad` and its API (loaded on first use since 2026-11-30)
  opt           `irgrad-opt -p convert-nn-to-linalg examples/mlp.mlir`, in-process from start
  w6            `import irgrad` + the first call of W1's training step (ig.jit, no disk cache)
  disk          the first call of W1's training step after `import irgrad`, a disk-cache hit
                (the cache filled by an earlier run of the same tree)
  transformer   the Python passes of examples/transformer.py's training step (best of 2, after
                one warm-up lowering in the same process)

Run: .venv/bin/python benchmarks/ab_compile.py BASE_COMMIT [import opt w6 disk transformer] [--pairs N]
The base commit is checked out in a temporary git worktree, removed afterwards. Both trees
are compiled to bytecode first (PYTHONDONTWRITEBYTECODE is lifted for these processes): before
2026-11-30's evening, the base was imported from source every time, which inflated its import
by half (the same commit measured 0.67 against itself).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SNIPPETS = {
    "import": """
import time
t = time.perf_counter()
import irgrad
irgrad.jit  # the API, loaded on first use since 2026-11-30 (part of the import before)
print(time.perf_counter() - t)
""",
    "opt": """
import contextlib, io, sys, time
t = time.perf_counter()
sys.argv = ["irgrad-opt", "-p", "convert-nn-to-linalg", {mlir!r}]
from irgrad.driver.opt import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(time.perf_counter() - t)
""",
    "w6": """
import os, sys, time
sys.path.insert(0, {bench!r})
os.environ["IRGRAD_CACHE_DIR"] = "off"
import workloads as wl, mlp
params, x, labels = wl.mlp_data(wl.W1)
t = time.perf_counter()
import irgrad as ig
ig.jit(mlp.irgrad_fns(ig)[2], backend="cpu")(params, x, labels)
print(time.perf_counter() - t)
""",
    "disk": """
import os, sys, time
sys.path.insert(0, {bench!r})
os.environ["IRGRAD_CACHE_DIR"] = {cache!r}
import workloads as wl, mlp
params, x, labels = wl.mlp_data(wl.W1)
import irgrad as ig
ig.jit  # the API, loaded on first use since 2026-11-30: not part of the first call
t = time.perf_counter()
ig.jit(mlp.irgrad_fns(ig)[2], backend="cpu")(params, x, labels)
print(time.perf_counter() - t)
""",
    "transformer": """
import os, time, types
os.environ["IRGRAD_CACHE_DIR"] = "off"
import numpy as np
import irgrad as ig
from irgrad.frontend.stages import Lowered
T = types.ModuleType("transformer_model")
exec(open({example!r}).read().split("\\nrng = np.random")[0], T.__dict__)
p = T.init(0)
program = ig.jit(T.train_step).trace(p, T.opt.init(p), T.batch(np.random.default_rng(0)))
Lowered(program, keep_stages=False)
best = float("inf")
for _ in range(2):
    t = time.perf_counter()
    Lowered(program, keep_stages=False)
    best = min(best, time.perf_counter() - t)
print(best)
""",
}


def bytecode_env() -> dict[str, str]:
    """The environment with bytecode writing allowed: with PYTHONDONTWRITEBYTECODE set (as on
    these machines), a fresh worktree has no `.pyc` files and every process compiled irgrad
    from source, which made the base look 1.5x slower to import than the same code here."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_bytecode(tree: str) -> None:
    """Every module of `tree`'s irgrad compiled to bytecode, those imported lazily included."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", os.path.join(tree, "irgrad")], env=bytecode_env(), check=True
    )


def run(tree: str | None, code: str) -> float:
    """Seconds printed by `code` in a fresh process importing irgrad from `tree` (None: this
    checkout, as installed)."""
    env = bytecode_env()
    if tree is not None:
        env["PYTHONPATH"] = tree
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tempfile.gettempdir()
    )
    if out.returncode != 0:
        raise SystemExit(f"measurement failed in {tree or ROOT}:\n{out.stderr[-2000:]}")
    return float(out.stdout.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", help="the commit to compare with")
    parser.add_argument("what", nargs="*", default=["import", "opt", "w6", "disk", "transformer"], choices=sorted(SNIPPETS))
    parser.add_argument("--pairs", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = os.path.join(scratch, "base")
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", base, args.base], check=True)
        try:
            for tree in (base, ROOT):
                compile_bytecode(tree)
            for what in args.what:
                code = SNIPPETS[what].format(
                    bench=HERE, example=os.path.join(ROOT, "examples", "transformer.py"), cache=os.path.join(scratch, "cache"),
                    mlir=os.path.join(ROOT, "examples", "mlp.mlir"),
                )
                for tree in (base, None):  # bytecode compiled (and the disk cache filled) outside the timings
                    run(tree, code)
                here, there = [], []
                for k in range(args.pairs):
                    order = [(None, here), (base, there)] if k % 2 == 0 else [(base, there), (None, here)]
                    for tree, out in order:
                        out.append(run(tree, code))
                ratio = statistics.median(h / t for h, t in zip(here, there))
                print(
                    f"{what:12s} this checkout {statistics.median(here):.3f} s (min {min(here):.3f}), "
                    f"{args.base} {statistics.median(there):.3f} s (min {min(there):.3f}); "
                    f"median ratio {ratio:.2f} over {args.pairs} pairs"
                )
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", base], check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
