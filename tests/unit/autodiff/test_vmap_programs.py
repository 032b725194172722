"""vmap of whole programs: the batching rules of the contractions (matmul, conv2d, im2col, col2im), max_pool2d,
the derivative-control ops (stop_gradient, checkpoint, custom_vjp), the control flow (scf.for, scf.if on a
shared or a per-example condition, scf.while) and the tensor element ops, and their combinations with
gradients: per-example gradients (vmap of grad) of a small MLP and a small CNN, and gradients of vmapped
functions.

Every check compares the vmapped function, run on the reference interpreter (an eager call) and compiled for
the CPU (`ig.jit(..., backend="cpu")`), with a Python loop over the examples (np.stack), on random float64
inputs. The rules are in irgrad/autodiff/rules/ (linear.py, pooling.py, autodiff.py, scf_batching.py,
tensor.py); the IR they make is shown in tests/filecheck/autodiff/autodiff-batch-linear.mlir.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from xdsl.parser import Parser

import irgrad as ig
from _autodiff_harness import run_pass
from irgrad.backends.interpreter import run_function
from irgrad.dialects import nn
from irgrad.context import make_context
from irgrad.tracing import primitives as lax
from irgrad.tracing.pytree import tree_flatten, tree_unflatten

B = 4  # examples per batch
TOL = {"rtol": 1e-12, "atol": 1e-12}


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _take(value: Any, axis: int | None, b: int) -> Any:
    if axis is None:
        return value
    leaves, tree = tree_flatten(value)
    return tree_unflatten(tree, [np.asarray(np.take(leaf, b, axis=axis)) for leaf in leaves])


def loop(fn: Callable[..., Any], args: Sequence[Any], in_axes: Sequence[int | None]) -> Any:
    """`fn` on each example on its own (traced unbatched, run on the interpreter), results stacked (pytrees
    leaf by leaf)."""
    single = ig.jit(fn, backend="interp")
    outs = [single(*[_take(a, ax, b) for a, ax in zip(args, in_axes)]) for b in range(B)]
    leaves = [tree_flatten(o)[0] for o in outs]
    return [np.stack([np.asarray(example[i]) for example in leaves]) for i in range(len(leaves[0]))]


def check(fn: Callable[..., Any], args: Sequence[Any], in_axes: Sequence[int | None], **tol: float) -> None:
    """vmap(fn) eagerly and compiled for the CPU, each against the loop."""
    expected = loop(fn, args, in_axes)
    mapped = ig.vmap(fn, in_axes=tuple(in_axes))
    for name, run in (("eager", mapped), ("cpu", ig.jit(mapped, backend="cpu"))):
        got = tree_flatten(run(*args))[0]
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(g), e, err_msg=name, **(tol or TOL))


MASKS2 = [(True, True), (True, False), (False, True)]


def _axes(mask: Sequence[bool]) -> list[int | None]:
    return [0 if m else None for m in mask]


def _args(rng: np.random.Generator, shapes: Sequence[tuple[int, ...]], mask: Sequence[bool]) -> list[np.ndarray]:
    return [rng.standard_normal((B, *s) if m else s) for s, m in zip(shapes, mask)]


# ---------------------------------------------------------------------------------------------------------------
# matmul, conv2d, im2col, col2im, max_pool2d
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mask", MASKS2, ids=["both", "lhs", "rhs"])
@pytest.mark.parametrize("shapes", [((3, 5), (5, 2)), ((2, 3, 5), (2, 5, 4))], ids=["2d", "batched"])
def test_matmul(mask, shapes) -> None:
    check(ig.matmul, _args(_rng(0), shapes, mask), _axes(mask))


def test_matmul_vector_times_matrix_and_per_example_axes() -> None:
    """x @ W with x a vector per example (the frontend reshapes it to 1 x K), mapped over axis 1."""
    rng = _rng(1)
    xs, w = rng.standard_normal((5, B)), rng.standard_normal((5, 3))
    check(lambda x, w: x @ w, [xs, w], [1, None])


CONV_GEOMETRIES = [
    dict(stride=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1)),
    dict(stride=(2, 1), padding=(1, 0, 0, 2), dilation=(1, 2)),
]


@pytest.mark.parametrize("mask", MASKS2, ids=["both", "input", "kernel"])
@pytest.mark.parametrize("geometry", range(len(CONV_GEOMETRIES)))
def test_conv2d(mask, geometry) -> None:
    kw = CONV_GEOMETRIES[geometry]
    fn = lambda x, w: ig.conv2d(x, w, **kw)  # noqa: E731
    check(fn, _args(_rng(2), [(2, 3, 7, 6), (4, 3, 3, 2)], mask), _axes(mask))


WINDOW = dict(kernel=[3, 2], stride=[2, 1], padding=[1, 0, 1, 1], dilation=[1, 2])


def _im2col(x):
    return lax._emit(nn.Im2ColOp(lax._v(x), WINDOW["kernel"], WINDOW["stride"], WINDOW["padding"], WINDOW["dilation"]))


def _col2im(columns):
    return lax._emit(
        nn.Col2ImOp(
            lax._v(columns), [2, 3, 7, 6], WINDOW["kernel"], WINDOW["stride"], WINDOW["padding"], WINDOW["dilation"]
        )
    )


def test_im2col_and_col2im() -> None:
    """The columns' layout [(c, kh, kw), (n, oh, ow)] keeps each example's columns contiguous only after the
    batch is moved out of the column dimension: both rules are checked against the loop."""
    rng = _rng(3)
    images = rng.standard_normal((B, 2, 3, 7, 6))
    check(_im2col, [images], [0])
    columns = rng.standard_normal((B, *ig.jit(_im2col, backend="interp")(images[0]).shape))
    check(_col2im, [columns], [0])
    check(lambda x: _col2im(_im2col(x) * 2.0), [images], [0])


def test_max_pool2d() -> None:
    rng = _rng(4)
    x = rng.standard_normal((B, 2, 3, 7, 6))
    x[1, 0, 0, :2, :2] = 1.5  # a tie in a window
    check(lambda x: ig.max_pool2d(x, (3, 2), stride=(2, 1), padding=(1, 1, 0, 1)), [x], [0])


# ---------------------------------------------------------------------------------------------------------------
# stop_gradient, checkpoint, custom_vjp
# ---------------------------------------------------------------------------------------------------------------


def test_stop_gradient_and_checkpoint() -> None:
    rng = _rng(5)
    xs, w = rng.standard_normal((B, 3, 5)), rng.standard_normal((5, 2))

    def block(x, w):
        return ig.tanh(ig.matmul(x, w))

    def f(x, w):
        return ig.checkpoint(block)(x, w) + ig.stop_gradient(x @ w) * 0.5

    check(f, [xs, w], [0, None])

    def loss(w, xs):
        return ig.sum(ig.vmap(f, in_axes=(0, None))(xs, w))

    # stop_gradient keeps the second term out of the gradient; checkpoint recomputes block's forward.
    expected = sum(x.T @ (1 - np.tanh(x @ w) ** 2) for x in xs)
    np.testing.assert_allclose(ig.grad(loss)(w, xs), expected, **TOL)
    np.testing.assert_allclose(ig.jit(ig.grad(loss), backend="cpu")(w, xs), expected, **TOL)


@ig.custom_vjp
def _scaled(x, w):
    return x * w, w * 2.0  # the second result is the same for every example when only x is mapped


def _scaled_fwd(x, w):
    return _scaled(x, w), (x, w)


def _scaled_bwd(residuals, cts):
    x, w = residuals
    g, h = cts
    return 3.0 * g * w, 5.0 * g * x + 7.0 * h  # deliberately not the derivative: tells which rule ran


_scaled.defvjp(_scaled_fwd, _scaled_bwd)


def _custom_loss(x, w):
    y, z = _scaled(x, w)
    return ig.sum(y) + ig.sum(z * z)


def test_custom_vjp_primal_and_per_example_gradients() -> None:
    rng = _rng(6)
    xs, w = rng.standard_normal((B, 3)), rng.standard_normal(3)
    check(lambda x, w: _scaled(x, w), [xs, w], [0, None])
    check(lambda x, w: _scaled(x, w), [xs, np.stack([w] * B)], [0, 0])
    # vmap of grad: the gradient is expanded first, into calls of the user's fwd and bwd, then batched.
    check(ig.grad(_custom_loss, argnums=(0, 1)), [xs, w], [0, None])


def test_custom_vjp_gradient_of_the_vmapped_function_uses_the_user_rule() -> None:
    """grad after vmap: the batched custom_vjp keeps the user's (batched) fwd and bwd. The cotangent of the
    unmapped w is the sum of the examples' (including bwd's 7 * h, h = 2 * 2w, once per example)."""
    rng = _rng(7)
    xs, w = rng.standard_normal((B, 3)), rng.standard_normal(3)

    def loss(xs, w):
        return ig.sum(ig.vmap(_custom_loss, in_axes=(0, None))(xs, w))

    grad = ig.grad(loss, argnums=(0, 1))
    expected_x = np.broadcast_to(3.0 * w, xs.shape)
    expected_w = 5.0 * xs.sum(axis=0) + B * 7.0 * 4.0 * w
    for run in (grad, ig.jit(grad, backend="cpu")):
        gx, gw = run(xs, w)
        np.testing.assert_allclose(gx, expected_x, **TOL)
        np.testing.assert_allclose(gw, expected_w, **TOL)


# ---------------------------------------------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------------------------------------------


def _branchy(x, w):
    return ig.cond(ig.sum(x) > 0, lambda v: ig.sin(v) * w, lambda v: ig.cos(v) + w, x)


def test_cond_with_a_per_example_predicate_selects() -> None:
    xs = _rng(8).standard_normal((B, 3))
    xs[0] = np.abs(xs[0])
    xs[1] = -np.abs(xs[1])  # both ways taken
    w = _rng(9).standard_normal(3)
    check(_branchy, [xs, w], [0, None])
    check(_branchy, [xs, np.stack([w] * B)], [0, 0])
    # Results that are the same for every example in each branch still differ per example after the select.
    check(lambda x, w: ig.cond(ig.sum(x) > 0, lambda: w * 2.0, lambda: w - 1.0), [xs, w], [0, None])
    # A non-bool predicate (compared with 0), and a result both branches take from outside.
    check(lambda x, w: ig.cond(ig.sum(x), lambda: (x * 2.0, w), lambda: (x, w)), [xs, w], [0, None])


def test_cond_with_a_shared_predicate_keeps_the_branch() -> None:
    rng = _rng(10)
    xs, w = rng.standard_normal((B, 3)), rng.standard_normal(3)
    fn = lambda x, w: ig.cond(ig.sum(w) > 0, lambda v: ig.sin(v) * w, lambda v: w + 0.0, x)  # noqa: E731
    for sign in (1.0, -1.0):
        check(fn, [xs, sign * w], [0, None])


def test_cond_nan_in_the_branch_not_taken_stays_out() -> None:
    """log of a negative number in the branch an example does not take: the select discards it."""
    xs = np.array([[1.0, 2.0], [-1.0, -3.0], [4.0, 0.5], [-2.0, -0.1]])
    check(lambda x: ig.cond(ig.sum(x) > 0, lambda v: ig.log(v), lambda v: v * 2.0, x), [xs], [0])


def test_fori_loop_with_a_per_example_carry() -> None:
    rng = _rng(11)
    xs, w = rng.standard_normal((B, 3)), rng.standard_normal(3)
    check(lambda x, w: ig.fori_loop(0, 4, lambda i, c: ig.tanh(c * w + i), x), [xs, w], [0, None])
    # The carry starts shared (w) and becomes per-example in the body: found by iterating to a fixed point;
    # the second carried value stays shared.
    check(lambda x, w: ig.fori_loop(0, 3, lambda i, c: (c[0] * 0.5 + x, c[1] + 1.0), (w, w)), [xs, w], [0, None])
    # A per-example cond inside the loop body (its select is made in the body).
    body = lambda i, c: ig.cond(ig.sum(c) > 0, lambda v: v - 1.0, lambda v: v * w + 0.5, c)  # noqa: E731
    check(lambda x, w: ig.fori_loop(0, 4, body, x), [xs, w], [0, None])
    # A shared carry indexing a per-example array with the loop counter.
    seq = rng.standard_normal((B, 5, 3))
    check(lambda s, w: ig.fori_loop(0, 5, lambda i, c: c * 0.9 + s[i] * w, w), [seq, w], [0, None])


def test_while_loop_with_a_shared_condition() -> None:
    rng = _rng(12)
    xs, w = rng.standard_normal((B, 3)), rng.standard_normal(3)
    fn = lambda x, w: ig.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, ig.sin(c[1]) + w), (0, x))  # noqa: E731
    check(fn, [xs, w], [0, None])


def test_nested_functions_are_batched_once() -> None:
    """A jitted function (inlined), a call the frontend emits (ig.vjp calls the primal), and a nested vmap."""
    rng = _rng(13)
    xs, w = rng.standard_normal((B, 2, 3)), rng.standard_normal((3, 4))
    inner = ig.jit(lambda x, w: ig.tanh(ig.matmul(x, w)))

    def f(x, w):
        y, pullback = ig.vjp(inner, x, w)
        (gx, gw) = pullback(ig.ones_like(y))
        return y + 1.0, gx, gw

    check(f, [xs, w], [0, None])
    rows = lambda x, w: ig.vmap(lambda r: ig.sum(r * w[:, 0]))(x)  # noqa: E731
    check(rows, [xs, w], [0, None])


# ---------------------------------------------------------------------------------------------------------------
# Per-example gradients and gradients of vmapped functions
# ---------------------------------------------------------------------------------------------------------------


def _mlp_loss(params, x, y):
    h = ig.tanh(x @ params["w1"] + params["b1"])
    return ig.mean((h @ params["w2"] - y) ** 2)


def _cnn_loss(params, x, y):
    h = ig.conv2d(x[None], params["k"], padding=(1, 1, 1, 1))
    h = ig.max_pool2d(ig.tanh(h), (2, 2))
    return ig.mean((ig.reshape(h, (-1,)) @ params["w"] - y) ** 2)


def test_per_example_gradients_of_an_mlp() -> None:
    rng = _rng(14)
    params = {"w1": rng.standard_normal((5, 8)), "b1": rng.standard_normal(8), "w2": rng.standard_normal((8, 3))}
    xs, ys = rng.standard_normal((B, 5)), rng.standard_normal((B, 3))
    check(ig.grad(_mlp_loss), [params, xs, ys], [None, 0, 0])


def test_per_example_gradients_of_a_cnn() -> None:
    rng = _rng(15)
    params = {"k": rng.standard_normal((4, 2, 3, 3)), "w": rng.standard_normal((4 * 3 * 3, 2))}
    xs, ys = rng.standard_normal((B, 2, 6, 7)), rng.standard_normal((B, 2))
    check(ig.grad(_cnn_loss), [params, xs, ys], [None, 0, 0], rtol=1e-11, atol=1e-11)


def test_per_example_gradients_through_cond_and_loops() -> None:
    rng = _rng(16)
    xs, w = rng.standard_normal((B, 3)), rng.standard_normal(3)
    xs[0], xs[1] = np.abs(xs[0]), -np.abs(xs[1])

    def f(w, x):
        y = ig.cond(ig.sum(x) > 0, lambda v: ig.sin(v * w), lambda v: v * v * w, x)
        y = ig.fori_loop(0, 3, lambda i, c: ig.tanh(c * w + 0.1), y)
        return ig.sum(ig.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, ig.sin(c[1]) * w), (0, y))[1])

    check(ig.grad(f, argnums=(0, 1)), [w, xs], [None, 0])
    # And the other order: the gradient of the batched loops.
    loss = lambda w, xs: ig.sum(ig.vmap(f, in_axes=(None, 0))(w, xs))  # noqa: E731
    expected = ig.grad(lambda w: sum(f(w, x) for x in xs))(w)
    for run in (ig.grad(loss), ig.jit(ig.grad(loss), backend="cpu")):
        np.testing.assert_allclose(run(w, xs), expected, **TOL)


def test_gradient_of_a_vmapped_function() -> None:
    rng = _rng(17)
    params = {"w1": rng.standard_normal((5, 8)), "b1": rng.standard_normal(8), "w2": rng.standard_normal((8, 3))}
    xs, ys = rng.standard_normal((B, 5)), rng.standard_normal((B, 3))

    def batch_loss(params, xs, ys):
        return ig.sum(ig.vmap(_mlp_loss, in_axes=(None, 0, 0))(params, xs, ys))

    expected = ig.grad(lambda p: sum(_mlp_loss(p, x, y) for x, y in zip(xs, ys)))(params)
    for run in (ig.grad(batch_loss), ig.jit(ig.grad(batch_loss), backend="cpu")):
        got = run(params, xs, ys)
        for k in params:
            np.testing.assert_allclose(got[k], expected[k], **TOL)

    cnn = {"k": rng.standard_normal((4, 2, 3, 3)), "w": rng.standard_normal((4 * 3 * 3, 2))}
    images, targets = rng.standard_normal((B, 2, 6, 7)), rng.standard_normal((B, 2))

    def cnn_batch_loss(params, xs, ys):
        return ig.sum(ig.vmap(_cnn_loss, in_axes=(None, 0, 0))(params, xs, ys))

    expected = ig.grad(lambda p: sum(_cnn_loss(p, x, y) for x, y in zip(images, targets)))(cnn)
    got = ig.jit(ig.grad(cnn_batch_loss), backend="cpu")(cnn, images, targets)
    for k in cnn:
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-11, atol=1e-11)

    # Through a per-example cond, differentiated after batching (the select's VJP).
    xs3 = rng.standard_normal((B, 3))
    xs3[0], xs3[1] = np.abs(xs3[0]), -np.abs(xs3[1])
    w = rng.standard_normal(3)
    loss = lambda w, xs: ig.sum(ig.vmap(_branchy, in_axes=(0, None))(xs, w))  # noqa: E731
    expected = ig.grad(lambda w: sum(ig.sum(_branchy(x, w)) for x in xs3))(w)
    np.testing.assert_allclose(ig.jit(ig.grad(loss), backend="cpu")(w, xs3), expected, **TOL)


# ---------------------------------------------------------------------------------------------------------------
# Batched scalars (tensor element ops), at the IR level
# ---------------------------------------------------------------------------------------------------------------

SCALARS = """
func.func @f(%x: tensor<2x3xf64>, %s: f64, %y: tensor<3xf64>)
    -> (tensor<2xf64>, tensor<2x3xf64>, tensor<4xf64>, tensor<3xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = tensor.extract %x[%c1, %c2] : tensor<2x3xf64>
  %pair = tensor.from_elements %e, %s : tensor<2xf64>
  %put = tensor.insert %s into %x[%c0, %c1] : tensor<2x3xf64>
  %splat = tensor.splat %e : tensor<4xf64>
  %put_e = tensor.insert %e into %y[%c2] : tensor<3xf64>
  func.return %pair, %put, %splat, %put_e : tensor<2xf64>, tensor<2x3xf64>, tensor<4xf64>, tensor<3xf64>
}
func.func @per_example(%xs: tensor<4x2x3xf64>, %s: f64, %y: tensor<3xf64>)
    -> (tensor<4x2xf64>, tensor<4x2x3xf64>, tensor<4x4xf64>, tensor<4x3xf64>) {
  %a, %b, %c, %d = autodiff.batch @f(%xs, %s, %y) in_axes = [0, -1, -1] out_axes = [0, 0, 0, 0]
      : (tensor<4x2x3xf64>, f64, tensor<3xf64>) -> (tensor<4x2xf64>, tensor<4x2x3xf64>, tensor<4x4xf64>, tensor<4x3xf64>)
  func.return %a, %b, %c, %d : tensor<4x2xf64>, tensor<4x2x3xf64>, tensor<4x4xf64>, tensor<4x3xf64>
}
"""


def test_tensor_element_ops_on_batched_scalars() -> None:
    """An element of a per-example tensor is a batched scalar tensor<B x f64>: extracted, put into a tensor
    (from_elements, insert, splat), or a shared scalar inserted into a per-example tensor."""
    module = run_pass(Parser(make_context(), SCALARS).parse_module())
    rng = _rng(18)
    xs, s, y = rng.standard_normal((B, 2, 3)), np.float64(0.75), rng.standard_normal(3)
    got = run_function(module, "per_example", [xs, s, y])
    singles = [run_function(module, "f", [x, s, y]) for x in xs]
    for k in range(4):
        np.testing.assert_array_equal(got[k], np.stack([np.asarray(one[k]) for one in singles]))


# Loops whose trip count differs per example (a per-example while_loop condition, per-example fori_loop bounds)
# and tensor.extract/insert at per-example positions: tests/unit/autodiff/test_vmap_loops.py.
