"""An MLP classifier with irgrad.layers: trace it, print the IR, take a gradient step.

Run: .venv/bin/python examples/mlp.py
"""

import numpy as np

import irgrad as ig
from irgrad import layers, losses, optim

model = layers.MLP([4, 16, 3])
params = model.init(0)
opt = optim.adam(1e-2)
state = opt.init(params)


def loss_fn(params, x, labels):
    return losses.softmax_cross_entropy(model.apply(params, x), labels)


def train_step(params, state, x, labels):
    loss, grads = ig.value_and_grad(loss_fn)(params, x, labels)
    params, state = opt.update(grads, state, params)
    return params, state, loss


rng = np.random.default_rng(0)
x = rng.standard_normal((32, 4)).astype(np.float32)
labels = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0).astype(np.int32)

print(ig.trace(loss_fn, params, x, labels))
step = ig.jit(train_step)
for i in range(50):
    params, state, loss = step(params, state, x, labels)
    if i % 10 == 0:
        print(f"step {i:2d} loss {float(loss):.4f}")
