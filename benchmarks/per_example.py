"""Per-example gradients of W1's loss (vmap of grad, as DP-SGD needs them), batch 32.

irgrad: `ig.jit(ig.vmap(ig.grad(loss_one), in_axes=(None, 0, 0)))`; JAX: the same with
`jax.jit(jax.vmap(jax.grad(...)))`; PyTorch: `torch.func.vmap(torch.func.grad(...))`; numpy: the
per-example gradients written by hand (one batched backward pass, outer products by einsum).
Every result is checked first against the float64 numpy reference (all 32 x 6 gradient arrays).

    .venv/bin/python benchmarks/per_example.py
"""

from __future__ import annotations

import workloads as wl  # noqa: E402,I001  (first: thread counts before numpy loads)

import sys  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

BATCH = 32


def _np_per_example(params, x, labels):
    """Per-example gradients: a batched forward and backward; weight gradients as outer products."""
    acts, pre = [x], []
    h = x
    for i, layer in enumerate(params):
        z = h @ layer["w"] + layer["b"]
        if i < len(params) - 1:
            pre.append(z)
            h = np.maximum(z, 0)
            acts.append(h)
        else:
            h = z
    shifted = h - h.max(axis=1, keepdims=True)
    p = np.exp(shifted)
    p /= p.sum(axis=1, keepdims=True)
    delta = p
    delta[np.arange(len(labels)), labels] -= 1  # d(-log p_label)/d logits, per example
    grads: list[dict[str, np.ndarray]] = [{} for _ in params]
    for i in range(len(params) - 1, -1, -1):
        grads[i]["w"] = np.einsum("bi,bj->bij", acts[i], delta)
        grads[i]["b"] = delta.copy()
        if i > 0:
            delta = (delta @ params[i]["w"].T) * (pre[i - 1] > 0)
    return grads


def check(got, ref) -> tuple[bool, str]:
    worst = 0.0
    for g_layer, r_layer in zip(got, ref):
        for k in r_layer:
            g, r = np.asarray(g_layer[k], np.float64), r_layer[k]
            if g.shape != r.shape:
                return False, f"shape {g.shape} != {r.shape}"
            worst = max(worst, float(np.linalg.norm(g - r) / max(np.linalg.norm(r), 1e-30)))
    return worst < 1e-4, f"worst normwise rel err {worst:.1e}"


def irgrad_fn():
    import irgrad as ig

    def loss_one(params, x, label):
        h = x
        for i, layer in enumerate(params):
            h = h @ layer["w"] + layer["b"]
            if i < len(params) - 1:
                h = ig.relu(h)
        return -ig.log_softmax(h, axis=-1)[label]

    return ig.jit(ig.vmap(ig.grad(loss_one), in_axes=(None, 0, 0)))


def jax_fn(jax):
    import jax.numpy as jnp

    def loss_one(params, x, label):
        h = x
        for i, layer in enumerate(params):
            h = h @ layer["w"] + layer["b"]
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        return -jax.nn.log_softmax(h, axis=-1)[label]

    return jax.jit(jax.vmap(jax.grad(loss_one), in_axes=(None, 0, 0)))


def torch_fn(torch):
    from torch.func import grad, vmap

    def loss_one(params, x, label):
        h = x
        for i, layer in enumerate(params):
            h = h @ layer["w"] + layer["b"]
            if i < len(params) - 1:
                h = torch.relu(h)
        # Indexing by a tensor calls .item(), which torch.func.vmap rejects: gather instead.
        return -torch.log_softmax(h, dim=-1).gather(0, label.unsqueeze(0)).squeeze(0)

    return vmap(grad(loss_one), in_dims=(None, 0, 0))


def main() -> int:
    params, x, labels = wl.mlp_data(wl.W1)
    x, labels = x[:BATCH], labels[:BATCH]
    ref = _np_per_example(wl.copy_params(params, np.float64), x.astype(np.float64), labels)
    wanted = wl.frameworks_wanted()
    cells: dict[str, dict[str, Any]] = {}

    run = wl.checked_runner(cells, "per-example", lambda out: check(out, ref), cold=False)

    if "irgrad" in wanted:
        fn = irgrad_fn()
        run("irgrad", lambda: fn(params, x, labels), lambda g: g)
    if "numpy" in wanted:
        run("numpy", lambda: _np_per_example(params, x, labels), lambda g: g)
    if "torch" in wanted and (torch := wl.load_torch()) is not None:
        tp = [{k: torch.from_numpy(v) for k, v in layer.items()} for layer in params]
        tx, tl = torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))
        fn_t = torch_fn(torch)
        run("torch", lambda: fn_t(tp, tx, tl), lambda g: [{k: v.numpy() for k, v in layer.items()} for layer in g])
    if "jax.jit" in wanted and (jax := wl.load_jax()) is not None:
        fn_j = jax_fn(jax)
        jp = jax.tree_util.tree_map(jax.numpy.asarray, params)
        jx, jl = jax.numpy.asarray(x), jax.numpy.asarray(labels)
        run("jax.jit", lambda: jax.block_until_ready(fn_j(jp, jx, jl)),
            lambda g: jax.tree_util.tree_map(np.asarray, g))
    wl.emit_row("vmap", "vmap", f"per-example grads, W1 model, batch {BATCH}", "ms", cells,
                peers=["numpy", "torch", "jax.jit"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
