"""Data-parallel training on a simulated mesh of 4 devices, beside the same model on one.

The batch is split over the devices (`Shard(0)`), the parameters and optimizer state are
replicated. irgrad traces the step on whole arrays, differentiates it, and `shard-partition`
makes the program each device runs: local matmuls on a quarter of the batch, then one
all-reduce per parameter gradient (DDP's) and one for the loss. The label lookup of the
cross-entropy (take_along_axis, a gather at flat indices row * classes + label) and its
gradient's scatter need every row, so the log-probabilities and the indices are all-gathered:
a few hundred bytes here, against the gradients' kilobytes. The devices are simulated (one
interpreter per device, in threads), so the point is what runs where, not speed.

Run: .venv/bin/python examples/data_parallel.py
"""

import numpy as np

import irgrad as ig
from irgrad import layers, losses, optim
from irgrad.distributed import Mesh, Shard

model = layers.MLP([16, 32, 4])
opt = optim.sgd(0.1)


def train_step(params, opt_state, x, labels):
    loss, grads = ig.value_and_grad(lambda p: losses.softmax_cross_entropy(model.apply(p, x), labels))(params)
    params, opt_state = opt.update(grads, opt_state, params)
    return params, opt_state, loss


mesh = Mesh((4,), ("dp",))
data_parallel = ig.distributed.jit(train_step, mesh, in_placements=(None, None, [Shard(0)], [Shard(0)]))
single = ig.jit(train_step)

rng = np.random.default_rng(0)
x = rng.standard_normal((64, 16))
labels = (x[:, 0] > 0).astype(np.int32) + 2 * (x[:, 1] + x[:, 2] > 0).astype(np.int32)
params = model.init(0)
params = ig.tree_map(lambda p: np.asarray(p, np.float64), params)

print("The program each of the 4 devices runs (16 of the 64 examples each):")
spmd = data_parallel.lower(params, opt.init(params), x, labels).as_text("spmd")
print("\n".join(line for line in spmd.splitlines() if "shard." in line or "func.func" in line))

dp_state = (params, opt.init(params))
one_state = (params, opt.init(params))
for i in range(30):
    *dp_state, dp_loss = data_parallel(*dp_state, x, labels)
    *one_state, one_loss = single(*one_state, x, labels)
    if i % 10 == 0 or i == 29:
        print(f"step {i:2d}  4 devices {float(dp_loss):.6f}  1 device {float(one_loss):.6f}")
difference = max(float(np.abs(a - b).max()) for a, b in zip(ig.tree_leaves(dp_state[0]), ig.tree_leaves(one_state[0])))
stats = data_parallel.stats[0]
print(f"per step, each device ran {dict(stats.collectives)} and sent {stats.bytes_sent} bytes")
print(f"largest parameter difference after 30 steps: {difference:.1e}")
