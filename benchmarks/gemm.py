"""W3: SGEMM `C = A @ B`, square n = 512, 1024, 2048, A and B ~ N(0, 1) float32, in GFLOP/s
(2 n^3 / time), irgrad against numpy, PyTorch eager, torch.compile and jax.jit.

Run: .venv/bin/python benchmarks/gemm.py [n ...]
"""

from __future__ import annotations

import workloads as wl  # first: thread counts before numpy loads

import sys  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402


def matmul(a, b):
    return a @ b


def _run(framework: str, n: int, fn, args, ref, to_numpy, sync=None) -> dict[str, Any]:
    try:
        got = to_numpy(fn(*args))
        if not wl.checked(framework, f"W3 n={n}", wl.allclose(got, ref, rtol=1e-4, atol_of_max=1e-4)):
            return wl.wrong_cell("result differs from numpy")
        t = wl.measure(lambda: fn(*args), warmup=2 if n >= 2048 else 3, sync=sync)
    except Exception as err:
        wl.say(f"  {framework} W3 n={n}: error {type(err).__name__}: {err}")
        return wl.na_cell(f"error: {type(err).__name__}")
    flops = 2.0 * n**3
    wl.say(f"  W3 n={n} {framework:14s} {t.median * 1e3:9.3f} ms  {flops / t.median / 1e9:7.1f} GFLOP/s "
           f"(min-max {flops / t.max / 1e9:.1f}-{flops / t.min / 1e9:.1f}) x{t.samples}")
    return wl.rate_cell(t, flops / 1e9)


def bench(n: int) -> None:
    wanted = wl.frameworks_wanted()
    a, b = wl.gemm_data(n)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    cells: dict[str, Any] = {}
    if "irgrad" in wanted:
        import irgrad as ig

        cells["irgrad"] = _run("irgrad", n, ig.jit(matmul, backend="cpu"), (a, b), ref, np.asarray)
    if "numpy" in wanted:
        cells["numpy"] = _run("numpy", n, matmul, (a, b), ref, np.asarray)
    torch = wl.load_torch() if wanted & {"torch", "torch.compile"} else None
    for key, compile_it in (("torch", False), ("torch.compile", True)):
        if key not in wanted:
            continue
        if torch is None:
            cells[key] = wl.na_cell("torch not installed")
            continue
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        fn = torch.compile(matmul) if compile_it else matmul
        cells[key] = _run(key, n, fn, (ta, tb), ref, lambda t: t.numpy())
    if "jax.jit" in wanted:
        jax = wl.load_jax()
        if jax is None:
            cells["jax.jit"] = wl.na_cell("jax not installed")
        else:
            ja, jb = jax.device_put(a), jax.device_put(b)
            cells["jax.jit"] = _run("jax.jit", n, jax.jit(matmul), (ja, jb), ref, np.asarray,
                                    sync=jax.block_until_ready)
    wl.emit_row(f"W3-{n}", "W3", f"SGEMM n={n}", "GFLOP/s", cells, better="higher")


def main(argv: list[str]) -> None:
    wl.say("\nW3: SGEMM C = A @ B (GFLOP/s = 2 n^3 / time)")
    for n in [int(v) for v in argv] or wl.GEMM_SIZES:
        bench(n)


if __name__ == "__main__":
    main(sys.argv[1:])
