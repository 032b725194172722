"""Causal multi-head self-attention, value and gradient of a loss (forward + backward), float32.

Batch 8, 128 positions, width 256, 8 heads; loss = sum(attention(x) * r) for a fixed random r.
irgrad: `ig.jit(ig.value_and_grad(loss))` over `layers.MultiHeadAttention` (einsum products, one
batched GEMM each); numpy: forward and backward written by hand with einsum; PyTorch eager and
jax.jit: the same layer written in each. Every result (loss and the 8 parameter gradients) is
checked first against numpy in float64. The cold compile (trace, pipeline, LLVM) is printed too.

    .venv/bin/python benchmarks/attention.py
"""

from __future__ import annotations

import workloads as wl  # noqa: E402,I001  (first: thread counts before numpy loads)

import math  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

BATCH, TIME, DIM, HEADS = 8, 128, 256, 8
HEAD = DIM // HEADS
NAMES = ("q", "k", "v", "o")


def data(seed: int = wl.SEED) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    params = {}
    for n in NAMES:
        params[f"w{n}"] = (rng.standard_normal((DIM, DIM)) / math.sqrt(DIM)).astype(np.float32)
        params[f"b{n}"] = (rng.standard_normal(DIM) * 0.1).astype(np.float32)
    x = rng.standard_normal((BATCH, TIME, DIM)).astype(np.float32)
    r = rng.standard_normal((BATCH, TIME, DIM)).astype(np.float32)
    return params, x, r


def np_value_and_grad(p: dict[str, np.ndarray], x: np.ndarray, r: np.ndarray):
    """Forward and backward by hand (the reference, and numpy's timed entry)."""
    b, t, d = x.shape
    x2 = x.reshape(-1, d)
    q, k, v = ((x2 @ p[f"w{n}"] + p[f"b{n}"]).reshape(b, t, HEADS, HEAD) for n in "qkv")
    scale = 1.0 / math.sqrt(HEAD)
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    causal = np.tril(np.ones((t, t), bool))
    s = np.where(causal, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    a = e / e.sum(-1, keepdims=True)
    o = np.einsum("bhqk,bkhd->bqhd", a, v).reshape(-1, d)
    y = o @ p["wo"] + p["bo"]
    loss = np.sum(y * r.reshape(-1, d))
    dy = r.reshape(-1, d)
    g = {"wo": o.T @ dy, "bo": dy.sum(0)}
    do = (dy @ p["wo"].T).reshape(b, t, HEADS, HEAD)
    da = np.einsum("bqhd,bkhd->bhqk", do, v)
    dv = np.einsum("bhqk,bqhd->bkhd", a, do)
    ds = a * (da - np.sum(da * a, -1, keepdims=True)) * scale
    dq = np.einsum("bhqk,bkhd->bqhd", ds, k)
    dk = np.einsum("bhqk,bqhd->bkhd", ds, q)
    for n, dn in (("q", dq), ("k", dk), ("v", dv)):
        dn2 = dn.reshape(-1, d)
        g[f"w{n}"] = x2.T @ dn2
        g[f"b{n}"] = dn2.sum(0)
    return loss, g


def check(got, ref) -> tuple[bool, str]:
    loss, grads = got
    ref_loss, ref_grads = ref
    loss_err = abs(float(loss) - ref_loss) / max(abs(ref_loss), 1e-30)
    # One norm over all the gradients: d loss / d bk is 0 (softmax ignores a shift along the keys),
    # so its own relative error is rounding over zero.
    diff = sum(float(np.sum((np.asarray(grads[k], np.float64) - r) ** 2)) for k, r in ref_grads.items())
    size = sum(float(np.sum(r**2)) for r in ref_grads.values())
    err = math.sqrt(diff / size)
    return loss_err < 1e-4 and err < 1e-4, f"loss rel err {loss_err:.1e}, grad rel err {err:.1e} (in norm, all parameters)"


def irgrad_fn():
    import irgrad as ig
    from irgrad import layers

    mha = layers.MultiHeadAttention(DIM, HEADS, causal=True)

    def loss(params, x, r):
        return ig.sum(mha(params, x) * r)

    return ig.jit(ig.value_and_grad(loss))


def torch_fn(torch):
    def loss(params, x, r):
        b, t, d = x.shape
        q, k, v = ((x @ params[f"w{n}"] + params[f"b{n}"]).view(b, t, HEADS, HEAD) for n in "qkv")
        s = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(HEAD)
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        a = torch.softmax(s.masked_fill(~causal, float("-inf")), dim=-1)
        o = torch.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, t, d)
        return ((o @ params["wo"] + params["bo"]) * r).sum()

    def value_and_grad(params, x, r):
        leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
        value = loss(leaves, x, r)
        grads = torch.autograd.grad(value, list(leaves.values()))
        return value, dict(zip(leaves, grads))

    return value_and_grad


def jax_fn(jax):
    import jax.numpy as jnp

    def loss(params, x, r):
        b, t, d = x.shape
        q, k, v = ((x @ params[f"w{n}"] + params[f"b{n}"]).reshape(b, t, HEADS, HEAD) for n in "qkv")
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(HEAD)
        causal = jnp.tril(jnp.ones((t, t), bool))
        a = jax.nn.softmax(jnp.where(causal, s, -jnp.inf), axis=-1)
        o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, t, d)
        return jnp.sum((o @ params["wo"] + params["bo"]) * r)

    return jax.jit(jax.value_and_grad(loss))


def main() -> int:
    params, x, r = data()
    ref_loss, ref_grads = np_value_and_grad({k: v.astype(np.float64) for k, v in params.items()},
                                            x.astype(np.float64), r.astype(np.float64))
    ref = (float(ref_loss), ref_grads)
    wanted = wl.frameworks_wanted()
    cells: dict[str, dict[str, Any]] = {}

    run = wl.checked_runner(cells, "attention", lambda out: check(out, ref))

    if "irgrad" in wanted:
        fn = irgrad_fn()
        run("irgrad", lambda: fn(params, x, r), lambda out: out)
    if "numpy" in wanted:
        run("numpy", lambda: np_value_and_grad(params, x, r), lambda out: out)
    if "torch" in wanted and (torch := wl.load_torch()) is not None:
        tp = {k: torch.from_numpy(v) for k, v in params.items()}
        tx, tr = torch.from_numpy(x), torch.from_numpy(r)
        fn_t = torch_fn(torch)
        run("torch", lambda: fn_t(tp, tx, tr),
            lambda out: (float(out[0].detach()), {k: v.numpy() for k, v in out[1].items()}))
    if "jax.jit" in wanted and (jax := wl.load_jax()) is not None:
        fn_j = jax_fn(jax)
        jp = {k: jax.numpy.asarray(v) for k, v in params.items()}
        jx, jr = jax.numpy.asarray(x), jax.numpy.asarray(r)
        run("jax.jit", lambda: jax.block_until_ready(fn_j(jp, jx, jr)),
            lambda out: (float(out[0]), {k: np.asarray(v) for k, v in out[1].items()}))
    wl.emit_row("attention", "attention", f"causal MHA value+grad, {BATCH}x{TIME}x{DIM}, {HEADS} heads", "ms",
                cells, peers=["numpy", "torch", "jax.jit"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
