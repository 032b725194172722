"""Data-parallel training (PyTorch DDP's shape) on one process per device, over MPI.

    mpiexec -n 2 .venv/bin/python examples/distributed/data_parallel.py
    .venv/bin/python -m irgrad.distributed.launch -n 4 examples/distributed/data_parallel.py
    .venv/bin/python examples/distributed/data_parallel.py        # a 1-process job

Each process holds only its rows of the batch (`from_local`); parameters and optimizer state
are replicated. The per-device program all-reduces each gradient (in a fixed order), so every
process ends with bit-identical parameters, which the script checks by gathering each
process's digest. Process 0 prints the loss beside single-device training on the whole batch.
"""

import hashlib

import numpy as np

import irgrad as ig
from irgrad import layers, losses, optim
from irgrad.distributed import Mesh, Shard

n, rank = ig.distributed.process_count(), ig.distributed.process_index()
model = layers.MLP([16, 32, 4])
opt = optim.sgd(0.1)


def train_step(params, opt_state, x, labels):
    loss, grads = ig.value_and_grad(lambda p: losses.softmax_cross_entropy(model.apply(p, x), labels))(params)
    params, opt_state = opt.update(grads, opt_state, params)
    return params, opt_state, loss


mesh = Mesh((n,), ("dp",))
step = ig.distributed.jit(train_step, mesh, in_placements=(None, None, [Shard(0)], [Shard(0)]))
single = ig.jit(train_step)

rng = np.random.default_rng(0)
x = rng.standard_normal((64, 16))
labels = (x[:, 0] > 0).astype(np.int32) + 2 * (x[:, 1] + x[:, 2] > 0).astype(np.int32)
mine = slice(rank * 64 // n, (rank + 1) * 64 // n)  # what this process would load from disk
x_local = ig.distributed.from_local(x[mine], mesh, [Shard(0)])
labels_local = ig.distributed.from_local(labels[mine], mesh, [Shard(0)])

params = ig.tree_map(lambda p: np.asarray(p, np.float64), model.init(0))
state, one = (params, opt.init(params)), (params, opt.init(params))
for i in range(20):
    *state, loss = step(*state, x_local, labels_local)
    state = ig.tree_map(lambda a: a.to_local(), state) if n > 1 else state
    *one, one_loss = single(*one, x, labels)
    if rank == 0 and (i % 5 == 0 or i == 19):
        print(f"step {i:2d}  {n} process(es) {float(loss):.6f}  1 device {float(one_loss):.6f}")

digest = np.frombuffer(hashlib.sha256(b"".join(np.asarray(p).tobytes() for p in ig.tree_leaves(state[0]))).digest(), np.uint8)
everyone = ig.distributed.from_local(digest[None], mesh, [Shard(0)]).full_tensor()
difference = max(float(np.abs(np.asarray(a) - b).max()) for a, b in zip(ig.tree_leaves(state[0]), ig.tree_leaves(one[0])))
if rank == 0:
    stats = step.stats[rank]
    print(f"per step, process 0 ran {dict(stats.collectives)} and sent {stats.bytes_sent} bytes")
    print(f"parameters bit-identical on all {n} processes: {bool((everyone == everyone[0]).all())}")
    print(f"largest parameter difference from one device after 20 steps: {difference:.1e}")
