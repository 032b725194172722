"""An Elman RNN written with ig.fori_loop: h_t = tanh(h_{t-1} W + x_t U), loss on the last h;
then the same cell with ig.scan, a loss on every step's output.

The loop traces to one scf.for (no unrolling); xs[i] with the traced counter i is a dynamic slice.
ig.scan is the same scf.for with the per-step outputs written into a stacked result.
Run: .venv/bin/python examples/rnn.py
"""

import numpy as np

import irgrad as ig


def rnn_loss(params, xs, target):
    def step(i, h):
        return ig.tanh(h @ params["w"] + xs[i] @ params["u"])

    h0 = ig.zeros((xs.shape[1], params["w"].shape[0]))
    h = ig.fori_loop(0, xs.shape[0], step, h0)
    return ig.mean((h - target) ** 2)


rng = np.random.default_rng(0)
params = {
    "w": (rng.standard_normal((8, 8)) * 0.3).astype(np.float32),
    "u": (rng.standard_normal((3, 8)) * 0.3).astype(np.float32),
}
xs = rng.standard_normal((5, 2, 3)).astype(np.float32)  # (time, batch, features)
target = rng.standard_normal((2, 8)).astype(np.float32)

print(ig.trace(rnn_loss, params, xs, target))
print("loss", float(ig.jit(rnn_loss, backend="cpu")(params, xs, target)))
# Reverse mode through the loop: the carried h of every step is saved on a tape (one tensor
# with a leading time dimension) and the reverse loop walks it backwards; see docs/autodiff.md.
grads = ig.jit(ig.grad(rnn_loss), backend="cpu")(params, xs, target)
print("gradient norms", ig.tree_map(lambda g: float(np.linalg.norm(g)), grads))


def rnn_sequence_loss(params, xs, targets):
    """Every step's h against its target: ig.scan stacks the per-step outputs (time first)."""

    def step(h, x):
        h = ig.tanh(h @ params["w"] + x @ params["u"])
        return h, h

    h0 = ig.zeros((xs.shape[1], params["w"].shape[0]))
    _, hs = ig.scan(step, h0, xs)
    return ig.mean((hs - targets) ** 2)


targets = rng.standard_normal((5, 2, 8)).astype(np.float32)
print("sequence loss", float(ig.jit(rnn_sequence_loss)(params, xs, targets)))
grads = ig.jit(ig.grad(rnn_sequence_loss))(params, xs, targets)
print("sequence gradient norms", ig.tree_map(lambda g: float(np.linalg.norm(g)), grads))
