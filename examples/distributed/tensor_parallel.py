"""Tensor-parallel training (Megatron's MLP split) on one process per device, over MPI.

    mpiexec -n 2 .venv/bin/python examples/distributed/tensor_parallel.py

The first layer is split by columns and the second by rows over the processes: each process
stores only its slice of the weights (`from_local`), computes its share of the hidden layer
and never gathers it; the one all-reduce per step is the second layer's partial output. The
gradients come out split like the weights, so the SGD update stays local. Process 0 prints the
loss beside single-device training and the largest difference of the gathered weights.
"""

import numpy as np

import irgrad as ig
from irgrad.distributed import Mesh, Replicate, Shard

n, rank = ig.distributed.process_count(), ig.distributed.process_index()
mesh = Mesh((n,), ("tp",))


def loss_fn(params, x, y):
    w1, b1, w2, b2 = params
    h = ig.tanh(x @ w1 + b1)
    return ig.mean((h @ w2 + b2 - y) ** 2)


def sgd(params, x, y):
    loss, grads = ig.value_and_grad(loss_fn)(params, x, y)
    return [p - 0.05 * g for p, g in zip(params, grads)], loss


split = [[Shard(1)], [Shard(0)], [Shard(0)], [Replicate()]]  # w1 columns, b1, w2 rows, b2 whole
step = ig.distributed.jit(sgd, mesh, in_placements=(split, None, None), out_placements=(split, None))

rng = np.random.default_rng(1)
hidden = 8 * n
weights = [rng.standard_normal(s) * 0.3 for s in [(12, hidden), (hidden,), (hidden, 3), (3,)]]
x, y = rng.standard_normal((32, 12)), rng.standard_normal((32, 3))
local = [np.split(w, n, axis=p[0].dim)[rank] if isinstance(p[0], Shard) else w for w, p in zip(weights, split)]
params = [ig.distributed.from_local(w, mesh, p) for w, p in zip(local, split)]

one = weights
for i in range(10):
    params, loss = step(params, x, y)
    one, one_loss = ig.jit(sgd)(one, x, y)
    if rank == 0 and i % 3 == 0:
        print(f"step {i}  {n} process(es) {float(loss):.6f}  1 device {float(one_loss):.6f}")
gathered = [p.full_tensor() if hasattr(p, "full_tensor") else p for p in params]
difference = max(float(np.abs(a - b).max()) for a, b in zip(gathered, one))
if rank == 0:
    print(f"per step, process 0 ran {dict(step.stats[rank].collectives)}")
    print(f"largest weight difference from one device after 10 steps: {difference:.1e}")
