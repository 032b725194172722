"""The machine's limits, quoted beside the benchmark figures: measured copy bandwidth (a 256 MiB
`np.copyto`, counting bytes read and written), numpy's best SGEMM GFLOP/s, which BLAS kernel
threadpoolctl reports, the CPU, and how busy the machine is with other processes.

Run: .venv/bin/python benchmarks/limits.py   (`LIMIT {json}` lines are for run_all.py)
"""

from __future__ import annotations

import workloads as wl  # first: thread counts before numpy loads

import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def emit(name: str, value) -> None:
    print("LIMIT " + json.dumps({"name": name, "value": value}), flush=True)


def cpu_busy(seconds: float = 2.0) -> float:
    """Cores kept busy by everything else while this process sleeps (from /proc/stat)."""
    def sample():
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
        idle = fields[3] + fields[4]
        return sum(fields), idle

    try:
        total0, idle0 = sample()
        time.sleep(seconds)
        total1, idle1 = sample()
    except OSError:
        return float("nan")
    busy = 1.0 - (idle1 - idle0) / max(1, total1 - total0)
    return busy * (os.cpu_count() or 1)


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def copy_bandwidth() -> wl.Timing:
    n = 256 * 1024 * 1024 // 4
    src = np.ones(n, np.float32)
    dst = np.empty_like(src)
    return wl.measure(lambda: np.copyto(dst, src), warmup=2, reps=max(10, wl.REPS // 2))


def sgemm(n: int, reps: int) -> wl.Timing:
    a, b = wl.gemm_data(n)
    return wl.measure(lambda: a @ b, warmup=2, reps=reps)


def main() -> None:
    busy = cpu_busy()
    emit("cpu", f"{cpu_name()}, {os.cpu_count()} logical CPUs")
    emit("busy_other", busy)
    emit("loadavg", os.getloadavg())
    print(f"CPU: {cpu_name()} ({os.cpu_count()} logical CPUs); other processes keep "
          f"{busy:.2f} cores busy; load average {os.getloadavg()[0]:.2f}")
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        emit(var, os.environ.get(var))
        print(f"{var} = {os.environ.get(var, '(unset)')}")
    t = copy_bandwidth()
    nbytes = 2 * 256 * 1024 * 1024
    emit("copy_GBps", {"median": nbytes / t.median / 1e9, "best": nbytes / t.min / 1e9})
    print(f"copy bandwidth (256 MiB np.copyto, read + written): median {nbytes / t.median / 1e9:.1f} GB/s, "
          f"best {nbytes / t.min / 1e9:.1f} GB/s")
    best = {}
    for n, reps in ((1024, 20), (2048, 10), (4096, 3)):
        t = sgemm(n, reps)
        flops = 2.0 * n**3
        best[n] = {"median": flops / t.median / 1e9, "best": flops / t.min / 1e9}
        print(f"numpy SGEMM n={n}: median {best[n]['median']:.1f} GFLOP/s, best {best[n]['best']:.1f} GFLOP/s")
    top = max(best.values(), key=lambda v: v["best"])
    emit("sgemm_GFLOPs", {"best": top["best"], "median": max(v["median"] for v in best.values()),
                          "by_n": best})
    try:
        from threadpoolctl import threadpool_info

        info = [{k: v for k, v in pool.items() if k in
                 ("user_api", "internal_api", "version", "architecture", "num_threads", "threading_layer", "prefix")}
                for pool in threadpool_info()]
    except ImportError:
        info = [{"note": "threadpoolctl not installed"}]
    emit("threadpools", info)
    for pool in info:
        print("threadpoolctl: " + ", ".join(f"{k}={v}" for k, v in pool.items()))
    try:
        from irgrad.backends.cpu.blas import blas_info
        from irgrad.backends.cpu.threads import pool_threads

        runtime = f"GEMMs through {blas_info().describe()}; parallel loops on {pool_threads()} threads"
    except Exception as err:  # irgrad not importable: say so in the table
        runtime = f"unknown ({type(err).__name__}: {err})"
    emit("irgrad_runtime", runtime)
    print("irgrad runtime: " + runtime)


if __name__ == "__main__":
    main()
