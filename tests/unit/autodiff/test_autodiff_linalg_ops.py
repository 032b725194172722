"""nn.cholesky, nn.triangular_solve and nn.lu: the reference interpreter against scipy, and their
derivative and batching rules (irgrad/autodiff/rules/linalg.py) checked numerically in float64; the
same derivative, batching and cost checks for nn.eigh, nn.svd and nn.qr (their section at the end).

- Interpreter: batches, both triangles, unit diagonals, garbage in the parts that are not read,
  a matrix that is not positive definite (all NaN), a zero on the diagonal (inf/NaN, no error), a
  singular LU (a zero on U's diagonal, no error), f32 kept f32.
- Derivatives (through _autodiff_harness.py): VJP and JVP against central differences along random
  directions, u.(J v) == (J^T u).v, and second order (jvp of grad, grad of grad, grad of jvp); the
  ops inside an scf.for loop, and composites (cho_solve, lu_solve).
- Batching: autodiff.batch over every choice of mapped operands against a Python loop, and the
  per-example gradient (batch of grad).

Inputs stay away from the non-smooth points: triangular matrices with their diagonal in +-[1, 2] and
small off-diagonal entries, SPD matrices B B^T + n I, and LU inputs whose pivot choice has a margin
(the largest candidate of each column at least 10% above the next, so a step of 1e-5 cannot flip it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
import scipy.linalg as sl
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32, f64
from xdsl.ir import Attribute
from xdsl.parser import Parser

from _autodiff_harness import (
    Case,
    Emitter,
    T,
    build_function,
    check_first_order,
    check_second_order,
    run_pass,
)
from irgrad.autodiff.registry import BATCH_RULES, JVP_RULES, VJP_RULES
from irgrad.autodiff.rules import load_rules
from irgrad.backends.interpreter import nn_linalg, run_function
from irgrad.dialects import autodiff as ad, nn
from irgrad.context import make_context

# ---------------------------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------------------------


def triangular(rng: np.random.Generator, shape: Sequence[int], lower: bool, unit: bool) -> np.ndarray:
    """A well-conditioned triangular matrix (a batch of them) with garbage where it is not read: the
    other triangle large, and with `unit` the diagonal too (zeros and large values)."""
    n = shape[-1]
    a = 0.3 * rng.standard_normal(shape)
    garbage = 10 * rng.standard_normal(shape)
    read = np.tril(np.ones((n, n)), -1 if unit else 0) if lower else np.triu(np.ones((n, n)), 1 if unit else 0)
    a = np.where(read == 1, a, garbage)
    diagonal = np.arange(n)
    if unit:
        a[..., diagonal, diagonal] = np.where(rng.random(shape[:-1]) < 0.5, 0.0, 7.0)
    else:
        a[..., diagonal, diagonal] = rng.uniform(1.0, 2.0, shape[:-1]) * np.where(rng.random(shape[:-1]) < 0.5, -1, 1)
    return a


def spd(rng: np.random.Generator, shape: Sequence[int], garbage: bool = True) -> np.ndarray:
    """B B^T + n I, with garbage in its strict upper triangle (never read)."""
    n = shape[-1]
    b = rng.standard_normal(shape)
    a = b @ np.swapaxes(b, -1, -2) + n * np.eye(n)
    if garbage:
        a = a + np.triu(10 * rng.standard_normal(shape), 1)
    return a


def getf2(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """A plain getf2 of one matrix, (lu, piv, perm, margin): margin is the smallest relative gap
    between the chosen pivot's magnitude and the next candidate's (1 when there is no other)."""
    m = np.array(a, dtype=np.float64, copy=True)
    n = m.shape[0]
    perm = np.arange(n)
    piv = np.zeros(n, np.int64)
    margin = 1.0
    for j in range(n):
        magnitudes = np.abs(m[j:, j])
        p = j + int(np.argmax(magnitudes))
        if magnitudes.size > 1:
            ordered = np.sort(magnitudes)[::-1]
            margin = min(margin, (ordered[0] - ordered[1]) / max(ordered[0], 1e-300))
        m[[j, p]] = m[[p, j]]
        perm[[j, p]] = perm[[p, j]]
        piv[j] = p
        if m[j, j] != 0:
            m[j + 1 :, j] /= m[j, j]
        m[j + 1 :, j + 1 :] -= np.outer(m[j + 1 :, j], m[j, j + 1 :])
    return m, piv, perm, margin


def pivoted(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    """A general matrix (batch) whose pivots are well separated (see the module docstring)."""
    flat = []
    for _ in range(int(np.prod(shape[:-2], dtype=np.int64))):
        while True:
            a = rng.standard_normal(shape[-2:])
            lu, *_, margin = getf2(a)
            if margin > 0.1 and np.min(np.abs(np.diag(lu))) > 0.1:
                flat.append(a)
                break
    return np.stack(flat).reshape(shape)


# ---------------------------------------------------------------------------------------------------------------
# The interpreter against scipy
# ---------------------------------------------------------------------------------------------------------------


def parse(source: str) -> ModuleOp:
    module = Parser(make_context(), source).parse_module()
    module.verify()
    return module


def tensor_text(shape: Sequence[int], element: str = "f64") -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>" if shape else f"tensor<{element}>"


def cholesky_module(shape: Sequence[int], element: str = "f64") -> ModuleOp:
    t = tensor_text(shape, element)
    return parse(
        f"""
func.func @f(%a: {t}) -> {t} {{
  %l = nn.cholesky %a : ({t}) -> {t}
  func.return %l : {t}
}}"""
    )


def solve_module(a_shape: Sequence[int], b_shape: Sequence[int], lower: bool, unit: bool, element: str = "f64"):
    ta, tb = tensor_text(a_shape, element), tensor_text(b_shape, element)
    flags = (" lower" if lower else "") + (" unit_diagonal" if unit else "")
    return parse(
        f"""
func.func @f(%a: {ta}, %b: {tb}) -> {tb} {{
  %x = nn.triangular_solve %a, %b{flags} : ({ta}, {tb}) -> {tb}
  func.return %x : {tb}
}}"""
    )


def lu_module(shape: Sequence[int], element: str = "f64") -> ModuleOp:
    t = tensor_text(shape, element)
    v = tensor_text(shape[:-1], "i32")
    return parse(
        f"""
