"""`make bench`: the workloads W1-W7 of ../shared/benchmarks.md, irgrad side by side with numpy
(by hand), PyTorch eager, torch.compile and jax.jit, in ONE table (rows: workloads; columns:
the frameworks, then irgrad / best peer), the machine's limits, the speed goals of issue 5
(met or missed), then the autodiff cost figures (autodiff_cost.py) and the steps beside busy
processes (contention.py, which starts its own process per framework).

Speed goals live here, never in timed tests. Each benchmark script runs once per framework,
each in a process of its own, with 2 threads (workloads.py sets OMP/OPENBLAS/MKL_NUM_THREADS
before numpy loads); every result is checked against numpy before it is timed, and a wrong one
shows as WRONG (and `make bench` fails).

Run:  make bench
      .venv/bin/python benchmarks/run_all.py [--results benchmarks/RESULTS.md] [--only W1,W7]
Env:  BENCH_REPS (timed calls per figure, at least; default 20), BENCH_MIN_TOTAL_S (fast calls
      are sampled until the samples fill this many seconds, up to 300; default 1),
      BENCH_COLD_REPS (W6 processes, 3),
      BENCH_FRAMEWORKS (e.g. irgrad,jax.jit to run only those), BENCH_WAIT_QUIET (seconds to
      wait, before each process and each measurement, for other processes to leave the cores
      idle; default 0). The
      cores other processes kept busy during each script are reported: on a shared 2-core
      machine they inflate the peers' 2-thread figures (OpenBLAS/OpenMP threads stall when a
      core is taken) far more than irgrad's single-threaded code.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from typing import Any

from workloads import busy_jiffies  # one /proc/stat reader for every benchmark script

HERE = os.path.dirname(os.path.abspath(__file__))
BUSY_MARK = 0.25  # as workloads.BUSY_MARK
THREAD_ENV = {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}

# (script, its arguments, the workloads it covers, one process per framework)
SCRIPTS = [
    ("limits.py", [], {"limits"}, False),
    ("mlp.py", ["W1", "W5"], {"W1", "W5"}, True),
    ("mlp.py", ["W2", "W5"], {"W2", "W5"}, True),
    ("mlp.py", ["W6"], {"W6"}, True),
    ("gemm.py", [], {"W3"}, True),
    ("elementwise.py", ["W4"], {"W4"}, True),
    ("elementwise.py", ["W7"], {"W7"}, True),
    ("per_example.py", [], {"vmap"}, True),
    ("attention.py", [], {"attention"}, True),
    ("linalg.py", [], {"linalg"}, True),
    ("autodiff_cost.py", [], {"autodiff"}, False),
    ("distributed_layouts.py", [], {"distributed"}, False),
    ("distributed.py", [], {"W8"}, False),
    ("compile_scaling.py", ["--quick"], {"compile"}, False),
    ("contention.py", ["--steps", "100", "--repeats", "1"], {"contention"}, False),  # its own child per framework
]
"""Each framework is measured in a process of its own: in a shared process one framework's
idle thread pools (OpenMP workers spinning after torch's last op, XLA's pool) take cycles from
the next one's measurement (jax.jit's W7 call measured 14 us after torch in one process, 7.6 us
alone)."""
COLUMNS = [
    ("irgrad", "irgrad"),
    ("numpy", "numpy (by hand)"),
    ("torch", "torch eager"),
    ("torch.compile", "torch.compile"),
    ("jax.jit", "jax.jit"),
]
PEERS = [k for k, _ in COLUMNS if k != "irgrad"]
ORDER = ["W1", "W2", "W3", "W4", "W5", "W6", "W7"]


BUSY: list[tuple[str, float]] = []
"""(script, cores other processes kept busy while it ran): the benchmarks share the machine."""


def _others_busy(start_jiffies: int | None, own_cpu_s: float, elapsed: float) -> float:
    """Cores kept busy by processes other than the benchmark (its children included)."""
    end = busy_jiffies()
    if start_jiffies is None or end is None or elapsed <= 0:
        return float("nan")
    busy_s = (end - start_jiffies) / os.sysconf("SC_CLK_TCK")
    return max(0.0, busy_s - own_cpu_s) / elapsed


def run_script(script: str, args: list[str], rows: list, limits: dict, log: list[str],
               framework: str | None = None) -> int:
    cmd = [sys.executable, os.path.join(HERE, script), *args]
    name = f"{script} {' '.join(args)}".strip() + (f" [{framework}]" if framework else "")
    header = f"\n##### {name}"
    print(header, flush=True)
    log.append(header)
    env = dict(os.environ, **THREAD_ENV)
    if framework:
        env["BENCH_FRAMEWORKS"] = framework
    env.setdefault("PYTHONWARNINGS", "ignore")
    start = time.perf_counter()
    jiffies = busy_jiffies()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=HERE)
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip("\n")
        if line.startswith("ROW "):
            rows.append(json.loads(line[4:]))
            continue
        if line.startswith("LIMIT "):
            item = json.loads(line[6:])
            limits[item["name"]] = item["value"]
            continue
        print(line, flush=True)
        log.append(line)
    _, wait_status, usage = os.wait4(proc.pid, 0)
    status = proc.returncode = os.waitstatus_to_exitcode(wait_status)
    elapsed = time.perf_counter() - start
    others = _others_busy(jiffies, usage.ru_utime + usage.ru_stime, elapsed)
    BUSY.append((name, others))
    done = f"({name}: {elapsed:.0f} s, exit {status}; other processes kept {fmt(others)} cores busy meanwhile)"
    print(done, flush=True)
    log.append(done)
    return status


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------


def merge_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per key, with the cells of every process that emitted it (a figure beats n/a)."""
    merged: dict[str, dict[str, Any]] = {}
    for row in rows:
        into = merged.setdefault(row["key"], {**row, "cells": {}})
        for fw, c in row["cells"].items():
            if fw not in into["cells"] or "na" in into["cells"][fw]:
                into["cells"][fw] = c
    return list(merged.values())


