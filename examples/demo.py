"""The main job (`make demo`): a model as textual IR, then a digits classifier trained with the
whole training step (forward, IR-level backward, Adam update) compiled as one CPU program.

1. examples/mlp.mlir verified and canonicalized by irgrad-opt, run by irgrad-run.
2. scikit-learn's handwritten digits (8x8 images, 10 classes): an MLP trained with
   `ig.jit(train_step, backend="cpu")`, with a progress bar, the test accuracy, a loss-curve
   PNG, the step's IR at every stage of the lowering and its forward and backward graphs
   written under build/demo/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import irgrad as ig
from irgrad import layers, losses, optim

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "build", "demo")
BIN = os.path.dirname(sys.executable)


def banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 74 - len(title)), flush=True)


def tool(*args: str) -> str:
    result = subprocess.run([os.path.join(BIN, args[0]), *args[1:]], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


def textual_ir() -> None:
    path = os.path.join(HERE, "mlp.mlir")
    banner("1. A model in textual IR: irgrad-opt verifies and canonicalizes, irgrad-run runs it")
    print(tool("irgrad-opt", path, "-p", "canonicalize,cse"), end="")
    rng = np.random.default_rng(0)
    shapes = {"x": (4, 3), "w1": (3, 8), "b1": (8,), "w2": (8, 2), "b2": (2,)}
    arrays = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for name, a in arrays.items():
            np.save(os.path.join(tmp, f"{name}.npy"), a)
            args += ["--input", os.path.join(tmp, f"{name}.npy")]
        out = os.path.join(tmp, "out.npz")
        results = {}
        for backend in ("interp", "cpu"):
            tool("irgrad-run", path, "--entry", "mlp", *args, "--output", out, "--backend", backend)
            results[backend] = np.load(out)["result0"]
    a = arrays
    expected = np.maximum(a["x"] @ a["w1"] + a["b1"], 0) @ a["w2"] + a["b2"]
    for backend, got in results.items():
        print(f"irgrad-run --backend {backend:6s} max |irgrad - numpy| = {np.abs(got - expected).max():.1e}")


def load_digits() -> tuple[np.ndarray, ...]:
    from sklearn.datasets import load_digits as sk_digits
    from sklearn.model_selection import train_test_split

    digits = sk_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    return tuple(train_test_split(x, y, test_size=0.2, random_state=0, stratify=y))


MODEL = layers.MLP([64, 128, 64, 10])
OPTIMIZER = optim.adam(3e-3)


def loss_fn(params, x, labels):
    return losses.softmax_cross_entropy(MODEL.apply(params, x), labels)


def train_step(params, state, x, labels):
    loss, grads = ig.value_and_grad(loss_fn)(params, x, labels)
    params, state = OPTIMIZER.update(grads, state, params)
    return params, state, loss


def accuracy(params, x, labels) -> float:
    logits = MODEL.apply(params, x)
    return ig.mean((ig.max(logits, axis=-1, keepdims=True) == ig.take_along_axis(logits, labels[:, None], 1)).astype(ig.float32))


def train_digits() -> None:
    from tqdm import tqdm

    banner("2. Digits: the whole training step compiled as one CPU program by ig.jit")
    x_train, x_test, y_train, y_test = load_digits()
    print(f"scikit-learn digits: {len(x_train)} training and {len(x_test)} test images of 8x8, 10 classes")
    params = MODEL.init(ig.random.key(0))
    state = OPTIMIZER.init(params)
    batch = 128
    step = ig.jit(train_step, backend="cpu")
    evaluate = ig.jit(accuracy, backend="cpu")

    start = time.perf_counter()
    lowered = step.lower(params, state, x_train[:batch], y_train[:batch])
    compiled = lowered.compile()
    cold = time.perf_counter() - start
    os.makedirs(OUT, exist_ok=True)
    for stage in ("nn", "autodiff", "linalg", "bufferized", "loops", "llvm", "llvm-ir"):
        suffix = "ll" if stage == "llvm-ir" else "mlir"
        with open(os.path.join(OUT, f"train_step.{stage}.{suffix}"), "w") as f:
            f.write(lowered.as_text(stage))
    write_graphs(lowered)
    stats = compiled.stats()
    print(f"cold compile {cold:.2f} s: " + ", ".join(f"{k} {v:.2f}" for k, v in stats.items()))
    print(f"the step's IR at each stage is in {os.path.relpath(OUT, ROOT)}/train_step.<stage>.mlir")

    rng = np.random.default_rng(0)
    epochs = 30
    steps_per_epoch = len(x_train) // batch
    history = []
    bar = tqdm(total=epochs * steps_per_epoch, unit="step", ncols=90)
    train_start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        for k in range(steps_per_epoch):
            idx = order[k * batch : (k + 1) * batch]
            params, state, loss = compiled(params, state, x_train[idx], y_train[idx])
            history.append(float(loss))
            bar.update(1)
        acc = float(evaluate(params, x_train, y_train))
        bar.set_postfix(loss=f"{np.mean(history[-steps_per_epoch:]):.3f}", train_acc=f"{acc:.3f}")
    bar.close()
    seconds = time.perf_counter() - train_start
    test_acc = float(evaluate(params, x_test, y_test))
    print(f"{len(history)} steps in {seconds:.2f} s ({1e3 * seconds / len(history):.2f} ms/step)")
    print(f"test accuracy: {test_acc:.4f}")
    plot_loss(history)
    if test_acc < 0.95:
        raise SystemExit(f"test accuracy {test_acc:.4f} is below the 0.95 goal")


def write_graphs(lowered) -> None:
    """The step's pictures: forward (the traced program) and backward (after autodiff: primal,
    adjoint and the Adam update apart), as DOT, and as SVG where graphviz's `dot` is installed."""
    for picture, stage in (("forward", "nn"), ("backward", "autodiff")):
        graph = lowered.graph(stage)
        graph.write(os.path.join(OUT, f"train_step_{picture}.dot"))
        if shutil.which("dot"):
            graph.write(os.path.join(OUT, f"train_step_{picture}.svg"))
    drawn = ".dot/.svg" if shutil.which("dot") else ".dot (no SVG: graphviz's `dot` is not installed)"
    print(f"the step's graphs: {os.path.relpath(OUT, ROOT)}/train_step_{{forward,backward}}{drawn}")


def plot_loss(history: list[float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(history, linewidth=1)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_yscale("log")
    ax.set_title("irgrad: MLP on scikit-learn digits (Adam, CPU-compiled step)")
    fig.tight_layout()
    path = os.path.join(OUT, "loss.png")
    fig.savefig(path, dpi=120)
    print(f"loss curve: {os.path.relpath(path, ROOT)}")


def main() -> None:
    start = time.perf_counter()
    textual_ir()
    train_digits()
    print(f"\ndemo finished in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
