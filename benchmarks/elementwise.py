"""W4: fused elementwise `y = tanh(x) * 0.5 + x * x` on 16,777,216 float32 elements (ms, and
GB/s at 8 bytes per element), and W7: a chain of 100 elementwise ops on a 64-element vector
(microseconds per call), plus the fixed cost of calling a tiny compiled function; irgrad
against numpy, PyTorch eager, torch.compile and jax.jit.

Run: .venv/bin/python benchmarks/elementwise.py [W4] [W7]
"""

from __future__ import annotations

import workloads as wl  # first: thread counts before numpy loads

import sys  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

SMALL_SAMPLE_S = 0.02
"""For microsecond calls each timed sample is the mean of the calls filling about 20 ms."""


def _run(framework: str, label: str, fn, arg, ref, to_numpy, *, sync=None, small: bool,
         rtol: float, atol_of_max: float) -> wl.Timing | dict[str, Any]:
    try:
        if not wl.checked(framework, label, wl.allclose(to_numpy(fn(arg)), ref, rtol, atol_of_max)):
            return wl.wrong_cell("result differs from numpy")
        t = wl.measure(lambda: fn(arg), sync=sync, warmup=3 if not small else 100,
                       sample_s=SMALL_SAMPLE_S if small else 0.0)
    except Exception as err:
        wl.say(f"  {framework} {label}: error {type(err).__name__}: {err}")
        return wl.na_cell(f"error: {type(err).__name__}")
    scale, unit = (1e6, "us") if small else (1e3, "ms")
    wl.say(f"  {label} {framework:14s} {t.median * scale:10.2f} {unit} (min {t.min * scale:.2f}, "
           f"max {t.max * scale:.2f}) x{t.samples}" + (f" of {t.inner} calls" if t.inner > 1 else ""))
    return t


def _frameworks(fn_np, fn_ig, fn_torch, fn_jax_of) -> dict[str, tuple]:
    """framework -> (callable, input converter, output to numpy, sync); None if unavailable."""
    wanted = wl.frameworks_wanted()
    out: dict[str, Any] = {}
    if "irgrad" in wanted:
        import irgrad as ig

        out["irgrad"] = (ig.jit(fn_ig(ig), backend="cpu"), lambda x: x, np.asarray, None)
    if "numpy" in wanted:
        out["numpy"] = (fn_np, lambda x: x, np.asarray, None)
    torch = wl.load_torch() if wanted & {"torch", "torch.compile"} else None
    for key, compile_it in (("torch", False), ("torch.compile", True)):
        if key in wanted:
            if torch is None:
                out[key] = None
                continue
            fn = fn_torch(torch)
            out[key] = (torch.compile(fn) if compile_it else fn, torch.from_numpy, lambda t: t.numpy(), None)
    if "jax.jit" in wanted:
        jax = wl.load_jax()
        out["jax.jit"] = None if jax is None else (
            jax.jit(fn_jax_of(jax)), jax.device_put, np.asarray, jax.block_until_ready)
    return out


def _measure_all(label, fns, x, ref, *, small, rtol, atol_of_max) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for key, entry in fns.items():
        if entry is None:
            results[key] = wl.na_cell("not installed")
            continue
        fn, convert, to_numpy, sync = entry
        results[key] = _run(key, label, fn, convert(x), ref, to_numpy, sync=sync, small=small,
                            rtol=rtol, atol_of_max=atol_of_max)
    return results


def bench_w4() -> None:
    wl.say(f"\nW4: y = tanh(x) * 0.5 + x * x on {wl.W4_SIZE:,} float32 elements")
    x = wl.w4_data()
    x64 = x.astype(np.float64)
    ref = np.tanh(x64) * 0.5 + x64 * x64
    del x64
    fns = _frameworks(
        wl.w4_numpy,
        lambda ig: lambda x: ig.tanh(x) * 0.5 + x * x,
        lambda torch: lambda x: torch.tanh(x) * 0.5 + x * x,
        lambda jax: lambda x: jax.numpy.tanh(x) * 0.5 + x * x,
    )
    results = _measure_all("W4", fns, x, ref, small=False, rtol=1e-5, atol_of_max=1e-6)
    nbytes = wl.W4_SIZE * wl.W4_BYTES_PER_ELEMENT
    ms = {k: wl.time_cell(t, 1e3) if isinstance(t, wl.Timing) else t for k, t in results.items()}
    gbs = {k: wl.rate_cell(t, nbytes / 1e9) if isinstance(t, wl.Timing) else t for k, t in results.items()}
    wl.emit_row("W4-ms", "W4", "tanh(x)*0.5 + x*x, 16M elements", "ms", ms)
    wl.emit_row("W4-GBs", "W4", "the same, at 8 bytes/element", "GB/s", gbs, better="higher")


