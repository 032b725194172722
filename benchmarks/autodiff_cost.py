"""Autodiff cost, measured on the IR (issue 4's figures).

1. FLOPs of the gradient program (value_and_grad, after `autodiff,canonicalize,cse,dce`) over
   FLOPs of the forward, for the W1 MLP and a small CNN. The cheap-gradient principle says <= 3.
2. IR size of first- and second-order derivative programs against depth (should be linear).
3. Wall time of the autodiff pass on a 100-layer MLP (goal: under 2 s).

Run: .venv/bin/python benchmarks/autodiff_cost.py
"""

from __future__ import annotations

import mlp  # first: it imports workloads, which sets thread counts before numpy loads

import time

import numpy as np

import irgrad as ig
from irgrad.analysis.cost import function_cost
from irgrad import context, registry

PIPELINE = "autodiff,canonicalize,cse,dce"


def optimized(program: ig.Program, spec: str = PIPELINE):
    module = program.module.clone()
    registry.build_pipeline(spec).apply(context.make_context(), module)
    return module


def op_count(module) -> int:
    return sum(1 for op in module.walk() if op.dialect_name() not in ("builtin", "func"))


def mlp_loss(params, x, labels):
    """The W1/W2 loss, exactly as benchmarks/mlp.py times it."""
    return mlp.irgrad_fns(ig)[0](params, x, labels)


def mlp_args(sizes, batch):
    params = [
        {"w": ig.ShapeDtype((a, b)), "b": ig.ShapeDtype((b,))} for a, b in zip(sizes[:-1], sizes[1:])
    ]
    return params, ig.ShapeDtype((batch, sizes[0])), ig.ShapeDtype((batch,), ig.int32)


def cnn_loss(params, x, labels):
    h = ig.relu(ig.conv2d(x, params["c1"], padding=1) )
    h = ig.max_pool2d(h, 2)
    h = ig.relu(ig.conv2d(h, params["c2"], padding=1))
    h = ig.reshape(h, (h.shape[0], -1))
    logits = h @ params["w"] + params["b"]
    logp = ig.log_softmax(logits, axis=-1)
    return -ig.mean(ig.take_along_axis(logp, labels[:, None], axis=1))


def cnn_args(batch=32):
    params = {
        "c1": ig.ShapeDtype((8, 1, 3, 3)),
        "c2": ig.ShapeDtype((16, 8, 3, 3)),
        "w": ig.ShapeDtype((16 * 4 * 4, 10)),
        "b": ig.ShapeDtype((10,)),
    }
    return params, ig.ShapeDtype((batch, 1, 8, 8)), ig.ShapeDtype((batch,), ig.int32)


def flop_ratio(name, loss, args) -> None:
    fwd = ig.trace(loss, *args)
    vg = ig.trace(ig.value_and_grad(loss), *args)
    f = function_cost(optimized(fwd), fwd.entry).flops
    g = function_cost(optimized(vg), vg.entry).flops
    print(f"{name:28s} forward {f / 1e6:9.2f} MFLOP   value_and_grad {g / 1e6:9.2f} MFLOP   ratio {g / f:5.2f}")


def ir_growth() -> None:
    print("\nIR size (ops after autodiff,canonicalize,cse,dce) against depth, width 32, batch 8")
    print(f"{'depth':>6} {'forward':>8} {'grad':>8} {'grad/depth':>11} {'hvp':>8} {'hvp/depth':>10}")

    def deep(params, x):
        h = x
        for w in params:
            h = ig.tanh(h @ w)
        return ig.sum(h * h)

    for depth in (4, 8, 16, 32, 64):
        params = [ig.ShapeDtype((32, 32)) for _ in range(depth)]
        x = ig.ShapeDtype((8, 32))
        fwd = op_count(optimized(ig.trace(deep, params, x)))
        g = op_count(optimized(ig.trace(ig.grad(deep), params, x)))

        def hvp(p, v, x):
            return ig.jvp(lambda q: ig.grad(deep)(q, x), (p,), (v,))[1]

        h = op_count(optimized(ig.trace(hvp, params, params, x)))
        print(f"{depth:6d} {fwd:8d} {g:8d} {g / depth:11.1f} {h:8d} {h / depth:10.1f}")


def pass_speed() -> None:
    sizes = [64] * 101
    args = mlp_args(sizes, 16)
    program = ig.trace(ig.value_and_grad(mlp_loss), *args)
    ops = op_count(program.module)
    times = []
    for _ in range(3):
        module = program.module.clone()
        start = time.perf_counter()
        registry.build_pipeline("autodiff").apply(context.make_context(), module)
        times.append(time.perf_counter() - start)
    out = op_count(module)
    print(f"\nautodiff pass on a 100-layer MLP ({ops} ops in, {out} out): "
          f"median {np.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f}); goal < 2 s")


def main() -> None:
    print("FLOPs counted from the IR (irgrad.analysis.cost); goal: ratio <= 3")
    flop_ratio("W1 MLP 784-256-256-10, b128", mlp_loss, mlp_args([784, 256, 256, 10], 128))
    flop_ratio("W2 MLP 1024-2048-2048-10, b512", mlp_loss, mlp_args([1024, 2048, 2048, 10], 512))
    flop_ratio("CNN 1x8x8 conv8-pool-conv16", cnn_loss, cnn_args())
    ir_growth()
    pass_speed()


if __name__ == "__main__":
    main()
