"""The main job (`make demo`): a model as textual IR and as Python, verified, transformed,
differentiated on the IR, run on the reference interpreter, and trained.

Each step prints what it did, so the output reads as a tour of the pipeline.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import irgrad as ig

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)


def banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


def tool(*args: str) -> str:
    result = subprocess.run([os.path.join(BIN, args[0]), *args[1:]], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


def textual_ir() -> None:
    path = os.path.join(HERE, "mlp.mlir")
    banner("1. A model in textual IR, verified and canonicalized by irgrad-opt")
    print(tool("irgrad-opt", path, "-p", "canonicalize,cse"))

    banner("2. Run it with irgrad-run on the reference interpreter; compare with numpy")
    rng = np.random.default_rng(0)
    shapes = {"x": (4, 3), "w1": (3, 8), "b1": (8,), "w2": (8, 2), "b2": (2,)}
    arrays = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for name, a in arrays.items():
            np.save(os.path.join(tmp, f"{name}.npy"), a)
            args += ["--input", os.path.join(tmp, f"{name}.npy")]
        out = os.path.join(tmp, "out.npz")
        tool("irgrad-run", path, "--entry", "mlp", *args, "--output", out)
        got = np.load(out)["result0"]
    a = arrays
    expected = np.maximum(a["x"] @ a["w1"] + a["b1"], 0) @ a["w2"] + a["b2"]
    print(got)
    print(f"max |irgrad - numpy| = {np.abs(got - expected).max():.2e}")


def python_model() -> None:
    banner("3. The same kind of model from Python: traced to nn IR")

    def loss(params, x, labels):
        h = ig.relu(x @ params["w1"] + params["b1"])
        logits = h @ params["w2"] + params["b2"]
        logp = ig.log_softmax(logits, axis=-1)
        return -ig.mean(ig.take_along_axis(logp, labels[:, None], axis=1))

    rng = np.random.default_rng(0)
    params = {
        "w1": (rng.standard_normal((2, 16)) * np.sqrt(2 / 2)).astype(np.float32),
        "b1": np.zeros(16, np.float32),
        "w2": (rng.standard_normal((16, 2)) * np.sqrt(2 / 16)).astype(np.float32),
        "b2": np.zeros(2, np.float32),
    }
    # Two interleaved half-moons-ish blobs: class = sign of x0 * x1.
    x = rng.standard_normal((64, 2)).astype(np.float32)
    labels = (x[:, 0] * x[:, 1] > 0).astype(np.int32)
    print(ig.trace(loss, params, x, labels))

    banner("4. Differentiation on the IR: the request, then irgrad-opt -p autodiff")
    grad_program = ig.trace(ig.value_and_grad(loss), params, x, labels)
    text = str(grad_program)
    print(next(line.strip() for line in text.splitlines() if "autodiff.value_and_grad" in line))
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    derived = tool("irgrad-opt", f.name, "-p", "autodiff,canonicalize,cse")
    os.unlink(f.name)
    functions = [line.strip().split("(")[0] for line in derived.splitlines() if "func.func" in line]
    print(f"after autodiff: {len(derived.splitlines())} lines, functions: {', '.join(functions)}")

    banner("5. Check the gradient against float64 finite differences")
    params64 = ig.tree_map(lambda p: p.astype(np.float64), params)
    ig.check_grads(lambda p: loss(p, x.astype(np.float64), labels), (params64,), order=1, modes=("rev",))
    print("check_grads(order=1, modes=('rev',)) passed")

    banner("6. Train with SGD (value_and_grad on the reference interpreter)")
    step = ig.jit(ig.value_and_grad(loss))
    lr = 0.5
    start = time.perf_counter()
    for i in range(60):
        value, grads = step(params, x, labels)
        params = ig.tree_map(lambda p, g: p - lr * g, params, grads)
        if i % 10 == 0 or i == 59:
            print(f"step {i:3d}  loss {float(value):.4f}")
    h = np.maximum(x @ params["w1"] + params["b1"], 0)
    accuracy = ((h @ params["w2"] + params["b2"]).argmax(-1) == labels).mean()
    print(f"training accuracy {accuracy:.2f}  ({time.perf_counter() - start:.1f} s on the interpreter)")


def main() -> None:
    textual_ir()
    python_model()


if __name__ == "__main__":
    main()
