"""W1, W2 (MLP training step), W5 (value_and_grad / forward) and W6 (cold compile of the W1
step in a fresh process, and the warm start from irgrad's disk cache), irgrad against numpy by
hand, PyTorch eager, torch.compile and jax.jit. See ../shared/benchmarks.md.

Run: .venv/bin/python benchmarks/mlp.py [W1] [W2] [W5] [W6]   (default: all; W5 adds the
     forward and value_and_grad rows of the MLPs named, or of both)
     .venv/bin/python benchmarks/mlp.py --cold FRAMEWORK     (one W6 child process)
"""

from __future__ import annotations

import time

_PROCESS_START = time.perf_counter()

import workloads as wl  # noqa: E402  (first: thread counts before numpy loads)

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------------------------
# The same model in each framework
# ---------------------------------------------------------------------------------------------


def irgrad_fns(ig):
    def loss_fn(params, x, labels):
        h = x
        for i, layer in enumerate(params):
            h = h @ layer["w"] + layer["b"]
            if i < len(params) - 1:
                h = ig.relu(h)
        return ig.losses.softmax_cross_entropy(h, labels)  # as torch's F.cross_entropy

    def step(params, x, labels):
        loss, grads = ig.value_and_grad(loss_fn)(params, x, labels)
        return loss, ig.tree_map(lambda p, g: p - wl.LR * g, params, grads)

    return loss_fn, ig.value_and_grad(loss_fn), step


def torch_fns(torch):
    import torch.nn.functional as F
    from torch.func import grad_and_value

    def loss_fn(params, x, labels):
        h = x
        for i, layer in enumerate(params):
            h = h @ layer["w"] + layer["b"]
            if i < len(params) - 1:
                h = torch.relu(h)
        return F.cross_entropy(h, labels)

    def value_and_grad(params, x, labels):
        grads, loss = grad_and_value(loss_fn)(params, x, labels)
        return loss, grads

    def step(params, x, labels):
        grads, loss = grad_and_value(loss_fn)(params, x, labels)
        return loss, [{k: p[k] - wl.LR * g[k] for k in p} for p, g in zip(params, grads)]

    return loss_fn, value_and_grad, step


