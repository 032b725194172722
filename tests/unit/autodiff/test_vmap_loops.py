"""vmap of loops whose trip count differs per example, and of element reads/writes at per-example positions.

- ig.while_loop whose condition depends on a mapped argument: as in JAX, the batched loop runs while any
  example's condition holds and freezes the examples that are done (rules/scf.py, `_per_example_while`);
- ig.fori_loop whose bounds depend on a mapped argument: the equivalent while loop, batched (`_for_as_while`),
  its counter a batched index;
- tensor.extract / tensor.insert at a position that differs per example: a per-example gather / select
  (rules/tensor.py), the position clamped into the tensor as the dynamic slices clamp theirs.

Every check compares the vmapped function, eager (reference interpreter) and compiled for the CPU, with a
Python loop over the examples of the unbatched function; the inputs give the examples different trip counts,
0 and 1 included. Gradients (vmap of grad, grad of vmap) are checked against the loop of per-example
gradients, and against central differences where the trip count is locally constant. The IR is shown in
tests/filecheck/autodiff/autodiff-batch-loops.mlir.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import tensor
from xdsl.parser import Parser

import irgrad as ig
from _autodiff_harness import run_pass
from irgrad.backends.interpreter import run_function
from irgrad.context import make_context
from irgrad.tracing import primitives as lax

TOL = {"rtol": 1e-12, "atol": 1e-12}


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _loop(fn: Callable[..., Any], args: Sequence[Any], in_axes: Sequence[int | None]) -> np.ndarray:
    """`fn` on each example on its own (traced unbatched, on the interpreter), stacked."""
    single = ig.jit(fn, backend="interp")
    size = next(np.shape(a)[0] for a, ax in zip(args, in_axes) if ax is not None)
    # np.asarray: a 0-d array, not a numpy scalar (np.float64 is a Python float, which would be weakly typed)
    outs = [single(*[a if ax is None else np.asarray(a[b]) for a, ax in zip(args, in_axes)]) for b in range(size)]
    return np.stack([np.asarray(o) for o in outs])


def check(fn: Callable[..., Any], args: Sequence[Any], in_axes: Sequence[int | None], **tol: float) -> None:
    """vmap(fn), eagerly and compiled for the CPU, against the loop over the examples."""
    expected = _loop(fn, args, in_axes)
    mapped = ig.vmap(fn, in_axes=tuple(in_axes))
    for name, run in (("eager", mapped), ("cpu", ig.jit(mapped, backend="cpu"))):
        np.testing.assert_allclose(np.asarray(run(*args)), expected, err_msg=name, **(tol or TOL))


def central_difference(fn: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[k] = eps
        grad[k] = (fn(x + step) - fn(x - step)) / (2 * eps)
    return grad


# ---------------------------------------------------------------------------------------------------------------
# while_loop with a per-example condition
# ---------------------------------------------------------------------------------------------------------------

THRESHOLD = 10.0


def grow(x):
    """Double-ish until the sum passes the threshold (0 iterations when it already does)."""
    return ig.while_loop(lambda c: ig.sum(c) < THRESHOLD, lambda c: c * 2.0 + 0.1 * ig.sin(c), x)


def grow_trips(x: np.ndarray) -> int:
    trips = 0
    while x.sum() < THRESHOLD:
        x, trips = x * 2.0 + 0.1 * np.sin(x), trips + 1
    return trips


def _grow_inputs(seed: int) -> np.ndarray:
    """Four examples with 0, 1, 3 and 6+ iterations, each with its sum well away from a threshold crossing."""
    scales = np.array([[1.4], [0.7], [0.17], [0.02]])
    xs = scales * THRESHOLD / 2 * _rng(seed).uniform(0.9, 1.0, (4, 2))
    trips = [grow_trips(x) for x in xs]
    assert trips[0] == 0 and trips[1] == 1 and trips[2] == 3 and trips[3] >= 6, trips
    return xs


def test_while_loop_with_a_per_example_condition() -> None:
    check(grow, [_grow_inputs(0)], [0])


def newton_sqrt(a):
    """sqrt(a) by Newton's iteration from 1: 0 iterations for a == 1, one for a within 1e-6 of 1."""
    return ig.while_loop(lambda y: ig.abs(y * y - a) > 1e-10 * a, lambda y: 0.5 * (y + a / y), ig.ones_like(a))


