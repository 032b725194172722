"""Compile time against program size (issue 26): W7's chain lengthened to n ops, first call.

W7's op sequence (../shared/benchmarks.md: tanh when i % 10 == 9, else `x + 0.1` for even i and
`x * 0.9` for odd i) on a 64-element float32 vector, n = 100, 300, 1,000, 3,000, 10,000, forward
and gradient (`grad(sum(chain(x)))`). irgrad's first `ig.jit(f)(x)` call (disk cache off) is
split into trace / passes (the irgrad-cpu pipeline) / LLVM (translation, O3, codegen, load),
beside jax.jit's first call (`block_until_ready`), each framework in a process of its own after
one warm-up compile of a tiny function, results checked against each other; wall and CPU
seconds (CPU time is what a shared machine disturbs least). Then the
command-line path: `irgrad-opt -p irgrad-cpu` on the gradient's nn IR file at 500 and 1,000 ops,
and parsing a ~10 MB nn IR file. Goal: irgrad at most 2x jax.jit at every size.

Run:  .venv/bin/python benchmarks/compile_scaling.py [--max-ops 10000] [--quick]
      (--quick: up to 1,000 ops, no IR-file figures); `run_all.py --only compile` runs it.
      .venv/bin/python benchmarks/compile_scaling.py --profile 1000
      (cProfile of the passes on the n-op gradient: call counts, then the top functions)
      .venv/bin/python benchmarks/compile_scaling.py --pass-times 1000
      (CPU seconds of each pass on the n-op gradient, least of 3 runs)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

SIZES = (100, 300, 1000, 3000, 10000)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def chain(x: Any, n: int, tanh: Any) -> Any:
    for i in range(n):
        if i % 10 == 9:
            x = tanh(x)
        elif i % 2 == 0:
            x = x + 0.1
        else:
            x = x * 0.9
    return x


def _data() -> Any:
    import numpy as np

    return np.random.default_rng(0).standard_normal(64).astype(np.float32)


def measure_irgrad(sizes: list[int]) -> None:
    """One JSON line per (size, mode): seconds of the first call and its split."""
    os.environ["IRGRAD_CACHE_DIR"] = "off"
    import numpy as np

    import irgrad as ig

    x = _data()
    ig.jit(lambda v: v + 1.0)(x)  # one-time initialization (LLVM, runtime) outside the figures
    for n in sizes:
        for mode in ("forward", "gradient"):
            if mode == "forward":
                fn = lambda v, n=n: chain(v, n, ig.tanh)  # noqa: E731
            else:
                fn = ig.grad(lambda v, n=n: ig.sum(chain(v, n, ig.tanh)))
            jitted = ig.jit(fn)
            start, cpu = time.perf_counter(), time.process_time()
            out = np.asarray(jitted(x))
            total, cpu = time.perf_counter() - start, time.process_time() - cpu
            (compiled,) = jitted._compiled.values()  # the one signature's Compiled
            s = compiled.stats()
            passes = sum(s.get(k, 0.0) for k in ("autodiff", "linalg", "bufferized", "loops", "llvm"))
            llvm = sum(s.get(k, 0.0) for k in ("llvm-ir", "optimize", "codegen", "load"))
            print(json.dumps({"fw": "irgrad", "n": n, "mode": mode, "total": total, "cpu": cpu, "trace": s["trace"],
                              "passes": passes, "llvm": llvm, "out": out.tolist()}), flush=True)


def measure_jax(sizes: list[int]) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np

    x = _data()
    jax.jit(lambda v: v + 1.0)(x).block_until_ready()
    for n in sizes:
        for mode in ("forward", "gradient"):
            if mode == "forward":
                fn = lambda v, n=n: chain(v, n, jnp.tanh)  # noqa: E731
            else:
                fn = jax.grad(lambda v, n=n: jnp.sum(chain(v, n, jnp.tanh)))
            start, cpu = time.perf_counter(), time.process_time()
            out = jax.jit(fn)(x).block_until_ready()
            total, cpu = time.perf_counter() - start, time.process_time() - cpu
            print(json.dumps({"fw": "jax.jit", "n": n, "mode": mode, "total": total, "cpu": cpu,
                              "out": np.asarray(out).tolist()}), flush=True)


def _child(which: str, sizes: list[int]) -> list[dict[str, Any]]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", which, "--sizes", ",".join(map(str, sizes))]
    # Every LLVM compile in the measured process, so that its CPU time counts them all.
    env = dict(os.environ, IRGRAD_COMPILE_WORKER="never")
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE, env=env)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0:
        print(f"  {which}: exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
    return rows


def gradient_ir_file(n: int, path: str) -> None:
    """The gradient's nn IR (the traced program, autodiff request included) written to `path`."""
    os.environ["IRGRAD_CACHE_DIR"] = "off"
    import irgrad as ig

    program = ig.jit(ig.grad(lambda v: ig.sum(chain(v, n, ig.tanh)))).trace(_data())
    with open(path, "w") as f:
        f.write(str(program.module) + "\n")