func.func @f(%a: {t}) -> ({t}, {v}, {v}) {{
  %lu, %piv, %perm = nn.lu %a : ({t}) -> ({t}, {v}, {v})
  func.return %lu, %piv, %perm : {t}, {v}, {v}
}}"""
    )


def batch_elements(x: np.ndarray, dims: int = 2) -> list[np.ndarray]:
    return list(x.reshape(-1, *x.shape[x.ndim - dims :]))


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 5, 5), (2, 3, 4, 4)], ids=str)
def test_cholesky_matches_scipy_reading_only_the_lower_triangle(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    a = spd(rng, shape)
    (low,) = run_function(cholesky_module(shape), "f", [a])
    assert low.dtype == np.float64 and low.shape == shape
    expected = np.stack([sl.cholesky(m, lower=True) for m in batch_elements(a)]).reshape(shape)
    np.testing.assert_allclose(low, expected, rtol=1e-12, atol=1e-12)
    assert not np.triu(low, 1).any()


def test_cholesky_of_a_matrix_not_positive_definite_is_all_nan() -> None:
    rng = np.random.default_rng(1)
    a = spd(rng, (4, 3, 3))
    a[1] = np.diag([1.0, -1.0, 2.0])  # a negative pivot
    a[2, 2, 2] = np.nan  # a NaN pivot
    a[3] = np.array([[1.0, 0, 0], [2.0, 1.0, 0], [0, 0, 1.0]])  # symmetric with a pivot < 0 at step 2
    (low,) = run_function(cholesky_module((4, 3, 3)), "f", [a])
    assert np.isnan(low[1:]).all()
    np.testing.assert_allclose(low[0], sl.cholesky(np.tril(a[0]) + np.tril(a[0], -1).T, lower=True), rtol=1e-12)


def test_cholesky_keeps_f32() -> None:
    rng = np.random.default_rng(2)
    a = spd(rng, (2, 4, 4)).astype(np.float32)
    (low,) = run_function(cholesky_module((2, 4, 4), "f32"), "f", [a])
    assert low.dtype == np.float32
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    np.testing.assert_allclose(low @ np.swapaxes(low, -1, -2), sym, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
@pytest.mark.parametrize("unit", [False, True], ids=["diag", "unit"])
@pytest.mark.parametrize(("a_shape", "b_shape"), [((4, 4), (4, 3)), ((2, 5, 5), (2, 5, 2)), ((1, 1), (1, 4))], ids=str)
def test_triangular_solve_matches_scipy(lower: bool, unit: bool, a_shape, b_shape) -> None:
    rng = np.random.default_rng(3)
    a = triangular(rng, a_shape, lower, unit)
    b = rng.standard_normal(b_shape)
    (x,) = run_function(solve_module(a_shape, b_shape, lower, unit), "f", [a, b])
    assert x.dtype == np.float64 and x.shape == b_shape
    expected = np.stack(
        [
            sl.solve_triangular(m, r, lower=lower, unit_diagonal=unit)
            for m, r in zip(batch_elements(a), batch_elements(b))
        ]
    ).reshape(b_shape)
    np.testing.assert_allclose(x, expected, rtol=1e-10, atol=1e-12)


def test_triangular_solve_with_a_zero_on_the_diagonal_gives_inf_or_nan() -> None:
    a = np.array([[2.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    b = np.array([[1.0], [1.0], [1.0]])
    (x,) = run_function(solve_module((3, 3), (3, 1), True, False), "f", [a, b])
    assert x[0, 0] == 0.5
    assert not np.isfinite(x[1:]).any()


def test_triangular_solve_keeps_f32() -> None:
    rng = np.random.default_rng(4)
    a = triangular(rng, (3, 3), False, False).astype(np.float32)
    b = rng.standard_normal((3, 2)).astype(np.float32)
    (x,) = run_function(solve_module((3, 3), (3, 2), False, False, "f32"), "f", [a, b])
    assert x.dtype == np.float32
    np.testing.assert_allclose(np.triu(a) @ x, b, rtol=1e-5, atol=1e-5)


def check_lu(a: np.ndarray, lu: np.ndarray, piv: np.ndarray, perm: np.ndarray, rtol: float = 1e-12) -> None:
    n = a.shape[-1]
    for m, f, p, q in zip(batch_elements(a), batch_elements(lu), batch_elements(piv, 1), batch_elements(perm, 1)):
        expected_lu, expected_piv = sl.lu_factor(m, check_finite=False)
        np.testing.assert_array_equal(p, expected_piv)
        np.testing.assert_allclose(f, expected_lu, rtol=rtol, atol=rtol)
        low, up = np.tril(f, -1) + np.eye(n), np.triu(f)
        np.testing.assert_allclose(m[q], low @ up, rtol=rtol, atol=rtol * 10)
        # The permutation is what the swaps make.
        swapped = np.arange(n)
        for j, k in enumerate(p):
            swapped[[j, k]] = swapped[[k, j]]
        np.testing.assert_array_equal(q, swapped)


@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (3, 4, 4), (2, 2, 3, 3)], ids=str)
def test_lu_matches_scipy(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal(shape)
    lu, piv, perm = run_function(lu_module(shape), "f", [a])
    assert lu.dtype == np.float64 and piv.dtype == np.int32 and perm.dtype == np.int32
    assert piv.shape == perm.shape == shape[:-1]
    check_lu(a, lu, piv, perm)


def test_lu_of_singular_matrices_has_a_zero_on_u_diagonal() -> None:
    a = np.array(
        [
            [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],  # rank 2, swaps
            [[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 6.0]],  # a zero column: pivot 0, column left
            [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
        ]
    )
    lu, piv, perm = run_function(lu_module((3, 3, 3)), "f", [a])
    for k in range(3):
        expected, expected_piv, expected_perm, _ = getf2(a[k])
        np.testing.assert_allclose(lu[k], expected, rtol=1e-15, atol=1e-15)
        np.testing.assert_array_equal(piv[k], expected_piv)
        np.testing.assert_array_equal(perm[k], expected_perm)
        assert np.any(np.diag(lu[k]) == 0)
        assert np.isfinite(lu[k]).all()
    np.testing.assert_array_equal(piv[1], [0, 2, 2])
    np.testing.assert_array_equal(piv[2], [0, 1, 2])


def test_lu_keeps_f32() -> None:
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 4, 4)).astype(np.float32)
    lu, piv, perm = run_function(lu_module((2, 4, 4), "f32"), "f", [a])
    assert lu.dtype == np.float32
    check_lu(a.astype(np.float64), lu.astype(np.float64), piv, perm, rtol=1e-5)


# ---------------------------------------------------------------------------------------------------------------
# Derivatives
# ---------------------------------------------------------------------------------------------------------------


def solve_case(name: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...], lower: bool, unit: bool) -> Case:
    def body(e: Emitter, a, b):
        return e(nn.TriangularSolveOp(a, b, lower=lower, unit_diagonal=unit))

    def inputs(rng: np.random.Generator) -> list[Any]:
        return [triangular(rng, a_shape, lower, unit), rng.standard_normal(b_shape)]

    return Case(name, [T(*a_shape), T(*b_shape)], body, inputs=inputs)


def cholesky_inputs(shape: tuple[int, ...]):
    return lambda rng: [spd(rng, shape)]


def lu_inputs(shape: tuple[int, ...]):
    return lambda rng: [pivoted(rng, shape)]


def cho_solve(e: Emitter, a, b):
    """A^{-1} b through A = L L^T: two triangular solves, the second with L^T."""
    low = e(nn.CholeskyOp(a))
    y = e(nn.TriangularSolveOp(low, b, lower=True))
    rank = len(a.type.get_shape())
    low_t = e(nn.TransposeOp(low, [*range(rank - 2), rank - 1, rank - 2]))
    return e(nn.TriangularSolveOp(low_t, y, lower=False))


def lu_solve(e: Emitter, a, b):
    """A^{-1} b through P A = L U (unbatched): b's rows permuted by a gather with the permutation."""
    packed, _, perm = e(nn.LUOp(a))
    pb = e(nn.GatherOp(b, perm, 0))
    y = e(nn.TriangularSolveOp(packed, pb, lower=True, unit_diagonal=True))
    return e(nn.TriangularSolveOp(packed, y, lower=False))


def lu_solve_inputs(rng: np.random.Generator) -> list[Any]:
    return [pivoted(rng, (4, 4)), rng.standard_normal((4, 2))]


def cho_solve_inputs(rng: np.random.Generator) -> list[Any]:
    return [spd(rng, (2, 3, 3)), rng.standard_normal((2, 3, 2))]


