"""Shared definitions of the benchmark workloads W1-W7, exactly as ../shared/benchmarks.md has
them, and the measurement rules: float32, seed 0, 2 threads, warm-up, median (min-max) of at
least 20 timed calls, a correctness check of every result against numpy before timing.

Import this module FIRST in every benchmark script: it sets the thread counts before numpy (or
any framework) loads its BLAS/OpenMP runtime.

Each benchmark script prints, besides its readable lines, one `ROW {json}` line per table row;
run_all.py collects them into one table (rows: workloads; columns: irgrad, numpy, torch eager,
torch.compile, jax.jit; then irgrad / best peer).
"""

from __future__ import annotations

import os
import sys

THREADS = 2
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(THREADS)
if "numpy" in sys.modules and __name__ != "__main__":
    print("warning: numpy was imported before benchmarks/workloads.py; thread counts may not apply",
          file=sys.stderr)

import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

SEED = 0
DTYPE = np.float32

# Frameworks, in table order: (key, column title).
FRAMEWORKS = [
    ("irgrad", "irgrad"),
    ("numpy", "numpy (by hand)"),
    ("torch", "torch eager"),
    ("torch.compile", "torch.compile"),
    ("jax.jit", "jax.jit"),
]
PEERS = [key for key, _ in FRAMEWORKS if key != "irgrad"]

# ---------------------------------------------------------------------------------------------
# W1, W2 (and W5, W6): the MLP
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MLPSpec:
    id: str
    sizes: tuple[int, ...]
    batch: int

    @property
    def title(self) -> str:
        return f"{'-'.join(map(str, self.sizes))}, batch {self.batch}"


W1 = MLPSpec("W1", (784, 256, 256, 10), 128)
W2 = MLPSpec("W2", (1024, 2048, 2048, 10), 512)
LR = 0.01
CLASSES = 10


