"""FFTs, irgrad against numpy.fft (pocketfft), PyTorch eager (torch.fft) and jax.jit (XLA's
ducc FFT) on the same inputs, complex64/float32, results checked against numpy in complex128
first (not one of W1-W7; not part of `make bench`):

- a batch of 1-D transforms: 64 x 1024 (a power of two: 64 x 16 Cooley-Tukey), 64 x 1000
  (mixed radix 50 x 20), 64 x 1009 (a prime: Bluestein at 2048);
- rfft of 64 x 4096 reals and irfft back;
- fft2 of 256 x 256;
- the gradient of sum(|rfft(x)|^2 * w) on 64 x 1024 (the backward transform).

irgrad's transform is matmuls by small DFT matrices (irgrad/tracing/fft_algorithm.py), so the
figure to read is the ratio to pocketfft: this is where a library call would win.
Run: .venv/bin/python benchmarks/fft.py
"""

from __future__ import annotations

import workloads as wl  # first: thread counts before numpy loads

import numpy as np  # noqa: E402


def cases(rng: np.random.Generator) -> list[tuple[str, str, np.ndarray]]:
    def c64(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)

    return [
        ("fft", "fft 64x1024", c64(64, 1024)),
        ("fft", "fft 64x1000", c64(64, 1000)),
        ("fft", "fft 64x1009 (prime)", c64(64, 1009)),
        ("rfft", "rfft 64x4096", rng.standard_normal((64, 4096)).astype(np.float32)),
        ("irfft", "irfft 64x2049 -> 4096", c64(64, 2049)),
        ("fft2", "fft2 256x256", c64(256, 256)),
        ("grad", "grad sum|rfft|^2 64x1024", rng.standard_normal((64, 1024)).astype(np.float32)),
    ]


def _weights(n: int) -> np.ndarray:
    return np.linspace(0.5, 1.5, n // 2 + 1).astype(np.float32)


def reference(kind: str, a: np.ndarray) -> np.ndarray:
    wide = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    if kind == "grad":
        # d/dx sum_k w_k |X_k|^2 with X = F x (F: the rfft rows) is 2 Re(F^H (w X)), and F^H y
        # is n times the inverse DFT of y zero-padded to n.
        n = a.shape[-1]
        weighted = _weights(n).astype(np.float64) * np.fft.rfft(wide)
        padded = np.concatenate([weighted, np.zeros((*a.shape[:-1], n - weighted.shape[-1]))], axis=-1)
        return 2 * np.real(n * np.fft.ifft(padded))
    return {"fft": np.fft.fft, "rfft": np.fft.rfft, "irfft": lambda x: np.fft.irfft(x, n=4096), "fft2": np.fft.fft2}[kind](wide)


def frameworks(kind: str, n: int):
    """(name, function, sync) per framework installed."""
    import irgrad as ig

    w = _weights(n)

    def ig_loss(x):
        s = ig.fft.rfft(x)
        return ig.sum(ig.real(s * ig.conj(s)) * w)

    ig_fns = {
        "fft": ig.fft.fft,
        "rfft": ig.fft.rfft,
        "irfft": lambda x: ig.fft.irfft(x, n=4096),
        "fft2": ig.fft.fft2,
        "grad": ig.grad(ig_loss),
    }
    out = [("irgrad", ig.jit(ig_fns[kind]), None)]
    if kind != "grad":
        np_fns = {"fft": np.fft.fft, "rfft": np.fft.rfft, "irfft": lambda x: np.fft.irfft(x, n=4096), "fft2": np.fft.fft2}
        out.append(("numpy", np_fns[kind], None))
    torch = wl.load_torch()
    if torch is not None:
        tw = torch.from_numpy(w)

        def t_grad(x):
            t = torch.from_numpy(x).requires_grad_(True)
            s = torch.fft.rfft(t)
            (torch.real(s * torch.conj(s)) * tw).sum().backward()
            return t.grad.numpy()

        t_fns = {
            "fft": lambda x: torch.fft.fft(torch.from_numpy(x)).numpy(),
            "rfft": lambda x: torch.fft.rfft(torch.from_numpy(x)).numpy(),
            "irfft": lambda x: torch.fft.irfft(torch.from_numpy(x), n=4096).numpy(),
            "fft2": lambda x: torch.fft.fft2(torch.from_numpy(x)).numpy(),
            "grad": t_grad,
        }
        out.append(("torch eager", t_fns[kind], None))
    jax = wl.load_jax()
    if jax is not None:
        import jax.numpy as jnp

        def j_loss(x):
            s = jnp.fft.rfft(x)
            return jnp.sum(jnp.real(s * jnp.conj(s)) * w)

        j_fns = {
            "fft": jnp.fft.fft,
            "rfft": jnp.fft.rfft,
            "irfft": lambda x: jnp.fft.irfft(x, n=4096),
            "fft2": jnp.fft.fft2,
            "grad": jax.grad(j_loss),
        }
        out.append(("jax.jit", jax.jit(j_fns[kind]), jax.block_until_ready))
    return out


NAMES = ("irgrad", "numpy", "torch eager", "jax.jit")


def main() -> None:
    rng = np.random.default_rng(wl.SEED)
    print(f"{'case':28s} " + "  ".join(f"{n:>18s}" for n in NAMES) + "  irgrad/best")
    for kind, title, a in cases(rng):
        want = reference(kind, a)
        cells: dict[str, str] = {}
        times: dict[str, float] = {}
        for name, fn, sync in frameworks(kind, a.shape[-1]):
            arg = a
            if name == "jax.jit":
                import jax

                arg = jax.device_put(a)
            got = np.asarray(fn(arg))
            scale = max(1.0, float(np.abs(want).max()))
            error = float(np.abs(got - want).max()) / scale
            assert error < 1e-4, f"{title}: {name} differs from numpy (complex128) by {error:.1e}"
            t = wl.measure(lambda fn=fn, arg=arg: fn(arg), sync=sync).median
            times[name] = t
            cells[name] = f"{t * 1e3:8.3f} ms {error:.0e}"
        peers = [times[n] for n in times if n != "irgrad"]
        ratio = f"{times['irgrad'] / min(peers):6.2f}x" if peers else ""
        print(f"{title:28s} " + "  ".join(f"{cells.get(n, ''):>18s}" for n in NAMES) + f"  {ratio}")
    print("(median time, then max |error| / max(1, max |result|) against numpy in complex128)")


if __name__ == "__main__":
    main()
