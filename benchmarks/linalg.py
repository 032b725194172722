"""Linear algebra with its gradient, float64: a Gaussian log-likelihood (LU), and a spectral loss
(eigh and svd).

loss(a, b) = 1/2 b^T solve(a, b) + 1/2 logdet(a) for an SPD a = m m^T + n I (n = 128) and a
right-hand side b of 128 x 16: one Cholesky (or LU) factorization forward, the gradient
-1/2 a^-1 b b^T a^-1 + 1/2 a^-1 in a and a^-1 b in b. irgrad: `ig.jit(ig.value_and_grad(...))`
over `ig.linalg.solve` and `ig.linalg.slogdet` (an `nn.lu` each: LAPACK's getrf on the CPU;
analytic custom_jvp derivatives); numpy: the closed form with LAPACK (`np.linalg`); PyTorch eager and jax.jit: their
own linalg with autodiff. Every result is checked first against numpy's closed form.

Spectral row: loss(a, m) = sum(w * c) + sum(v**2 * d) + sum(s) + sum(u**2 * e) with (w, v) =
eigh(a) for a symmetric 128 x 128 a and (u, s, vt) = svd(m) for a 128 x 64 m (both with distinct
eigen/singular values; the squares make the loss independent of vector signs). Value and gradient
in both. numpy: LAPACK forward and the textbook backward formulas by hand (eigh: V (diag(w̄) +
F o V^T V̄) V^T; svd: PyTorch's svd_backward); irgrad: `nn.eigh` / `nn.svd` (syevd / gesdd on
the CPU) and their derivative rules.

    .venv/bin/python benchmarks/linalg.py
"""

from __future__ import annotations

import workloads as wl  # noqa: E402,I001  (first: thread counts before numpy loads)

import sys  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

N, K = 128, 16


def data(seed: int = wl.SEED) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((N, N)) / np.sqrt(N)
    return m @ m.T + np.eye(N), rng.standard_normal((N, K))


def np_value_and_grad(a: np.ndarray, b: np.ndarray) -> tuple[float, tuple[np.ndarray, np.ndarray]]:
    x = np.linalg.solve(a, b)
    inv = np.linalg.inv(a)
    value = 0.5 * float(np.sum(b * x)) + 0.5 * np.linalg.slogdet(a)[1]
    return value, (-0.5 * x @ x.T + 0.5 * inv.T, x)


def check(got: Any, ref: tuple[float, tuple[np.ndarray, np.ndarray]]) -> tuple[bool, str]:
    value, grads = got
    err_v = abs(float(value) - ref[0]) / abs(ref[0])
    err_g = max(np.linalg.norm(np.asarray(g) - r) / np.linalg.norm(r) for g, r in zip(grads, ref[1]))
    ok = err_v < 1e-10 and err_g < 1e-9
    return ok, f"value rel err {err_v:.1e}, grad rel err {err_g:.1e} (in norm)"


M, P = 128, 64


def spectral_data(seed: int = wl.SEED) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed + 1)
    x = rng.standard_normal((N, N))
    a = (x + x.T) / 2
    m = rng.standard_normal((M, P))
    c, d = rng.standard_normal(N), rng.standard_normal((N, N))
    e = rng.standard_normal((M, P))
    return a, m, c, d, e


def np_spectral(a, m, c, d, e):
    w, v = np.linalg.eigh(a)
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    value = float(np.sum(w * c) + np.sum(v**2 * d) + np.sum(s) + np.sum(u**2 * e))
    # eigh backward: w̄ = c, V̄ = 2 v d
    vbar = 2 * v * d
    f = w[None, :] - w[:, None]
    np.fill_diagonal(f, np.inf)
    ga = v @ (np.diag(c) + (v.T @ vbar) / f) @ v.T
    ga = (ga + ga.T) / 2  # the symmetric part: the gradient of eigh of a symmetrized input
    # svd backward (PyTorch's, m > k): s̄ = 1, Ū = 2 u e, V̄ = 0
    ubar = 2 * u * e
    uhu = u.T @ ubar
    skew = uhu - uhu.T
    e2 = s[None, :] ** 2 - s[:, None] ** 2
    np.fill_diagonal(e2, 1.0)
    j = skew * s[None, :] / e2 + np.eye(len(s))
    gm = (u @ j + ubar / s[None, :] - u @ (u.T @ ubar / s[None, :])) @ vt
    return value, (ga, gm)


def spectral_check(got: Any, ref: Any) -> tuple[bool, str]:
    value, grads = got
    err_v = abs(float(value) - ref[0]) / abs(ref[0])
    err_g = max(np.linalg.norm(np.asarray(g) - r) / np.linalg.norm(r) for g, r in zip(grads, ref[1]))
    ok = err_v < 1e-10 and err_g < 1e-8
    return ok, f"value rel err {err_v:.1e}, grad rel err {err_g:.1e} (in norm)"


