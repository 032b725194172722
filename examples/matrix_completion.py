"""Matrix completion with a nuclear-norm penalty: recover a low-rank matrix from half of its
entries by gradient descent on

    loss(X) = 1/2 |mask * (X - M)|^2 + lam * sum_i sqrt(s_i(X)^2 + eps)

where s_i are X's singular values (a smoothed nuclear norm, the convex stand-in for rank). The
gradient of the penalty goes through `nn.svd`'s derivative rule (U diag(s / sqrt(s^2 + eps)) V^T)
at the IR level; on the CPU the SVD itself is LAPACK's gesdd. The whole step is one compiled
program; the script prints its IR (look for nn.svd), then the error on the entries it never saw.

Run: .venv/bin/python examples/matrix_completion.py
"""

import numpy as np

import irgrad as ig

rng = np.random.default_rng(0)
m, n, rank = 30, 20, 3
truth = rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n))
mask = (rng.random((m, n)) < 0.5).astype(np.float64)
LAM, EPS, LR = 0.2, 1e-2, 0.8


def loss(x):
    s = ig.linalg.svd(x, compute_uv=False)
    return 0.5 * ig.sum((mask * (x - truth)) ** 2) + LAM * ig.sum(ig.sqrt(s * s + EPS))


@ig.jit
def step(x):
    value, g = ig.value_and_grad(loss)(x)
    return x - LR * g, value


print(ig.trace(ig.value_and_grad(loss), np.zeros((m, n))))
unseen = 1.0 - mask


def unseen_error(x):
    return np.linalg.norm(unseen * (x - truth)) / np.linalg.norm(unseen * truth)


x = mask * truth  # the observed entries, zeros elsewhere
print(f"start: relative error on the unseen entries {unseen_error(x):.3f}")
for k in range(1, 1001):
    x, value = step(x)
    if k % 250 == 0:
        print(f"step {k}: loss {float(value):.4f}, relative error on the unseen entries {unseen_error(np.asarray(x)):.3f}")
s = np.linalg.svd(np.asarray(x), compute_uv=False)
print(f"singular values 1-5: {' '.join(f'{v:.2f}' for v in s[:5])} (the truth has rank {rank})")
