"""The batching (vmap) rules of the reductions, the data-movement ops, the bitwise ops and index_cast.

Each case is an unbatched function `f` of a few arguments. For every choice of which arguments are mapped
(all but "none"), `ig.vmap(f, in_axes)` is run on the reference interpreter (an eager call) and compiled
for the CPU, and compared with a Python loop that calls `f` on each example (np.stack of the results), on
random float64 data and int32 indices that include negative and out-of-range ones. Some cases map an axis
other than the first and stack the results along another one. Gradients through a vmapped function and
per-example gradients (vmap of grad) are compared with loops too.

The rules are in irgrad/autodiff/rules/ (reduction.py, data_movement.py, elementwise.py); the IR they make
is shown in tests/filecheck/autodiff/autodiff-batch.mlir.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, ModuleOp, TensorType, i64
from xdsl.ir import Block, Region
from xdsl.parser import Parser

import irgrad as ig
from _autodiff_harness import run_pass
from irgrad.autodiff.batching import BatchBuilder, batched, batched_type
from irgrad.backends.interpreter import run_function
from irgrad.dialects import nn
from irgrad.context import make_context
from irgrad.tracing import primitives as lax

B = 3  # examples per batch

Gen = Callable[[np.random.Generator], np.ndarray]


def normal(*shape: int) -> Gen:
    return lambda rng: rng.standard_normal(shape)


def ints(low: int, high: int, *shape: int) -> Gen:
    """int32 in [low, high): indices and start positions, chosen to reach outside the valid range."""
    return lambda rng: rng.integers(low, high, shape).astype(np.int32)


def bits(*shape: int) -> Gen:
    return lambda rng: rng.integers(-(2**31), 2**31, shape).astype(np.int32)


def shifts(*shape: int) -> Gen:
    return lambda rng: rng.integers(-2, 35, shape).astype(np.int32)


@dataclass
class Case:
    name: str
    fn: Callable[..., Any]
    args: Sequence[Gen]
    masks: Sequence[Sequence[bool]] | None = None
    """Which arguments are mapped, one tuple per run; None: every combination but none."""
    axes: Sequence[tuple[int, int]] = ((0, 0),)
    """(in axis of every mapped argument, out_axes) pairs to run."""
    exact: bool = True
    marks: list[Any] = field(default_factory=list)

    def __str__(self) -> str:
        return self.name


def all_masks(n: int) -> list[tuple[bool, ...]]:
    return [m for m in itertools.product([True, False], repeat=n) if any(m)]


# ---------------------------------------------------------------------------------------------------------------
# The loop reference and the check
# ---------------------------------------------------------------------------------------------------------------


def example(value: np.ndarray, axis: int | None, b: int) -> np.ndarray:
    # np.asarray: np.take of a vector gives a numpy scalar, which irgrad would lift as a weakly typed Python float.
    return value if axis is None else np.asarray(np.take(value, b, axis=axis))


def loop(
    fn: Callable[..., Any], args: Sequence[np.ndarray], in_axes: Sequence[int | None], out_axes: int
) -> np.ndarray:
    """`fn` on each example on its own (traced unbatched and run on the interpreter), stacked at `out_axes`."""
    unbatched = ig.jit(fn, backend="interp")
    outs = [np.asarray(unbatched(*[example(a, ax, b) for a, ax in zip(args, in_axes)])) for b in range(B)]
    return np.stack(outs, axis=out_axes)


def arg_axis(axis: int, rank: int) -> int:
    """`axis` for an argument of an example of `rank`: a rank-0 argument can only be mapped at 0 (or -1)."""
    return axis if axis < 0 else min(axis, rank)


def mapped_args(rng: np.random.Generator, gens: Sequence[Gen], mask: Sequence[bool], axis: int) -> list[np.ndarray]:
    out = []
    for gen, mapped in zip(gens, mask):
        if mapped:
            examples = [np.asarray(gen(rng)) for _ in range(B)]
            out.append(np.stack(examples, axis=arg_axis(axis, examples[0].ndim)))
        else:
            out.append(np.asarray(gen(rng)))
    return out


def assert_matches(actual: Any, expected: np.ndarray, exact: bool, what: str) -> None:
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, expected {expected.dtype}"
    if exact:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12, err_msg=what)


def check(case: Case, mask: Sequence[bool], axis: int, out_axes: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    args = mapped_args(rng, case.args, mask, axis)
    in_axes = [arg_axis(axis, a.ndim - 1) if m else None for a, m in zip(args, mask)]
    expected = loop(case.fn, args, in_axes, out_axes)
    mapped = ig.vmap(case.fn, in_axes=tuple(in_axes), out_axes=out_axes)
    assert_matches(mapped(*args), expected, case.exact, f"{case} {mask}: interpreter")
    assert_matches(ig.jit(mapped, backend="cpu")(*args), expected, case.exact, f"{case} {mask}: cpu")


# ---------------------------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------------------------


def window(x, i, j):
    return lax.dynamic_slice(x, [i, j], [2, 3])


def row(x, i):  # x[i]: the frontend wraps a negative i, then dynamic_slice clamps
    return x[i]


def update_window(x, u, i, j):
    return lax.dynamic_update_slice(x, u, [i, j])


def i32_starts(fn):
    """`fn(x, *starts)` given i32 start scalars (tensor.extract, no index_cast): the rules' other index type."""

    def with_i32(x, *rest):
        *tensors, i = rest
        return fn(x, *tensors, lax.extract_scalar(i))

    return with_i32