def fmt(v: float) -> str:
    if v != v:
        return "nan"
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a >= 0.01:
        return f"{v:.3f}"
    return f"{v:.2g}"


def fmt_cell(c: dict[str, Any] | None) -> str:
    if not c:
        return ""
    if "wrong" in c:
        return "WRONG"
    if "na" in c:
        return "n/a"
    others = c.get("others")
    mark = "*" if others is not None and others == others and others > BUSY_MARK else ""
    if c.get("min") is None or c["min"] == c["max"] == c["median"]:
        return fmt(c["median"]) + mark
    lo, hi = sorted((c["min"], c["max"]))
    return f"{fmt(c['median'])} ({fmt(lo)}-{fmt(hi)}){mark}"


def ratio_of(row: dict[str, Any]) -> tuple[float, str] | None:
    """irgrad / best peer, as a ratio of times (so > 1 is irgrad slower), and that peer."""
    if not row.get("ratio"):
        return None
    cells = row["cells"]
    mine = cells.get("irgrad", {})
    if "median" not in mine:
        return None
    peers = [(cells[p]["median"], p) for p in row.get("peers", PEERS) if p in cells and "median" in cells[p]]
    if not peers:
        return None
    if row["better"] == "higher":
        best, who = max(peers)
        return best / mine["median"], who
    best, who = min(peers)
    return mine["median"] / best, who


def table(rows: list[dict[str, Any]]) -> list[str]:
    heads = ["id", "workload", "unit", *[t for _, t in COLUMNS], "irgrad / best peer (time)"]
    body = []
    for row in sorted(rows, key=lambda r: ORDER.index(r["id"]) if r["id"] in ORDER else 99):
        r = ratio_of(row)
        unit = row["unit"] + (" (higher is better)" if row["better"] == "higher" else "")
        body.append([row["id"], row["title"], unit, *[fmt_cell(row["cells"].get(k)) for k, _ in COLUMNS],
                     f"{r[0]:.2f}x ({r[1]})" if r else ""])
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(heads)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    return [line(heads), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *[line(b) for b in body]]