CASES = [
    solve_case("solve_lower", (4, 4), (4, 3), True, False),
    solve_case("solve_upper", (4, 4), (4, 3), False, False),
    solve_case("solve_lower_unit", (4, 4), (4, 2), True, True),
    solve_case("solve_upper_unit", (4, 4), (4, 2), False, True),
    solve_case("solve_lower_batched", (2, 4, 4), (2, 4, 3), True, False),
    solve_case("solve_upper_unit_batched", (2, 2, 3, 3), (2, 2, 3, 1), False, True),
    solve_case("solve_1x1", (1, 1), (1, 2), True, False),
    Case("cholesky", [T(4, 4)], lambda e, a: e(nn.CholeskyOp(a)), inputs=cholesky_inputs((4, 4))),
    Case("cholesky_batched", [T(2, 4, 4)], lambda e, a: e(nn.CholeskyOp(a)), inputs=cholesky_inputs((2, 4, 4))),
    Case("cholesky_1x1", [T(1, 1)], lambda e, a: e(nn.CholeskyOp(a)), inputs=cholesky_inputs((1, 1))),
    Case("cho_solve_batched", [T(2, 3, 3), T(2, 3, 2)], cho_solve, inputs=cho_solve_inputs),
    # All three results: the integer ones get zero tangents and their cotangents are ignored.
    Case("lu_all_results", [T(4, 4)], lambda e, a: e(nn.LUOp(a)), inputs=lu_inputs((4, 4)), order2=False),
    Case("lu", [T(5, 5)], lambda e, a: e(nn.LUOp(a))[0], inputs=lu_inputs((5, 5))),
    Case("lu_batched", [T(3, 4, 4)], lambda e, a: e(nn.LUOp(a))[0], inputs=lu_inputs((3, 4, 4))),
    Case("lu_batched_2d", [T(2, 2, 3, 3)], lambda e, a: e(nn.LUOp(a))[0], inputs=lu_inputs((2, 2, 3, 3))),
    Case("lu_solve", [T(4, 4), T(4, 2)], lu_solve, inputs=lu_solve_inputs),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_first_order(case: Case) -> None:
    check_first_order(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.order2], ids=str)
def test_second_order(case: Case) -> None:
    check_second_order(case)


def test_every_linalg_op_has_all_rules() -> None:
    load_rules()
    for op in (nn.CholeskyOp, nn.TriangularSolveOp, nn.LUOp):
        assert op in VJP_RULES and op in JVP_RULES and op in BATCH_RULES, op.name


# --- inside loops ---------------------------------------------------------------------------------------------

LOOP = """
func.func @f(%a: tensor<3x3xf64>, %s: tensor<3x3xf64>, %x: tensor<3x2xf64>) -> tensor<3x2xf64> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %st = arith.constant 1 : index
  %r = scf.for %i = %lb to %ub step %st iter_args(%h = %x) -> (tensor<3x2xf64>) {
    %l = nn.cholesky %s : (tensor<3x3xf64>) -> tensor<3x3xf64>
    %y = nn.triangular_solve %l, %h lower : (tensor<3x3xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
    %z = nn.triangular_solve %a, %y : (tensor<3x3xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
    %t = nn.tanh %z : tensor<3x2xf64>
    %u = nn.add %t, %h : tensor<3x2xf64>
    scf.yield %u : tensor<3x2xf64>
  }
  func.return %r : tensor<3x2xf64>
}
"""

LU_LOOP = """
func.func @f(%a: tensor<3x3xf64>, %d: tensor<3x3xf64>) -> tensor<3x3xf64> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 2 : index
  %st = arith.constant 1 : index
  %r = scf.for %i = %lb to %ub step %st iter_args(%m = %a) -> (tensor<3x3xf64>) {
    %lu, %piv, %perm = nn.lu %m : (tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<3xi32>, tensor<3xi32>)
    %t = nn.tanh %lu : tensor<3x3xf64>
    %s = nn.add %t, %d : tensor<3x3xf64>
    scf.yield %s : tensor<3x3xf64>
  }
  func.return %r : tensor<3x3xf64>
}
"""


def loop_inputs(rng: np.random.Generator) -> list[Any]:
    return [triangular(rng, (3, 3), False, False), spd(rng, (3, 3)), rng.standard_normal((3, 2))]


def lu_loop_inputs(rng: np.random.Generator) -> list[Any]:
    """The carried matrix stays diagonally dominant (tanh(lu) + d with d's diagonal 3, 5, 7 apart),
    so every iteration's pivots are clear."""
    d = np.diag([3.0, 5.0, 7.0]) + 0.1 * rng.standard_normal((3, 3))
    return [pivoted(rng, (3, 3)), d]


LOOP_CASES = [
    Case("for_cholesky_solves", [T(3, 3), T(3, 3), T(3, 2)], source=LOOP, inputs=loop_inputs),
    Case("for_lu", [T(3, 3), T(3, 3)], source=LU_LOOP, inputs=lu_loop_inputs),
]


@pytest.mark.parametrize("case", LOOP_CASES, ids=str)
def test_first_order_in_loops(case: Case) -> None:
    check_first_order(case)


@pytest.mark.parametrize("case", LOOP_CASES, ids=str)
def test_second_order_in_loops(case: Case) -> None:
    check_second_order(case)


# --- the derivatives ignore what the ops do not read -----------------------------------------------------------


def gradient_of_sum(body: Callable[..., Any], types: Sequence[Attribute], args: Sequence[Any], wrt=(0,)):
    def loss(e: Emitter, *a):
        y = body(e, *a)
        return e(nn.ReduceSumOp(y, list(range(len(y.type.get_shape())))))

    f = build_function("f", types, loss)
    g = build_function("g", types, lambda e, *a: e(ad.GradOp(f, a, wrt)))
    return run_function(run_pass(ModuleOp([f, g])), "g", list(args))


@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
@pytest.mark.parametrize("unit", [False, True], ids=["diag", "unit"])
def test_solve_gradient_is_zero_where_a_is_not_read(lower: bool, unit: bool) -> None:
    rng = np.random.default_rng(7)
    a = triangular(rng, (4, 4), lower, unit)
    b = rng.standard_normal((4, 2))
    body = lambda e, a, b: e(nn.TriangularSolveOp(a, b, lower=lower, unit_diagonal=unit))  # noqa: E731
    (ga,) = gradient_of_sum(body, [TensorType(f64, [4, 4]), TensorType(f64, [4, 2])], [a, b])
    unread = np.triu(np.ones((4, 4)), 0 if unit else 1) if lower else np.tril(np.ones((4, 4)), 0 if unit else -1)
    assert not ga[unread == 1].any()
    assert ga[unread == 0].all()


def test_cholesky_gradient_is_lower_triangular() -> None:
    rng = np.random.default_rng(8)
    a = spd(rng, (4, 4))
    (ga,) = gradient_of_sum(lambda e, a: e(nn.CholeskyOp(a)), [TensorType(f64, [4, 4])], [a])
    assert not np.triu(ga, 1).any()
    assert ga[np.tril_indices(4)].all()


# ---------------------------------------------------------------------------------------------------------------
# Batching (vmap)
# ---------------------------------------------------------------------------------------------------------------

B = 3


