"""Operators and methods of traced arrays (`Tracer`): `+ - * / ** @`, unary `-`, comparisons,
`.T`, `.sum()`, `.mean()`, `.reshape()`, `.shape`, `.dtype`, `.ndim`, and numpy arrays on the
left of an operator (`np_array + tracer`).
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import assert_array, check_traced, randint, randn

X = randn(3, 4, seed=1)
Y = randn(4, seed=2) + 3.0  # away from zero, for division
W = randn(4, 2, seed=3)

BINARY_OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
                    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("op", BINARY_OPERATORS, ids=lambda o: o.__name__)
def test_operator_between_tracers(op):
    x = np.abs(X) + 0.5 if op is operator.pow else X
    check_traced(op, op, x, Y, rtol=1e-5)


@pytest.mark.parametrize("op", BINARY_OPERATORS, ids=lambda o: o.__name__)
@pytest.mark.parametrize("scalar", [2, 0.5])
def test_operator_with_python_scalar_both_sides(op, scalar):
    x = np.abs(X) + 0.5
    f32 = np.float32(scalar)
    check_traced(lambda a: op(a, scalar), lambda a: op(a, f32), x, rtol=1e-5)
    check_traced(lambda a: op(scalar, a), lambda a: op(f32, a), x, rtol=1e-5)


@pytest.mark.parametrize("op", BINARY_OPERATORS + [operator.matmul], ids=lambda o: o.__name__)
def test_numpy_array_on_the_left(op):
    """`ndarray op tracer` must defer to the tracer, not make an object array."""
    const = np.abs(randn(3, 4, seed=4)) + 0.5
    x = np.abs(X) + 0.5
    if op is operator.matmul:
        check_traced(lambda w: const @ w, lambda w: const @ w, W)
        return
    check_traced(lambda a: op(const, a), lambda a: op(const, a), x, rtol=1e-5)
    check_traced(lambda a: op(const[0], a), lambda a: op(const[0], a), x, rtol=1e-5)


def test_numpy_scalar_on_the_left():
    check_traced(lambda a: np.float32(2) * a, lambda a: np.float32(2) * a, X)
    check_traced(lambda a: np.float32(2) - a, lambda a: np.float32(2) - a, X)


def test_matmul_operator_and_reversed():
    check_traced(lambda a, w: a @ w, lambda a, w: a @ w, X, W, rtol=1e-5)
    check_traced(lambda w: X @ w, lambda w: X @ w, W, rtol=1e-5)


def test_unary_operators():
    check_traced(lambda a: -a, lambda a: -a, X)
    check_traced(lambda a: +a, lambda a: +a, X)
    check_traced(lambda a: abs(a), np.abs, X)
    b = X > 0
    check_traced(lambda a: ~a, lambda a: ~a, b)


def test_floordiv_operator():
    i = randint(-9, 9, 6, seed=5)
    check_traced(lambda a: a // 4, lambda a: a // 4, i)
    check_traced(lambda a: 7 // (a + 10), lambda a: 7 // (a + 10), i)


def test_integer_operators_keep_int32():
    i = randint(-9, 9, 6, seed=6)
    check_traced(lambda a: a * 3 + 1 - a, lambda a: a * 3 + 1 - a, i, dtype=np.int32)
    check_traced(lambda a: a / 2, lambda a: (a / 2).astype(np.float32), i, dtype=np.float32)


def test_transpose_property_and_method():
    x3 = randn(2, 3, 4, seed=7)
    check_traced(lambda a: a.T, lambda a: a.T, X)
    check_traced(lambda a: a.T, lambda a: a.T, x3)
    check_traced(lambda a: a.transpose(1, 0, 2), lambda a: a.transpose(1, 0, 2), x3)
    check_traced(lambda a: a.transpose((2, 0, 1)), lambda a: a.transpose((2, 0, 1)), x3)
    check_traced(lambda a: a.transpose(), lambda a: a.transpose(), x3)


@pytest.mark.parametrize("method", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (-1, True), ((0, 1), True)])
def test_reduction_methods(method, axis, keepdims):
    check_traced(lambda a: getattr(a, method)(axis=axis, keepdims=keepdims),
                 lambda a: getattr(a, method)(axis=axis, keepdims=keepdims), X, rtol=1e-5)
    check_traced(lambda a: getattr(a, method)(axis), lambda a: getattr(a, method)(axis), X, rtol=1e-5)


def test_other_methods():
    check_traced(lambda a: a.reshape(4, 3), lambda a: a.reshape(4, 3), X)
    check_traced(lambda a: a.astype(ig.int32), lambda a: a.astype(np.int32), X, dtype=np.int32)
    check_traced(lambda a: a[None].squeeze(0), lambda a: a, X)
    check_traced(lambda a: a.ravel(), lambda a: a.ravel(), X)
    check_traced(lambda a: a.sum(dtype=ig.float64), lambda a: a.astype(np.float64).sum(), X, dtype=np.float64)


def test_attributes():
    seen = {}

    def f(a, i):
        seen.update(shape=a.shape, dtype=a.dtype, ndim=a.ndim, size=a.size, len=len(a),
                    ishape=i.shape, idtype=i.dtype, indim=i.ndim, T=a.T.shape)
        return a

    ig.trace(f, randn(2, 3, 4, seed=8), ig.ShapeDtype((), ig.int64))
    assert seen == dict(shape=(2, 3, 4), dtype=np.dtype(np.float32), ndim=3, size=24, len=2,
                        ishape=(), idtype=np.dtype(np.int64), indim=0, T=(4, 3, 2))
    assert isinstance(seen["dtype"], np.dtype)


def test_iteration_unstacks_the_first_axis():
    check_traced(lambda a: [row * 2 for row in a][-1], lambda a: a[-1] * 2, X)
    got = ig.trace(lambda a: tuple(a), X)(X)
    assert isinstance(got, tuple) and len(got) == 3
    for g, w in zip(got, X):
        assert_array(g, w)


def test_tracer_repr_names_shape_and_dtype():
    seen = []
    ig.trace(lambda a: seen.append(repr(a)) or a, X)
    assert seen == ["Tracer<float32[3, 4]>"]


def test_mixed_expression():
    def f(x, w, b):
        h = ig.relu(x @ w + b)
        return (h ** 2).mean(axis=0) - h.sum() / 10

    b = randn(2, seed=9)
    check_traced(f, lambda x, w, b: (np.maximum(x @ w + b, 0) ** 2).mean(axis=0) - np.maximum(x @ w + b, 0).sum() / 10,
                 X, W, b, rtol=1e-5)