NEWTON_A = np.array([1.0, 1.0 + 1e-6, 2.0, 50.0])


def test_newton_iteration_converges_per_example() -> None:
    check(newton_sqrt, [NEWTON_A], [0])
    np.testing.assert_allclose(np.asarray(ig.vmap(newton_sqrt)(NEWTON_A)), np.sqrt(NEWTON_A), rtol=1e-10)


def loss(x):
    r = grow(x)
    return ig.sum(r * r)


@pytest.mark.parametrize("order", ["vmap_of_grad", "grad_of_vmap"])
def test_gradients_through_a_per_example_while_loop(order: str) -> None:
    """Per-example gradients (vmap of grad) and the gradient of a batched loss (grad of vmap): the batched
    loop (its mask, selects and any-reduction) is differentiated like any other, eager and compiled."""
    xs = _grow_inputs(1)
    expected = _loop(ig.grad(loss), [xs], [0])
    if order == "vmap_of_grad":
        fn = ig.vmap(ig.grad(loss))
    else:
        fn = ig.grad(lambda xs: ig.sum(ig.vmap(loss)(xs)))
    for name, run in (("eager", fn), ("cpu", ig.jit(fn, backend="cpu"))):
        np.testing.assert_allclose(np.asarray(run(xs)), expected, err_msg=name, **TOL)
    single = ig.jit(loss, backend="interp")
    for x, g in zip(xs, expected):  # every example is well inside its trip count's region
        fd = central_difference(lambda v: float(single(v)), x)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


def test_per_example_newton_gradient_is_the_derivative_of_the_iterate() -> None:
    """d sqrt(a)/da through the iterations; 0 for a == 1 (no iteration: y = 1). Central differences where the
    trip count is locally constant (not at a == 1 or 1 + 1e-6, whose neighbours iterate differently)."""
    grad = ig.vmap(ig.grad(newton_sqrt))
    got = np.asarray(grad(NEWTON_A))
    np.testing.assert_allclose(got, _loop(ig.grad(newton_sqrt), [NEWTON_A], [0]), **TOL)
    np.testing.assert_allclose(np.asarray(ig.jit(grad, backend="cpu")(NEWTON_A)), got, **TOL)
    assert got[0] == 0.0
    single = ig.jit(newton_sqrt, backend="interp")
    for a, g in zip(NEWTON_A[2:], got[2:]):
        fd = (float(single(np.asarray(a + 1e-7))) - float(single(np.asarray(a - 1e-7)))) / 2e-7
        np.testing.assert_allclose(g, fd, rtol=1e-6)
        np.testing.assert_allclose(g, 0.5 / np.sqrt(a), rtol=1e-6)


# ---------------------------------------------------------------------------------------------------------------
# fori_loop with per-example bounds
# ---------------------------------------------------------------------------------------------------------------

COUNTS = np.array([0, 1, 3, 6], np.int32)


def decay(n, x):
    """A per-example trip count n; the counter is used as a value and as a (per-example) position x[i]."""
    return ig.fori_loop(0, n, lambda i, c: c * 0.5 + x[i] * i + ig.sin(c), ig.zeros((), x.dtype) + 1.0)


def test_fori_loop_with_a_per_example_upper_bound() -> None:
    xs = _rng(2).standard_normal((4, 7))
    check(decay, [COUNTS, xs], [0, 0])
    check(decay, [COUNTS, xs[0]], [0, None])


def test_fori_loop_with_per_example_lower_and_upper_bounds() -> None:
    lows = np.array([2, 0, 5, 1], np.int32)
    highs = np.array([2, 1, 3, 6], np.int32)  # 0, 1, 0 (high < low), 5 iterations
    xs = _rng(3).standard_normal((4, 3))
    fn = lambda lo, hi, x: ig.fori_loop(lo, hi, lambda i, c: c * 1.5 + ig.tanh(c) * ig.astype(i, x.dtype), x)  # noqa: E731
    check(fn, [lows, highs, xs], [0, 0, 0])
    check(fn, [lows, 4, xs], [0, None, 0])