def vmap_module(body: Callable[..., Any], types: Sequence[TensorType], mask: Sequence[bool]) -> ModuleOp:
    f = build_function("f", types, body)
    batched_types = [TensorType(t.get_element_type(), [B, *t.get_shape()]) if m else t for t, m in zip(types, mask)]
    outputs = f.function_type.outputs.data
    g = build_function(
        "g",
        batched_types,
        lambda e, *a: e(ad.BatchOp(f, a, [0 if m else -1 for m in mask], [0] * len(outputs), B)),
    )
    return run_pass(ModuleOp([f, g]))


def check_vmap(body, types: Sequence[TensorType], args: Sequence[np.ndarray], mask: Sequence[bool]) -> None:
    """`args` are batched (a leading B) where `mask` says; @g (the vmap) against @f in a loop."""
    module = vmap_module(body, types, mask)
    got = run_function(module, "g", list(args))
    for index in range(len(got)):
        per_example = [
            run_function(module, "f", [x[k] if m else x for x, m in zip(args, mask)])[index] for k in range(B)
        ]
        expected = np.stack(per_example)
        assert got[index].dtype == expected.dtype
        np.testing.assert_allclose(got[index], expected, rtol=1e-13, atol=1e-13, err_msg=f"result #{index}")


@pytest.mark.parametrize("mask", [(True, True), (True, False), (False, True)], ids=str)
@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
def test_vmap_triangular_solve(mask: tuple[bool, bool], lower: bool) -> None:
    rng = np.random.default_rng(9)
    a_shape, b_shape = (2, 3, 3), (2, 3, 2)
    a = triangular(rng, (B, *a_shape) if mask[0] else a_shape, lower, False)
    b = rng.standard_normal((B, *b_shape) if mask[1] else b_shape)
    body = lambda e, a, b: e(nn.TriangularSolveOp(a, b, lower=lower, unit_diagonal=not lower))  # noqa: E731
    check_vmap(body, [TensorType(f64, list(a_shape)), TensorType(f64, list(b_shape))], [a, b], mask)


def test_vmap_cholesky() -> None:
    rng = np.random.default_rng(10)
    a = spd(rng, (B, 4, 4))
    a[1, 0, 0] = -1.0  # one example not positive definite: NaN for it alone
    check_vmap(lambda e, a: e(nn.CholeskyOp(a)), [TensorType(f64, [4, 4])], [a], [True])
    (low,) = run_function(vmap_module(lambda e, a: e(nn.CholeskyOp(a)), [TensorType(f64, [4, 4])], [True]), "g", [a])
    assert np.isnan(low[1]).all() and np.isfinite(low[[0, 2]]).all()


def test_vmap_lu() -> None:
    rng = np.random.default_rng(11)
    a = rng.standard_normal((B, 2, 4, 4))
    check_vmap(lambda e, a: e(nn.LUOp(a)), [TensorType(f64, [2, 4, 4])], [a], [True])


def test_vmap_of_grad_is_the_per_example_gradient() -> None:
    """batch(grad(sum(w * cho_solve(a, b)))): each example's gradient w.r.t. its own a and b."""
    types = [TensorType(f64, [3, 3]), TensorType(f64, [3, 2]), TensorType(f64, [3, 2])]

    def loss(e: Emitter, a, b, w):
        x = cho_solve(e, a, b)
        return e(nn.ReduceSumOp(e(nn.MulOp(x, w)), [0, 1]))

    f = build_function("loss", types, loss)
    g = build_function("grad", types, lambda e, *a: e(ad.GradOp(f, a, (0, 1))))
    batched = [TensorType(f64, [B, 3, 3]), TensorType(f64, [B, 3, 2]), types[2]]
    h = build_function("h", batched, lambda e, *a: e(ad.BatchOp(g, a, [0, 0, -1], [0, 0], B)))
    module = run_pass(ModuleOp([f, g, h]))
    rng = np.random.default_rng(12)
    a, b, w = spd(rng, (B, 3, 3)), rng.standard_normal((B, 3, 2)), rng.standard_normal((3, 2))
    ga, gb = run_function(module, "h", [a, b, w])
    for k in range(B):
        ea, eb = run_function(module, "grad", [a[k], b[k], w])
        np.testing.assert_allclose(ga[k], ea, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gb[k], eb, rtol=1e-12, atol=1e-12)
        # And against the closed form: x = S^{-1} b with S = sym(a); b̄ = S^{-1} w, Ā from -S̄ = b̄ x^T.
        s = np.tril(a[k]) + np.tril(a[k], -1).T
        x = np.linalg.solve(s, b[k])
        bbar = np.linalg.solve(s, w)
        sbar = -bbar @ x.T
        np.testing.assert_allclose(gb[k], bbar, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ga[k], np.tril(sbar) + np.tril(sbar.T, -1), rtol=1e-10, atol=1e-12)


def test_grad_of_vmap_lu() -> None:
    """grad of sum(w * batch(lu)) equals the per-example gradients of sum(w_k * lu(a_k))."""
    t = TensorType(f64, [3, 3])
    f = build_function("f", [t], lambda e, a: e(nn.LUOp(a))[0])
    bt = TensorType(f64, [B, 3, 3])
    v = build_function("v", [bt], lambda e, a: e(ad.BatchOp(f, [a], [0], [0], B)))

    def loss(e: Emitter, a, w):
        mapped = e(func.CallOp("v", [a], [bt]))
        return e(nn.ReduceSumOp(e(nn.MulOp(mapped, w)), [0, 1, 2]))

    s = build_function("s", [bt, bt], loss)
    g = build_function("g", [bt, bt], lambda e, a, w: e(ad.GradOp(s, [a, w], (0,))))
    s1 = build_function(
        "s1", [t, t], lambda e, a, w: e(nn.ReduceSumOp(e(nn.MulOp(e(nn.LUOp(a))[0], w)), [0, 1]))
    )
    g1 = build_function("g1", [t, t], lambda e, a, w: e(ad.GradOp(s1, [a, w], (0,))))
    module = run_pass(ModuleOp([f, v, s, g, s1, g1]))
    rng = np.random.default_rng(13)
    a, w = pivoted(rng, (B, 3, 3)), rng.standard_normal((B, 3, 3))
    (ga,) = run_function(module, "g", [a, w])
    for k in range(B):
        (expected,) = run_function(module, "g1", [a[k], w[k]])
        np.testing.assert_allclose(ga[k], expected, rtol=1e-12, atol=1e-12)


def test_f32_derivatives_keep_f32() -> None:
    t = TensorType(f32, [3, 3])
    rng = np.random.default_rng(14)
    a = spd(rng, (3, 3)).astype(np.float32)
    (ga,) = gradient_of_sum(lambda e, a: e(nn.CholeskyOp(a)), [t], [a])
    assert ga.dtype == np.float32
    (gl,) = gradient_of_sum(lambda e, a: e(nn.LUOp(a))[0], [t], [a])
    assert gl.dtype == np.float32


# ---------------------------------------------------------------------------------------------------------------
# Sharding rules and FLOP counts (irgrad/transforms/shard/rules.py, irgrad/analysis/cost.py)
# ---------------------------------------------------------------------------------------------------------------

SHARDED = """
shard.grid @g(shape = 2)
func.func @f(%x: tensor<4x3x3xf64>, %b: tensor<4x3x2xf64>) -> (tensor<4x3x3xf64>, tensor<4x3x2xf64>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<4x3x3xf64>
  %l = nn.cholesky %a : (tensor<4x3x3xf64>) -> tensor<4x3x3xf64>
  %y = nn.triangular_solve %l, %b lower : (tensor<4x3x3xf64>, tensor<4x3x2xf64>) -> tensor<4x3x2xf64>
  func.return %l, %y : tensor<4x3x3xf64>, tensor<4x3x2xf64>
}
"""