def window_i32(x, i):
    return i32_starts(lambda x, s: lax._emit(nn.DynamicSliceOp(lax._v(x), [s, s], [2, 2])))(x, i)


def update_i32(x, u, i):
    return i32_starts(lambda x, u, s: lax._emit(nn.DynamicUpdateSliceOp(lax._v(x), lax._v(u), [s, s])))(x, u, i)


def cross_entropy(logits, label):
    """The per-example loss of a classifier: take_along_axis of a label (nn.gather on both batched values)."""
    return -ig.take_along_axis(ig.log_softmax(logits), label[None], axis=0)[0]


CASES = [
    # Reductions: the axes shift by one past the batch.
    Case("reduce_sum", lambda x: ig.sum(x, axis=1), [normal(3, 4)], axes=[(0, 0), (-1, 1)], exact=False),
    Case("reduce_sum_keepdims_all", lambda x: ig.sum(x, axis=(0, 1), keepdims=True), [normal(3, 4)], exact=False),
    Case("reduce_sum_to_scalar", lambda x: ig.sum(x), [normal(2, 3)], axes=[(1, 0)], exact=False),
    Case("reduce_max", lambda x: ig.amax(x, axis=0), [normal(3, 4)], axes=[(0, 0), (2, 1)]),
    Case("reduce_min_keepdims", lambda x: ig.amin(x, axis=(0, 2), keepdims=True), [normal(2, 3, 4)]),
    # Shapes.
    Case(
        "broadcast_in_dim",
        lambda x: lax.broadcast_in_dim(x, [2, 3, 4], [0, 2]),
        [normal(2, 1)],
        axes=[(0, 0), (1, 3)],
    ),
    Case("broadcast_to", lambda x: ig.broadcast_to(x, (2, 3)), [normal(3)], axes=[(0, 0), (0, 2)]),
    Case("reshape", lambda x: ig.reshape(x, (2, 6)), [normal(3, 4)], axes=[(0, 0), (1, 2)]),
    Case("reshape_to_scalar", lambda x: ig.reshape(x, ()), [normal(1, 1)]),
    Case("transpose", lambda x: ig.transpose(x, (2, 0, 1)), [normal(2, 3, 4)], axes=[(0, 0), (-1, 1)]),
    Case("slice", lambda x: x[1:3, ::-2], [normal(4, 5)], axes=[(0, 0), (1, 1)]),
    # concatenate: shared inputs are broadcast.
    Case(
        "concatenate_0",
        lambda a, b, c: ig.concatenate([a, b, c], axis=0),
        [normal(2, 3), normal(1, 3), normal(4, 3)],
    ),
    Case(
        "concatenate_1",
        lambda a, b, c: ig.concatenate([a, b, c], axis=1),
        [normal(2, 3), normal(2, 1), normal(2, 2)],
        masks=[(True, False, True), (False, True, False)],
        axes=[(1, 0), (0, 2)],
    ),
    # pad: a shared padding value, or one per example.
    Case("pad", lambda x, v: ig.pad(x, ((1, 2), (0, 1)), constant_values=v), [normal(2, 3), normal()]),
    Case("pad_int", lambda x, v: ig.pad(x, ((2, 1),), constant_values=v), [ints(-9, 9, 3), ints(-9, 9)]),
    Case("pad_nothing", lambda x, v: ig.pad(x, ((0, 0),), constant_values=v), [normal(3), normal()], axes=[(0, 1)]),
    # Dynamic slices: a shared start, or one per example (as gathers), clamped to stay inside.
    Case("dynamic_slice", window, [normal(4, 5), ints(-2, 6), ints(-2, 6)], axes=[(0, 0), (1, 2)]),
    Case("dynamic_slice_full_width", lambda x, i: lax.dynamic_slice(x, [0, i], [2, 5]), [normal(4, 5), ints(-3, 9)]),
    Case("getitem_dynamic", row, [normal(5, 3), ints(-7, 7)]),
    Case("dynamic_slice_i32", window_i32, [normal(4, 5), ints(-2, 6)]),
    Case("dynamic_update_slice_i32", update_i32, [normal(4, 5), normal(2, 2), ints(-2, 6)]),
    Case("dynamic_update_slice", update_window, [normal(4, 5), normal(2, 3), ints(-2, 6), ints(-2, 6)]),
    Case(
        "dynamic_update_slice_full_width",
        lambda x, u, i: lax.dynamic_update_slice(x, u, [i, 0]),
        [normal(4, 3), normal(2, 3), ints(-2, 6)],
    ),
    Case(
        "dynamic_update_slice_rows",
        lambda x, u, i: lax.dynamic_update_slice(x, u, [0, i]),
        [normal(4, 3), normal(4, 1), ints(-2, 6)],
        axes=[(0, 0), (1, 1)],
    ),
    # gather: nn.gather's indices count from the end when negative and clamp when out of range.
    Case("gather_0", lambda x, i: ig.take(x, i, axis=0), [normal(5, 3), ints(-8, 8, 4)], axes=[(0, 0), (1, 1)]),
    Case("gather_1", lambda x, i: ig.take(x, i, axis=1), [normal(2, 5, 3), ints(-8, 8, 2, 3)], axes=[(0, 0), (-1, 2)]),
    Case("gather_last_scalar_index", lambda x, i: ig.take(x, i, axis=2), [normal(2, 3, 4), ints(-6, 6)]),
    Case("gather_i64", lambda x, i: ig.take(x, i, axis=0), [normal(4), lambda rng: rng.integers(-6, 6, 3)]),
    Case("take_along_axis", cross_entropy, [normal(5), ints(0, 5)], exact=False),
    # scatter_add: repeated indices accumulate.
    Case(
        "scatter_add_0",
        lambda x, i, u: lax.scatter_add(x, i, u, 0),
        [normal(4, 2), ints(-6, 6, 5), normal(5, 2)],
        exact=False,
    ),
    Case(
        "scatter_add_1",
        lambda x, i, u: lax.scatter_add(x, i, u, 1),
        [normal(2, 4, 3), ints(-6, 6, 2, 2), normal(2, 2, 2, 3)],
        axes=[(0, 0), (1, 2)],
        exact=False,
    ),
    # Bitwise and shifts: the elementwise rule (they are nn.ElementwiseBinaryOp).
    Case("bitwise_and", ig.bitwise_and, [bits(4), bits(4)]),
    Case("bitwise_or", ig.bitwise_or, [bits(4), bits(4)]),
    Case("bitwise_xor", ig.bitwise_xor, [bits(2, 3), bits(3)]),
    Case("left_shift", ig.left_shift, [bits(4), shifts(4)]),
    Case("right_shift", ig.right_shift, [bits(4), shifts(4)]),
]


