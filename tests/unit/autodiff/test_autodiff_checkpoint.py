"""autodiff.checkpoint and the checkpoint-chain pass: recompute instead of save, bit-identically.

The memory claim is checked on the generated IR: the forward values a reverse sweep references are the
values live across it. For a chain of 64 tanh stages that is 64 values without checkpointing and O(sqrt 64)
per generated function with `checkpoint-chain`; the gradients are bit-identical either way.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.parser import Parser

import irgrad as ig
from _autodiff_harness import run_pass
from irgrad.autodiff.checkpoint_chain import CheckpointChainPass
from irgrad.backends.interpreter import run_function
from irgrad.context import make_context
from irgrad.registry import build_pipeline


def chain(stages: int) -> str:
    """@f: `stages` tanh stages, then a sum (the 65th stage); @main asks for its gradient."""
    lines = ["func.func @f(%x0: tensor<4xf64>) -> tensor<f64> {"]
    for i in range(1, stages + 1):
        lines.append(f"  %x{i} = nn.tanh %x{i - 1} : tensor<4xf64>")
    lines += [
        f"  %s = nn.reduce_sum %x{stages} axes = [0] : tensor<4xf64> -> tensor<f64>",
        "  func.return %s : tensor<f64>",
        "}",
        "func.func @main(%x: tensor<4xf64>) -> tensor<4xf64> {",
        "  %g = autodiff.grad @f(%x) : (tensor<4xf64>) -> tensor<4xf64>",
        "  func.return %g : tensor<4xf64>",
        "}",
    ]
    return "\n".join(lines)


def _parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def _functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def live_across_reverse_sweep(vjp: func.FuncOp, primal: func.FuncOp) -> int:
    """Forward values (the primal arguments and forward-sweep results) that the reverse sweep of `vjp` reads.

    The forward sweep of `@<f>_vjp` is a clone of `@f`'s body, op for op; the reverse sweep is what follows.
    The final return, which hands back the primal results, is not counted.
    """
    block = vjp.body.block
    ops = list(block.ops)
    start = len(primal.body.block.ops) - 1
    forward: set[SSAValue] = set(block.args[: len(primal.body.block.args)])
    for op in ops[:start]:
        forward.update(op.results)
    read: set[SSAValue] = set()
    for op in ops[start:-1]:
        read.update(v for nested in op.walk() for v in nested.operands if v in forward)
    return len(read)


def _live(functions: dict[str, func.FuncOp]) -> dict[str, int]:
    """`live_across_reverse_sweep` of every generated `@<f>_vjp`."""
    return {
        name: live_across_reverse_sweep(f, functions[name.removesuffix("_vjp")])
        for name, f in functions.items()
        if name.endswith("_vjp")
    }


def _gradient(module: ModuleOp, x: np.ndarray) -> np.ndarray:
    (g,) = run_function(module, "main", [x])
    return g


X = np.linspace(-1.0, 1.0, 4)


def test_without_checkpointing_every_stage_is_live_across_the_reverse_sweep() -> None:
    module = run_pass(_parse(chain(64)))
    assert _live(_functions(module)) == {"f_vjp": 64}


@pytest.mark.parametrize("segments", [0, 8, 4])
def test_checkpoint_chain_keeps_o_sqrt_n_values(segments: int) -> None:
    """64 stages in k segments: the top level keeps k boundaries, each segment's VJP its 64/k stages."""
    module = _parse(chain(64))
    CheckpointChainPass(segments=segments).apply(make_context(), module)
    module = run_pass(module)
    k = segments or 8
    live = _live(_functions(module))
    assert len(live) == k + 1
    assert live["f_vjp"] == k  # the segments' inputs
    assert max(live.values()) <= max(k, 65 // k + 1), live  # each segment's VJP holds its own stages
    if segments == 0:
        assert max(live.values()) == 8  # O(sqrt n): sqrt(64) = 8, against 64 without checkpointing


def test_checkpoint_chain_gradients_are_bit_identical() -> None:
    plain = _gradient(run_pass(_parse(chain(64))), X)
    for segments in (0, 3, 8):
        module = _parse(chain(64))
        CheckpointChainPass(segments=segments).apply(make_context(), module)
        np.testing.assert_array_equal(_gradient(run_pass(module), X), plain)


def test_checkpoint_chain_from_the_pipeline_option() -> None:
    module = _parse(chain(9))
    build_pipeline("checkpoint-chain{segments=3},autodiff").apply(make_context(), module)
    names = _functions(module)
    assert {"f_segment0", "f_segment1", "f_segment2", "f_segment0_vjp"} <= set(names)
    np.testing.assert_array_equal(_gradient(module, X), _gradient(run_pass(_parse(chain(9))), X))


def test_checkpoint_chain_leaves_functions_without_reverse_mode_requests_alone() -> None:
    text = chain(16).replace(
        "%g = autodiff.grad @f(%x) : (tensor<4xf64>) -> tensor<4xf64>",
        "%v = nn.full 1.0 : tensor<4xf64>\n"
        "  %y, %g0 = autodiff.jvp @f(%x) tangents(%v : tensor<4xf64>) : (tensor<4xf64>) -> (tensor<f64>, tensor<f64>)\n"
        "  %g = nn.broadcast_in_dim %g0 dims = [] : tensor<f64> -> tensor<4xf64>",
    )
    module = _parse(text)
    CheckpointChainPass().apply(make_context(), module)
    assert set(_functions(module)) == {"f", "main"}


# ---------------------------------------------------------------------------------------------------------------
# autodiff.checkpoint itself
# ---------------------------------------------------------------------------------------------------------------

CHECKPOINTED = """
func.func @block(%x: tensor<4xf64>, %w: tensor<4xf64>) -> tensor<4xf64> {
  %a = nn.mul %x, %w : tensor<4xf64>
  %b = nn.tanh %a : tensor<4xf64>
  %c = nn.sin %b : tensor<4xf64>
  func.return %c : tensor<4xf64>
}
func.func @f(%x: tensor<4xf64>, %w: tensor<4xf64>) -> tensor<f64> {
  %y = autodiff.checkpoint @block(%x, %w) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %z = nn.exp %y : tensor<4xf64>
  %s = nn.reduce_sum %z axes = [0] : tensor<4xf64> -> tensor<f64>
  func.return %s : tensor<f64>
}
func.func @main(%x: tensor<4xf64>, %w: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %gx, %gw = autodiff.grad @f(%x, %w) wrt [0, 1] : (tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>)
  func.return %gx, %gw : tensor<4xf64>, tensor<4xf64>
}
"""


def test_checkpoint_recomputes_the_callee_with_the_same_ops_in_the_same_order() -> None:
    module = run_pass(_parse(CHECKPOINTED))
    functions = _functions(module)
    f_vjp = functions["f_vjp"]
    callees = [op.callee.root_reference.data for op in f_vjp.walk() if isinstance(op, func.CallOp)]
    assert callees == ["block", "block_vjp"]  # forward: the call; reverse: the callee's VJP
    primal_ops = [op.name for op in functions["block"].body.block.ops][:-1]
    recomputed = [op.name for op in functions["block_vjp"].body.block.ops][: len(primal_ops)]
    assert recomputed == primal_ops


def test_checkpoint_gradients_are_bit_identical_to_inlined_code() -> None:
    inlined = CHECKPOINTED.replace(
        "%y = autodiff.checkpoint @block(%x, %w) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>",
        "%a = nn.mul %x, %w : tensor<4xf64>\n  %b = nn.tanh %a : tensor<4xf64>\n  %y = nn.sin %b : tensor<4xf64>",
    )
    w = np.array([0.5, -2.0, 1.5, 0.25])
    with_checkpoint = run_function(run_pass(_parse(CHECKPOINTED)), "main", [X, w])
    without = run_function(run_pass(_parse(inlined)), "main", [X, w])
    for a, b in zip(with_checkpoint, without, strict=True):
        np.testing.assert_array_equal(a, b)


def test_api_checkpoint_is_bit_identical_and_checks_to_second_order() -> None:
    def block(x: Any) -> Any:
        return ig.sin(ig.tanh(x) * 2.0) * x

    def loss(fn: Any) -> Any:
        return lambda x: ig.sum(ig.exp(fn(x)))

    x = np.array([0.2, -0.4, 0.9])
    np.testing.assert_array_equal(ig.grad(loss(ig.checkpoint(block)))(x), ig.grad(loss(block))(x))
    ig.check_grads(loss(ig.checkpoint(block)), [x], order=2, modes=("fwd", "rev"))
    ig.check_grads(loss(ig.checkpoint(block)), [x], order=2, modes=("rev",))
