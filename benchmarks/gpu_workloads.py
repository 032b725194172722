"""W1, W2 and W4 on this machine's NVIDIA GPU: irgrad's GPU backend, and PyTorch on the same
GPU where a CUDA build of torch is installed. Run by tools/gpu_check.sh after the checks.

For each workload, two irgrad figures:
- "resident": the arguments uploaded once (`GpuCompiled.resident`), each sample one run of
  the host code (all its kernel launches, allocations from the pool) and a synchronize: the
  steady state of a training loop whose parameters live on the GPU, comparable to PyTorch
  with CUDA tensors;
- "call": `GpuCompiled(*arrays)`, with the copies of the arguments in and the results out.
W4 also reports the achieved bandwidth (8 bytes per element) against the device's copy
bandwidth, measured as a device-to-device copy of 256 MiB (counting bytes read and written).
Goals (../shared/benchmarks.md, GPU issue): W4 at 80% or more of copy bandwidth, W2 step
within 2x of PyTorch.

    .venv/bin/python benchmarks/gpu_workloads.py [W1] [W2] [W4]
    .venv/bin/python benchmarks/gpu_workloads.py split-ab   # split reductions, A/B

"device ms" times each kernel and GEMM with CUDA events, a long memset queued ahead so that
the device does not wait for the host between them (profiled_run).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

import workloads as wl  # noqa: I001  (first: thread counts before numpy loads)

import numpy as np

REPS = 20


def measure(fn: Any, sync: Any, reps: int = REPS, warmup: int = 3) -> wl.Timing:
    for _ in range(warmup):
        fn()
        sync()
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        sync()
        samples.append(time.perf_counter() - start)
    return wl.Timing(float(np.median(samples)), min(samples), max(samples), reps)


def ms(t: wl.Timing | None) -> str:
    return "n/a" if t is None else f"{t.median * 1e3:.3f} ({t.min * 1e3:.3f}-{t.max * 1e3:.3f})"


def copy_bandwidth(nbytes: int = 256 << 20) -> float:
    """Bytes per second of a device-to-device copy of `nbytes`, read and written bytes counted:
    the median of REPS copies, each timed by host clock around a synchronize."""
    import pycuda.driver as cuda

    source, target = cuda.mem_alloc(nbytes), cuda.mem_alloc(nbytes)
    t = measure(lambda: cuda.memcpy_dtod(target, source, nbytes), cuda.Context.synchronize)
    source.free()
    target.free()
    return 2 * nbytes / t.median


def copy_bandwidth_events(nbytes: int) -> float:
    """As copy_bandwidth, but each copy timed by CUDA events, as the kernels are: the fair
    reference for a kernel that moves the same bytes (no host clock, no synchronize cost)."""
    import pycuda.driver as cuda

    source, target = cuda.mem_alloc(nbytes), cuda.mem_alloc(nbytes)
    start, end = cuda.Event(), cuda.Event()
    samples = []
    for k in range(REPS + 3):
        start.record()
        cuda.memcpy_dtod_async(target, source, nbytes)
        end.record()
        end.synchronize()
        if k >= 3:
            samples.append(end.time_since(start) * 1e-3)
    source.free()
    target.free()
    return 2 * nbytes / float(np.median(samples))


def torch_cuda() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


ARCH = "sm_80"
"""Set by main to the device's own architecture."""


@dataclass
class Profile:
    """One resident run's device time: per kernel (and cuBLAS) from CUDA events."""

    kernels: dict[str, tuple[int, float]]

    @property
    def device_ms(self) -> float:
        return sum(ms for _, ms in self.kernels.values())

    def top(self, n: int = 4) -> str:
        ranked = sorted(self.kernels.items(), key=lambda kv: -kv[1][1])[:n]
        return ", ".join(f"{name.split('_kernel')[-1] if '_kernel' in name else name} {ms:.3f}" for name, (_, ms) in ranked)


QUEUE_AHEAD_BYTES = 16 << 30
"""A memset of this many bytes (about 5 ms on an H200) goes before each profiled run."""