COLUMNS_SHARDED = """
shard.grid @g(shape = 2)
func.func @f(%a: tensor<3x3xf64>, %x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %b = shard.shard %x to %s annotate_for_users : tensor<3x4xf64>
  %y = nn.triangular_solve %a, %b : (tensor<3x3xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
  %z = nn.tanh %y : tensor<3x4xf64>
  func.return %z : tensor<3x4xf64>
}
"""


def partitioned_run(text: str, args: Sequence[np.ndarray]) -> tuple[ModuleOp, tuple[Any, ...], tuple[Any, ...]]:
    from irgrad.backends.spmd import run_partitioned
    from irgrad.registry import build_pipeline

    module = parse(text)
    partitioned = module.clone()
    build_pipeline("shard-partition").apply(make_context(), partitioned)
    partitioned.verify()
    got, _ = run_partitioned(partitioned, "f", list(args))
    return partitioned, tuple(got), run_function(module, "f", list(args))


def test_batch_split_carries_through_cholesky_and_triangular_solve() -> None:
    rng = np.random.default_rng(15)
    partitioned, got, expected = partitioned_run(SHARDED, [spd(rng, (4, 3, 3)), rng.standard_normal((4, 3, 2))])
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    text = str(partitioned)
    assert "nn.cholesky %x : (tensor<2x3x3xf64>) -> tensor<2x3x3xf64>" in text  # local: no all_gather first
    assert "(tensor<2x3x3xf64>, tensor<2x3x2xf64>) -> tensor<2x3x2xf64>" in text


def test_column_split_of_the_right_hand_side_carries_through_triangular_solve() -> None:
    rng = np.random.default_rng(16)
    a = triangular(rng, (3, 3), False, False)
    partitioned, got, expected = partitioned_run(COLUMNS_SHARDED, [a, rng.standard_normal((3, 4))])
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12, atol=1e-12)
    assert "(tensor<3x3xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>" in str(partitioned)


def test_flop_counts() -> None:
    from irgrad.analysis.cost import op_flops

    a, b = TensorType(f64, [2, 6, 6]), TensorType(f64, [2, 6, 4])
    f = build_function(
        "f",
        [a, b],
        lambda e, x, y: (e(nn.CholeskyOp(x)), e(nn.TriangularSolveOp(x, y, lower=True)), e(nn.LUOp(x))[0]),
    )
    counts = {op.name: op_flops(op) for op in f.body.block.ops}
    assert counts["nn.cholesky"] == 2 * 6**3 // 3
    assert counts["nn.triangular_solve"] == 2 * 6 * 6 * 4
    assert counts["nn.lu"] == 2 * 2 * 6**3 // 3


def test_lu_under_shard_partition_runs_replicated() -> None:
    text = SHARDED.replace(
        "%l = nn.cholesky %a : (tensor<4x3x3xf64>) -> tensor<4x3x3xf64>",
        "%l, %p, %q = nn.lu %a : (tensor<4x3x3xf64>) -> (tensor<4x3x3xf64>, tensor<4x3xi32>, tensor<4x3xi32>)",
    )
    rng = np.random.default_rng(17)
    _, got, expected = partitioned_run(text, [rng.standard_normal((4, 3, 3)), rng.standard_normal((4, 3, 2))])
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# nn.eigh, nn.svd, nn.qr: derivative and batching rules
# ---------------------------------------------------------------------------------------------------------------
#
# Inputs stay away from the non-smooth points: distinct eigenvalues (gaps >= 0.5) and singular values
# (gaps >= 0.3, all >= 1), eigenvectors and left singular vectors whose sign convention (the first entry
# of at least half the column's largest magnitude is positive) has a margin (no entry's magnitude within
# 0.05 of half the largest, so a step of 1e-5 cannot move the chosen entry), and QR inputs whose
# Householder steps have a margin (each reflected column's leading entry at least 10% of its norm, so
# LAPACK's sign choice cannot flip). The harness's random functionals of the results (u . f) then see a
# smooth function, and its central differences are a valid reference for u, v, vt and q directly.


def sign_margin(columns: np.ndarray) -> float:
    """How far every entry's magnitude is from half its column's largest (relative to the largest)."""
    magnitude = np.abs(columns)
    return float(np.min(np.abs(magnitude / magnitude.max(axis=-2, keepdims=True) - 0.5)))


def orthonormal(rng: np.random.Generator, m: int, k: int) -> np.ndarray:
    return np.linalg.qr(rng.standard_normal((m, k)))[0]


def symmetric(rng: np.random.Generator, shape: Sequence[int], garbage: bool = True) -> np.ndarray:
    """Q diag(w) Q^T with eigenvalues at least 0.5 apart and a sign margin on Q's columns; garbage in
    the strict upper triangle (never read)."""
    n = shape[-1]
    flat = []
    for _ in range(int(np.prod(shape[:-2], dtype=np.int64))):
        while True:
            q = orthonormal(rng, n, n)
            if n == 1 or sign_margin(q) > 0.05:
                break
        w = -1.5 + np.cumsum(rng.uniform(0.5, 1.0, n))
        flat.append(q @ np.diag(w) @ q.T)
    a = np.stack(flat).reshape(shape)
    if garbage:
        a = a + np.triu(10 * rng.standard_normal(shape), 1)
    return a


