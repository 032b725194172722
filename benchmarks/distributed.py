"""W8: W2's data-parallel training step on real processes (1 and 2 ranks, 1 thread each),
irgrad's `distributed.jit` over MPI against PyTorch DDP on the gloo backend, launched the same
way (mpiexec) in the same run. See ../shared/benchmarks.md, "W8".

Per framework and rank count: ms per step (median, p10-p90 of rank 0's steps, parameters fed
back each step; both return the new parameters and the global batch's loss), bytes each rank
sends per step (irgrad: counted at its MPI calls; DDP: its gradient and loss all-reduces in ring
accounting, 2 (R-1)/R x their bytes) and the scaling
efficiency T(1 rank) / (R x T(R ranks)) for the same global batch of 512. irgrad's ranks must
end bit-identical (checked by gathering digests) and its first step must pass W2's check
against the float64 reference.

    .venv/bin/python benchmarks/distributed.py [--ranks 1,2] [--steps 20] [--busy K]
    (--busy K: K other processes spinning during every run, as in "Contention")
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "IRGRAD_NUM_THREADS": "1"}


def _rank() -> tuple[int, int]:
    return int(os.environ.get("PMI_RANK", "0")), int(os.environ.get("PMI_SIZE", "1"))


def _summary(times: list[float]) -> dict[str, float]:
    import numpy as np

    ms = np.asarray(times) * 1e3
    return {"median": float(np.median(ms)), "p10": float(np.percentile(ms, 10)), "p90": float(np.percentile(ms, 90))}


def worker_irgrad(steps: int) -> dict:
    import numpy as np

    import workloads as wl
    import irgrad as ig
    from irgrad.distributed import Mesh, Shard
    from mlp import irgrad_fns

    rank, size = ig.distributed.process_index(), ig.distributed.process_count()
    params, x, labels = wl.mlp_data(wl.W2)
    _, _, step_fn = irgrad_fns(ig)
    mesh = Mesh((size,), ("dp",))
    step = ig.distributed.jit(step_fn, mesh, in_placements=(None, [Shard(0)], [Shard(0)]))
    rows = slice(rank * 512 // size, (rank + 1) * 512 // size)
    x_local = ig.distributed.from_local(x[rows], mesh, [Shard(0)])
    labels_local = ig.distributed.from_local(labels[rows], mesh, [Shard(0)])

    def local(tree):
        return ig.tree_map(lambda a: a.to_local() if hasattr(a, "to_local") else np.asarray(a), tree)

    start = time.perf_counter()
    loss, new = step(params, x_local, labels_local)
    first_call = time.perf_counter() - start
    ok, detail = True, ""
    if rank == 0:
        ok, detail = wl.check_step(float(np.asarray(loss)), local(new), params, wl.mlp_reference(params, x, labels))
    p = local(new)
    for _ in range(3):
        _, p = step(p, x_local, labels_local)
        p = local(p)
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        _, p = step(p, x_local, labels_local)
        p = local(p)
        times.append(time.perf_counter() - t)
    sent = step.stats[rank].bytes_sent if size > 1 else 0
    digest = np.frombuffer(hashlib.sha256(b"".join(a.tobytes() for a in ig.tree_leaves(p))).digest(), np.uint8)
    everyone = ig.distributed.from_local(digest[None], mesh, [Shard(0)]).full_tensor() if size > 1 else digest[None]
    return {**_summary(times), "bytes": sent, "first_call_s": first_call, "check": ok, "detail": detail,
            "bit_identical": bool((everyone == everyone[0]).all()), "collectives": dict(step.stats[rank].collectives) if size > 1 else {}}


def worker_ddp(steps: int, port: int) -> dict:
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    import workloads as wl

    torch.set_num_threads(1)
    rank, size = _rank()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size)
    params, x, labels = wl.mlp_data(wl.W2)
    layers = []
    for i, layer in enumerate(params):
        linear = torch.nn.Linear(*layer["w"].shape)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(np.ascontiguousarray(layer["w"].T)))
            linear.bias.copy_(torch.from_numpy(layer["b"]))
        layers += [linear] + ([torch.nn.ReLU()] if i < len(params) - 1 else [])
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=wl.LR)
    rows = slice(rank * 512 // size, (rank + 1) * 512 // size)
    xs, ys = torch.from_numpy(x[rows]), torch.from_numpy(labels[rows].astype(np.int64))

    def step() -> None:
        # The same outputs as irgrad's step: new parameters and the global batch's loss (each
        # rank's local loss all-reduced, as a training loop that logs it does).
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        total = loss.detach() / size
        dist.all_reduce(total)

    for _ in range(3):
        step()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    dist.destroy_process_group()
    loss_bytes = 4  # the global loss (float32)
    return {**_summary(times), "bytes": 2 * (size - 1) * (param_bytes + loss_bytes) // size}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(framework: str, ranks: int, steps: int) -> dict:
    sys.path.insert(0, ROOT)
    from irgrad.distributed.launch import find_mpiexec

    env = {**os.environ, **THREADS, "PYTHONPATH": os.pathsep.join([ROOT, HERE])}
    cmd = [find_mpiexec(), "-n", str(ranks), sys.executable, os.path.abspath(__file__), "--worker", framework,
           "--steps", str(steps), "--port", str(_free_port())]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    for line in done.stdout.splitlines():
        if line.startswith("W8 "):
            return json.loads(line[3:])
    raise RuntimeError(f"{framework} on {ranks} ranks failed (exit {done.returncode}):\n{done.stderr[-3000:]}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--steps", type=int, default=int(os.environ.get("BENCH_REPS", "20")))
    parser.add_argument("--busy", type=int, default=0)
    parser.add_argument("--worker")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.worker:
        result = worker_irgrad(args.steps) if args.worker == "irgrad" else worker_ddp(args.steps, args.port)
        if _rank()[0] == 0:
            print("W8 " + json.dumps(result), flush=True)
        return 0

    import workloads as wl

    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        rank_counts = [int(r) for r in args.ranks.split(",")]
        results = {(fw, r): launch(fw, r, args.steps) for r in rank_counts for fw in ("irgrad", "ddp")}
    finally:
        for p in busy:
            p.kill()
    where = f"beside {args.busy} busy process(es)" if args.busy else "idle"
    print(f"W8: W2's data-parallel step, global batch 512, float32, 1 thread per rank, {where}")
    print(f"{'ranks':>5} {'irgrad ms (p10-p90)':>24} {'DDP gloo ms (p10-p90)':>24} {'ratio':>6} "
          f"{'irgrad B/rank':>14} {'DDP B/rank':>12}")
    failed = False
    for r in rank_counts:
        a, b = results[("irgrad", r)], results[("ddp", r)]
        failed |= not a["check"] or not a["bit_identical"]
        print(f"{r:>5} {a['median']:10.1f} ({a['p10']:.1f}-{a['p90']:.1f}) {b['median']:12.1f} "
              f"({b['p10']:.1f}-{b['p90']:.1f}) {a['median'] / b['median']:6.2f} {a['bytes']:>14,} {b['bytes']:>12,}")
        print(f"      irgrad: check {'ok' if a['check'] else 'FAIL'} {a['detail']}; bit-identical across ranks: "
              f"{a['bit_identical']}; first call {a['first_call_s']:.1f} s; {a['collectives']}")
        wl.emit_row(f"W8-{r}{'-busy' if args.busy else ''}", "W8", f"W2 data-parallel step, {r} rank(s), {where}",
                    "ms", {"irgrad": wl.cell(a["median"], a["p10"], a["p90"]),
                           "torch": wl.cell(b["median"], b["p10"], b["p90"])},
                    note="torch = DDP on gloo", peers=["torch"])
    for r in rank_counts:
        if r > 1 and 1 in rank_counts:
            eff = {fw: results[(fw, 1)]["median"] / (r * results[(fw, r)]["median"]) for fw in ("irgrad", "ddp")}
            print(f"scaling efficiency T(1) / ({r} x T({r})): irgrad {eff['irgrad']:.2f}, DDP {eff['ddp']:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