def profiled_run(device: Any, run: Any, pad: Any) -> Profile:
    """One run of `run` with each kernel and GEMM timed by CUDA events (device time alone).

    Why the memset first: a step of small kernels is host-bound (W1: 43 launches, ~30 us of
    host code each, kernels of a few us), so the device idles between launches, and an event
    pair recorded around a launch would time that wait too. A long memset queued ahead keeps
    the device busy while the host enqueues the whole step, so each pair times its kernel."""
    import pycuda.driver as cuda

    cuda.memset_d32_async(pad, 0, QUEUE_AHEAD_BYTES // 4)
    device.start_profile()
    run()
    return Profile(device.stop_profile())


def irgrad_timings(fn: Any, args: tuple[Any, ...], **options: Any) -> tuple[wl.Timing, wl.Timing, int, Profile]:
    import irgrad as ig
    from irgrad.backends.gpu import compile_program

    compiled = compile_program(ig.trace(fn, *args), arch=ARCH, **options)
    leaves = ig.tree_leaves(list(args))
    device = compiled.device()
    with device:
        import pycuda.driver as cuda

        call = compiled.resident(*leaves, device=device)
        pad = cuda.mem_alloc(QUEUE_AHEAD_BYTES)
        try:
            resident = measure(call.run, device.synchronize)
            # the fastest of a few profiled runs
            profile = min((profiled_run(device, call.run, pad) for _ in range(5)), key=lambda p: p.device_ms)
        finally:
            pad.free()
            call.free()
        whole = measure(lambda: compiled.run(*leaves, device=device), device.synchronize)
    return resident, whole, len(compiled.ptx.kernels), profile


def kernel_profile(fn: Any, args: tuple[Any, ...], **options: Any) -> Profile:
    """The fastest of a few profiled resident runs of `fn` compiled with `options` (device time
    by CUDA events only: cheaper than irgrad_timings, for sweeps)."""
    import irgrad as ig
    from irgrad.backends.gpu import compile_program

    compiled = compile_program(ig.trace(fn, *args), arch=ARCH, **options)
    device = compiled.device()
    with device:
        import pycuda.driver as cuda

        call = compiled.resident(*ig.tree_leaves(list(args)), device=device)
        pad = cuda.mem_alloc(QUEUE_AHEAD_BYTES)
        try:
            call.run()
            device.synchronize()
            samples = [profiled_run(device, call.run, pad) for _ in range(7)]
        finally:
            pad.free()
            call.free()
    return min(samples, key=lambda p: p.device_ms)


def bench_w4(torch: Any, bandwidth: float) -> list[list[str]]:
    import irgrad as ig

    x = wl.w4_data()
    fn = lambda v: ig.tanh(v) * 0.5 + v * v  # noqa: E731
    resident, whole, _, profile = irgrad_timings(fn, (x,))
    nbytes = wl.W4_SIZE * wl.W4_BYTES_PER_ELEMENT
    achieved = nbytes / resident.median
    kernel = nbytes / (profile.device_ms * 1e-3)
    peer = None
    if torch is not None:
        tx = torch.from_numpy(x).cuda()
        peer = measure(lambda: torch.tanh(tx) * 0.5 + tx * tx, torch.cuda.synchronize)
    ratio = "n/a" if peer is None else f"{resident.median / peer.median:.2f}"
    # The sweep of convert-parallel-loops-to-gpu's options (points-per-thread=k: k loads in
    # flight per thread; the default, 0, picks 4 for loops of 2^20 points or more; block-size=b),
    # timed by CUDA events alone; and the same sweep's best for `v * v` (no tanh), which shows
    # what the tanh's arithmetic costs.
    sweep = []
    best: tuple[float, int, int] | None = None
    for b in (128, 256, 512, 1024):
        cells = []
        for k in (1, 2, 4, 8):
            run = kernel_profile(fn, (x,), block_size=b, points_per_thread=k)
            cells.append(f"k={k} {100 * nbytes / (run.device_ms * 1e-3) / bandwidth:.0f}%")
            if best is None or run.device_ms < best[0]:
                best = (run.device_ms, b, k)
        sweep.append(["W4", f"kernel % of copy, block-size={b}", ", ".join(cells), "", ""])
    assert best is not None
    square = kernel_profile(lambda v: v * v, (x,), block_size=best[1], points_per_thread=best[2])
    sweep.append(["W4", f"best: block-size={best[1]} points-per-thread={best[2]}", f"{best[0]:.4f} ms = {100 * nbytes / (best[0] * 1e-3) / bandwidth:.0f}% of copy", "", ""])
    sweep.append(["W4", "v * v (no tanh) at the best options", f"{square.device_ms:.4f} ms = {100 * nbytes / (square.device_ms * 1e-3) / bandwidth:.0f}% of copy", "", ""])
    # The same bytes copied, timed as the kernels are (CUDA events): a 64 MiB copy may not
    # reach the 256 MiB copy's rate, so both references are printed.
    same_size = copy_bandwidth_events(wl.W4_SIZE * 4)
    return [
        ["W4", "resident ms", ms(resident), ms(peer), ratio],
        ["W4", "copy GB/s, W4's bytes (64 MiB device-to-device, CUDA events)", f"{same_size / 1e9:.0f}", "", ""],
        *sweep,
        ["W4", "kernel ms (CUDA events; default points per thread)", f"{profile.device_ms:.4f}", "", ""],
        ["W4", "kernel GB/s (8 B/element)", f"{kernel / 1e9:.0f} = {100 * kernel / bandwidth:.0f}% of copy, {100 * kernel / same_size:.0f}% of the same-size copy", "", ""],
        ["W4", "resident GB/s (host code included)", f"{achieved / 1e9:.0f} = {100 * achieved / bandwidth:.0f}% of copy", "", ""],
        ["W4", "call ms (with transfers)", ms(whole), "", ""],
    ]


def bench_mlp(spec: wl.MLPSpec, torch: Any) -> list[list[str]]:
    import irgrad as ig
    import mlp

    _, _, step = mlp.irgrad_fns(ig)
    params, x, labels = wl.mlp_data(spec)
    resident, whole, kernels, profile = irgrad_timings(step, (params, x, labels))
    peer = None
    if torch is not None:
        _, _, torch_step = mlp.torch_fns(torch)
        tp = [{k: torch.from_numpy(v).cuda() for k, v in layer.items()} for layer in params]
        tx, tl = torch.from_numpy(x).cuda(), torch.from_numpy(labels.astype(np.int64)).cuda()
        peer = measure(lambda: torch_step(tp, tx, tl), torch.cuda.synchronize)
    ratio = "n/a" if peer is None else f"{resident.median / peer.median:.2f}"
    return [
        [spec.id, f"resident step ms ({kernels} kernels)", ms(resident), ms(peer), ratio],
        [spec.id, "device ms (kernels + cuBLAS, CUDA events, queued ahead)", f"{profile.device_ms:.3f}", "", ""],
        [spec.id, "slowest (kernel ms)", profile.top(6), "", ""],
        [spec.id, "call ms (with transfers)", ms(whole), "", ""],
    ]


def forced_split(enabled: bool) -> Any:
    """`compile_program` options for the split-reductions A/B: with `enabled`, every
    qualifying reduction is split, MIN_SPLIT_TRIPS set aside (the threshold under test);
    without, none is."""
    import contextlib

    from irgrad.lowering.gpu import split_reductions as gpu_split_reductions

    @contextlib.contextmanager
    def scope() -> Any:
        saved = gpu_split_reductions.MIN_SPLIT_TRIPS
        gpu_split_reductions.MIN_SPLIT_TRIPS = 0 if enabled else saved
        try:
            yield {"split_reductions": enabled}
        finally:
            gpu_split_reductions.MIN_SPLIT_TRIPS = saved

    return scope()


def split_ab(label: str, fn: Any, args: tuple[Any, ...], rounds: int = 6) -> list[list[str]]:
    """`fn` with every reduction split (MIN_SPLIT_TRIPS set aside) and with none, both resident
    on one device and measured in alternation (rounds of REPS runs each, so that neither
    always comes first): the launches the split adds against the device time it saves. The
    measurement behind MIN_SPLIT_TRIPS (irgrad/lowering/gpu/split_reductions.py)."""
    import irgrad as ig
    from irgrad.backends.gpu import compile_program

    leaves = ig.tree_leaves(list(args))
    variants = {}
    for split in (True, False):
        with forced_split(split) as options:
            variants[split] = compile_program(ig.trace(fn, *args), arch=ARCH, **options)
    devices = {split: compiled.device() for split, compiled in variants.items()}  # one context
    medians: dict[bool, list[float]] = {True: [], False: []}
    device_ms: dict[bool, float] = {}
    with devices[True]:
        import pycuda.driver as cuda

        calls = {split: compiled.resident(*leaves, device=devices[split]) for split, compiled in variants.items()}
        pad = cuda.mem_alloc(QUEUE_AHEAD_BYTES)
        try:
            for r in range(rounds):
                for split in ((True, False) if r % 2 == 0 else (False, True)):
                    medians[split].append(measure(calls[split].run, devices[split].synchronize).median)
            for split in (True, False):
                device_ms[split] = min(profiled_run(devices[split], calls[split].run, pad).device_ms for _ in range(5))
        finally:
            pad.free()
            for call in calls.values():
                call.free()
    rows = []
    for split in (True, False):
        kernels = len(variants[split].ptx.kernels)
        samples = ", ".join(f"{t * 1e3:.3f}" for t in medians[split])
        rows.append([label, f"{'split' if split else 'unsplit'}: {kernels} kernels; device ms {device_ms[split]:.3f}; resident ms per round", samples, "", f"median {np.median(medians[split]) * 1e3:.3f}"])
    return rows


def split_ab_rows() -> list[list[str]]:
    """The split A/B for W1's and W2's steps (bias gradients of 128 and 512 rows), and for
    column sums of 2048 columns around the threshold."""
    import irgrad as ig
    import mlp

    _, _, step = mlp.irgrad_fns(ig)
    rows = []
    for spec in (wl.W1, wl.W2):
        params, x, labels = wl.mlp_data(spec)
        rows += split_ab(spec.id, step, (params, x, labels))
    rng = np.random.default_rng(0)
    for trips in (512, 2048, 8192, 32768):
        a = rng.standard_normal((trips, 2048)).astype(np.float32)
        rows += split_ab(f"column sum {trips}x2048", lambda v: ig.sum(v, axis=0), (a,))
    return rows


def main(argv: list[str]) -> int:
    from irgrad.backends.gpu import cuda_unavailable_reason

    reason = cuda_unavailable_reason()
    if reason is not None:
        print(f"gpu_workloads: cannot run on the GPU: {reason}", file=sys.stderr)
        return 2
    wanted = set(argv) or {"W1", "W2", "W4"}
    global ARCH
    import pycuda.driver as cuda

    cuda.init()
    major, minor = cuda.Device(0).compute_capability()
    ARCH = f"sm_{major}{minor}"
    torch = torch_cuda()
    import pycuda.autoprimaryctx  # noqa: F401  (a current context for the copy bandwidth)

    bandwidth = copy_bandwidth()
    print(f"device copy bandwidth: {bandwidth / 1e9:.0f} GB/s (256 MiB device-to-device)")
    rows: list[list[str]] = []
    if "split-ab" in wanted:  # only the A/B of split reductions: `gpu_workloads.py split-ab`
        rows += split_ab_rows()
        wanted = set()
    if "W1" in wanted:
        rows += bench_mlp(wl.W1, torch)
    if "W2" in wanted:
        rows += bench_mlp(wl.W2, torch)
    if "W4" in wanted:
        rows += bench_w4(torch, bandwidth)
    peer_name = "PyTorch (same GPU)" if torch is not None else "PyTorch: not installed with CUDA"
    print(f"\n| workload | figure | irgrad median (min-max) | {peer_name} | irgrad / PyTorch |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