def runs():
    for case in CASES:
        masks = case.masks if case.masks is not None else all_masks(len(case.args))
        for mask in masks:
            for axis, out_axes in case.axes:
                label = "".join("B" if m else "-" for m in mask)
                yield pytest.param(case, mask, axis, out_axes, id=f"{case}-{label}-in{axis}-out{out_axes}")


@pytest.mark.parametrize("case,mask,axis,out_axes", list(runs()))
def test_rule_matches_a_loop(case: Case, mask: Sequence[bool], axis: int, out_axes: int) -> None:
    check(case, mask, axis, out_axes)


# ---------------------------------------------------------------------------------------------------------------
# Gradients: of a vmapped function, and per example (vmap of grad)
# ---------------------------------------------------------------------------------------------------------------


def classifier_loss(w, x, label):
    """Logits w @ x written with broadcast_in_dim and reduce_sum, then a cross-entropy: a gather of the label."""
    logits = ig.sum(w * x[None, :], axis=1)
    return cross_entropy(logits, label)


def picked_row_loss(w, x, i):
    """w[i] (a dynamic_slice; its gradient is a dynamic_update_slice into zeros) against x."""
    return ig.sum(ig.tanh(w[i] * x))


def classifier_data(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal((4, 3)), rng.standard_normal((B, 3)), rng.integers(0, 4, B).astype(np.int32)]


def row_data(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal((5, 3)), rng.standard_normal((B, 3)), np.array([1, -1, 7][:B], np.int32)]


GRAD_CASES = [
    pytest.param(classifier_loss, classifier_data, id="gather"),
    pytest.param(picked_row_loss, row_data, id="dynamic_slice"),
]


