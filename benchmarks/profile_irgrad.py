"""Where irgrad's time goes on W1, W2, W4 and W7 (not part of `make bench`; a few minutes).

1. W1/W2: each GEMM and transpose of the training step, compiled alone by irgrad, against numpy
   with 1 and 2 BLAS threads; then the whole step, value_and_grad and forward.
2. W4: the compiled kernel writing into a reused output vs the call (which allocates a fresh
   64 MiB output, page faults included), against np.copyto.
3. W6: the cold compile of the W1 step by stage (`Compiled.stats()`).
4. W7: the per-call layers (also printed by elementwise.py).

Run: .venv/bin/python benchmarks/profile_irgrad.py [W1] [W2] [W4] [W6] [W7]
"""

from __future__ import annotations

import workloads as wl  # first: thread counts before numpy loads

import os  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

os.environ.setdefault("IRGRAD_CACHE_DIR", "off")

import irgrad as ig  # noqa: E402


def ops(spec: wl.MLPSpec) -> None:
    from threadpoolctl import threadpool_limits

    import mlp

    b, sizes = spec.batch, spec.sizes
    rng = np.random.default_rng(0)

    def r(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    cases = []
    for k, (i, o) in enumerate(zip(sizes[:-1], sizes[1:])):
        cases.append((f"forward  h @ W        ({b}x{i}) @ ({i}x{o})", lambda h, w: h @ w, (r(b, i), r(i, o))))
        cases.append((f"backward h.T @ d -> dW  ({i}x{b}) @ ({b}x{o})", lambda h, d: h.T @ d, (r(b, i), r(b, o))))
        if k > 0:
            cases.append((f"backward d @ W.T -> dh  ({b}x{o}) @ ({o}x{i})", lambda d, w: d @ w.T, (r(b, o), r(i, o))))
    reps = 5 if spec is wl.W2 else 20
    print(f"\n{spec.id} ({spec.title}): each GEMM alone (ms; irgrad's includes its call and output)")
    total = 0.0
    for name, fn, args in cases:
        jitted = ig.jit(fn, backend="cpu")
        jitted(*args)
        t_ig = wl.measure(lambda: jitted(*args), reps=reps, warmup=1).median
        with threadpool_limits(1):
            t1 = wl.measure(lambda: fn(*args), reps=reps, warmup=1).median
        t2 = wl.measure(lambda: fn(*args), reps=reps, warmup=1).median
        total += t_ig
        print(f"  {name:48s} irgrad {t_ig * 1e3:8.2f}   numpy 1 thread {t1 * 1e3:7.2f}   "
              f"2 threads {t2 * 1e3:7.2f}   irgrad / numpy-1-thread {t_ig / t1:4.1f}x")
    for i, o in zip(sizes[:-1], sizes[1:]):
        w = r(i, o)
        jitted = ig.jit(lambda w: ig.transpose(w) + 0.0, backend="cpu")
        jitted(w)
        t_ig = wl.measure(lambda: jitted(w), reps=reps, warmup=1).median
        t_np = wl.measure(lambda: np.ascontiguousarray(w.T), reps=reps, warmup=1).median
        total += t_ig
        print(f"  transpose {i}x{o} (materialized){'':20s} irgrad {t_ig * 1e3:8.2f}   numpy {t_np * 1e3:7.2f}")
    params, x, labels = wl.mlp_data(spec)
    loss_fn, vg_fn, step_fn = mlp.irgrad_fns(ig)
    for name, fn in (("step", step_fn), ("value_and_grad", vg_fn), ("forward", loss_fn)):
        jitted = ig.jit(fn, backend="cpu")
        jitted(params, x, labels)
        t = wl.measure(lambda: jitted(params, x, labels), reps=reps, warmup=1).median
        print(f"  whole {name:15s} {t * 1e3:8.2f} ms")
    print(f"  (sum of the GEMMs and transposes alone: {total * 1e3:.2f} ms)")


def w4() -> None:
    from irgrad.backends.cpu import abi

    x = wl.w4_data()
    y = np.empty_like(x)
    compiled = ig.jit(lambda x: ig.tanh(x) * 0.5 + x * x, backend="cpu").lower(x).compile()
    function = compiled._function
    slots = function._slots_type(id(x) + abi._DATA, id(y) + abi._DATA)
    nbytes = 2 * x.nbytes
    print("\nW4: 16M elements, 128 MiB moved per call")
    for label, fn in (
        ("irgrad call (fresh 64 MiB output each call)", lambda: compiled(x)),
        ("irgrad kernel into a reused output", lambda: function._entry(slots)),
        ("np.empty + first touch of 64 MiB (page faults)", lambda: np.empty_like(x).fill(0)),
        ("np.copyto (the bandwidth limit)", lambda: np.copyto(y, x)),
    ):
        t = wl.measure(fn, reps=10, warmup=2).median
        print(f"  {label:50s} {t * 1e3:7.2f} ms  {nbytes / t / 1e9:6.1f} GB/s")


def w6() -> None:
    import mlp

    params, x, labels = wl.mlp_data(wl.W1)
    compiled = ig.jit(mlp.irgrad_fns(ig)[2], backend="cpu").lower(params, x, labels).compile()
    stats = compiled.stats()
    print(f"\nW6: cold compile of the W1 step by stage (total {sum(stats.values()):.2f} s)")
    for stage, seconds in stats.items():
        print(f"  {stage:12s} {seconds:6.3f} s")


def w7() -> None:
    import elementwise

    x = wl.w7_data()
    print("\nW7: irgrad's call path for a tiny function (x + 1.0, 64 elements)")
    elementwise.irgrad_call_layers(ig.jit(lambda x: x + 1.0, backend="cpu"), x)
    jitted = ig.jit(lambda x: wl.w7_chain(x, ig.tanh), backend="cpu")
    jitted(x)
    t = wl.measure(lambda: jitted(x), warmup=100, sample_s=0.02)
    print(f"  W7 chain through ig.jit: {t.median * 1e6:.2f} us")


def main(argv: list[str]) -> None:
    which = set(argv) or {"W1", "W2", "W4", "W6", "W7"}
    if "W1" in which:
        ops(wl.W1)
    if "W2" in which:
        ops(wl.W2)
    if "W4" in which:
        w4()
    if "W6" in which:
        w6()
    if "W7" in which:
        w7()


if __name__ == "__main__":
    main(sys.argv[1:])
