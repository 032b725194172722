"""Memory left behind by compiling and dropping programs: the RSS growth per compile.

Compiles `--functions` distinct small programs (default 1000: `tanh(x) * k + exp(x)` for k =
0, 1, ...) with `ig.jit(..., backend="cpu")`, calls each once and drops it, after `--warmup`
compiles that fill the caches which are meant to stay (LLVM's, xDSL's, the runtimes'). Prints
the resident set size (/proc/self/statm) before and after and the growth per compile, with the
disk cache off (every compile goes through LLVM) or on (`--disk-cache`, a fresh folder:
every compile also stores its object). Goal (issue 27): under 16 KiB per compile.

Run: .venv/bin/python benchmarks/compile_memory.py [--functions 1000] [--disk-cache]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile


def rss_kib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--disk-cache", action="store_true")
    args = parser.parse_args()
    os.environ["IRGRAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="irgrad-cache-") if args.disk_cache else "off"

    import numpy as np

    import irgrad as ig

    x = np.linspace(-1.0, 1.0, 16, dtype=np.float32)

    def compile_and_drop(k: int) -> None:
        f = ig.jit(lambda v: ig.tanh(v) * float(k) + ig.exp(v), backend="cpu")
        np.asarray(f(x))
        del f

    for k in range(args.warmup):
        compile_and_drop(k)
    gc.collect()
    before = rss_kib()
    for k in range(args.warmup, args.warmup + args.functions):
        compile_and_drop(k)
    gc.collect()
    after = rss_kib()
    per = (after - before) / args.functions
    cache = "on" if args.disk_cache else "off"
    print(f"compile-and-drop x {args.functions} (disk cache {cache}): RSS {before / 1024:.1f} -> "
          f"{after / 1024:.1f} MiB, {per:.1f} KiB per compile (goal < 16)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
