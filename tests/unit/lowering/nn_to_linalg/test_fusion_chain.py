"""`linalg-fuse-elementwise` fusing a consumer's chain on its block (fusion_chain.py) prints
exactly what rebuilding the consumer at every fusion printed, and builds each consumer once.

Compared on W7's chain and its gradient (a consumer reading one saved activation per tanh),
an MLP gradient (broadcasts, reductions, softmax) and the hand-written cases of
tests/filecheck/lowering/nn_to_linalg/linalg-fuse-elementwise.mlir. `select_inputs` (one pass
over the inputs) is checked against the pairwise definition it replaced.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter

import irgrad as ig
from irgrad.diagnostics import parse_module
from irgrad.context import make_context
from irgrad.lowering.nn_to_linalg import linalg_fuse_elementwise as fusion
from irgrad.lowering.nn_to_linalg.fusion_rules import FusedInput, loops_bounded, select_inputs
from irgrad.registry import run_pipeline

FILECHECK_CASES = Path(__file__).parents[3] / "filecheck" / "lowering" / "nn_to_linalg" / "linalg-fuse-elementwise.mlir"
TO_LINALG = (
    "nn-conv2d-to-im2col,autodiff,shard-erase-annotations,inline,symbol-dce,canonicalize,cse,dce,"
    "nn-expand-factorizations{references=false},convert-nn-to-linalg"
)


def w7_chain(x: Any, n: int) -> Any:
    for i in range(n):
        if i % 10 == 9:
            x = ig.tanh(x)
        elif i % 2 == 0:
            x = x + 0.1
        else:
            x = x * 0.9
    return x


def mlp(params: Any, x: Any) -> Any:
    h = x
    for w, b in params:
        h = ig.tanh(h @ w + b)
    return ig.sum(ig.softmax(h, axis=-1) * h) + ig.mean(h, axis=0).sum()


def _programs() -> dict[str, ModuleOp]:
    x = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal(16).astype(np.float32)),
              (rng.standard_normal((16, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32))]
    batch = rng.standard_normal((5, 8)).astype(np.float32)
    programs = {
        "w7-forward": ig.jit(lambda v: w7_chain(v, 200)).trace(x).module,
        "w7-gradient": ig.jit(ig.grad(lambda v: ig.sum(w7_chain(v, 200)))).trace(x).module,
        "mlp-gradient": ig.jit(ig.grad(mlp)).trace(params, batch).module,
    }
    out = {}
    for name, module in programs.items():
        module = module.clone()
        run_pipeline(module, TO_LINALG)
        out[name] = module
    return out


def _printed(module: ModuleOp) -> str:
    stream = StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def _fuse(module: ModuleOp, chain: bool, max_body_ops: int | None = None) -> str:
    module = module.clone()
    fusion.check_yields(module)
    fusion.fuse_module(module, recompute_limit=8, chain=chain, max_body_ops=max_body_ops)
    return _printed(module)


@pytest.mark.parametrize("max_body_ops", [None, 1000, 50])
@pytest.mark.parametrize("name", ["w7-forward", "w7-gradient", "mlp-gradient"])
def test_chain_fusion_prints_what_rebuilding_printed(name: str, max_body_ops: int | None):
    module = _programs()[name]
    assert _fuse(module, True, max_body_ops) == _fuse(module, False, max_body_ops)


def test_bodies_stay_within_max_body_ops_and_compute_the_same():
    """Rule 8: W7's chain of 1,500 ops as several generics, none over the limit, same result."""
    x = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    module = ig.jit(lambda v: w7_chain(v, 1500)).trace(x).module.clone()
    run_pipeline(module, TO_LINALG + ",linalg-fuse-elementwise")
    sizes = [sum(1 for o in op.body.block.ops if o.name not in ("arith.constant", "linalg.yield"))
             for op in module.walk() if op.name == "linalg.generic"]  # fills' constants may go past it
    assert len(sizes) > 1 and max(sizes) <= 1000
    expected = x.astype(np.float64)
    for i in range(1500):
        expected = np.tanh(expected) if i % 10 == 9 else expected + 0.1 if i % 2 == 0 else expected * 0.9
    got = ig.jit(lambda v: w7_chain(v, 1500))(x)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_chain_fusion_on_the_filecheck_cases():
    cases = FILECHECK_CASES.read_text().split("// -----")
    compared = 0
    for case in cases:
        try:
            module = parse_module(make_context(), case)
            fusion.check_yields(module)
        except Exception:
            continue  # the cases that test an error
        assert _fuse(module, chain=True) == _fuse(module, chain=False)
        compared += 1
    assert compared >= 5


def test_a_consumer_is_built_once(monkeypatch: pytest.MonkeyPatch):
    """The gradient's last generic takes in about 400 producers, yet is replaced once."""
    module = _programs()["w7-gradient"].clone()
    generics = sum(1 for op in module.walk() if op.name == "linalg.generic")
    replaced: list[Any] = []
    original = Rewriter.replace_op

    def counting(op: Any, *args: Any, **kwargs: Any) -> Any:
        replaced.append(op)
        return original(op, *args, **kwargs)

    monkeypatch.setattr(Rewriter, "replace_op", staticmethod(counting))
    fusion.fuse_module(module, recompute_limit=8, max_body_ops=None)
    assert generics > 300
    assert sum(1 for op in module.walk() if op.name == "linalg.generic") == 1
    assert len(replaced) <= 2


@dataclass(eq=False)
class _Arg:
    uses: list[int] = field(default_factory=list)


def _reference_select(inputs: list[FusedInput], output_maps: list[AffineMap], num_loops: int) -> list[int] | None:
    """The pairwise definition select_inputs had (each input against every earlier one)."""
    if not loops_bounded([*(i.map for i in inputs), *output_maps], num_loops):
        return None
    target: list[int] = []
    for n, item in enumerate(inputs):
        twins = (k for k in range(n) if target[k] == k and inputs[k].value is item.value and inputs[k].map == item.map)
        target.append(next(twins, n))
    for n in range(len(inputs)):
        if target[n] != n:
            continue
        group = [k for k in range(len(inputs)) if target[k] == n]
        if any(inputs[k].source_arg.uses for k in group):
            continue
        others = [inputs[k].map for k in range(len(inputs)) if target[k] == k and k != n]
        if loops_bounded([*others, *output_maps], num_loops):
            for k in group:
                target[k] = -1
    return target


def test_select_inputs_matches_its_pairwise_definition():
    rng = random.Random(0)
    values = [object() for _ in range(4)]
    for _ in range(2000):
        num_loops = rng.randint(1, 3)
        maps = []
        for _ in range(4):
            dims: list[AffineExpr] = [AffineDimExpr(d) for d in rng.sample(range(num_loops), rng.randint(0, num_loops))]
            maps.append(AffineMap(num_loops, 0, tuple(dims)))
        inputs = [
            FusedInput(rng.choice(values), rng.choice(maps), _Arg([1] if rng.random() < 0.5 else []))  # pyright: ignore[reportArgumentType]
            for _ in range(rng.randint(0, 6))
        ]
        outputs = [rng.choice(maps)] if rng.random() < 0.7 else []
        assert select_inputs(inputs, outputs, num_loops) == _reference_select(inputs, outputs, num_loops)