def jax_fns(jax):
    import jax.numpy as jnp

    def loss_fn(params, x, labels):
        h = x
        for i, layer in enumerate(params):
            h = h @ layer["w"] + layer["b"]
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    def step(params, x, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
        return loss, jax.tree_util.tree_map(lambda p, g: p - wl.LR * g, params, grads)

    return loss_fn, jax.value_and_grad(loss_fn), step


# ---------------------------------------------------------------------------------------------
# W1, W2, W5 in this process
# ---------------------------------------------------------------------------------------------


def _guarded(framework: str, label: str, check, time_it, scale: float = 1e3) -> dict[str, Any]:
    """Check first (WRONG instead of a time if the result is wrong), then time."""
    try:
        if not wl.checked(framework, label, check()):
            return wl.wrong_cell("result differs from numpy")
        t = time_it()
    except Exception as err:  # a framework that fails is reported, not fatal
        wl.say(f"  {framework} {label}: error {type(err).__name__}: {err}")
        return wl.na_cell(f"error: {type(err).__name__}")
    wl.say(f"  {label} {framework:14s} {t.median * scale:10.3f} (min {t.min * scale:.3f}, "
           f"max {t.max * scale:.3f}) x{t.samples}")
    return wl.time_cell(t, scale)


def run_irgrad(spec, params, x, labels, ref, warmup):
    import irgrad as ig

    loss_fn, vg_fn, step_fn = irgrad_fns(ig)
    fwd = ig.jit(loss_fn, backend="cpu")
    vg = ig.jit(vg_fn, backend="cpu")
    step = ig.jit(step_fn, backend="cpu")
    out = {}
    state = [wl.copy_params(params)]

    def check_step():
        loss, new = step(params, x, labels)
        return wl.check_step(loss, new, params, ref)

    def call_step():
        loss, state[0] = step(state[0], x, labels)
        return loss

    out["step"] = _guarded("irgrad", "step", check_step, lambda: wl.measure(call_step, warmup=warmup))
    out["vg"] = _guarded("irgrad", "v&g ", lambda: wl.check_value_and_grad(*vg(params, x, labels), ref),
                         lambda: wl.measure(lambda: vg(params, x, labels), warmup=warmup))
    out["fwd"] = _guarded("irgrad", "fwd ", lambda: wl.check_value(fwd(params, x, labels), ref[0]),
                          lambda: wl.measure(lambda: fwd(params, x, labels), warmup=warmup))
    return out


def run_numpy(spec, params, x, labels, ref, warmup):
    out = {}
    state = wl.copy_params(params)

    def check_step():
        fresh = wl.copy_params(params)
        loss = wl.np_step(fresh, x, labels)
        return wl.check_step(loss, fresh, params, ref)

    out["step"] = _guarded("numpy", "step", check_step,
                           lambda: wl.measure(lambda: wl.np_step(state, x, labels), warmup=warmup))
    out["vg"] = _guarded("numpy", "v&g ",
                         lambda: wl.check_value_and_grad(*wl.np_value_and_grad(params, x, labels), ref),
                         lambda: wl.measure(lambda: wl.np_value_and_grad(params, x, labels), warmup=warmup))
    out["fwd"] = _guarded("numpy", "fwd ", lambda: wl.check_value(wl.np_loss(params, x, labels), ref[0]),
                          lambda: wl.measure(lambda: wl.np_loss(params, x, labels), warmup=warmup))
    return out


def _torch_inputs(torch, params, x, labels, requires_grad=False):
    tp = [{k: torch.from_numpy(v.copy()).requires_grad_(requires_grad) for k, v in layer.items()}
          for layer in params]
    return tp, torch.from_numpy(x.copy()), torch.from_numpy(labels.astype(np.int64))


def _np_tree(tree):
    return [{k: v.detach().numpy() for k, v in layer.items()} for layer in tree]


def run_torch_eager(spec, params, x, labels, ref, warmup):
    torch = wl.load_torch()
    loss_fn, _, _ = torch_fns(torch)
    out = {}
    tp, tx, ty = _torch_inputs(torch, params, x, labels, requires_grad=True)
    leaves = [p for layer in tp for p in layer.values()]

    def step(tp, leaves):
        loss = loss_fn(tp, tx, ty)
        loss.backward()
        with torch.no_grad():
            for p in leaves:
                p.sub_(p.grad, alpha=wl.LR)
                p.grad = None
        return loss

    def check_step():
        fresh, _, _ = _torch_inputs(torch, params, x, labels, requires_grad=True)
        loss = step(fresh, [p for layer in fresh for p in layer.values()])
        return wl.check_step(loss.item(), _np_tree(fresh), params, ref)

    def vg():
        loss = loss_fn(tp, tx, ty)
        grads = torch.autograd.grad(loss, leaves)
        return loss, grads

    def check_vg():
        loss, grads = vg()
        it = iter(grads)
        tree = [{k: next(it).numpy() for k in layer} for layer in tp]
        return wl.check_value_and_grad(loss.item(), tree, ref)

    def fwd():
        with torch.no_grad():
            return loss_fn(tp, tx, ty)

    out["step"] = _guarded("torch", "step", check_step, lambda: wl.measure(lambda: step(tp, leaves), warmup=warmup))
    fresh, _, _ = _torch_inputs(torch, params, x, labels, requires_grad=True)
    tp[:] = fresh
    leaves[:] = [p for layer in tp for p in layer.values()]
    out["vg"] = _guarded("torch", "v&g ", check_vg, lambda: wl.measure(vg, warmup=warmup))
    out["fwd"] = _guarded("torch", "fwd ", lambda: wl.check_value(fwd().item(), ref[0]),
                          lambda: wl.measure(fwd, warmup=warmup))
    return out


def run_torch_compile(spec, params, x, labels, ref, warmup):
    torch = wl.load_torch()
    loss_fn, vg_fn, step_fn = torch_fns(torch)
    out = {}
    tp, tx, ty = _torch_inputs(torch, params, x, labels)
    step = torch.compile(step_fn)
    vg = torch.compile(vg_fn)
    fwd_compiled = torch.compile(loss_fn)
    state = [tp]

    def check_step():
        loss, new = step(tp, tx, ty)
        return wl.check_step(loss.item(), _np_tree(new), params, ref)

    def call_step():
        loss, state[0] = step(state[0], tx, ty)
        return loss

    def check_vg():
        loss, grads = vg(tp, tx, ty)
        return wl.check_value_and_grad(loss.item(), _np_tree(grads), ref)

    def fwd():
        with torch.no_grad():
            return fwd_compiled(tp, tx, ty)

    out["step"] = _guarded("torch.compile", "step", check_step, lambda: wl.measure(call_step, warmup=warmup))
    out["vg"] = _guarded("torch.compile", "v&g ", check_vg, lambda: wl.measure(lambda: vg(tp, tx, ty), warmup=warmup))
    out["fwd"] = _guarded("torch.compile", "fwd ", lambda: wl.check_value(fwd().item(), ref[0]),
                          lambda: wl.measure(fwd, warmup=warmup))
    return out


def run_jax(spec, params, x, labels, ref, warmup):
    jax = wl.load_jax()
    loss_fn, vg_fn, step_fn = jax_fns(jax)
    out = {}
    jp = jax.device_put(params)
    jx, jy = jax.device_put(x), jax.device_put(labels)
    step, vg, fwd = jax.jit(step_fn), jax.jit(vg_fn), jax.jit(loss_fn)
    sync = jax.block_until_ready
    state = [jp]

    def check_step():
        loss, new = step(jp, jx, jy)
        return wl.check_step(float(loss), jax.tree_util.tree_map(np.asarray, new), params, ref)

    def call_step():
        loss, state[0] = step(state[0], jx, jy)
        return loss, state[0]

    def check_vg():
        loss, grads = vg(jp, jx, jy)
        return wl.check_value_and_grad(float(loss), jax.tree_util.tree_map(np.asarray, grads), ref)

    out["step"] = _guarded("jax.jit", "step", check_step, lambda: wl.measure(call_step, warmup=warmup, sync=sync))
    out["vg"] = _guarded("jax.jit", "v&g ", check_vg,
                         lambda: wl.measure(lambda: vg(jp, jx, jy), warmup=warmup, sync=sync))
    out["fwd"] = _guarded("jax.jit", "fwd ", lambda: wl.check_value(float(fwd(jp, jx, jy)), ref[0]),
                          lambda: wl.measure(lambda: fwd(jp, jx, jy), warmup=warmup, sync=sync))
    return out


RUNNERS = {
    "irgrad": run_irgrad,
    "numpy": run_numpy,
    "torch": run_torch_eager,
    "torch.compile": run_torch_compile,
    "jax.jit": run_jax,
}


def peer_available(framework: str) -> str | None:
    """None if the framework can run, else why not."""
    if framework in ("torch", "torch.compile"):
        try:
            import torch  # noqa: F401
        except ImportError:
            return "torch not installed (make bench installs .[bench])"
    if framework == "jax.jit":
        try:
            import jax  # noqa: F401
        except ImportError:
            return "jax not installed (make bench installs .[bench])"
    return None


def bench_mlp(spec: wl.MLPSpec, with_w5: bool) -> None:
    wl.say(f"\n{spec.id}: MLP {spec.title}: training step (forward + backward + SGD update)")
    params, x, labels = wl.mlp_data(spec)
    ref = wl.mlp_reference(params, x, labels)
    warmup = 3 if spec is wl.W1 else 2
    results: dict[str, dict[str, Any]] = {}
    for framework, _ in wl.FRAMEWORKS:
        if framework not in wl.frameworks_wanted():
            continue
        missing = peer_available(framework)
        if missing:
            results[framework] = {k: wl.na_cell(missing) for k in ("step", "vg", "fwd")}
            continue
        results[framework] = RUNNERS[framework](spec, params, x, labels, ref, warmup)
    cells = {fw: r["step"] for fw, r in results.items()}
    wl.emit_row(spec.id, spec.id, f"MLP step {spec.title}", "ms", cells)
    if not with_w5:
        return
    wl.emit_row(f"W5-{spec.id}-fwd", "W5", f"{spec.id} forward loss", "ms", {fw: r["fwd"] for fw, r in results.items()})
    wl.emit_row(f"W5-{spec.id}-vg", "W5", f"{spec.id} value_and_grad", "ms", {fw: r["vg"] for fw, r in results.items()})
    ratios = {}
    for fw, r in results.items():
        f, g = r["fwd"], r["vg"]
        if "median" in f and "median" in g:
            ratios[fw] = wl.cell(g["median"] / f["median"], None, None)
        else:
            ratios[fw] = wl.na_cell("no time") if "wrong" not in f and "wrong" not in g else wl.wrong_cell("wrong")
    wl.emit_row(f"W5-{spec.id}-ratio", "W5", f"{spec.id} value_and_grad / forward", "ratio", ratios, ratio=False,
                note="ratio of the medians")


# ---------------------------------------------------------------------------------------------
# W6: fresh processes
# ---------------------------------------------------------------------------------------------


def cold_child(framework: str) -> None:
    """In a fresh process: import the framework, build the W1 step, run it once (the cold
    figure), then time warm calls. Prints one JSON line."""
    params, x, labels = wl.mlp_data(wl.W1)
    ref = wl.mlp_reference(params, x, labels)
    t_import0 = time.perf_counter()
    if framework == "irgrad":
        import irgrad as ig

        ig.jit  # noqa: B018  (the API loads on first use: counted as part of the import)
        t_import1 = time.perf_counter()
        step = ig.jit(irgrad_fns(ig)[2], backend="cpu")
        loss, new = step(params, x, labels)
        call = lambda: step(params, x, labels)  # noqa: E731
        sync = None
        result = (float(loss), new)
    elif framework == "jax.jit":
        jax = wl.load_jax()
        t_import1 = time.perf_counter()
        step = jax.jit(jax_fns(jax)[2])
        jp, jx, jy = jax.device_put(params), jax.device_put(x), jax.device_put(labels)
        loss, new = jax.block_until_ready(step(jp, jx, jy))
        call = lambda: step(jp, jx, jy)  # noqa: E731
        sync = jax.block_until_ready
        result = (float(loss), jax.tree_util.tree_map(np.asarray, new))
    elif framework == "torch.compile":
        torch = wl.load_torch()
        t_import1 = time.perf_counter()
        step = torch.compile(torch_fns(torch)[2])
        tp, tx, ty = _torch_inputs(torch, params, x, labels)
        loss, new = step(tp, tx, ty)
        call = lambda: step(tp, tx, ty)  # noqa: E731
        sync = None
        result = (loss.item(), _np_tree(new))
    else:
        raise SystemExit(f"--cold: unknown framework {framework}")
    t_first = time.perf_counter()
    ok, message = wl.check_step(result[0], result[1], params, ref)
    warm = wl.measure(call, warmup=2, sync=sync)
    print("COLD " + json.dumps({
        "framework": framework,
        "since_start": t_first - _PROCESS_START,
        "import": t_import1 - t_import0,
        "first_call": t_first - t_import1,
        "import_and_first_call": t_first - t_import0,
        "warm_median": warm.median, "warm_min": warm.min, "warm_max": warm.max,
        "ok": ok, "check": message,
    }), flush=True)


def _child(framework: str, env_extra: dict[str, str]) -> dict[str, Any] | None:
    env = dict(os.environ, **env_extra)
    wl.wait_quiet()
    others = wl.OthersBusy().start()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--cold", framework],
                          env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - start
    for line in proc.stdout.splitlines():
        if line.startswith("COLD "):
            data = json.loads(line[5:])
            data["process_wall"] = wall
            data["others"] = others.stop()
            return data
    wl.say(f"  {framework}: child failed (exit {proc.returncode}): {proc.stderr.strip()[-800:]}")
    return None


def _cells_of(runs: list[dict[str, Any] | None], field: str, scale: float = 1.0) -> dict[str, Any]:
    runs_ok = [r for r in runs if r is not None]
    if not runs_ok:
        return wl.na_cell("child failed")
    if not all(r["ok"] for r in runs_ok):
        return wl.wrong_cell("; ".join(r["check"] for r in runs_ok))
    values = [r[field] * scale for r in runs_ok]
    return wl.cell(float(np.median(values)), min(values), max(values), n=len(values),
                   others=max(r["others"] for r in runs_ok))


def bench_w6() -> None:
    wl.say("\nW6: the W1 step in fresh processes: cold compile (empty caches), warm call, disk cache")
    wanted = wl.frameworks_wanted()
    reps = int(os.environ.get("BENCH_COLD_REPS", "3"))
    cold: dict[str, list] = {}
    disk: list = []
    tmp = tempfile.mkdtemp(prefix="irgrad-bench-cache-")
    if "irgrad" in wanted:
        cold["irgrad"], disk = [], []
        for k in range(reps):
            cache = os.path.join(tmp, f"irgrad-{k}")  # empty: a cold compile that fills it
            cold["irgrad"].append(_child("irgrad", {"IRGRAD_CACHE_DIR": cache}))
            disk.append(_child("irgrad", {"IRGRAD_CACHE_DIR": cache}))  # filled: a disk hit
    if "jax.jit" in wanted and peer_available("jax.jit") is None:
        # No persistent compilation cache unless configured: every process compiles.
        cold["jax.jit"] = [_child("jax.jit", {}) for _ in range(reps)]
    if "torch.compile" in wanted and peer_available("torch.compile") is None:
        # A fresh Inductor cache: a true cold compile (about 20 s, so once).
        cold["torch.compile"] = [_child("torch.compile", {
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(tmp, "inductor"),
            "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"})]
    for fw, runs in list(cold.items()) + [("irgrad (disk cache)", disk)]:
        for r in runs:
            if r:
                wl.say(f"  {fw:20s} import {r['import']:.3f} s, first call {r['first_call']:.3f} s, "
                       f"process wall {r['process_wall']:.2f} s, warm {r['warm_median'] * 1e3:.3f} ms, "
                       f"check {'OK' if r['ok'] else 'WRONG'} ({r['check']})")
    na = {fw: wl.na_cell("no compile step") for fw in ("numpy", "torch")}
    wl.emit_row("W6-cold-first", "W6", "W1 cold: first call (trace + compile + run), after import", "s",
                {**na, **{fw: _cells_of(runs, "first_call") for fw, runs in cold.items()}},
                note=f"fresh process, empty caches; median of {reps} processes (torch.compile: 1)")
    wl.emit_row("W6-cold-total", "W6", "W1 cold: import + first call", "s",
                {**na, **{fw: _cells_of(runs, "import_and_first_call") for fw, runs in cold.items()}})
    wl.emit_row("W6-warm", "W6", "W1 warm call in that fresh process", "ms",
                {**na, **{fw: _cells_of(runs, "warm_median", 1e3) for fw, runs in cold.items()}})
    if disk:
        wl.emit_row("W6-disk-first", "W6", "W1 irgrad disk cache hit: first call after import", "s",
                    {"irgrad": _cells_of(disk, "first_call")}, ratio=False)
        wl.emit_row("W6-disk-total", "W6", "W1 irgrad disk cache hit: import + first call", "s",
                    {"irgrad": _cells_of(disk, "import_and_first_call")}, ratio=False)
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--cold"]:
        cold_child(argv[1])
        return
    # W1 / W2 pick the MLPs, W5 adds their forward and value_and_grad rows (alone: both MLPs).
    which = set(argv) or {"W1", "W2", "W5", "W6"}
    specs = [s for s in (wl.W1, wl.W2) if s.id in which] or ([wl.W1, wl.W2] if "W5" in which else [])
    for spec in specs:
        bench_mlp(spec, "W5" in which)
    if "W6" in which:
        bench_w6()


if __name__ == "__main__":
    main(sys.argv[1:])
