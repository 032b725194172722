"""Training steps on an idle machine and beside 1 and 2 busy processes (issue 26): irgrad
(ig.jit, backend="cpu", default threads) against jax.jit and torch eager. See
../shared/benchmarks.md, "Contention".

Why: real machines are shared; a step whose threads wait for a descheduled worker can be far
slower beside one busy process than idle, and its tail (p90) worse still.

Workloads: W1 and W2 training steps and a CNN step (examples/cnn.py's model: Conv2d(1,4,3,
padding=1), ReLU, MaxPool2d(2), Flatten, Linear(64,10); batch 64 of 8x8 images, SGD lr 0.05),
parameters fed back each step. Each framework runs in its own child process per workload: it
checks its first step against numpy float64 (CNN: loss, and gradient by central
differences), warms up, prints READY, then times --steps steps per condition line it
reads. The parent starts the busy processes (`while True: pass`) a second before each
condition (idle: a 1 s pause) and kills them after it (try/finally). Conditions idle, busy1,
busy2, the set repeated --repeats times; a cell: median over repeats of the median / p90.

Run: .venv/bin/python benchmarks/contention.py [--quick] [--only W1,CNN]
         [--frameworks irgrad,jax.jit] [--steps 200] [--repeats 2]
(--quick: W1 and CNN, 100 steps, 1 repeat.) Prints a table per workload, irgrad's goals
(busy1 median <= 1.3x idle and <= the best peer's busy1; p90 <= 2x median everywhere), and
`ROW {json}` lines for run_all.py.
"""

from __future__ import annotations

import workloads as wl  # noqa: E402  (first: thread counts before numpy loads)

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import queue  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = ("W1", "W2", "CNN")
FRAMEWORKS = [("irgrad", "irgrad"), ("jax.jit", "jax.jit"), ("torch", "torch eager")]
CONDITIONS = [("idle", 0), ("busy1", 1), ("busy2", 2)]
CNN_BATCH, CNN_LR = 64, 0.05
BUSY_LEAD_S = 1.0
"""Seconds the busy processes run before a condition's timing starts."""
TITLES = {"W1": f"W1 MLP step {wl.W1.title}", "W2": f"W2 MLP step {wl.W2.title}",
          "CNN": f"CNN step (conv 1->4 3x3, pool 2, linear 64-10), batch {CNN_BATCH} of 8x8"}

# ---------------------------------------------------------------------------------------------
# The CNN in each framework (W1/W2 come from mlp.py)
# ---------------------------------------------------------------------------------------------