def spectral_main(wanted: set[str]) -> None:
    a, m, c, d, e = spectral_data()
    ref = np_spectral(a, m, c, d, e)
    cells: dict[str, dict[str, Any]] = {}
    run = wl.checked_runner(cells, "spectral", lambda out: spectral_check(out, ref))

    def loss_with(lib: Any):
        def loss(a, m):
            w, v = lib.linalg.eigh(a)
            u, s, _ = lib.linalg.svd(m, full_matrices=False)
            return lib.sum(w * c) + lib.sum(v**2 * d) + lib.sum(s) + lib.sum(u**2 * e)

        return loss

    if "irgrad" in wanted:
        import irgrad as ig

        fn = ig.jit(ig.value_and_grad(loss_with(ig), argnums=(0, 1)))
        run("irgrad", lambda: fn(a, m), lambda out: out)
    if "numpy" in wanted:
        run("numpy", lambda: np_spectral(a, m, c, d, e), lambda out: out)
    if "torch" in wanted and (torch := wl.load_torch()) is not None:

        def torch_call():
            ta = torch.from_numpy(a).requires_grad_(True)
            tm = torch.from_numpy(m).requires_grad_(True)
            w, v = torch.linalg.eigh(ta)
            u, s, _ = torch.linalg.svd(tm, full_matrices=False)
            value = (w * torch.from_numpy(c)).sum() + (v**2 * torch.from_numpy(d)).sum() + s.sum() + (u**2 * torch.from_numpy(e)).sum()
            ga, gm = torch.autograd.grad(value, (ta, tm))
            return float(value.detach()), (ga.numpy(), gm.numpy())

        run("torch", torch_call, lambda out: out)
    if "jax.jit" in wanted and (jax := wl.load_jax()) is not None:
        jax.config.update("jax_enable_x64", True)
        jfn = jax.jit(jax.value_and_grad(loss_with(jax.numpy), argnums=(0, 1)))
        run("jax.jit", lambda: jax.block_until_ready(jfn(a, m)),
            lambda out: (float(out[0]), tuple(np.asarray(g) for g in out[1])))
    wl.emit_row("spectral", "spectral", f"eigh {N}x{N} + svd {M}x{P} loss value+grad, f64",
                "ms", cells, peers=["numpy", "torch", "jax.jit"])


def irgrad_fn():
    import irgrad as ig

    def loss(a, b):
        return 0.5 * ig.sum(b * ig.linalg.solve(a, b)) + 0.5 * ig.linalg.slogdet(a)[1]

    return ig.jit(ig.value_and_grad(loss, argnums=(0, 1)))


def main() -> int:
    a, b = data()
    ref = np_value_and_grad(a, b)
    wanted = wl.frameworks_wanted()
    cells: dict[str, dict[str, Any]] = {}

    run = wl.checked_runner(cells, "linalg", lambda out: check(out, ref))

    if "irgrad" in wanted:
        fn = irgrad_fn()
        run("irgrad", lambda: fn(a, b), lambda out: out)
    if "numpy" in wanted:
        run("numpy", lambda: np_value_and_grad(a, b), lambda out: out)
    if "torch" in wanted and (torch := wl.load_torch()) is not None:

        def torch_call():
            ta = torch.from_numpy(a).requires_grad_(True)
            tb = torch.from_numpy(b).requires_grad_(True)
            value = 0.5 * (tb * torch.linalg.solve(ta, tb)).sum() + 0.5 * torch.linalg.slogdet(ta)[1]
            ga, gb = torch.autograd.grad(value, (ta, tb))
            return float(value.detach()), (ga.numpy(), gb.numpy())

        run("torch", torch_call, lambda out: out)
    if "jax.jit" in wanted and (jax := wl.load_jax()) is not None:
        jax.config.update("jax_enable_x64", True)
        jnp = jax.numpy

        def loss(a, b):
            return 0.5 * jnp.sum(b * jnp.linalg.solve(a, b)) + 0.5 * jnp.linalg.slogdet(a)[1]

        fn_j = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        run("jax.jit", lambda: jax.block_until_ready(fn_j(ja, jb)),
            lambda out: (float(out[0]), tuple(np.asarray(g) for g in out[1])))
    wl.emit_row("linalg", "linalg", f"Gaussian log-likelihood value+grad (solve, slogdet), {N}x{N}, f64",
                "ms", cells, peers=["numpy", "torch", "jax.jit"])
    spectral_main(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