def notes(rows: list[dict[str, Any]]) -> list[str]:
    lines = [f"- {r['id']} {r['title']}: {r['note']}" for r in rows if r.get("note")]
    marked = sum(1 for r in rows for c in r["cells"].values()
                 if (c.get("others") or 0) > BUSY_MARK)
    lines.append(f"- *: measured while other processes on this shared machine kept more than {BUSY_MARK} "
                 f"cores busy ({marked} figures); multithreaded peers lose most then")
    return lines


# ---------------------------------------------------------------------------------------------
# Goals (issue 5), as ratios of irgrad's median to the peer's, in the same run
# ---------------------------------------------------------------------------------------------


def goals(rows: list[dict[str, Any]], limits: dict[str, Any]) -> list[str]:
    by_key = {r["key"]: r for r in rows}

    def med(key: str, fw: str) -> float | None:
        c = by_key.get(key, {}).get("cells", {}).get(fw, {})
        return c.get("median")

    out: list[str] = []

    def goal(text: str, met: bool | None, detail: str) -> None:
        mark = "n/a   " if met is None else ("MET   " if met else "MISSED")
        out.append(f"- {mark} {text}: {detail}")

    def time_ratio(key: str, peer: str, limit: float, text: str) -> None:
        a, b = med(key, "irgrad"), med(key, peer)
        if a is None or b is None:
            goal(text, None, "no figure")
            return
        unit = by_key[key]["unit"]
        goal(text, a / b <= limit, f"irgrad {fmt(a)} {unit} / {peer} {fmt(b)} {unit} = {a / b:.2f}x (goal <= {limit}x)")

    time_ratio("W1", "jax.jit", 1.0, "W1 step <= 1.0x jax.jit")
    time_ratio("W1", "torch", 0.6, "W1 step <= 0.6x torch eager")
    if "W2" in by_key:
        r = ratio_of(by_key["W2"])
        goal("W2 step <= 1.1x the best peer", None if r is None else r[0] <= 1.1,
             "no figure" if r is None else f"irgrad {fmt(med('W2', 'irgrad'))} ms = {r[0]:.2f}x {r[1]} "
             f"{fmt(by_key['W2']['cells'][r[1]]['median'])} ms (goal <= 1.1x)")
    for n in (512, 1024, 2048):
        a, b = med(f"W3-{n}", "irgrad"), med(f"W3-{n}", "numpy")
        if a is not None and b is not None:
            goal(f"GEMM n={n} >= 70% of numpy's GFLOP/s", a / b >= 0.7,
                 f"irgrad {fmt(a)} / numpy {fmt(b)} GFLOP/s = {100 * a / b:.0f}%")
    time_ratio("W4-ms", "jax.jit", 0.5, "W4 at least 2x faster than jax.jit")
    gbs = med("W4-GBs", "irgrad")
    copy = (limits.get("copy_GBps") or {}).get("median")
    if gbs and copy:
        out.append(f"  (W4 irgrad moves {fmt(gbs)} GB/s = {100 * gbs / copy:.0f}% of the measured copy "
                   f"bandwidth {fmt(copy)} GB/s)")
    time_ratio("W7", "jax.jit", 1.0, "W7 chain <= 1.0x jax.jit")
    a = med("W7-call", "irgrad")
    goal("fixed cost of a call < 5 us", None if a is None else a < 5.0,
         "no figure" if a is None else f"irgrad {fmt(a)} us (jax.jit {fmt(med('W7-call', 'jax.jit') or float('nan'))} us)")
    for spec in ("W1", "W2"):
        a = med(f"W5-{spec}-ratio", "irgrad")
        goal(f"W5 {spec} value_and_grad / forward <= 2.5", None if a is None else a <= 2.5,
             "no figure" if a is None else f"irgrad {a:.2f} (jax.jit {fmt(med(f'W5-{spec}-ratio', 'jax.jit') or float('nan'))})")
    a = med("W6-cold-first", "irgrad")
    goal("W6 cold compile of the W1 step < 3 s", None if a is None else a < 3.0,
         "no figure" if a is None else f"irgrad first call {fmt(a)} s after import; import + first call "
         f"{fmt(med('W6-cold-total', 'irgrad') or float('nan'))} s (jax.jit {fmt(med('W6-cold-first', 'jax.jit') or float('nan'))} s, "
         f"torch.compile {fmt(med('W6-cold-first', 'torch.compile') or float('nan'))} s)")
    a = med("W6-disk-first", "irgrad")
    goal("W6 disk-cache hit: first step within 0.2 s of importing irgrad", None if a is None else a <= 0.2,
         "no figure" if a is None else f"{fmt(a)} s after `import irgrad` returned; "
         f"{fmt(med('W6-disk-total', 'irgrad') or float('nan'))} s counting the import itself")
    return out


