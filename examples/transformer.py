"""A one-block causal transformer language model learning a next-token task, compiled with ig.jit.

Token embedding plus learned positions, then LayerNorm -> MultiHeadAttention (causal) -> residual,
LayerNorm -> Linear -> GELU -> Linear -> residual, LayerNorm, and a linear head. Attention is
`ig.einsum` (one batched nn.matmul per product), so the printed IR of the loss is all `nn` ops;
the gradient is the autodiff pass's. The task: sequences that count up modulo the vocabulary
from a random start, so the next token is always predictable from the current one; the loss
goes from log(16) = 2.77 to near 0.

Run: .venv/bin/python examples/transformer.py
"""

import numpy as np

import irgrad as ig
from irgrad import layers, losses, optim

VOCAB, TIME, DIM, HEADS, BATCH = 16, 12, 32, 4, 16

embed = layers.Embedding(VOCAB, DIM)
attention = layers.MultiHeadAttention(DIM, HEADS, causal=True)
norms = [layers.LayerNorm(DIM) for _ in range(3)]
mlp = layers.Sequential([layers.Linear(DIM, 4 * DIM), layers.GELU(), layers.Linear(4 * DIM, DIM)])
head = layers.Linear(DIM, VOCAB)


def init(seed):
    keys = range(seed, seed + 8)
    k = iter(keys)
    return {
        "embed": embed.init(next(k)),
        "position": (np.random.default_rng(next(k)).standard_normal((TIME, DIM)) * 0.1).astype(np.float32),
        "attention": attention.init(next(k)),
        "norms": [n.init(next(k)) for n in norms],
        "mlp": mlp.init(next(k)),
        "head": head.init(next(k)),
    }


def logits_fn(params, tokens):
    h = embed(params["embed"], tokens) + params["position"]
    h = h + attention(params["attention"], norms[0](params["norms"][0], h))
    h = h + mlp(params["mlp"], norms[1](params["norms"][1], h))
    return head(params["head"], norms[2](params["norms"][2], h))


def loss_fn(params, tokens):
    """Next-token cross-entropy: position t predicts token t + 1."""
    logits = logits_fn(params, tokens[:, :-1])
    return losses.softmax_cross_entropy(logits.reshape((-1, VOCAB)), tokens[:, 1:].reshape((-1,)))


opt = optim.adam(3e-3)


def train_step(params, state, tokens):
    loss, grads = ig.value_and_grad(loss_fn)(params, tokens)
    params, state = opt.update(grads, state, params)
    return params, state, loss


def batch(rng):
    start = rng.integers(0, VOCAB, (BATCH, 1))
    return ((start + np.arange(TIME + 1)) % VOCAB).astype(np.int32)


rng = np.random.default_rng(0)
params = init(0)
state = opt.init(params)
print(ig.trace(loss_fn, params, batch(rng)))
step = ig.jit(train_step)
for i in range(150):
    params, state, loss = step(params, state, batch(rng))
    if i % 30 == 0 or i == 149:
        print(f"step {i:3d} loss {float(loss):.4f}")
