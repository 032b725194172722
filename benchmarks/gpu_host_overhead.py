"""The GPU backend's host cost per resident W1/W2 training step, on a device that does nothing
(no GPU needed): what the host code (allocations, launches, GEMM calls, views) costs in Python
before the first kernel could run. On the GPU this adds to the device time unless it overlaps
it (benchmarks/gpu_workloads.py measures both there).

Run: .venv/bin/python benchmarks/gpu_host_overhead.py [--profile W1|W2]
"""

from __future__ import annotations

import workloads as wl  # first: thread counts before numpy loads

import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402


class NullDevice:
    """`irgrad.backends.gpu.device.Device` doing nothing: addresses from a counter."""

    def __init__(self) -> None:
        self.next = 1 << 20

    def alloc(self, nbytes: int) -> int:
        self.next += -(-nbytes // 256) * 256
        return self.next

    def free(self, pointer: int) -> None: ...
    def copy_to_device(self, pointer: int, array: Any) -> None: ...
    def copy_to_host(self, array: Any, pointer: int) -> None: ...
    def copy_on_device(self, target: int, source: int, nbytes: int) -> None: ...
    def launch(self, kernel: str, grid: Any, block: Any, args: Any) -> None: ...
    def global_address(self, name: str) -> int:
        return 4096

    def synchronize(self) -> None: ...
    def gemm(self, op: Any, a: Any, b: Any, c: Any) -> None: ...


def main(argv: list[str]) -> None:
    import irgrad as ig
    import mlp
    from irgrad.backends.gpu import compile_program

    profile = argv[1] if len(argv) == 2 and argv[0] == "--profile" else None
    _, _, step = mlp.irgrad_fns(ig)
    for name, spec in (("W1", wl.W1), ("W2", wl.W2)):
        params, x, labels = wl.mlp_data(spec)
        compiled = compile_program(ig.trace(step, params, x, labels), check_ptx=False)
        call = compiled.resident(*ig.tree_leaves([params, x, labels]), device=NullDevice())
        for _ in range(20):
            call.run()
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(200):
                call.run()
            samples.append((time.perf_counter() - start) / 200)
        launches = sum(op.name == "gpu.launch_func" for op in compiled.host.walk())
        print(f"{name}: host {1e3 * min(samples):.3f} ms per step (best of 5 x 200; {launches} launches in the host code)")
        if profile == name:
            import cProfile
            import pstats

            cProfile.runctx("for _ in range(300): call.run()", globals(), {"call": call}, "/tmp/gpu_host.prof")
            pstats.Stats("/tmp/gpu_host.prof").sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main(sys.argv[1:])