def limits_lines(limits: dict[str, Any]) -> list[str]:
    lines = []
    if "cpu" in limits:
        lines.append(f"- CPU: {limits['cpu']}; 2 threads per framework")
    if "copy_GBps" in limits:
        c = limits["copy_GBps"]
        lines.append(f"- copy bandwidth (256 MiB np.copyto, read + written bytes): median {fmt(c['median'])} GB/s, best {fmt(c['best'])} GB/s")
    if "sgemm_GFLOPs" in limits:
        s = limits["sgemm_GFLOPs"]
        by_n = ", ".join(f"n={n}: {fmt(v['median'])}" for n, v in s["by_n"].items())
        lines.append(f"- numpy SGEMM: best {fmt(s['best'])} GFLOP/s (medians {by_n})")
    for pool in limits.get("threadpools", []):
        lines.append("- threadpoolctl: " + ", ".join(f"{k}={v}" for k, v in pool.items()))
    if "irgrad_runtime" in limits:
        lines.append(f"- irgrad runtime: {limits['irgrad_runtime']}")
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if var in limits:
            lines.append(f"- {var}: {limits[var] if limits[var] is not None else 'unset'}")
    return lines


def contention_line(busy_start: float | None, busy_end: float) -> str:
    quiet = sum(1 for _, b in BUSY if b < 0.1)
    busier = ", ".join(f"{name}: {fmt(b)}" for name, b in BUSY if not b < 0.1)
    return (f"- other processes on this machine kept {fmt(busy_start) if busy_start is not None else '?'} cores busy "
            f"just before the run and {fmt(busy_end)} just after; on average under 0.1 cores during {quiet} of the "
            f"{len(BUSY)} benchmark processes" + (f", more during {busier}" if busier else "") +
            f" (of {os.cpu_count()} cores; every framework runs 2 threads, so a busy core inflates the peers' "
            "multithreaded figures most)")


def wait_quiet(max_wait: float, log: list[str], threshold: float = 0.1) -> None:
    """Wait (up to `max_wait` s) until other processes keep under `threshold` cores busy."""
    if max_wait <= 0:
        return
    start = time.perf_counter()
    busy = busy_cores(2.0)
    while busy >= threshold and time.perf_counter() - start < max_wait:
        busy = busy_cores(2.0)
    line = f"(waited {time.perf_counter() - start:.0f} s for a quiet machine: others at {fmt(busy)} cores)"
    print(line, flush=True)
    log.append(line)


def busy_cores(seconds: float = 2.0) -> float:
    sys.path.insert(0, HERE)
    from limits import cpu_busy

    return cpu_busy(seconds)