def per_example(fn: Callable[..., Any], w: np.ndarray, xs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.stack([np.asarray(fn(w, xs[b], labels[b])) for b in range(B)])


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("loss,data", GRAD_CASES)
def test_grad_of_vmap(loss, data, backend: str) -> None:
    """The gradient of the batch's total loss: reverse mode through the batched function."""
    w, xs, labels = data(np.random.default_rng(5))

    def total(w, xs, labels):
        return ig.sum(ig.vmap(loss, in_axes=(None, 0, 0))(w, xs, labels))

    grad = ig.grad(total)
    if backend == "cpu":
        grad = ig.jit(grad, backend="cpu")
    expected = per_example(ig.jit(ig.grad(loss), backend="interp"), w, xs, labels).sum(axis=0)
    np.testing.assert_allclose(grad(w, xs, labels), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("loss,data", GRAD_CASES)
def test_per_example_gradients(loss, data, backend: str) -> None:
    """vmap of grad: each example's gradient (the batched function is the gradient's, whose gather VJP is a
    scatter_add with per-example indices, whose dynamic_slice VJP a dynamic_update_slice at per-example starts)."""
    w, xs, labels = data(np.random.default_rng(6))
    per = ig.vmap(ig.grad(loss), in_axes=(None, 0, 0))
    if backend == "cpu":
        per = ig.jit(per, backend="cpu")
    expected = per_example(ig.jit(ig.grad(loss), backend="interp"), w, xs, labels)
    np.testing.assert_allclose(per(w, xs, labels), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("loss,data", GRAD_CASES)
def test_per_example_gradients_out_axes(loss, data) -> None:
    """Per-example gradients stacked along the last axis, examples taken from axis 1 of the inputs."""
    w, xs, labels = data(np.random.default_rng(7))
    per = ig.vmap(ig.grad(loss), in_axes=(None, 1, 0), out_axes=-1)
    expected = per_example(ig.jit(ig.grad(loss), backend="interp"), w, xs, labels)
    np.testing.assert_allclose(per(w, xs.T, labels), np.moveaxis(expected, 0, -1), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# Batched indices: index_cast both ways, and a shared index made per-example
# ---------------------------------------------------------------------------------------------------------------

INDICES = """
func.func @f(%x: tensor<5xf64>, %i: tensor<i32>) -> (tensor<2xf64>, tensor<i64>, tensor<i32>) {
  %j = tensor.extract %i[] : tensor<i32>
  %k = arith.index_cast %j : i32 to index
  %w = nn.dynamic_slice %x[%k] sizes = [2] : tensor<5xf64>, index -> tensor<2xf64>
  %wide = arith.index_cast %k : index to i64
  %narrow = arith.index_cast %k : index to i32
  %a = tensor.from_elements %wide : tensor<i64>
  %b = tensor.from_elements %narrow : tensor<i32>
  func.return %w, %a, %b : tensor<2xf64>, tensor<i64>, tensor<i32>
}
func.func @g(%x: tensor<5xf64>, %i: tensor<3xi32>) -> (tensor<3x2xf64>, tensor<3xi64>, tensor<3xi32>) {
  %w, %a, %b = autodiff.batch @f(%x, %i) in_axes = [-1, 0] out_axes = [0, 0, 0]
      : (tensor<5xf64>, tensor<3xi32>) -> (tensor<3x2xf64>, tensor<3xi64>, tensor<3xi32>)
  func.return %w, %a, %b : tensor<3x2xf64>, tensor<3xi64>, tensor<3xi32>
}
"""


def test_index_cast_carries_a_batched_index_as_i64() -> None:
    """A per-example index is a tensor<B x i64> (nn tensors hold no index): index_cast to it and back are
    nn.convert (or nothing), and the dynamic_slice reads it as per-example start positions."""
    module = run_pass(Parser(make_context(), INDICES).parse_module())
    text = str(module)
    assert "nn.convert %i : tensor<3xi32> -> tensor<3xi64>" in text
    x, i = np.arange(5.0), np.array([-4, 2, 9], np.int32)
    got = run_function(module, "g", [x, i])
    singles = [run_function(module, "f", [x, np.asarray(k)]) for k in i]
    for k in range(3):
        assert_matches(got[k], np.stack([np.asarray(one[k]) for one in singles]), True, f"result #{k}")


def test_a_shared_index_broadcast_to_the_batch() -> None:
    """`batched` of an index scalar: cast to i64, then splat to the batch."""
    assert batched_type(IndexType(), 4) == TensorType(i64, [4])
    block = Block()
    b = BatchBuilder(block)
    seven = b.value(arith.ConstantOp.from_int_and_width(7, IndexType()))
    value = batched(b, seven, 4)
    block.add_op(func.ReturnOp(value))
    module = ModuleOp([func.FuncOp("h", ([], [value.type]), Region(block))])
    module.verify()
    np.testing.assert_array_equal(run_function(module, "h", [])[0], np.full(4, 7, np.int64))