def with_singular_values(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    """U diag(s) V^T with s >= 1 descending, at least 0.3 apart, and a sign margin on U's columns."""
    m, n = shape[-2:]
    k = min(m, n)
    flat = []
    for _ in range(int(np.prod(shape[:-2], dtype=np.int64))):
        while True:
            u = orthonormal(rng, m, k)
            if m == 1 or sign_margin(u) > 0.05:
                break
        s = (1.0 + np.cumsum(rng.uniform(0.3, 0.8, k)))[::-1]
        flat.append(u @ np.diag(s) @ orthonormal(rng, n, k).T)
    return np.stack(flat).reshape(shape)


def householder_margin(a: np.ndarray) -> float:
    """The smallest |leading entry| / norm of the columns the Householder QR reflects (1 if none)."""
    m = np.array(a, dtype=np.float64, copy=True)
    rows, cols = m.shape
    margin = 1.0
    for j in range(min(cols, rows - 1)):
        x = m[j:, j].copy()
        norm = np.linalg.norm(x)
        margin = min(margin, abs(x[0]) / norm)
        v = x
        v[0] += np.copysign(norm, x[0])
        v /= np.linalg.norm(v)
        m[j:, j:] -= 2 * np.outer(v, v @ m[j:, j:])
    return margin


def qr_ready(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    """A tall or square matrix (batch) with a Householder margin and R's diagonal at least 0.3."""
    flat = []
    for _ in range(int(np.prod(shape[:-2], dtype=np.int64))):
        while True:
            a = rng.standard_normal(shape[-2:])
            r = np.linalg.qr(a)[1]
            if householder_margin(a) > 0.1 and np.min(np.abs(np.diag(r))) > 0.3:
                flat.append(a)
                break
    return np.stack(flat).reshape(shape)


def inputs_of(make: Callable[[np.random.Generator, Sequence[int]], np.ndarray], shape: tuple[int, ...]):
    return lambda rng: [make(rng, shape)]


def eigh_all(e: Emitter, a):
    return e(nn.EighOp(a))


def svd_all(e: Emitter, a):
    return e(nn.SvdOp(a))


def qr_all(e: Emitter, a):
    return e(nn.QrOp(a))


def scale_columns(e: Emitter, x, s):
    """x * s[..., None, :]: column j of x times s_j."""
    shape = x.type.get_shape()
    rank = len(shape)
    return e(nn.MulOp(x, e(nn.BroadcastInDimOp(s, list(shape), [*range(rank - 2), rank - 1]))))


def transpose_last(e: Emitter, x):
    rank = len(x.type.get_shape())
    return e(nn.TransposeOp(x, [*range(rank - 2), rank - 1, rank - 2]))


def eigh_expm(e: Emitter, a):
    """V diag(exp(w)) V^T (the matrix exponential of the symmetric matrix): sign-invariant."""
    w, v = e(nn.EighOp(a))
    return e(nn.MatmulOp(scale_columns(e, v, e(nn.ExpOp(w))), transpose_last(e, v)))


def svd_reconstruct(e: Emitter, a):
    """U diag(s) V^T: A itself, so its derivative is the identity (every term of the rules at once)."""
    u, s, vt = e(nn.SvdOp(a))
    return e(nn.MatmulOp(scale_columns(e, u, s), vt))


def svd_pinv(e: Emitter, a):
    """V diag(1/s) U^T (the pseudo-inverse): sign-invariant."""
    u, s, vt = e(nn.SvdOp(a))
    inv = e(nn.DivOp(e(nn.FullOp(1.0, s.type)), s))
    return e(nn.MatmulOp(transpose_last(e, vt), transpose_last(e, scale_columns(e, u, inv))))


def qr_reconstruct(e: Emitter, a):
    q, r = e(nn.QrOp(a))
    return e(nn.MatmulOp(q, r))


def _result(index: int, op: type):
    return lambda e, a: e(op(a))[index]


SPECTRAL_CASES = [
    Case("eigh", [T(4, 4)], eigh_all, inputs=inputs_of(symmetric, (4, 4))),
    Case("eigh_values", [T(5, 5)], _result(0, nn.EighOp), inputs=inputs_of(symmetric, (5, 5))),
    Case("eigh_vectors", [T(4, 4)], _result(1, nn.EighOp), inputs=inputs_of(symmetric, (4, 4))),
    Case("eigh_batched", [T(2, 3, 3)], eigh_all, inputs=inputs_of(symmetric, (2, 3, 3))),
    Case("eigh_batched_2d", [T(2, 2, 3, 3)], eigh_all, inputs=inputs_of(symmetric, (2, 2, 3, 3))),
    Case("eigh_1x1", [T(1, 1)], eigh_all, inputs=inputs_of(symmetric, (1, 1))),
    Case("eigh_expm", [T(2, 3, 3)], eigh_expm, inputs=inputs_of(symmetric, (2, 3, 3))),
    Case("svd_tall", [T(5, 3)], svd_all, inputs=inputs_of(with_singular_values, (5, 3))),
    Case("svd_wide", [T(3, 5)], svd_all, inputs=inputs_of(with_singular_values, (3, 5))),
    Case("svd_square", [T(4, 4)], svd_all, inputs=inputs_of(with_singular_values, (4, 4))),
    Case("svd_batched_tall", [T(2, 4, 3)], svd_all, inputs=inputs_of(with_singular_values, (2, 4, 3))),
    Case("svd_batched_wide", [T(2, 2, 3, 4)], svd_all, inputs=inputs_of(with_singular_values, (2, 2, 3, 4))),
    Case("svd_1x3", [T(1, 3)], svd_all, inputs=inputs_of(with_singular_values, (1, 3))),
    # One result at a time: the rules' missing-cotangent paths (the tall U path without V̄, the wide
    # V path without Ū, and s alone).
    Case("svd_values_tall", [T(5, 3)], _result(1, nn.SvdOp), inputs=inputs_of(with_singular_values, (5, 3))),
    Case("svd_values_wide", [T(3, 5)], _result(1, nn.SvdOp), inputs=inputs_of(with_singular_values, (3, 5))),
    Case("svd_u_tall", [T(5, 3)], _result(0, nn.SvdOp), inputs=inputs_of(with_singular_values, (5, 3))),
    Case("svd_u_wide", [T(3, 5)], _result(0, nn.SvdOp), inputs=inputs_of(with_singular_values, (3, 5))),
    Case("svd_vt_tall", [T(5, 3)], _result(2, nn.SvdOp), inputs=inputs_of(with_singular_values, (5, 3))),
    Case("svd_vt_wide", [T(3, 5)], _result(2, nn.SvdOp), inputs=inputs_of(with_singular_values, (3, 5))),
    Case("svd_reconstruct_wide", [T(2, 3, 4)], svd_reconstruct, inputs=inputs_of(with_singular_values, (2, 3, 4))),
    Case("svd_pinv_tall", [T(4, 3)], svd_pinv, inputs=inputs_of(with_singular_values, (4, 3))),
    Case("qr_tall", [T(5, 3)], qr_all, inputs=inputs_of(qr_ready, (5, 3))),
    Case("qr_square", [T(4, 4)], qr_all, inputs=inputs_of(qr_ready, (4, 4))),
    Case("qr_batched", [T(2, 5, 3)], qr_all, inputs=inputs_of(qr_ready, (2, 5, 3))),
    Case("qr_batched_2d", [T(2, 2, 3, 3)], qr_all, inputs=inputs_of(qr_ready, (2, 2, 3, 3))),
    Case("qr_q", [T(5, 3)], _result(0, nn.QrOp), inputs=inputs_of(qr_ready, (5, 3))),
    Case("qr_r", [T(5, 3)], _result(1, nn.QrOp), inputs=inputs_of(qr_ready, (5, 3))),
    Case("qr_column", [T(4, 1)], qr_all, inputs=inputs_of(qr_ready, (4, 1))),
    Case("qr_reconstruct", [T(4, 3)], qr_reconstruct, inputs=inputs_of(qr_ready, (4, 3))),
]


@pytest.mark.parametrize("case", SPECTRAL_CASES, ids=str)
def test_spectral_first_order(case: Case) -> None:
    """VJP and JVP against central differences, and u.(J v) == (J^T u).v."""
    check_first_order(case)


@pytest.mark.parametrize("case", [c for c in SPECTRAL_CASES if c.order2], ids=str)
def test_spectral_second_order(case: Case) -> None:
    check_second_order(case)


# --- inside loops ---------------------------------------------------------------------------------------------

EIGH_LOOP = """
func.func @f(%a: tensor<3x3xf64>, %d: tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<3xf64>) {
  %lb = arith.constant 0 : index
  %ub = arith.constant 2 : index
  %st = arith.constant 1 : index
  %z = nn.full 0.0 : tensor<3xf64>
  %r, %acc = scf.for %i = %lb to %ub step %st iter_args(%m = %a, %c = %z) -> (tensor<3x3xf64>, tensor<3xf64>) {
    %w, %v = nn.eigh %m : (tensor<3x3xf64>) -> (tensor<3xf64>, tensor<3x3xf64>)
    %t = nn.tanh %v : tensor<3x3xf64>
    %s = nn.add %t, %d : tensor<3x3xf64>
    %c2 = nn.add %c, %w : tensor<3xf64>
    scf.yield %s, %c2 : tensor<3x3xf64>, tensor<3xf64>
  }
  func.return %r, %acc : tensor<3x3xf64>, tensor<3xf64>
}
"""

SVD_QR_LOOP = """
func.func @f(%a: tensor<4x2xf64>, %x: tensor<4x2xf64>) -> tensor<4x2xf64> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 2 : index
  %st = arith.constant 1 : index
  %r = scf.for %i = %lb to %ub step %st iter_args(%h = %x) -> (tensor<4x2xf64>) {
    %y = nn.add %h, %a : tensor<4x2xf64>
    %q, %rr = nn.qr %y : (tensor<4x2xf64>) -> (tensor<4x2xf64>, tensor<2x2xf64>)
    %u, %s, %vt = nn.svd %y : (tensor<4x2xf64>) -> (tensor<4x2xf64>, tensor<2xf64>, tensor<2x2xf64>)
    %qv = nn.matmul %q, %vt : (tensor<4x2xf64>, tensor<2x2xf64>) -> tensor<4x2xf64>
    %t = nn.tanh %qv : tensor<4x2xf64>
    %n = nn.add %t, %u : tensor<4x2xf64>
    scf.yield %n : tensor<4x2xf64>
  }
  func.return %r : tensor<4x2xf64>
}
"""


def eigh_loop_inputs(rng: np.random.Generator) -> list[Any]:
    """The carried matrix stays diagonally dominant (tanh(v) + d with d's diagonal 3, 8, 13), so every
    iteration's eigenvalues are well apart and its eigenvectors close to the unit vectors (a sign margin)."""
    d = np.diag([3.0, 8.0, 13.0]) + 0.1 * rng.standard_normal((3, 3))
    return [symmetric(rng, (3, 3)), d]


def svd_qr_loop_inputs(rng: np.random.Generator) -> list[Any]:
    """a (singular values >= 3) dominates the carried value (tanh + u, columns of norm < 3), so each
    iteration's qr and svd inputs stay well conditioned; the loop is replayed in numpy to check every
    iteration's margins (Householder, U's signs, singular value gaps)."""
    while True:
        a, x = with_singular_values(rng, (4, 2)) * 3.0, 0.1 * rng.standard_normal((4, 2))
        h, ok = x, True
        for _ in range(2):
            y = h + a
            u, s, vt = nn_linalg.svd(y)
            q, _ = nn_linalg.qr(y)
            ok &= householder_margin(y) > 0.1 and sign_margin(u) > 0.05 and s[0] - s[1] > 0.3
            h = np.tanh(q @ vt) + u
        if ok:
            return [a, x]


SPECTRAL_LOOP_CASES = [
    Case("for_eigh", [T(3, 3), T(3, 3)], source=EIGH_LOOP, inputs=eigh_loop_inputs),
    Case("for_svd_qr", [T(4, 2), T(4, 2)], source=SVD_QR_LOOP, inputs=svd_qr_loop_inputs),
]


@pytest.mark.parametrize("case", SPECTRAL_LOOP_CASES, ids=str)
def test_spectral_first_order_in_loops(case: Case) -> None:
    check_first_order(case)


@pytest.mark.parametrize("case", SPECTRAL_LOOP_CASES, ids=str)
def test_spectral_second_order_in_loops(case: Case) -> None:
    check_second_order(case)


# --- closed forms ----------------------------------------------------------------------------------------------


def test_eigenvalue_gradient_is_v_diag_c_vt_folded_into_the_lower_triangle() -> None:
    """grad of sum(c * w) = S̄ = V diag(c) V^T, read through S = tril(A) + tril(A, -1)^T: Ā = tril(S̄) +
    tril(S̄^T, -1), zero in the strict upper triangle (the garbage there is never read)."""
    rng = np.random.default_rng(18)
    a = symmetric(rng, (2, 4, 4))
    c = rng.standard_normal((2, 4))
    body = lambda e, a, c: e(nn.MulOp(e(nn.EighOp(a))[0], c))  # noqa: E731
    (ga,) = gradient_of_sum(body, [TensorType(f64, [2, 4, 4]), TensorType(f64, [2, 4])], [a, c])
    for k in range(2):
        _, v = np.linalg.eigh(np.tril(a[k]) + np.tril(a[k], -1).T)
        sbar = v @ np.diag(c[k]) @ v.T
        np.testing.assert_allclose(ga[k], np.tril(sbar) + np.tril(sbar.T, -1), rtol=1e-10, atol=1e-12)
        assert not np.triu(ga[k], 1).any()


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)], ids=str)
def test_singular_value_gradient_is_u_diag_c_vt(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(19)
    a = with_singular_values(rng, shape)
    k = min(shape)
    c = rng.standard_normal(k)
    body = lambda e, a, c: e(nn.MulOp(e(nn.SvdOp(a))[1], c))  # noqa: E731
    (ga,) = gradient_of_sum(body, [TensorType(f64, list(shape)), TensorType(f64, [k])], [a, c])
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(ga, u @ np.diag(c) @ vt, rtol=1e-10, atol=1e-12)


def test_gradient_of_svd_and_qr_reconstruction_is_the_identity() -> None:
    """sum(w * (U diag(s) V^T)) and sum(w * (Q R)) are sum(w * A): their gradient is w exactly."""
    rng = np.random.default_rng(20)
    for body, a in ((svd_reconstruct, with_singular_values(rng, (4, 3))), (qr_reconstruct, qr_ready(rng, (4, 3)))):
        w = rng.standard_normal((4, 3))
        weighted = lambda e, a, w, body=body: e(nn.MulOp(body(e, a), w))  # noqa: E731
        (ga,) = gradient_of_sum(weighted, [TensorType(f64, [4, 3])] * 2, [a, w])
        np.testing.assert_allclose(ga, w, rtol=1e-10, atol=1e-12)


def test_repeated_eigenvalues_and_singular_values_with_zero_vector_cotangents_give_finite_gradients() -> None:
    """A repeated eigenvalue (singular value) makes F (1/E) infinite; where the vectors' cotangents are
    zeros (not absent: multiplied by a zero argument) the products are strong zeros, so the gradient of
    the values is finite and basis-independent: V diag(c) V^T folded (U diag(c) V^T) with c equal on the
    repeated pair."""
    rng = np.random.default_rng(25)
    # Exactly repeated (a diagonal matrix, a permuted one for the SVD), so F and 1/E are really inf.
    q = np.eye(3)[[2, 0, 1]]
    a = q @ np.diag([1.0, 1.0, 3.0]) @ q.T + np.triu(10 * rng.standard_normal((3, 3)), 1)
    c = np.array([2.0, 2.0, 5.0])

    def eigh_loss(e: Emitter, a, c, z):
        w, v = e(nn.EighOp(a))
        return e(nn.AddOp(e(nn.ReduceSumOp(e(nn.MulOp(w, c)), [0])), e(nn.ReduceSumOp(e(nn.MulOp(v, z)), [0, 1]))))

    f = build_function("f", [TensorType(f64, [3, 3]), TensorType(f64, [3]), TensorType(f64, [3, 3])], eigh_loss)
    g = build_function("g", [TensorType(f64, [3, 3]), TensorType(f64, [3]), TensorType(f64, [3, 3])],
                       lambda e, *x: e(ad.GradOp(f, x, (0,))))
    (ga,) = run_function(run_pass(ModuleOp([f, g])), "g", [a, c, np.zeros((3, 3))])
    sbar = q @ np.diag(c) @ q.T
    np.testing.assert_allclose(ga, np.tril(sbar) + np.tril(sbar.T, -1), rtol=1e-10, atol=1e-12)

    for shape in ((4, 3), (3, 4)):
        m, n = shape
        u, v = np.eye(m)[:, [1, 2, 0]], np.eye(n)[:, [2, 0, 1]]
        a = u @ np.diag([2.0, 2.0, 1.0]) @ v.T
        c = np.array([3.0, 3.0, 1.0])
        types = [TensorType(f64, list(shape)), TensorType(f64, [3]), TensorType(f64, [m, 3]), TensorType(f64, [3, n])]

        def svd_loss(e: Emitter, a, c, zu, zv):
            uu, s, vt = e(nn.SvdOp(a))
            terms = [e(nn.ReduceSumOp(e(nn.MulOp(s, c)), [0]))]
            terms += [e(nn.ReduceSumOp(e(nn.MulOp(x, z)), [0, 1])) for x, z in ((uu, zu), (vt, zv))]
            return e(nn.AddOp(e(nn.AddOp(terms[0], terms[1])), terms[2]))

        f = build_function("f", types, svd_loss)
        g = build_function("g", types, lambda e, *x: e(ad.GradOp(f, x, (0,))))
        (ga,) = run_function(run_pass(ModuleOp([f, g])), "g", [a, c, np.zeros((m, 3)), np.zeros((3, n))])
        np.testing.assert_allclose(ga, u @ np.diag(c) @ v.T, rtol=1e-10, atol=1e-12, err_msg=str(shape))


# --- vmap ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "make", "shape"),
    [(nn.EighOp, symmetric, (2, 3, 3)), (nn.SvdOp, with_singular_values, (3, 4)), (nn.QrOp, qr_ready, (2, 4, 3))],
    ids=["eigh", "svd", "qr"],
)
def test_vmap_spectral(op: type, make, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(21)
    a = make(rng, (B, *shape))
    check_vmap(lambda e, a: e(op(a)), [TensorType(f64, list(shape))], [a], [True])


def test_vmap_of_grad_of_eigh_and_svd_is_the_per_example_gradient() -> None:
    """batch(grad(sum(c * w) + sum(d * (V^T P V)^2) + sum(s))) of (a, p, c): each example's own
    gradient (the vectors through a sign-invariant loss)."""
    types = [TensorType(f64, [3, 3]), TensorType(f64, [3, 3]), TensorType(f64, [3]), TensorType(f64, [3, 3])]

    def loss(e: Emitter, a, p, c, d):
        w, v = e(nn.EighOp(a))
        vpv = e(nn.MatmulOp(transpose_last(e, v), e(nn.MatmulOp(p, v))))
        s = e(nn.SvdOp(p))[1]
        terms = [
            e(nn.ReduceSumOp(e(nn.MulOp(w, c)), [0])),
            e(nn.ReduceSumOp(e(nn.MulOp(d, e(nn.MulOp(vpv, vpv)))), [0, 1])),
            e(nn.ReduceSumOp(s, [0])),
        ]
        return e(nn.AddOp(e(nn.AddOp(terms[0], terms[1])), terms[2]))

    f = build_function("loss", types, loss)
    g = build_function("grad", types, lambda e, *a: e(ad.GradOp(f, a, (0, 1))))
    batched = [TensorType(f64, [B, 3, 3]), TensorType(f64, [B, 3, 3]), types[2], types[3]]
    h = build_function("h", batched, lambda e, *a: e(ad.BatchOp(g, a, [0, 0, -1, -1], [0, 0], B)))
    module = run_pass(ModuleOp([f, g, h]))
    rng = np.random.default_rng(22)
    a, p = symmetric(rng, (B, 3, 3)), with_singular_values(rng, (B, 3, 3))
    c, d = rng.standard_normal(3), rng.standard_normal((3, 3))
    ga, gp = run_function(module, "h", [a, p, c, d])
    for k in range(B):
        ea, ep = run_function(module, "grad", [a[k], p[k], c, d])
        np.testing.assert_allclose(ga[k], ea, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gp[k], ep, rtol=1e-12, atol=1e-12)
        # Against central differences of the loss along a random direction of (a, p).
        da, dp = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
        step = 1e-6

        def value(t: float) -> float:
            (out,) = run_function(module, "loss", [a[k] + t * da, p[k] + t * dp, c, d])
            return float(out)

        fd = (value(step) - value(-step)) / (2 * step)
        np.testing.assert_allclose(np.sum(ga[k] * da) + np.sum(gp[k] * dp), fd, rtol=1e-6, atol=1e-6)


# --- the rest --------------------------------------------------------------------------------------------------


def test_spectral_ops_have_all_rules() -> None:
    load_rules()
    for op in (nn.EighOp, nn.SvdOp, nn.QrOp):
        assert op in VJP_RULES and op in JVP_RULES and op in BATCH_RULES, op.name


def test_spectral_f32_derivatives_keep_f32() -> None:
    rng = np.random.default_rng(23)
    for body, a in (
        (lambda e, a: e(nn.EighOp(a))[1], symmetric(rng, (3, 3))),
        (svd_reconstruct, with_singular_values(rng, (4, 3))),
        (qr_reconstruct, qr_ready(rng, (4, 3))),
    ):
        a32 = a.astype(np.float32)
        (g,) = gradient_of_sum(body, [TensorType(f32, list(a.shape))], [a32])
        assert g.dtype == np.float32


def test_flop_counts_of_eigh_svd_qr() -> None:
    from irgrad.analysis.cost import op_flops

    square, tall, wide = TensorType(f64, [2, 6, 6]), TensorType(f64, [2, 9, 3]), TensorType(f64, [3, 4])
    f = build_function(
        "f",
        [square, tall, wide],
        lambda e, s, t, w: (e(nn.EighOp(s))[0], e(nn.SvdOp(t))[1], e(nn.SvdOp(w))[1], e(nn.QrOp(t))[1]),
    )
    counts = [op_flops(op) for op in f.body.block.ops if isinstance(op, nn.EighOp | nn.SvdOp | nn.QrOp)]
    assert counts == [
        2 * 9 * 6**3,
        2 * min(14 * 9 * 3 * 3 + 8 * 3**3, 6 * 9 * 3 * 3 + 20 * 3**3),  # R-SVD for 9 x 3
        14 * 4 * 3 * 3 + 8 * 3**3,  # 4 x 3 (as its transpose): Golub-Kahan-Reinsch
        2 * (4 * 9 * 3 * 3 - 4 * 3**3 // 3),
    ]


@pytest.mark.parametrize(
    ("line", "make"),
    [
        ("%w, %l = nn.eigh %a : (tensor<4x3x3xf64>) -> (tensor<4x3xf64>, tensor<4x3x3xf64>)", symmetric),
        ("%l, %sv, %v = nn.svd %a : (tensor<4x3x3xf64>) -> (tensor<4x3x3xf64>, tensor<4x3xf64>, tensor<4x3x3xf64>)",
         with_singular_values),
        ("%l, %v = nn.qr %a : (tensor<4x3x3xf64>) -> (tensor<4x3x3xf64>, tensor<4x3x3xf64>)", qr_ready),
    ],
    ids=["eigh", "svd", "qr"],
)
def test_spectral_ops_under_shard_partition_run_replicated(line: str, make) -> None:
    text = SHARDED.replace("%l = nn.cholesky %a : (tensor<4x3x3xf64>) -> tensor<4x3x3xf64>", line)
    rng = np.random.default_rng(24)
    _, got, expected = partitioned_run(text, [make(rng, (4, 3, 3)), rng.standard_normal((4, 3, 2))])
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