KEPT_MARK = "<!-- kept: the sections below are written by hand and not regenerated -->"


def _kept_sections(path: str) -> str:
    """What follows KEPT_MARK in the results file (figures of other benchmarks, dated, with
    their commands), carried over when the file is rewritten."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return ""
    at = text.find(KEPT_MARK)
    return "" if at < 0 else "\n" + text[at:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", help="also write the table, limits and log to this Markdown file")
    parser.add_argument("--only", help="comma-separated workloads (W1..W7, vmap, attention, linalg, limits, autodiff, distributed, W8, compile, contention)")
    opts = parser.parse_args()
    only = set(opts.only.split(",")) if opts.only else None
    wait_s = float(os.environ.get("BENCH_WAIT_QUIET", "0"))
    started = datetime.datetime.now().astimezone()
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    limits: dict[str, Any] = {}
    log: list[str] = []
    status = 0
    wanted = os.environ.get("BENCH_FRAMEWORKS")
    frameworks = [k for k, _ in COLUMNS if not wanted or k in wanted.split(",")]
    for script, args, covers, per_framework in SCRIPTS:
        if only is not None and not covers & only:
            continue
        for framework in frameworks if per_framework else [None]:
            wait_quiet(wait_s, log)
            status |= run_script(script, args, rows, limits, log, framework) != 0
    rows = merge_rows(rows)
    busy_end = busy_cores()
    elapsed = time.perf_counter() - t0

    out = ["", "=" * 100, "irgrad vs peers: median (min-max) of >= 20 timed calls (more for fast calls: at "
           "least 1 s of samples); float32, seed 0, 2 threads, one process per framework", ""]
    out += table(rows)
    out += ["", "Notes:", *notes(rows)]
    out += ["", "Machine limits:", *limits_lines(limits)]
    busy_start = limits.get("busy_other")
    out.append(contention_line(busy_start, busy_end))
    out += ["", "Goals (issue 5):", *goals(rows, limits)]
    wrong = [r["title"] for r in rows if "wrong" in r["cells"].get("irgrad", {})]
    if wrong:
        out.append(f"\nWRONG irgrad results: {', '.join(wrong)}")
    out.append(f"\n(total {elapsed / 60:.1f} min)")
    print("\n".join(out), flush=True)

    if opts.results:
        settings = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(os.environ.items())
                            if k.startswith("BENCH_") and k not in ("BENCH_COMMAND", "BENCH_ARGS"))
        command = os.environ.get("BENCH_COMMAND") or " ".join(
            shlex.quote(a) for a in [os.path.relpath(sys.executable), *sys.argv])
        command = f"{settings} {command}".strip()
        md = [
            "# Benchmark results",
            "",
            f"- date: {started:%Y-%m-%d %H:%M %Z}",
            f"- command: `{command}`",
            f"- python {platform.python_version()}; total {elapsed / 60:.1f} min",
            "",
            "Workloads: ../shared/benchmarks.md (W1-W7). Cells: median (min-max) of >= 20 timed calls (fast "
            "calls: as many as fill 1 s, up to 300) in the unit of the row, each framework in a process of its own; the last column is irgrad's time over the best peer's (above 1: irgrad is slower). "
            "Every result was checked against numpy (float64) before timing; a wrong one would read WRONG.",
            "",
            *table(rows),
            "",
            *notes(rows),
            "",
            "## Machine limits",
            "",
            *limits_lines(limits),
            contention_line(busy_start, busy_end),
            "",
            "## Goals (issue 5)",
            "",
            *goals(rows, limits),
            "",
            "## Full log",
            "",
            "```",
            *log,
            "```",
            "",
        ]
        kept = _kept_sections(opts.results)
        with open(opts.results, "w") as f:
            f.write("\n".join(md) + kept)
        print(f"wrote {opts.results}")
    return 1 if status or wrong else 0


if __name__ == "__main__":
    sys.exit(main())