def mlp_data(spec: MLPSpec, seed: int = SEED) -> tuple[list[dict[str, np.ndarray]], np.ndarray, np.ndarray]:
    """`(params, x, labels)`: params a list of {"w": (in, out), "b": (out,)} per layer, weights
    He-normal N(0, 2/fan_in), biases zero; x ~ N(0, 1) of shape (batch, in); int32 labels
    uniform in [0, 10). Drawn in that order from `np.random.default_rng(seed)`, float32."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(spec.sizes[:-1], spec.sizes[1:]):
        w = (rng.standard_normal((fan_in, fan_out)) * math.sqrt(2.0 / fan_in)).astype(DTYPE)
        params.append({"w": w, "b": np.zeros(fan_out, DTYPE)})
    x = rng.standard_normal((spec.batch, spec.sizes[0])).astype(DTYPE)
    labels = rng.integers(0, CLASSES, size=spec.batch).astype(np.int32)
    return params, x, labels


def copy_params(params: list[dict[str, np.ndarray]], dtype: Any = None) -> list[dict[str, np.ndarray]]:
    return [{k: np.array(v, dtype=dtype or v.dtype) for k, v in layer.items()} for layer in params]


# numpy by hand: the forward and backward written out (also the float64 reference).


def np_forward(params, x):
    """Logits and what the backward pass needs (pre-activations and activations)."""
    acts = [x]
    pre = []
    h = x
    for i, layer in enumerate(params):
        z = h @ layer["w"]
        z += layer["b"]
        pre.append(z)
        h = np.maximum(z, 0) if i < len(params) - 1 else z
        acts.append(h)
    return h, pre, acts


def _log_softmax(logits):
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def np_loss(params, x, labels):
    """Softmax cross-entropy, mean over the batch (forward only)."""
    logits, _, _ = np_forward(params, x)
    logp = _log_softmax(logits)
    return -logp[np.arange(len(labels)), labels].mean(dtype=logits.dtype)


def np_value_and_grad(params, x, labels):
    logits, pre, acts = np_forward(params, x)
    logp = _log_softmax(logits)
    rows = np.arange(len(labels))
    loss = -logp[rows, labels].mean(dtype=logits.dtype)
    delta = np.exp(logp)  # softmax
    delta[rows, labels] -= 1
    delta *= logits.dtype.type(1.0 / len(labels))
    grads: list[dict[str, np.ndarray]] = [{} for _ in params]
    for i in range(len(params) - 1, -1, -1):
        grads[i]["w"] = acts[i].T @ delta
        grads[i]["b"] = delta.sum(axis=0)
        if i > 0:
            delta = delta @ params[i]["w"].T
            delta *= pre[i - 1] > 0
    return loss, grads


def np_step(params, x, labels):
    """One training step in place: forward, backward, p -= 0.01 * grad. Returns the loss."""
    loss, grads = np_value_and_grad(params, x, labels)
    lr = params[0]["w"].dtype.type(LR)
    for layer, grad in zip(params, grads):
        for k in layer:
            grad[k] *= lr
            layer[k] -= grad[k]
    return loss


def mlp_reference(params, x, labels):
    """Loss and gradients in float64 from the float32 inputs: what every result is checked on."""
    return np_value_and_grad(copy_params(params, np.float64), x.astype(np.float64), labels)


def check_loss(loss, ref_loss) -> tuple[bool, float]:
    err = abs(float(loss) - float(ref_loss)) / max(abs(float(ref_loss)), 1e-30)
    return bool(err <= 1e-4), err


def check_value(loss, ref_loss) -> tuple[bool, str]:
    ok, err = check_loss(loss, ref_loss)
    return ok, f"loss rel err {err:.1e}"


def check_tree(got: list[dict[str, Any]], ref: list[dict[str, np.ndarray]], scale: float = 1.0,
               slack: list[dict[str, np.ndarray]] | None = None) -> tuple[bool, float]:
    """Each leaf of `got` against `scale * ref`, in norm: ||got - ref|| <= 1e-2 ||ref|| (+ the
    norm of `slack`, a per-element allowance). Returns (ok, the worst ||got - ref|| / ||ref||).

    In norm, and 1e-2: in float32 a ReLU pre-activation within rounding of 0 can take the
    other side than in the float64 reference (W2, seed 0: sample 29, unit 561 of layer 2 has
    z = 1.7e-7; torch's and irgrad's summation order make it negative), which moves one
    column of a weight gradient by a few percent and the whole leaf by 1.5e-3 in norm. Other
    float32 rounding stays near 1e-6; a wrong program is off by O(1).
    """
    ok, worst = True, 0.0
    for k_layer, (g_layer, r_layer) in enumerate(zip(got, ref)):
        for k in r_layer:
            g = np.asarray(g_layer[k], dtype=np.float64)
            r = scale * r_layer[k]
            if g.shape != r.shape:
                return False, float("inf")
            err = float(np.linalg.norm(g - r))
            norm = float(np.linalg.norm(r)) or 1.0
            allowed = 1e-2 * norm + (float(np.linalg.norm(slack[k_layer][k])) if slack else 0.0)
            ok &= bool(np.all(np.isfinite(g)) and err <= allowed)
            worst = max(worst, err / norm)
    return ok, worst


def check_step(loss, new_params, old_params, ref) -> tuple[bool, str]:
    """A step's loss and update `old - new` against the reference `LR * grad` (in norm, with
    an allowance of one float32 rounding of each new parameter)."""
    ref_loss, ref_grads = ref
    ok_loss, e_loss = check_loss(loss, ref_loss)
    deltas = [{k: np.asarray(o[k], np.float64) - np.asarray(n[k], np.float64) for k in o}
              for o, n in zip(old_params, new_params)]
    ulps = [{k: np.spacing(np.abs(o[k]).astype(DTYPE)).astype(np.float64) for k in o} for o in old_params]
    ok_upd, e_upd = check_tree(deltas, ref_grads, LR, slack=ulps)
    return ok_loss and ok_upd, f"loss rel err {e_loss:.1e}, update rel err {e_upd:.1e} (in norm)"


def check_value_and_grad(loss, grads, ref) -> tuple[bool, str]:
    ref_loss, ref_grads = ref
    ok_loss, e_loss = check_loss(loss, ref_loss)
    ok_g, e_g = check_tree(grads, ref_grads)
    return ok_loss and ok_g, f"loss rel err {e_loss:.1e}, grad rel err {e_g:.1e} (in norm)"


# ---------------------------------------------------------------------------------------------
# W3, W4, W7
# ---------------------------------------------------------------------------------------------

GEMM_SIZES = (512, 1024, 2048)


def gemm_data(n: int, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(DTYPE)
    b = rng.standard_normal((n, n)).astype(DTYPE)
    return a, b


W4_SIZE = 16_777_216
W4_BYTES_PER_ELEMENT = 8  # 4 read, 4 written


def w4_data(seed: int = SEED) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(W4_SIZE).astype(DTYPE)


def w4_numpy(x):
    return np.tanh(x) * x.dtype.type(0.5) + x * x


W7_SIZE = 64
W7_OPS = 100


def w7_data(seed: int = SEED) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(W7_SIZE).astype(DTYPE)


def w7_chain(x, tanh: Callable[[Any], Any]):
    """Op i: tanh if i % 10 == 9, else x + 0.1 for even i and x * 0.9 for odd i."""
    for i in range(W7_OPS):
        if i % 10 == 9:
            x = tanh(x)
        elif i % 2 == 0:
            x = x + 0.1
        else:
            x = x * 0.9
    return x


def w7_numpy(x):
    add, mul = x.dtype.type(0.1), x.dtype.type(0.9)
    for i in range(W7_OPS):
        if i % 10 == 9:
            x = np.tanh(x)
        elif i % 2 == 0:
            x = x + add
        else:
            x = x * mul
    return x


def allclose(got, ref, rtol: float, atol_of_max: float) -> tuple[bool, str]:
    """np.allclose(got, ref, rtol, atol = atol_of_max * max|ref|), and a message."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    big = float(np.abs(ref).max()) or 1.0
    if got.shape != ref.shape:
        return False, f"shape {got.shape}, expected {ref.shape}"
    ok = bool(np.allclose(got, ref, rtol=rtol, atol=atol_of_max * big))
    return ok, f"max abs err / max |ref| = {float(np.abs(got - ref).max()) / big:.1e}"