def cnn_data(seed: int = wl.SEED) -> tuple[np.ndarray, np.ndarray]:
    """Images ~ N(0, 1) of shape (64, 1, 8, 8) and int32 labels uniform in [0, 10)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((CNN_BATCH, 1, 8, 8)).astype(wl.DTYPE)
    return x, rng.integers(0, wl.CLASSES, size=CNN_BATCH).astype(np.int32)


def cnn_np_loss(params, x, labels) -> float:
    """The CNN's loss in float64, written out in numpy (the reference for every framework)."""
    w, b = params["0"]["w"].astype(np.float64), params["0"]["b"].astype(np.float64)
    n, _, h, wd = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    z = np.zeros((n, w.shape[0], h, wd)) + b[None, :, None, None]
    for i in range(3):
        for j in range(3):
            z += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    z = np.maximum(z, 0).reshape(n, w.shape[0], h // 2, 2, wd // 2, 2).max(axis=(3, 5))
    logits = z.reshape(n, -1) @ params["4"]["w"].astype(np.float64) + params["4"]["b"]
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return float(-logp[np.arange(n), labels].mean())


def cnn_model(ig):
    from irgrad import layers

    return layers.Sequential([
        layers.Conv2d(1, 4, kernel_size=3, padding=1), layers.ReLU(), layers.MaxPool2d(2),
        layers.Flatten(), layers.Linear(4 * 4 * 4, 10)])


def cnn_params() -> dict[str, dict[str, np.ndarray]]:
    """irgrad's `model.init(0)` as numpy float32 (the initial parameters of every framework)."""
    import irgrad as ig

    params = cnn_model(ig).init(0)
    return {k: {n: np.array(v, dtype=wl.DTYPE) for n, v in layer.items()} for k, layer in params.items() if layer}


def tree_rel_err(got: dict[str, dict[str, Any]], ref: dict[str, dict[str, Any]]) -> float:
    """The worst ||got - ref|| / ||ref|| over the leaves."""
    worst = 0.0
    for k, layer in ref.items():
        for n, r in layer.items():
            r64, g64 = np.asarray(r, np.float64), np.asarray(got[k][n], np.float64)
            if r64.shape != g64.shape:
                return math.inf
            worst = max(worst, float(np.linalg.norm(g64 - r64)) / (float(np.linalg.norm(r64)) or 1.0))
    return worst


def cnn_updates(old, new):
    return {k: {n: np.asarray(old[k][n], np.float64) - np.asarray(new[k][n], np.float64) for n in layer}
            for k, layer in old.items()}


# ---------------------------------------------------------------------------------------------
# Child: build one framework's step, check it, warm up, then time on request
# ---------------------------------------------------------------------------------------------


def build_irgrad(workload: str, data: dict[str, Any]):
    import irgrad as ig

    if workload == "CNN":
        model = cnn_model(ig)
        full = model.init(0)  # with the empty dicts of the parameterless layers

        def loss_fn(p, x, y):
            return ig.losses.softmax_cross_entropy(model.apply({**full, **p}, x), y)

        def step_fn(p, x, y):
            loss, g = ig.value_and_grad(loss_fn)(p, x, y)
            return loss, ig.tree_map(lambda a, d: a - CNN_LR * d, p, g)
    else:
        from mlp import irgrad_fns

        step_fn = irgrad_fns(ig)[2]
    step = ig.jit(step_fn, backend="cpu")
    x, y = data["x"], data["labels"]
    loss, new = step(data["params"], x, y)
    state = [new]

    def call():
        loss, state[0] = step(state[0], x, y)
        return loss

    return float(loss), to_numpy_tree(new), call


def to_numpy_tree(tree):
    if isinstance(tree, dict):
        return {k: to_numpy_tree(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [to_numpy_tree(v) for v in tree]
    return np.asarray(tree.detach() if hasattr(tree, "detach") else tree)


def build_jax(workload: str, data: dict[str, Any]):
    jax = wl.load_jax()
    import jax.numpy as jnp

    if workload == "CNN":
        lax = jax.lax

        def loss_fn(p, x, y):
            h = lax.conv_general_dilated(x, p["0"]["w"], (1, 1), ((1, 1), (1, 1)),
                                         dimension_numbers=("NCHW", "OIHW", "NCHW"))
            h = jax.nn.relu(h + p["0"]["b"][None, :, None, None])
            h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
            logits = h.reshape(h.shape[0], -1) @ p["4"]["w"] + p["4"]["b"]
            logp = jax.nn.log_softmax(logits, axis=-1)
            return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

        def step_fn(p, x, y):
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            return loss, jax.tree_util.tree_map(lambda a, d: a - CNN_LR * d, p, g)
    else:
        from mlp import jax_fns

        step_fn = jax_fns(jax)[2]
    step = jax.jit(step_fn)
    params, x, y = (jax.device_put(data[k]) for k in ("params", "x", "labels"))
    loss, new = jax.block_until_ready(step(params, x, y))
    state = [new]

    def call():
        loss, state[0] = step(state[0], x, y)
        return jax.block_until_ready((loss, state[0]))

    return float(loss), jax.tree_util.tree_map(np.asarray, new), call


def build_torch(workload: str, data: dict[str, Any]):
    """Eager, the idiomatic way: backward, then an in-place SGD update of the leaf tensors."""
    torch = wl.load_torch()
    import torch.nn.functional as F

    if workload == "CNN":
        def loss_fn(p, x, y):
            h = F.max_pool2d(torch.relu(F.conv2d(x, p["0"]["w"], p["0"]["b"], padding=1)), 2)
            return F.cross_entropy(h.flatten(1) @ p["4"]["w"] + p["4"]["b"], y)
        lr = CNN_LR
        params = {k: {n: torch.from_numpy(v.copy()).requires_grad_(True) for n, v in layer.items()}
                  for k, layer in data["params"].items()}
        leaves = [t for layer in params.values() for t in layer.values()]
    else:
        from mlp import torch_fns

        loss_fn, lr = torch_fns(torch)[0], wl.LR
        params = [{n: torch.from_numpy(v.copy()).requires_grad_(True) for n, v in layer.items()}
                  for layer in data["params"]]
        leaves = [t for layer in params for t in layer.values()]
    x = torch.from_numpy(data["x"].copy())
    y = torch.from_numpy(data["labels"].astype(np.int64))

    def call():
        loss = loss_fn(params, x, y)
        loss.backward()
        with torch.no_grad():
            for t in leaves:
                t.sub_(t.grad, alpha=lr)
                t.grad = None
        return loss

    loss = call()
    return loss.item(), to_numpy_tree(params), call


BUILDERS = {"irgrad": build_irgrad, "jax.jit": build_jax, "torch": build_torch}


def child_data(workload: str) -> dict[str, Any]:
    if workload == "CNN":
        x, labels = cnn_data()
        return {"params": cnn_params(), "x": x, "labels": labels}
    params, x, labels = wl.mlp_data(wl.W1 if workload == "W1" else wl.W2)
    return {"params": params, "x": x, "labels": labels}


def cnn_np_grad(params, x, labels, h: float = 1e-5):
    """The CNN's gradient in float64 by central differences of `cnn_np_loss` (690 parameters,
    about a second): an independent reference, no framework's autodiff involved."""
    p64 = {k: {n: v.astype(np.float64) for n, v in layer.items()} for k, layer in params.items()}
    grads = {k: {n: np.zeros_like(v) for n, v in layer.items()} for k, layer in p64.items()}
    for k, layer in p64.items():
        for n, v in layer.items():
            flat, g = v.reshape(-1), grads[k][n].reshape(-1)
            for i in range(flat.size):
                keep = flat[i]
                flat[i] = keep + h
                up = cnn_np_loss(p64, x, labels)
                flat[i] = keep - h
                down = cnn_np_loss(p64, x, labels)
                flat[i] = keep
                g[i] = (up - down) / (2 * h)
    return grads


def check_first(workload: str, data: dict[str, Any], loss: float, new) -> tuple[bool, str]:
    """The first step's loss (1e-4 relative) and update against numpy float64: W1/W2 by
    wl.check_step; CNN against `cnn_np_loss` and CNN_LR times `cnn_np_grad` (1e-3 in norm)."""
    if workload != "CNN":
        ref = wl.mlp_reference(data["params"], data["x"], data["labels"])
        return wl.check_step(loss, new, data["params"], ref)
    ok, err = wl.check_loss(loss, cnn_np_loss(data["params"], data["x"], data["labels"]))
    grads = cnn_np_grad(data["params"], data["x"], data["labels"])
    ref = {k: {n: CNN_LR * g for n, g in layer.items()} for k, layer in grads.items()}
    upd = tree_rel_err(cnn_updates(data["params"], new), ref)
    return bool(ok and upd <= 1e-3), f"loss rel err {err:.1e}, update rel err {upd:.1e} (in norm, vs central differences)"


def child(framework: str, workload: str, warmup: int) -> int:
    """The protocol: `CHECK ...` and `READY` (or `FAIL ...`), then for each line read from
    stdin (`idle`, `busy1`, `busy2`, with the step count: `idle 200`) one `RESULT {json}`;
    `quit` or end of input ends it."""
    try:
        data = child_data(workload)
        loss, new, call = BUILDERS[framework](workload, data)
        ok, message = check_first(workload, data, loss, new)
        print(f"CHECK {json.dumps({'ok': ok, 'message': message})}", flush=True)
        for _ in range(warmup):
            call()
    except Exception as err:
        print(f"FAIL {type(err).__name__}: {err}", flush=True)
        return 1
    print("READY", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        condition, steps = words[0], int(words[1])
        samples = []
        for _ in range(steps):
            start = time.perf_counter()
            call()
            samples.append(time.perf_counter() - start)
        ms = np.array(samples) * 1e3
        print("RESULT " + json.dumps({"condition": condition, "median": float(np.median(ms)),
                                      "p90": float(np.percentile(ms, 90)), "min": float(ms.min()),
                                      "max": float(ms.max()), "steps": steps}), flush=True)
    return 0


# ---------------------------------------------------------------------------------------------
# Parent: children, busy processes, tables, goals
# ---------------------------------------------------------------------------------------------


class Child:
    """A child process and a thread reading its stdout into a queue (so reads can time out)."""

    def __init__(self, framework: str, workload: str, warmup: int):
        cmd = [sys.executable, os.path.abspath(__file__), "--child", framework, "--workload", workload,
               "--warmup", str(warmup)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     cwd=HERE, env=dict(os.environ, PYTHONWARNINGS="ignore"))
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, prefixes: tuple[str, ...], timeout: float) -> str:
        """The next line starting with one of `prefixes` (others are printed)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no {'/'.join(prefixes)} line in {timeout:.0f} s") from None
            if line is None:
                raise RuntimeError(f"child exited (status {self.proc.wait()})")
            if line.startswith(prefixes):
                return line
            print(f"    | {line}", flush=True)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def close(self, kill: bool = False) -> None:
        """`quit` (and 10 s to end), or at once with `kill` (after an error or a signal)."""
        if self.proc.poll() is None:
            try:
                if kill:
                    raise OSError
                self.send("quit")
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def start_busy(n: int, into: list[subprocess.Popen]) -> None:
    """Start `n` busy processes, each appended to `into` as soon as it runs."""
    for _ in range(n):
        into.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))


def stop_busy(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        p.wait()


def measure_framework(framework: str, workload: str, steps: int, repeats: int, warmup: int) -> dict[str, Any]:
    """{condition: {"median": [...], "p90": [...]} over repeats}, or {"wrong"/"na": why}."""
    print(f"  {framework}: setup, check, warm-up", flush=True)
    child = Child(framework, workload, warmup)
    busy: list[subprocess.Popen] = []
    runs: dict[str, dict[str, list[float]]] = {c: {"median": [], "p90": [], "others": []} for c, _ in CONDITIONS}
    done = False
    try:
        line = child.expect(("CHECK", "FAIL"), timeout=900)
        if line.startswith("FAIL"):
            print(f"  {framework}: {line}", flush=True)
            return {"na": line[5:]}
        check = json.loads(line[6:])
        print(f"  check {workload} {framework:8s}: {'OK' if check['ok'] else 'WRONG'} ({check['message']})",
              flush=True)
        if not check["ok"]:
            return {"wrong": check["message"]}
        line = child.expect(("READY", "FAIL"), timeout=900)
        if line.startswith("FAIL"):
            print(f"  {framework}: {line}", flush=True)
            return {"na": line[5:]}
        for rep in range(repeats):
            for condition, n_busy in CONDITIONS:
                try:
                    others = wl.OthersBusy().start()  # over the lead too: long enough to count
                    start_busy(n_busy, busy)
                    time.sleep(BUSY_LEAD_S)  # idle too, so every condition has the same lead
                    child.send(f"{condition} {steps}")
                    result = json.loads(child.expect(("RESULT",), timeout=1200)[7:])
                    load = others.stop()
                finally:
                    stop_busy(busy)
                    busy.clear()
                runs[condition]["median"].append(result["median"])
                runs[condition]["p90"].append(result["p90"])
                runs[condition]["others"].append(load)
                print(f"    repeat {rep + 1} {condition:5s}: median {result['median']:9.3f} ms, "
                      f"p90 {result['p90']:9.3f} ms (min {result['min']:.3f}, max {result['max']:.3f}); "
                      f"machine busy besides this child {wl_fmt(load)} cores ({n_busy} ours)", flush=True)
        done = True
    except (TimeoutError, RuntimeError, OSError) as err:
        print(f"  {framework}: {type(err).__name__}: {err}", flush=True)
        return {"na": f"{type(err).__name__}"}
    finally:
        stop_busy(busy)
        child.close(kill=not done)
    return runs


def wl_fmt(v: float) -> str:
    return "nan" if v != v else f"{v:.2f}"


def fmt_ms(v: float | None) -> str:
    if v is None or v != v:
        return "-"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 1 else f"{v:.3f}"


def summary(runs: dict[str, Any], condition: str, stat: str) -> float | None:
    values = runs.get(condition, {}).get(stat) if isinstance(runs.get(condition), dict) else None
    return float(np.median(values)) if values else None


def print_table(workload: str, results: dict[str, dict[str, Any]]) -> None:
    heads = ["framework"] + [f"{c} {s}" for c, _ in CONDITIONS for s in ("median", "p90")]
    body = []
    for fw, title in FRAMEWORKS:
        if fw not in results:
            continue
        r = results[fw]
        if "wrong" in r or "na" in r:
            body.append([title] + ["WRONG" if "wrong" in r else "n/a"] * (len(heads) - 1))
            continue
        body.append([title] + [fmt_ms(summary(r, c, s)) for c, _ in CONDITIONS for s in ("median", "p90")])
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(heads)]
    print(f"\n{TITLES[workload]}: ms per step (median over repeats of each condition's median / p90)")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(heads, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for b in body:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(b, widths)) + " |")
    loads = [f"{fw} {wl_fmt(summary(r, 'idle', 'others') or float('nan'))}" for fw, r in results.items()
             if "idle" in r]
    if loads:
        print(f"(cores other processes kept busy during the idle condition, median over repeats: "
              f"{', '.join(loads)}; this machine is shared)")


def goals(workload: str, results: dict[str, dict[str, Any]]) -> list[str]:
    out: list[str] = []

    def goal(text: str, met: bool | None, detail: str) -> None:
        out.append(f"- {'n/a   ' if met is None else 'MET   ' if met else 'MISSED'} {workload}: {text}: {detail}")

    mine = results.get("irgrad", {})
    idle, busy1 = summary(mine, "idle", "median"), summary(mine, "busy1", "median")
    if idle is None or busy1 is None:
        goal("irgrad busy1 median <= 1.3x idle median", None, "no irgrad figure")
    else:
        goal("irgrad busy1 median <= 1.3x idle median", busy1 <= 1.3 * idle,
             f"{fmt_ms(busy1)} ms / {fmt_ms(idle)} ms = {busy1 / idle:.2f}x")
    peers = [(summary(results[fw], "busy1", "median"), fw) for fw, _ in FRAMEWORKS
             if fw != "irgrad" and fw in results and summary(results[fw], "busy1", "median") is not None]
    if busy1 is None or not peers:
        goal("irgrad busy1 median <= best peer's busy1 median", None, "no figure")
    else:
        best, who = min(peers)
        goal("irgrad busy1 median <= best peer's busy1 median", busy1 <= best,
             f"irgrad {fmt_ms(busy1)} ms, {who} {fmt_ms(best)} ms = {busy1 / best:.2f}x")
    for condition, _ in CONDITIONS:
        med, p90 = summary(mine, condition, "median"), summary(mine, condition, "p90")
        if med is None or p90 is None:
            goal(f"irgrad p90 <= 2x median ({condition})", None, "no irgrad figure")
        else:
            goal(f"irgrad p90 <= 2x median ({condition})", p90 <= 2 * med,
                 f"p90 {fmt_ms(p90)} ms / median {fmt_ms(med)} ms = {p90 / med:.2f}x")
    return out


def emit_rows(workload: str, results: dict[str, dict[str, Any]], steps: int, repeats: int) -> None:
    """Two rows per condition (median, p90) in run_all.py's format; a cell's range is the
    range over repeats."""
    for condition, n_busy in CONDITIONS:
        for stat in ("median", "p90"):
            cells: dict[str, dict[str, Any]] = {}
            for fw, r in results.items():
                if "wrong" in r:
                    cells[fw] = wl.wrong_cell(r["wrong"])
                elif "na" in r:
                    cells[fw] = wl.na_cell(r["na"])
                else:
                    values = r[condition][stat]
                    extra = {"others": max(r[condition]["others"])} if condition == "idle" else {}
                    cells[fw] = wl.cell(float(np.median(values)), min(values), max(values), n=len(values), **extra)
            wl.emit_row(f"contention-{workload}-{condition}-{stat}", "contention",
                        f"{workload} step, {n_busy} busy processes: {stat} of {steps} steps", "ms", cells,
                        peers=["jax.jit", "torch"],
                        note=f"{TITLES[workload]}; median (range) over {repeats} repeats" if
                        condition == "idle" and stat == "median" else "")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="W1 and CNN, 100 steps, 1 repeat")
    parser.add_argument("--only", help="comma-separated workloads of W1, W2, CNN")
    parser.add_argument("--frameworks", help="comma-separated of irgrad, jax.jit, torch (default: all, "
                        "or $BENCH_FRAMEWORKS)")
    parser.add_argument("--steps", type=int, help="timed steps per condition (default 200; quick 100)")
    parser.add_argument("--repeats", type=int, help="times the set idle, busy1, busy2 runs (default 2; quick 1)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps after the check (default 5)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--workload", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        return child(opts.child, opts.workload, opts.warmup)

    workloads = opts.only.split(",") if opts.only else (["W1", "CNN"] if opts.quick else list(WORKLOADS))
    unknown = set(workloads) - set(WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads {sorted(unknown)} (of {', '.join(WORKLOADS)})")
    wanted = set(opts.frameworks.split(",")) if opts.frameworks else wl.frameworks_wanted()
    frameworks = [fw for fw, _ in FRAMEWORKS if fw in wanted]
    steps = opts.steps or (100 if opts.quick else 200)
    repeats = opts.repeats or (1 if opts.quick else 2)
    # SIGTERM (a timeout in a driver) runs the finally blocks that kill the busy processes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    print(f"Contention: {steps} steps per condition, {repeats} repeats, {os.cpu_count()} cores, "
          f"{wl.THREADS} threads per framework; busy processes start {BUSY_LEAD_S:.0f} s before a condition")
    start = time.perf_counter()
    all_goals: list[str] = []
    tables: list[tuple[str, dict[str, dict[str, Any]]]] = []
    wrong = False
    for workload in workloads:
        print(f"\n{TITLES[workload]}", flush=True)
        results = {fw: measure_framework(fw, workload, steps, repeats, opts.warmup) for fw in frameworks}
        wrong |= any("wrong" in r for r in results.values())
        tables.append((workload, results))
        emit_rows(workload, results, steps, repeats)
        all_goals += goals(workload, results)
    print("\n" + "=" * 100)
    for workload, results in tables:
        print_table(workload, results)
    print("\nGoals (issue 26):")
    print("\n".join(all_goals))
    print(f"\n(total {(time.perf_counter() - start) / 60:.1f} min)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
