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


def irgrad_timings(fn: Any, args: tuple[Any, ...], **options: Any) -> tuple[wl.Timing, wl.Timing, int, Profile]:
    import irgrad as ig
    from irgrad.backends.gpu import compile_program

    compiled = compile_program(ig.trace(fn, *args), arch=ARCH, **options)
    leaves = ig.tree_leaves(list(args))
    device = compiled.device()
    with device:
        call = compiled.resident(*leaves, device=device)
        try:
            resident = measure(call.run, device.synchronize)
            samples = []
            for _ in range(5):  # the fastest of a few profiled runs
                device.start_profile()
                call.run()
                samples.append(Profile(device.stop_profile()))
            profile = min(samples, key=lambda p: p.device_ms)
        finally:
            call.free()
        whole = measure(lambda: compiled.run(*leaves, device=device), device.synchronize)
    return resident, whole, len(compiled.ptx.kernels), profile


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
    # The points-per-thread sweep (convert-parallel-loops-to-gpu{points-per-thread=k}; the
    # default, 0, picks 4 for loops of 2^20 points or more): k loads in flight per thread.
    sweep = []
    for k in (1, 2, 4, 8):
        _, _, _, run = irgrad_timings(fn, (x,), points_per_thread=k)
        bw = nbytes / (run.device_ms * 1e-3)
        sweep.append(["W4", f"kernel GB/s, {k} points per thread", f"{bw / 1e9:.0f} = {100 * bw / bandwidth:.0f}% of copy ({run.device_ms:.4f} ms)", "", ""])
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
    # The same step with one thread per output of every reduction (no chunks): what the split
    # of few long reductions (the bias gradients) gains on this device.
    _, _, _, unsplit = irgrad_timings(step, (params, x, labels), split_reductions=False)
    return [
        [spec.id, f"resident step ms ({kernels} kernels)", ms(resident), ms(peer), ratio],
        [spec.id, "device ms (kernels + cuBLAS, CUDA events)", f"{profile.device_ms:.3f}", "", ""],
        [spec.id, "device ms without split reductions", f"{unsplit.device_ms:.3f}", "", ""],
        [spec.id, "slowest (kernel ms)", profile.top(), "", ""],
        [spec.id, "call ms (with transfers)", ms(whole), "", ""],
    ]


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
