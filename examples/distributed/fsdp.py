"""Fully sharded parameters (FSDP / ZeRO-3) on one process per device, over MPI.

    mpiexec -n 4 .venv/bin/python examples/distributed/fsdp.py

Parameters are stored split by rows over the processes (each holds 1/n of every weight) and
the batch is split too. The per-device program all-gathers each weight just before its use
and reduce-scatters its gradient, so the SGD update runs on the local shard only: no process
ever stores a whole gradient. Process 0 prints the loss beside single-device training and
the collectives one step costs.
"""

import numpy as np

import irgrad as ig
from irgrad.distributed import Mesh, Shard

n, rank = ig.distributed.process_count(), ig.distributed.process_index()
mesh = Mesh((n,), ("fsdp",))


def loss_fn(params, x, y):
    w1, b1, w2, b2 = params
    h = ig.tanh(x @ w1 + b1)
    return ig.mean((h @ w2 + b2 - y) ** 2)


def sgd(params, x, y):
    loss, grads = ig.value_and_grad(loss_fn)(params, x, y)
    return [p - 0.05 * g for p, g in zip(params, grads)], loss


rows = [[Shard(0)]] * 4
step = ig.distributed.jit(sgd, mesh, in_placements=(rows, [Shard(0)], [Shard(0)]), out_placements=(rows, None))

rng = np.random.default_rng(2)
weights = [rng.standard_normal(s) * 0.3 for s in [(8 * n, 8 * n), (8 * n,), (8 * n, 4 * n), (4 * n,)]]
x, y = rng.standard_normal((16 * n, 8 * n)), rng.standard_normal((16 * n, 4 * n))
params = [ig.distributed.from_local(np.split(w, n)[rank], mesh, [Shard(0)]) for w in weights]
batch = slice(rank * 16, (rank + 1) * 16)
x_local, y_local = (ig.distributed.from_local(a[batch], mesh, [Shard(0)]) for a in (x, y))

one = weights
for i in range(10):
    params, loss = step(params, x_local, y_local)
    one, one_loss = ig.jit(sgd)(one, x, y)
    if rank == 0 and i % 3 == 0:
        print(f"step {i}  {n} process(es) {float(loss):.6f}  1 device {float(one_loss):.6f}")
gathered = [p.full_tensor() if hasattr(p, "full_tensor") else p for p in params]
difference = max(float(np.abs(a - b).max()) for a, b in zip(gathered, one))
if rank == 0:
    stored = sum(p.to_local().nbytes if hasattr(p, "to_local") else p.nbytes for p in params)
    print(f"per step, process 0 ran {dict(step.stats[rank].collectives)}")
    print(f"process 0 stores {stored} of {sum(w.nbytes for w in weights)} parameter bytes")
    print(f"largest weight difference from one device after 10 steps: {difference:.1e}")
