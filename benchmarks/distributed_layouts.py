"""W1's training step partitioned over a simulated mesh of 4 devices: what each device holds
and sends, checked against the single-device step and against the communication the
placements imply.

Layouts (ig.distributed.jit; the step is W1's: forward, backward, SGD):
- dp:    the batch split over 4 devices, parameters replicated (DDP);
- tp:    Megatron over 4 devices: layer 1's w and b split by columns, layer 2's w by rows;
- dp+tp: a 2x2 mesh, the batch over "dp", layers 1-2 as tp over "tp".

Printed per layout: the loss and gradient error against the float64 reference (the same check
as benchmarks/mlp.py), the collectives one device runs per step, the bytes it sends (ring
accounting, NCCL's), the parameter bytes it holds, and for dp the bytes DDP's all-reduce of
every gradient must send: 2 (n-1)/n x the parameter bytes. The devices are simulated (one
interpreter per device, in threads), so no time is printed: it would measure the simulator.

    .venv/bin/python benchmarks/distributed_layouts.py
"""

from __future__ import annotations

import workloads as wl  # noqa: E402,I001  (first: thread counts before numpy loads)

import sys  # noqa: E402

import numpy as np  # noqa: E402

import irgrad as ig  # noqa: E402
from irgrad.backends.interpreter import collectives  # noqa: E402
from irgrad.distributed import Mesh, Replicate, Shard  # noqa: E402

from mlp import irgrad_fns  # noqa: E402


def layouts() -> dict[str, tuple[Mesh, tuple]]:
    one = Mesh((4,), ("dp",))
    tp = Mesh((4,), ("tp",))
    both = Mesh((2, 2), ("dp", "tp"))
    R, S0, S1 = Replicate(), Shard(0), Shard(1)
    return {
        "dp": (one, (None, [S0], [S0])),
        "tp": (
            tp,
            ([{"w": [S1], "b": [S0]}, {"w": [S0], "b": [R]}, {"w": [R], "b": [R]}], None, None),
        ),
        "dp+tp": (
            both,
            (
                [{"w": [R, S1], "b": [R, S0]}, {"w": [R, S0], "b": [R, R]}, {"w": [R, R], "b": [R, R]}],
                [S0, R],
                [S0, R],
            ),
        ),
    }


def local_param_bytes(step, args) -> int:
    """Bytes of the parameters one device holds: the local argument types of the program."""
    from xdsl.dialects.builtin import TensorType
    from xdsl.dialects.func import FuncOp

    from irgrad.ir_numpy import numpy_dtype

    lowered = step.lower(*args)
    fn = next(op for op in lowered.modules["spmd"].ops if isinstance(op, FuncOp) and op.sym_name.data == lowered.entry)
    n_params = len(ig.tree_leaves(args[0]))
    total = 0
    for t in fn.function_type.inputs.data[:n_params]:
        assert isinstance(t, TensorType)
        total += int(np.prod(t.get_shape())) * numpy_dtype(t.get_element_type()).itemsize
    return total


def main() -> int:
    spec = wl.W1
    params, x, labels = wl.mlp_data(spec)
    ref = wl.mlp_reference(params, x, labels)
    _, value_and_grad, _ = irgrad_fns(ig)
    param_bytes = sum(p.nbytes for p in ig.tree_leaves(params))
    print(f"W1 ({spec.title}), float32, value and gradient on a simulated mesh of 4 devices")
    print(f"single device: parameters {param_bytes / 1e6:.3f} MB")
    print(f"{'layout':8} {'check':6} {'collectives per device':40} {'sent/device':>12} {'params/device':>14}")
    failed = False
    for name, (mesh, placements) in layouts().items():
        step = ig.distributed.jit(value_and_grad, mesh, in_placements=placements)
        loss, grads = step(params, x, labels)
        ok, detail = wl.check_value_and_grad(loss, grads, ref)
        failed |= not ok
        stats = step.stats
        counts = {k: v for k, v in sorted(stats[0].collectives.items())}
        sent = max(s.bytes_sent for s in stats)
        held = local_param_bytes(step, (params, x, labels))
        kinds = ", ".join(f"{v} {k}" for k, v in counts.items())
        print(f"{name:8} {'ok' if ok else 'FAIL':6} {kinds:40} {sent / 1e6:9.3f} MB {held / 1e6:11.3f} MB")
        print(f"{'':8} {detail}")
        if name == "dp":
            ddp = collectives.bytes_sent("all_reduce", param_bytes, 4)
            print(f"{'':8} DDP's gradient all-reduce alone sends {ddp / 1e6:.3f} MB per device "
                  f"(2 (n-1)/n x {param_bytes / 1e6:.3f} MB);")
            print(f"{'':8} the rest all-reduces the loss and gathers the log-probabilities and labels for the")
            print(f"{'':8} cross-entropy's take_along_axis (a gather at flat indices row * classes + label)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