def command_line_figures(work: str) -> list[str]:
    lines = []
    opt = os.path.join(os.path.dirname(sys.executable), "irgrad-opt")
    for n in (500, 1000):
        path = os.path.join(work, f"grad{n}.mlir")
        gradient_ir_file(n, path)
        start = time.perf_counter()
        proc = subprocess.run([opt, "-p", "irgrad-cpu", path, "-o", os.devnull], capture_output=True, text=True)
        seconds = time.perf_counter() - start
        status = "" if proc.returncode == 0 else f" (exit {proc.returncode})"
        lines.append(f"- `irgrad-opt -p irgrad-cpu` on the gradient's IR file, {n} ops: {seconds:.2f} s{status}")
    lines.append(parse_figure(work))
    return lines


def parse_figure(work: str) -> str:
    """Parse time of a ~10 MB nn IR file: copies of the 1,000-op gradient's function, renamed."""
    from irgrad.context import make_context
    from irgrad.diagnostics import parse_module

    with open(os.path.join(work, "grad1000.mlir")) as f:
        text = f.read()
    body = text.strip()[len("builtin.module {"):-1]
    copies = max(1, (10 << 20) // len(body))
    big = "builtin.module {\n" + "".join(body.replace("@fn", f"@fn{k}").replace("@main", f"@main{k}")
                                          for k in range(copies)) + "}\n"
    start = time.perf_counter()
    module = parse_module(make_context(), big)
    seconds = time.perf_counter() - start
    ops = sum(1 for _ in module.walk())
    return (f"- parse a {len(big) / 2**20:.1f} MB nn IR file ({ops} ops): {seconds:.2f} s "
            f"({ops / seconds / 1000:.0f}k ops/s)")


def profile_passes(n: int, top: int = 30) -> None:
    """cProfile of the irgrad-cpu passes on the n-op gradient (after one unprofiled run, so
    that lazy imports and caches are warm): the call counts that do not depend on the
    machine's load, then the functions by own and by cumulative time."""
    import cProfile
    import pstats

    os.environ["IRGRAD_CACHE_DIR"] = "off"
    import irgrad as ig
    from irgrad.frontend.stages import Lowered

    program = ig.jit(ig.grad(lambda v: ig.sum(chain(v, n, ig.tanh)))).trace(_data())
    Lowered(program, keep_stages=False)
    profiler = cProfile.Profile()
    cpu = time.process_time()
    profiler.enable()
    Lowered(program, keep_stages=False)
    profiler.disable()
    cpu = time.process_time() - cpu
    stats = pstats.Stats(profiler)

    def calls(name: str) -> int:
        return sum(v[1] for k, v in stats.stats.items() if k[2] == name)  # type: ignore[attr-defined]

    print(f"passes on the {n}-op gradient under cProfile: {cpu:.2f} s CPU, {stats.total_calls} calls "  # type: ignore[attr-defined]
          f"(isinstance {calls('<built-in method builtins.isinstance>')}, abc __instancecheck__ "
          f"{calls('__instancecheck__')})", flush=True)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumtime").print_stats(top)


def pass_times(n: int, runs: int = 3) -> None:
    """CPU seconds of each pass of the irgrad-cpu pipeline on the n-op gradient, pass by pass
    (as `Lowered` runs them, the cyclic collector paused), the least of `runs` runs after
    one warm-up run: which pass to look at, without cProfile's inflation of small functions.
    A pass that runs twice (canonicalize, cse) is listed once, with the least of both."""
    os.environ["IRGRAD_CACHE_DIR"] = "off"
    import irgrad as ig
    from irgrad.context import make_context
    from irgrad.lowering.llvm.to_llvm import cyclic_gc_paused
    from irgrad.pipelines import cpu_steps
    from irgrad.registry import build_pipeline

    program = ig.jit(ig.grad(lambda v: ig.sum(chain(v, n, ig.tanh)))).trace(_data())
    seconds: dict[str, list[float]] = {}
    for run in range(runs + 1):
        module = program.module.clone()
        with cyclic_gc_paused():
            for _, spec in cpu_steps(False):
                for one in build_pipeline(spec).passes:
                    start = time.process_time()
                    one.apply(make_context(plugins=False), module)
                    if run:
                        seconds.setdefault(one.name, []).append(time.process_time() - start)
    print(f"CPU seconds per pass on the {n}-op gradient (least of {runs} runs):", flush=True)
    for name, times in sorted(seconds.items(), key=lambda item: -min(item[1])):
        print(f"  {name:40s} {min(times):.3f}", flush=True)
    print(f"  {'(sum)':40s} {sum(min(t) for t in seconds.values()):.3f}", flush=True)


def table(rows: list[dict[str, Any]], sizes: list[int]) -> list[str]:
    import numpy as np

    by = {(r["fw"], r["n"], r["mode"]): r for r in rows}
    head = ("| mode | ops | irgrad first call (s) | trace | passes | LLVM | jax.jit first call (s) | "
            "irgrad / jax.jit | CPU s: irgrad, jax.jit, ratio |")
    out = [head, "|---|---|---|---|---|---|---|---|---|"]
    for mode in ("forward", "gradient"):
        for n in sizes:
            mine, peer = by.get(("irgrad", n, mode)), by.get(("jax.jit", n, mode))
            if mine is None:
                continue
            ratio = f"{mine['total'] / peer['total']:.2f}x" if peer else "n/a"
            if peer and not np.allclose(mine["out"], peer["out"], rtol=1e-4, atol=1e-5):
                ratio += " WRONG"
            jx = f"{peer['total']:.3f}" if peer else "n/a"
            cpu = f"{mine['cpu']:.2f}, {peer['cpu']:.2f}, {mine['cpu'] / peer['cpu']:.2f}x" if peer else f"{mine['cpu']:.2f}"
            out.append(f"| {mode} | {n} | {mine['total']:.3f} | {mine['trace']:.3f} | {mine['passes']:.3f} | "
                       f"{mine['llvm']:.3f} | {jx} | {ratio} | {cpu} |")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-ops", type=int, default=SIZES[-1])
    parser.add_argument("--quick", action="store_true", help="up to 1,000 ops, no IR-file figures")
    parser.add_argument("--profile", type=int, metavar="N", help="cProfile the passes on the N-op gradient")
    parser.add_argument("--pass-times", type=int, metavar="N", help="CPU seconds of each pass on the N-op gradient")
    parser.add_argument("--child", choices=["irgrad", "jax"], help=argparse.SUPPRESS)
    parser.add_argument("--sizes", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.profile:
        profile_passes(opts.profile)
        return 0
    if opts.pass_times:
        pass_times(opts.pass_times)
        return 0
    if opts.child:
        sizes = [int(s) for s in opts.sizes.split(",")]
        (measure_irgrad if opts.child == "irgrad" else measure_jax)(sizes)
        return 0
    limit = min(opts.max_ops, 1000) if opts.quick else opts.max_ops
    sizes = [n for n in SIZES if n <= limit]
    print(f"compile time of W7's chain at {', '.join(map(str, sizes))} ops: first call, seconds", flush=True)
    rows = _child("irgrad", sizes)
    try:
        import jax  # noqa: F401
    except ImportError:
        print("  jax is not installed (pip install jax==0.10.2 jaxlib==0.10.2): irgrad alone", flush=True)
    else:
        rows += _child("jax", sizes)
    print("\n".join(table(rows, sizes)), flush=True)
    if not opts.quick:
        with tempfile.TemporaryDirectory(prefix="irgrad-compile-") as work:
            print("\n".join(command_line_figures(work)), flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
