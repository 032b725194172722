"""Memory of a compiled training step called many times: the RSS must stay flat.

The MLP training step of examples/mlp.py (forward, IR-level backward, Adam update) compiled
once with `ig.jit(..., backend="cpu").lower(...).compile()`, warmed up with 2000 calls, then
called N times (default 10^5; `--calls`), feeding each step's parameters and optimizer state
into the next. Prints the resident set size (/proc/self/statm) before, at every tenth of the
run, and after, and exits non-zero if it grew by more than `--slack-mib` (default 5).
tests/unit/backends/cpu/test_cpu_differential_memory.py runs the same check inside the test suite.

Run: .venv/bin/python benchmarks/memory_flat.py [--calls 100000] [--sizes 4,8,3]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

import numpy as np

os.environ.setdefault("IRGRAD_CACHE_DIR", "off")

import irgrad as ig  # noqa: E402
from irgrad import layers, losses, optim  # noqa: E402


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--sizes", default="4,8,3", help="MLP layer sizes")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--slack-mib", type=float, default=5.0)
    args = parser.parse_args()

    sizes = [int(s) for s in args.sizes.split(",")]
    model = layers.MLP(sizes)
    optimizer = optim.adam(1e-2)

    def loss_fn(params, x, labels):
        return losses.softmax_cross_entropy(model.apply(params, x), labels)

    def train_step(params, state, x, labels):
        loss, grads = ig.value_and_grad(loss_fn)(params, x, labels)
        params, state = optimizer.update(grads, state, params)
        return params, state, loss

    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], args.batch).astype(np.int32)
    params = model.init(0)
    state = optimizer.init(params)
    start = time.perf_counter()
    step = ig.jit(train_step, backend="cpu").lower(params, state, x, labels).compile()
    print(f"MLP {sizes}, batch {args.batch}: compiled in {time.perf_counter() - start:.2f} s")

    for _ in range(2000):
        params, state, loss = step(params, state, x, labels)
    gc.collect()
    before = rss_mib()
    samples = []
    start = time.perf_counter()
    for k in range(args.calls):
        params, state, loss = step(params, state, x, labels)
        if k % max(1, args.calls // 10) == 0:
            samples.append(rss_mib() - before)
    seconds = time.perf_counter() - start
    gc.collect()
    grown = rss_mib() - before
    print(f"{args.calls} calls in {seconds:.2f} s ({1e6 * seconds / args.calls:.1f} us/call), final loss {float(loss):.4g}")
    print(f"RSS before {before:.1f} MiB, after {before + grown:.1f} MiB: grew {grown:+.3f} MiB")
    print("growth at each tenth (MiB): " + " ".join(f"{s:+.2f}" for s in samples))
    if grown > args.slack_mib:
        print(f"FAIL: more than {args.slack_mib} MiB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