def bench_w7() -> None:
    wl.say(f"\nW7: {wl.W7_OPS} elementwise ops on a {wl.W7_SIZE}-element vector, forward only")
    x = wl.w7_data()
    ref = wl.w7_numpy(x.astype(np.float64))
    fns = _frameworks(
        wl.w7_numpy,
        lambda ig: lambda x: wl.w7_chain(x, ig.tanh),
        lambda torch: lambda x: wl.w7_chain(x, torch.tanh),
        lambda jax: lambda x: wl.w7_chain(x, jax.numpy.tanh),
    )
    results = _measure_all("W7", fns, x, ref, small=True, rtol=1e-4, atol_of_max=1e-5)
    wl.emit_row("W7", "W7", f"{wl.W7_OPS}-op elementwise chain, {wl.W7_SIZE} elements", "us",
                {k: wl.time_cell(t, 1e6) if isinstance(t, wl.Timing) else t for k, t in results.items()})

    wl.say("\nW7: fixed cost of a call: the compiled tiny function x + 1.0 on the same vector")
    fns = _frameworks(
        lambda x: x + x.dtype.type(1.0),
        lambda ig: lambda x: x + 1.0,
        lambda torch: lambda x: x + 1.0,
        lambda jax: lambda x: x + 1.0,
    )
    results = _measure_all("call", fns, x, x.astype(np.float64) + 1.0, small=True, rtol=1e-6, atol_of_max=1e-7)
    wl.emit_row("W7-call", "W7", "fixed call cost: jitted x + 1.0, 64 elements", "us",
                {k: wl.time_cell(t, 1e6) if isinstance(t, wl.Timing) else t for k, t in results.items()},
                note="numpy and torch eager: one op, no compiled function",
                peers=["torch.compile", "jax.jit"])
    if "irgrad" in fns and fns["irgrad"] is not None:
        irgrad_call_layers(fns["irgrad"][0], x)


def irgrad_call_layers(jitted, x) -> None:
    """Where irgrad's fixed cost goes: each layer of the call path, timed alone."""
    compiled = jitted.lower(x).compile()
    function = compiled._function  # the CompiledFunction (backends/cpu/abi.py)
    slots = function._slots_type(*([0] * (len(function.params) + len(function.results))))
    out = np.empty_like(x)
    raw = function._entry
    from irgrad.backends.cpu import abi

    def raw_call():
        slots[0] = id(x) + abi._DATA
        slots[1] = id(out) + abi._DATA
        raw(slots)

    layers = [
        ("ig.jit(f)(x)  (Jitted.__call__: signature cache + all below)", lambda: jitted(x)),
        ("lower(x).compile()(x)  (Compiled.__call__: pytree + checks + below)", lambda: compiled(x)),
        ("CompiledFunction(x)  (abi.py: checks, out alloc, ctypes slots, call)", lambda: function(x)),
        ("ctypes call of the packed entry alone (no checks, no alloc)", raw_call if abi._DATA else None),
    ]
    wl.say("  irgrad call path, per call:")
    for label, fn in layers:
        if fn is None:
            continue
        t = wl.measure(fn, warmup=100, sample_s=SMALL_SAMPLE_S)
        wl.say(f"    {t.median * 1e6:6.2f} us  {label}")


def main(argv: list[str]) -> None:
    which = set(argv) or {"W4", "W7"}
    if "W4" in which:
        bench_w4()
    if "W7" in which:
        bench_w7()


if __name__ == "__main__":
    main(sys.argv[1:])