# ---------------------------------------------------------------------------------------------
# Timing and reporting
# ---------------------------------------------------------------------------------------------

REPS = int(os.environ.get("BENCH_REPS", "20"))
"""Timed calls (samples) per measurement, at least; the rules ask for at least 20."""
MIN_TOTAL_S = float(os.environ.get("BENCH_MIN_TOTAL_S", "1.0"))
"""More samples for fast calls, up to MAX_REPS, until the samples fill this many seconds: a
20-sample median of a 3 ms call (60 ms in all) moves by 15% with one hiccup of the machine."""
MAX_REPS = 300


@dataclass
class Timing:
    """Seconds per call: the median, min and max of the samples."""

    median: float
    min: float
    max: float
    samples: int
    inner: int = 1
    """Calls per sample (for microsecond-scale calls each sample is the mean of `inner`)."""
    others: float = float("nan")
    """Cores that other processes kept busy while the samples ran (this machine is shared)."""


BUSY_MARK = 0.25
"""Figures measured while other processes kept more cores busy than this are marked."""


def busy_jiffies() -> int | None:
    """CPU time (jiffies) the whole machine spent busy, from /proc/stat; None elsewhere."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return None
    return sum(fields) - fields[3] - fields[4]  # all but idle and iowait


def _own_cpu() -> float:
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class OthersBusy:
    """Cores kept busy by other processes between `start()` and `stop()` (nan if unknown)."""

    def start(self) -> OthersBusy:
        self.jiffies, self.cpu, self.t = busy_jiffies(), _own_cpu(), time.perf_counter()
        return self

    def stop(self) -> float:
        end, cpu, t = busy_jiffies(), _own_cpu(), time.perf_counter()
        if end is None or self.jiffies is None or t - self.t < 0.5:  # too short for 10 ms ticks
            return float("nan")
        busy = (end - self.jiffies) / os.sysconf("SC_CLK_TCK")
        return max(0.0, busy - (cpu - self.cpu)) / (t - self.t)


def wait_quiet(threshold: float = 0.1) -> None:
    """Wait, up to $BENCH_WAIT_QUIET seconds (default 0: not at all), until other processes
    keep fewer than `threshold` cores busy over a second."""
    max_wait = float(os.environ.get("BENCH_WAIT_QUIET", "0"))
    start = time.perf_counter()
    while time.perf_counter() - start < max_wait:
        probe = OthersBusy().start()
        time.sleep(1.0)
        if not probe.stop() >= threshold:
            return


def measure(fn: Callable[[], Any], *, reps: int = REPS, warmup: int = 3, sample_s: float = 0.0,
            sync: Callable[[Any], Any] | None = None) -> Timing:
    """Warm up, then time `reps` samples of `fn()`. With `sample_s`, each sample is the mean of
    as many calls as fill about `sample_s` seconds (for calls too short to time alone).
    `sync(result)` runs inside the timed region (JAX: block_until_ready)."""
    sync = sync or (lambda r: r)
    wait_quiet()
    for _ in range(warmup):
        sync(fn())
    inner = 1
    if sample_s > 0:
        start = time.perf_counter()
        sync(fn())
        once = max(time.perf_counter() - start, 1e-7)
        inner = max(1, int(sample_s / once))
        # calibrate once more, on a batch
        start = time.perf_counter()
        for _ in range(inner):
            sync(fn())
        per = (time.perf_counter() - start) / inner
        inner = max(1, int(sample_s / max(per, 1e-8)))
    samples: list[float] = []
    others = OthersBusy().start()
    began = time.perf_counter()
    while len(samples) < reps or (time.perf_counter() - began < MIN_TOTAL_S and len(samples) < MAX_REPS):
        start = time.perf_counter()
        for _ in range(inner):
            sync(fn())
        samples.append((time.perf_counter() - start) / inner)
    return Timing(float(np.median(samples)), float(min(samples)), float(max(samples)), len(samples),
                  inner, others.stop())


def cell(value: float, lo: float, hi: float, **extra: Any) -> dict[str, Any]:
    return {"median": value, "min": lo, "max": hi, **extra}


def time_cell(t: Timing, scale: float) -> dict[str, Any]:
    """A timing in the row's unit (`scale` = unit per second, e.g. 1e3 for ms)."""
    return cell(t.median * scale, t.min * scale, t.max * scale, n=t.samples, inner=t.inner, others=t.others)


