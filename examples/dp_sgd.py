"""Differentially private SGD (Abadi et al. 2016): per-example gradients, each clipped to norm C,
summed, with Gaussian noise of scale sigma * C, averaged. Per-example gradients are
`ig.vmap(ig.grad(loss))`: the autodiff pass differentiates the one-example loss, then batches
the derivative, so the weight gradients come out as one batched outer product per layer instead
of a Python loop over examples. The whole step is one compiled program.

Run: .venv/bin/python examples/dp_sgd.py
"""

import numpy as np

import irgrad as ig
from irgrad import layers, losses

model = layers.MLP([8, 32, 2])
CLIP, SIGMA, LR = 1.0, 0.5, 0.5


def loss_one(params, x, label):
    """The loss of ONE example: x is [8], label a scalar."""
    return losses.softmax_cross_entropy(model.apply(params, x[None, :]), label[None])


def dp_step(params, x, labels, key):
    grads = ig.vmap(ig.grad(loss_one), in_axes=(None, 0, 0))(params, x, labels)  # leaves [B, ...]
    leaves, tree = ig.tree_flatten(grads)
    norms = ig.sqrt(sum(ig.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in leaves))  # [B]
    factor = 1.0 / ig.maximum(norms / CLIP, 1.0)  # clip each example's whole gradient to norm CLIP
    keys = ig.random.split(key, len(leaves))
    batch = x.shape[0]

    def private(g, k):
        clipped = ig.sum(g * factor.reshape((-1,) + (1,) * (g.ndim - 1)), axis=0)
        noise = SIGMA * CLIP * ig.random.normal(k, clipped.shape, clipped.dtype)
        return (clipped + noise) / batch

    noisy = ig.tree_unflatten(tree, [private(g, keys[i]) for i, g in enumerate(leaves)])
    params = ig.tree_map(lambda p, g: p - LR * g, params, noisy)
    mean_loss = ig.mean(ig.vmap(loss_one, in_axes=(None, 0, 0))(params, x, labels))
    return params, mean_loss, ig.max(norms)


rng = np.random.default_rng(0)
x = rng.standard_normal((128, 8)).astype(np.float32)
labels = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
params = model.init(0)

# The vmapped per-example gradients are the gradients of the examples one by one.
per_example = ig.jit(ig.vmap(ig.grad(loss_one), in_axes=(None, 0, 0)))(params, x[:4], labels[:4])
one_by_one = [ig.grad(loss_one)(params, x[i], labels[i]) for i in range(4)]
difference = max(
    float(np.abs(np.asarray(a)[i] - np.asarray(b)).max())
    for i, g in enumerate(one_by_one)
    for a, b in zip(ig.tree_leaves(per_example), ig.tree_leaves(g))
)
print(f"vmap(grad) against one example at a time: largest difference {difference:.1e}")

step = ig.jit(dp_step)
key = ig.random.key(0)
for i in range(40):
    key, sub = ig.random.split(key)
    params, loss, largest = step(params, x, labels, sub)
    if i % 10 == 0 or i == 39:
        print(f"step {i:2d}  loss {float(loss):.4f}  largest per-example gradient norm {float(largest):.2f}")
accuracy = float(np.mean(np.argmax(np.asarray(model.apply(params, x)), axis=1) == labels))
print(f"training accuracy {accuracy:.2f}")
