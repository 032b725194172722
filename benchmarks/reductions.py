"""Reductions and vector math, irgrad against numpy, PyTorch eager and jax.jit (not one of
W1-W7; not part of `make bench`), float32, same inputs, results checked against numpy in
float64 first:

- sum of 4M elements, and of their squares;
- row sums and row maxima of a 1024 x 4096 matrix;
- exp of 4M elements (vector math: glibc's libmvec, irgrad/backends/cpu/veclib.py);
- logsumexp over the rows of 1024 x 4096 (exp inside the reduction: blocked by
  scf-split-reductions so the exp vectorizes);
- irgrad with `fast_math="reassoc,contract"` for the sum (LLVM then reassociates itself).

Irgrad's sums are 8 interleaved partial sums combined pairwise (scf-split-reductions): a fixed
order, no fast-math. Run: .venv/bin/python benchmarks/reductions.py
"""

from __future__ import annotations

import workloads as wl  # first: thread counts before numpy loads

import numpy as np  # noqa: E402

N = 4 * 1024 * 1024
ROWS, COLS = 1024, 4096


def cases(rng: np.random.Generator) -> list[tuple[str, str, np.ndarray]]:
    x = rng.standard_normal(N).astype(np.float32)
    m = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    return [
        ("sum", "sum of 4M", x),
        ("sumsq", "sum of squares, 4M", x),
        ("rowsum", "row sums 1024x4096", m),
        ("rowmax", "row max 1024x4096", m),
        ("exp", "exp, 4M", x),
        ("lse", "logsumexp rows 1024x4096", m),
    ]


def reference(kind: str, a: np.ndarray) -> np.ndarray:
    a = a.astype(np.float64)
    return {
        "sum": lambda: a.sum(),
        "sumsq": lambda: (a * a).sum(),
        "rowsum": lambda: a.sum(axis=1),
        "rowmax": lambda: a.max(axis=1),
        "exp": lambda: np.exp(a),
        "lse": lambda: np.log(np.exp(a).sum(axis=1)),
    }[kind]()


# The cases every array library writes the same way (methods of the array).
COMMON = {
    "sum": lambda a: a.sum(),
    "sumsq": lambda a: (a * a).sum(),
    "rowsum": lambda a: a.sum(axis=1),
}


def frameworks(kind: str):
    """(name, function, sync) per framework installed."""
    import irgrad as ig

    ig_fns = {
        **COMMON,
        "rowmax": lambda a: ig.max(a, axis=1),
        "exp": lambda a: ig.exp(a),
        "lse": lambda a: ig.log(ig.exp(a).sum(axis=1)),
    }
    np_fns = {**COMMON, "rowmax": lambda a: a.max(axis=1), "exp": np.exp, "lse": lambda a: np.log(np.exp(a).sum(axis=1))}
    out = [("irgrad", ig.jit(ig_fns[kind]), None)]
    if kind in ("sum", "sumsq", "lse"):
        out.append(("irgrad fast_math", ig.jit(ig_fns[kind], fast_math="reassoc,contract"), None))
    out.append(("numpy", np_fns[kind], None))
    torch = wl.load_torch()
    if torch is not None:
        t_fns = {
            **COMMON,
            "rowsum": lambda a: a.sum(dim=1),
            "rowmax": lambda a: a.max(dim=1).values,
            "exp": torch.exp,
            "lse": lambda a: torch.logsumexp(a, dim=1),
        }
        out.append(("torch eager", lambda a, f=t_fns[kind]: f(torch.from_numpy(a)).numpy(), None))
    jax = wl.load_jax()
    if jax is not None:
        import jax.numpy as jnp

        j_fns = {**COMMON, "rowmax": lambda a: a.max(axis=1), "exp": jnp.exp, "lse": lambda a: jnp.log(jnp.exp(a).sum(axis=1))}
        out.append(("jax.jit", jax.jit(j_fns[kind]), jax.block_until_ready))
    return out


def main() -> None:
    rng = np.random.default_rng(wl.SEED)
    print(f"{'case':28s} " + "  ".join(f"{n:>16s}" for n in ("irgrad", "fast_math", "numpy", "torch eager", "jax.jit")))
    for kind, title, a in cases(rng):
        want = reference(kind, a)
        cells: dict[str, str] = {}
        for name, fn, sync in frameworks(kind):
            arg = a
            if name == "jax.jit":
                import jax

                arg = jax.device_put(a)
            got = np.asarray(fn(arg), dtype=np.float64)
            scale = max(1.0, float(np.abs(want).max()))
            error = float(np.abs(got - want).max()) / scale
            assert error < 1e-3, f"{title}: {name} differs from numpy float64 by {error:.1e}"
            t = wl.measure(lambda fn=fn, arg=arg: fn(arg), sync=sync).median
            cells[name] = f"{t * 1e3:7.3f} ms {error:.0e}"
        row = [cells.get(n, "") for n in ("irgrad", "irgrad fast_math", "numpy", "torch eager", "jax.jit")]
        print(f"{title:28s} " + "  ".join(f"{c:>16s}" for c in row))
    print("(median time, then max |error| / max(1, max |result|) against numpy in float64)")


if __name__ == "__main__":
    main()