@pytest.mark.parametrize("order", ["vmap_of_grad", "grad_of_vmap"])
def test_gradients_through_a_per_example_fori_loop(order: str) -> None:
    xs = _rng(4).standard_normal((4, 7))
    loss = lambda n, x: decay(n, x) ** 2  # noqa: E731
    expected = _loop(ig.grad(loss, argnums=1), [COUNTS, xs], [0, 0])
    if order == "vmap_of_grad":
        fn = ig.vmap(ig.grad(loss, argnums=1))
    else:
        fn = ig.grad(lambda n, xs: ig.sum(ig.vmap(loss)(n, xs)), argnums=1)
    for name, run in (("eager", fn), ("cpu", ig.jit(fn, backend="cpu"))):
        np.testing.assert_allclose(np.asarray(run(COUNTS, xs)), expected, err_msg=name, **TOL)
    single = ig.jit(loss, backend="interp")
    fd = np.stack([central_difference(lambda v: float(single(np.asarray(n), v)), x) for n, x in zip(COUNTS, xs)])
    np.testing.assert_allclose(expected, fd, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------------------------------------------
# tensor.extract / tensor.insert at a per-example position
# ---------------------------------------------------------------------------------------------------------------


def element(x, *positions):
    """x[positions] as one tensor.extract (the frontend's x[i] is a dynamic slice)."""
    indices = [lax.to_index(p) for p in positions]
    op = tensor.ExtractOp(lax._v(x), indices, lax._v(x).type.get_element_type())
    lax.frame().emit(op)
    return lax.scalar_to_tensor(op.result)


def with_element(x, value, *positions):
    """x with x[positions] = value, as one tensor.insert."""
    indices = [lax.to_index(p) for p in positions]
    scalar = lax.extract_scalar(value)
    op = tensor.InsertOp(scalar, lax._v(x), indices)
    lax.frame().emit(op)
    return lax.frame().wrap(op.result)


def test_extract_at_a_per_example_position() -> None:
    rng = _rng(5)
    xs, x = rng.standard_normal((4, 5)), rng.standard_normal(5)
    i = np.array([0, 4, 2, 1], np.int32)
    check(element, [xs, i], [0, 0])  # result[b] = xs[b, i_b]
    check(element, [x, i], [None, 0])  # result[b] = x[i_b]
    grid, j = rng.standard_normal((4, 3, 5)), np.asarray(3, np.int32)
    check(element, [grid, i % 3, j], [0, 0, None])  # one position per example, one shared
    check(element, [grid[0], 2, i], [None, None, 0])


def test_extract_at_a_per_example_position_out_of_range_is_clamped() -> None:
    xs = _rng(6).standard_normal((4, 5))
    i = np.array([-3, 7, 2, 5], np.int32)
    got = np.asarray(ig.vmap(element)(xs, i))
    np.testing.assert_array_equal(got, xs[np.arange(4), np.clip(i, 0, 4)])
    np.testing.assert_array_equal(np.asarray(ig.jit(ig.vmap(element), backend="cpu")(xs, i)), got)


def test_insert_at_a_per_example_position_and_the_gradient_of_extract() -> None:
    """tensor.insert at i_b, and per-example gradients of x[i_b] (the VJP of extract is an insert into zeros,
    batched at a per-example position)."""
    rng = _rng(7)
    xs, vs = rng.standard_normal((4, 5)), rng.standard_normal(4)
    i = np.array([0, 4, 2, 1], np.int32)
    check(with_element, [xs, vs, i], [0, 0, 0])
    check(with_element, [xs[0], np.asarray(2.5), i], [None, None, 0])
    loss = lambda x, i: ig.sin(element(x, i)) * ig.sum(x)  # noqa: E731
    check(ig.grad(loss), [xs, i], [0, 0])


# ---------------------------------------------------------------------------------------------------------------
# Nesting: a per-example loop inside ig.cond, ig.cond and loops inside a per-example loop
# ---------------------------------------------------------------------------------------------------------------


def test_per_example_while_inside_a_per_example_cond() -> None:
    fn = lambda x: ig.cond(x[0] > 0.0, grow, lambda x: x * 3.0, x)  # noqa: E731
    xs = _grow_inputs(8) * np.array([[1.0], [-1.0], [1.0], [1.0]])
    check(fn, [xs], [0])


def test_per_example_loop_whose_body_has_a_cond_and_a_while() -> None:
    def fn(n, x):
        def body(i, c):
            c = ig.cond(ig.sum(c) > 1.0, lambda c: c * 0.25, lambda c: c + 1.0, c)
            return grow(c) * 0.01  # a per-example while inside a per-example fori_loop
        return ig.fori_loop(0, n, body, x)

    xs = np.abs(_rng(9).standard_normal((4, 2))) + 0.1
    check(fn, [COUNTS, xs], [0, 0])
    loss = lambda n, x: ig.sum(fn(n, x) ** 2)  # noqa: E731
    check(ig.grad(loss, argnums=1), [COUNTS, xs], [0, 0])


# ---------------------------------------------------------------------------------------------------------------
# IR that ig.while_loop does not make, and what is still not supported
# ---------------------------------------------------------------------------------------------------------------

FORWARDING_WHILE = """
func.func @f(%x: tensor<2xf64>) -> tensor<2xf64> {
  %r = scf.while (%c = %x) : (tensor<2xf64>) -> tensor<2xf64> {
    %s = nn.reduce_sum %c axes = [0] : tensor<2xf64> -> tensor<f64>
    %lim = nn.full 10.0 : tensor<f64>
    %lt = nn.compare lt, %s, %lim : tensor<f64>
    %p = tensor.extract %lt[] : tensor<i1>
    %d = nn.add %c, %c : tensor<2xf64>
    scf.condition(%p) %d : tensor<2xf64>
  } do {
  ^bb0(%d: tensor<2xf64>):
    %one = nn.full 1.0 : tensor<2xf64>
    %e = nn.add %d, %one : tensor<2xf64>
    scf.yield %e : tensor<2xf64>
  }
  func.return %r : tensor<2xf64>
}
func.func @g(%xs: tensor<4x2xf64>) -> tensor<4x2xf64> {
  %y = autodiff.batch @f(%xs) in_axes = [0] out_axes = [0] : (tensor<4x2xf64>) -> tensor<4x2xf64>
  func.return %y : tensor<4x2xf64>
}
"""


def test_per_example_while_whose_condition_region_forwards_other_values() -> None:
    """The condition region passes the body 2c, not c (and the loop's results are the last 2c): the batched
    loop recomputes them from the carried values in its body, and after the loop for its results."""
    module = run_pass(Parser(make_context(), FORWARDING_WHILE).parse_module())
    xs = np.array([[6.0, 5.0], [3.0, 1.0], [0.5, 0.25], [0.01, 0.02]])
    got = np.asarray(run_function(module, "g", [xs])[0])
    expected = np.stack([np.asarray(run_function(module, "f", [x])[0]) for x in xs])
    np.testing.assert_array_equal(got, expected)
    assert expected[0].tolist() == [12.0, 10.0]  # 0 iterations: the forwarded 2c


@pytest.mark.parametrize("predicate", ["ult", "ule", "ugt", "uge"])
def test_unsigned_comparisons_of_per_example_integers(predicate: str) -> None:
    """nn.compare is signed: the rule flips both sign bits, so -1 counts as the largest i32."""
    text = f"""
    func.func @f(%i: tensor<i32>) -> tensor<i1> {{
      %j = tensor.extract %i[] : tensor<i32>
      %c3 = arith.constant 3 : i32
      %lt = arith.cmpi {predicate}, %j, %c3 : i32
      %t = tensor.from_elements %lt : tensor<i1>
      func.return %t : tensor<i1>
    }}
    func.func @g(%i: tensor<6xi32>) -> tensor<6xi1> {{
      %e = autodiff.batch @f(%i) in_axes = [0] out_axes = [0] : (tensor<6xi32>) -> tensor<6xi1>
      func.return %e : tensor<6xi1>
    }}
    """
    module = run_pass(Parser(make_context(), text).parse_module())
    values = np.array([0, 2, 3, 4, -1, -2147483648], np.int32)
    got = np.asarray(run_function(module, "g", [values])[0])
    unsigned = values.astype(np.uint32)
    want = {"ult": unsigned < 3, "ule": unsigned <= 3, "ugt": unsigned > 3, "uge": unsigned >= 3}[predicate]
    np.testing.assert_array_equal(got, want)