def rate_cell(t: Timing, work: float) -> dict[str, Any]:
    """A throughput (`work` per call, per second): median, worst (slowest) and best sample."""
    return cell(work / t.median, work / t.max, work / t.min, n=t.samples, inner=t.inner, others=t.others)


def wrong_cell(message: str) -> dict[str, Any]:
    return {"wrong": message}


def na_cell(reason: str) -> dict[str, Any]:
    return {"na": reason}


def emit_row(key: str, id: str, title: str, unit: str, cells: dict[str, dict[str, Any]], *,
             better: str = "lower", ratio: bool = True, note: str = "",
             peers: list[str] | None = None) -> None:
    """One table row: `key` names it for run_all's goals (e.g. "W1", "W3-2048"); `cells`
    maps framework keys to cells; `better` is "lower" (times) or "higher" (throughputs);
    `ratio=False` leaves the irgrad / best peer column empty; `peers` limits the peers that
    column compares with (default: all)."""
    row = {"key": key, "id": id, "title": title, "unit": unit, "cells": cells, "better": better,
           "ratio": ratio, "note": note, "peers": peers or PEERS}
    print("ROW " + json.dumps(row), flush=True)


def say(message: str) -> None:
    print(message, flush=True)


def checked(framework: str, label: str, ok_message: tuple[bool, str]) -> bool:
    ok, message = ok_message
    say(f"  check {label} {framework:14s} vs numpy float64: {'OK' if ok else 'WRONG'} ({message})")
    return ok


def check_then_time(cells: dict[str, dict[str, Any]], key: str, label: str, call: Callable[[], Any],
                    check: Callable[[Any], tuple[bool, str]]) -> tuple[Timing, float] | None:
    """One framework's cell, in milliseconds: the first call's result checked (`check(result)` ->
    (ok, message)), then timed. A wrong result or a failure fills the cell with why (a framework
    that fails is reported, not fatal) and returns None; else (timing, first call's seconds)."""
    try:
        start = time.perf_counter()
        first = call()
        first_s = time.perf_counter() - start
        if not checked(key, label, check(first)):
            cells[key] = wrong_cell("result differs from numpy")
            return None
        t = measure(call, warmup=3)
    except Exception as err:
        say(f"  {key}: error {type(err).__name__}: {err}")
        cells[key] = na_cell(f"error: {type(err).__name__}")
        return None
    cells[key] = time_cell(t, 1e3)
    return t, first_s


def checked_runner(cells: dict[str, dict[str, Any]], label: str, check: Callable[[Any], tuple[bool, str]],
                   cold: bool = True) -> Callable[[str, Callable[[], Any], Callable[[Any], Any]], None]:
    """`run(key, call, to_numpy)` for a script's frameworks: `check_then_time` of `call` with
    `check(to_numpy(result))`, and one line saying the median, its range and (with `cold`) the
    first call's seconds."""

    def run(key: str, call: Callable[[], Any], to_numpy: Callable[[Any], Any]) -> None:
        measured = check_then_time(cells, key, label, call, lambda out: check(to_numpy(out)))
        if measured is None:
            return
        t, first = measured
        first_call = f"; first call {first:.2f} s" if cold else ""
        say(f"  {label} {key:14s} {t.median * 1e3:8.3f} ms (min {t.min * 1e3:.3f}, max {t.max * 1e3:.3f}){first_call}")

    return run


# ---------------------------------------------------------------------------------------------
# Peers: optional imports (the `bench` extra)
# ---------------------------------------------------------------------------------------------


def load_torch():
    """torch with 2 intra-op threads, or None (not installed)."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(THREADS)
    return torch


def load_jax():
    """jax on the CPU, or None (not installed)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax
    except ImportError:
        return None
    return jax


def frameworks_wanted() -> set[str]:
    """Frameworks to run: all, or those in $BENCH_FRAMEWORKS (comma-separated keys)."""
    wanted = os.environ.get("BENCH_FRAMEWORKS")
    keys = {k for k, _ in FRAMEWORKS}
    if not wanted:
        return keys
    return {k.strip() for k in wanted.split(",")} & keys
