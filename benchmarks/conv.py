"""A convolution layer, forward and gradient, irgrad against PyTorch eager and jax.jit (not one
of W1-W7; not part of `make bench`): conv2d of a (32, 16, 28, 28) input with a (32, 16, 3, 3)
weight, padding 1, float32; the gradient of sum(conv(x, w)^2) with respect to both.

Irgrad lowers a conv2d this large as im2col + batched matmul, hence BLAS GEMMs
(irgrad/lowering/nn_to_linalg/linear.py); `IM2COL_MIN_FLOPS` decides.

Run: .venv/bin/python benchmarks/conv.py
"""

from __future__ import annotations

import workloads as wl  # first: thread counts before numpy loads

import numpy as np  # noqa: E402

SHAPE_X = (32, 16, 28, 28)
SHAPE_W = (32, 16, 3, 3)
FLOPS = 2 * 32 * 32 * 28 * 28 * 16 * 9


def main() -> None:
    rng = np.random.default_rng(wl.SEED)
    x = rng.standard_normal(SHAPE_X).astype(np.float32)
    w = (rng.standard_normal(SHAPE_W) * 0.1).astype(np.float32)
    rows: list[tuple[str, float, float]] = []

    import irgrad as ig

    fwd = ig.jit(lambda x, w: ig.conv2d(x, w, padding=(1, 1, 1, 1)), backend="cpu")
    grad = ig.jit(ig.grad(lambda x, w: ig.sum(ig.conv2d(x, w, padding=(1, 1, 1, 1)) ** 2), argnums=(0, 1)),
                  backend="cpu")
    reference = np.asarray(fwd(x, w))
    rows.append(("irgrad", wl.measure(lambda: fwd(x, w)).median, wl.measure(lambda: grad(x, w), reps=20).median))

    torch = wl.load_torch()
    if torch is not None:
        tx, tw = torch.from_numpy(x), torch.from_numpy(w)
        got = torch.nn.functional.conv2d(tx, tw, padding=1).numpy()
        assert np.allclose(got, reference, rtol=1e-4, atol=1e-4 * np.abs(reference).max()), "torch differs"

        def torch_grad():
            a, b = tx.clone().requires_grad_(), tw.clone().requires_grad_()
            (torch.nn.functional.conv2d(a, b, padding=1) ** 2).sum().backward()
            return a.grad, b.grad

        rows.append(("torch eager", wl.measure(lambda: torch.nn.functional.conv2d(tx, tw, padding=1)).median,
                     wl.measure(torch_grad, reps=20).median))
    jax = wl.load_jax()
    if jax is not None:
        import jax.numpy as jnp

        def jconv(a, b):
            return jax.lax.conv_general_dilated(a, b, (1, 1), ((1, 1), (1, 1)))

        jf = jax.jit(jconv)
        jg = jax.jit(jax.grad(lambda a, b: jnp.sum(jconv(a, b) ** 2), argnums=(0, 1)))
        jx, jw = jax.device_put(x), jax.device_put(w)
        assert np.allclose(np.asarray(jf(jx, jw)), reference, rtol=1e-4, atol=1e-4 * np.abs(reference).max())
        rows.append(("jax.jit", wl.measure(lambda: jf(jx, jw), sync=jax.block_until_ready).median,
                     wl.measure(lambda: jg(jx, jw), reps=20, sync=jax.block_until_ready).median))
    print(f"conv2d {SHAPE_X} * {SHAPE_W}, padding 1, float32 ({FLOPS / 1e6:.0f} MFLOP forward)")
    for name, f, g in rows:
        print(f"  {name:12s} forward {f * 1e3:7.2f} ms ({FLOPS / f / 1e9:5.1f} GFLOP/s)   gradient {g * 1e3:7.2f} ms")


if __name__ == "__main__":
    main()
