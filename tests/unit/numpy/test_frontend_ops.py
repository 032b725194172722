"""Array operations of the Python API (`ig.add`, `ig.exp`, `ig.sum`, `ig.matmul`, creation ...)
against numpy, each run eagerly on numpy arrays and traced with `ig.trace`, dtypes included.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import assert_array, check, check_traced, randint, randn

# ---------------------------------------------------------------------------------------------
# Elementwise binary, with broadcasting
# ---------------------------------------------------------------------------------------------

BINARY = [
    (ig.add, np.add),
    (ig.subtract, np.subtract),
    (ig.multiply, np.multiply),
    (ig.divide, np.divide),
    (ig.maximum, np.maximum),
    (ig.minimum, np.minimum),
]

BROADCAST_SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 4), (4,)),
    ((3, 1), (1, 4)),
    ((2, 1, 4), (3, 1)),
    ((), (2, 3)),
    ((5,), ()),
]


@pytest.mark.parametrize("ig_fn, np_fn", BINARY, ids=[f.__name__ for f, _ in BINARY])
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
def test_binary_float_broadcast(ig_fn, np_fn, shapes):
    x = randn(*shapes[0], seed=1)
    y = randn(*shapes[1], seed=2) + 3.0 * (np_fn is np.divide)
    check(ig_fn, np_fn, x, y, dtype=np.float32, rtol=1e-6)


@pytest.mark.parametrize("ig_fn, np_fn", BINARY[:3] + BINARY[4:], ids=lambda f: getattr(f, "__name__", ""))
def test_binary_int(ig_fn, np_fn):
    x = randint(-20, 20, 3, 4, seed=3)
    y = randint(-20, 20, 4, seed=4)
    check(ig_fn, np_fn, x, y, dtype=np.int32)


def test_divide_ints_gives_float32():
    x = randint(-20, 20, 6, seed=5)
    y = randint(1, 7, 6, seed=6)
    check(ig.divide, lambda a, b: (a / b).astype(np.float32), x, y, dtype=np.float32)
    check_traced(lambda a: a / 4, lambda a: (a / 4).astype(np.float32), x, dtype=np.float32)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
def test_floor_divide(dtype):
    # Every sign combination, exact and inexact quotients.
    x = np.array([7, -7, 7, -7, 6, -6, 0, 5, -1], dtype=dtype)
    y = np.array([2, 2, -2, -2, 3, 3, 4, -5, 3], dtype=dtype)
    check(ig.floor_divide, np.floor_divide, x, y, dtype=dtype)
    check_traced(lambda a, b: a // b, np.floor_divide, x, y, dtype=dtype)


def test_floor_divide_random_float():
    x = randn(4, 5, seed=7) * 10
    y = randn(5, seed=8) + 2.5
    check(ig.floor_divide, np.floor_divide, x, y, dtype=np.float32)


@pytest.mark.parametrize("exponent", [2, 3, -1, -2, 0, 1, 4, 5, 0.5, 2.5, -1.5])
def test_power_python_exponent(exponent):
    x = np.abs(randn(3, 4, seed=9)) + 0.5
    check(lambda a: ig.power(a, exponent), lambda a: np.power(a, np.float32(exponent)), x,
          dtype=np.float32, rtol=1e-5)
    check_traced(lambda a: a ** exponent, lambda a: np.power(a, np.float32(exponent)), x,
          dtype=np.float32, rtol=1e-5)


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 0.5, 2.0, -1, -2])
def test_power_at_zero(exponent):
    x = np.array([0.0, 1.0, 2.0, -0.0], dtype=np.float32)
    with np.errstate(divide="ignore"):
        want = np.power(x, np.float32(exponent))
    check(lambda a: ig.power(a, exponent), want, x, dtype=np.float32)


def test_power_array_exponent():
    x = np.abs(randn(3, 4, seed=10)) + 0.1
    y = randn(4, seed=11)
    check(ig.power, np.power, x, y, dtype=np.float32, rtol=1e-5)


def test_power_int_arrays():
    x = randint(-5, 6, 8, seed=12)
    y = randint(0, 5, 8, seed=13)
    check(ig.power, np.power, x, y, dtype=np.int32)
    check_traced(lambda a: a ** 3, lambda a: a ** 3, x, dtype=np.int32)


def test_power_int_base_float_exponent():
    x = randint(1, 6, 5, seed=14)
    check(lambda a: ig.power(a, 0.5), lambda a: np.sqrt(a).astype(np.float32), x, dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# Elementwise unary
# ---------------------------------------------------------------------------------------------


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


UNARY = [
    (ig.negative, np.negative, "any"),
    (ig.exp, np.exp, "any"),
    (ig.log, np.log, "positive"),
    (ig.tanh, np.tanh, "any"),
    (ig.sigmoid, _sigmoid, "any"),
    (ig.relu, lambda x: np.maximum(x, 0), "any"),
    (ig.sqrt, np.sqrt, "positive"),
    (ig.rsqrt, lambda x: 1 / np.sqrt(x), "positive"),
    (ig.abs, np.abs, "any"),
    (ig.sign, np.sign, "any"),
    (ig.sin, np.sin, "any"),
    (ig.cos, np.cos, "any"),
    (ig.square, np.square, "any"),
    (ig.log1p, np.log1p, "positive"),
    (ig.floor, np.floor, "any"),
]


@pytest.mark.parametrize("ig_fn, np_fn, domain", UNARY, ids=[f.__name__ for f, _, _ in UNARY])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_float(ig_fn, np_fn, domain, dtype):
    x = randn(3, 5, dtype=dtype, seed=15) * 3
    if domain == "positive":
        x = np.abs(x) + 0.1
    check(ig_fn, lambda a: np_fn(a).astype(dtype), x, dtype=dtype, rtol=2e-6 if dtype == np.float32 else 1e-12)


def test_sign_and_abs_of_zero_and_ints():
    x = np.array([-3.0, -0.0, 0.0, 2.5], dtype=np.float32)
    check(ig.sign, np.sign, x, dtype=np.float32)
    i = np.array([-3, 0, 4], dtype=np.int32)
    check(ig.sign, np.sign, i, dtype=np.int32)
    check(ig.abs, np.abs, i, dtype=np.int32)
    check(ig.negative, np.negative, i, dtype=np.int32)
    check(ig.relu, lambda a: np.maximum(a, 0), i, dtype=np.int32)
    check(ig.square, np.square, i, dtype=np.int32)


@pytest.mark.parametrize("fn", [ig.exp, ig.log, ig.sqrt, ig.sin, ig.tanh, ig.sigmoid])
def test_float_functions_of_ints_give_float32(fn):
    x = randint(1, 9, 4, seed=16)
    np_fn = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "tanh": np.tanh,
             "sigmoid": _sigmoid}[fn.__name__]
    check(fn, lambda a: np_fn(a.astype(np.float64)).astype(np.float32), x, dtype=np.float32, rtol=2e-6)


# ---------------------------------------------------------------------------------------------
# Comparisons, logical_not, where
# ---------------------------------------------------------------------------------------------

COMPARE = [
    (ig.equal, np.equal),
    (ig.not_equal, np.not_equal),
    (ig.less, np.less),
    (ig.less_equal, np.less_equal),
    (ig.greater, np.greater),
    (ig.greater_equal, np.greater_equal),
]


@pytest.mark.parametrize("ig_fn, np_fn", COMPARE, ids=[f.__name__ for f, _ in COMPARE])
def test_compare(ig_fn, np_fn):
    x = randint(-2, 3, 3, 4, seed=17).astype(np.float32)
    y = randint(-2, 3, 4, seed=18).astype(np.float32)
    check(ig_fn, np_fn, x, y, dtype=np.bool_)
    check(lambda a: ig_fn(a, 0.0), lambda a: np_fn(a, 0.0), x, dtype=np.bool_)
    xi = randint(-2, 3, 6, seed=19)
    check(lambda a: ig_fn(a, 1), lambda a: np_fn(a, 1), xi, dtype=np.bool_)


def test_compare_mixed_int_float():
    x = randint(-2, 3, 6, seed=20)
    y = randint(-2, 3, 6, seed=21).astype(np.float32) + 0.5
    check(ig.less, np.less, x, y, dtype=np.bool_)


def test_logical_not():
    b = randn(5, seed=22) > 0
    check(ig.logical_not, np.logical_not, b, dtype=np.bool_)
    x = np.array([0.0, 1.5, -2.0, 0.0], dtype=np.float32)
    check(ig.logical_not, np.logical_not, x, dtype=np.bool_)


def test_where_broadcasts_all_three():
    c = randn(3, 1, seed=23) > 0
    x = randn(4, seed=24)
    y = randn(3, 4, seed=25)
    check(ig.where, np.where, c, x, y, dtype=np.float32)
    check(lambda c_, y_: ig.where(c_, 0.0, y_), lambda c_, y_: np.where(c_, np.float32(0), y_), c, y,
          dtype=np.float32)
    xi = randint(0, 5, 4, seed=26)
    check(lambda c_, a: ig.where(c_, a, -1), lambda c_, a: np.where(c_, a, -1).astype(np.int32), c, xi,
          dtype=np.int32)


def test_where_promotes_int_and_float():
    c = np.array([True, False, True])
    xi = np.array([1, 2, 3], dtype=np.int32)
    y = np.array([0.5, 1.5, 2.5], dtype=np.float32)
    check(ig.where, np.where, c, xi, y, dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------

AXES = [None, 0, 1, -1, -2, (0, 2), (-1, 0), ()]
REDUCTIONS = [(ig.sum, np.sum), (ig.mean, np.mean), (ig.max, np.max), (ig.min, np.min)]


@pytest.mark.parametrize("ig_fn, np_fn", REDUCTIONS, ids=[f.__name__ for f, _ in REDUCTIONS])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction(ig_fn, np_fn, axis, keepdims):
    x = randn(2, 3, 4, seed=27)
    check(lambda a: ig_fn(a, axis=axis, keepdims=keepdims), lambda a: np_fn(a, axis=axis, keepdims=keepdims),
          x, dtype=np.float32, rtol=1e-5)


@pytest.mark.parametrize("ig_fn, np_fn", REDUCTIONS, ids=[f.__name__ for f, _ in REDUCTIONS])
def test_reduction_of_a_scalar(ig_fn, np_fn):
    x = np.array(2.5, dtype=np.float32)
    check(ig_fn, np_fn, x, dtype=np.float32)


def test_reduction_dtypes():
    b = randn(3, 4, seed=28) > 0
    check(ig.sum, lambda a: np.sum(a).astype(np.int32), b, dtype=np.int32)
    check(lambda a: ig.sum(a, axis=0), lambda a: np.sum(a, axis=0).astype(np.int32), b, dtype=np.int32)
    i = randint(-9, 9, 3, 4, seed=29)
    check(lambda a: ig.sum(a, axis=1), lambda a: np.sum(a, axis=1).astype(np.int32), i, dtype=np.int32)
    check(ig.mean, lambda a: np.float32(np.mean(a)), i, dtype=np.float32)
    check(ig.max, np.max, i, dtype=np.int32)
    check(ig.min, np.min, i, dtype=np.int32)
    h = randn(4, dtype=np.float16, seed=30)
    check(ig.sum, lambda a: np.sum(a), h, dtype=np.float16, rtol=1e-2, atol=1e-2)
    d = randn(4, dtype=np.float64, seed=31)
    check(ig.mean, np.mean, d, dtype=np.float64, rtol=1e-12)


def test_sum_with_dtype():
    i = randint(0, 9, 5, seed=32)
    check(lambda a: ig.sum(a, dtype=ig.float32), lambda a: np.sum(a).astype(np.float32), i, dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# NaN propagation, as numpy
# ---------------------------------------------------------------------------------------------


def _with_nans(seed: int) -> np.ndarray:
    x = randn(3, 4, seed=seed)
    x[0, 1] = np.nan
    x[2, 3] = np.nan
    return x


@pytest.mark.parametrize("ig_fn, np_fn", [(ig.maximum, np.maximum), (ig.minimum, np.minimum)])
def test_nan_propagates_through_maximum_minimum(ig_fn, np_fn):
    x = _with_nans(33)
    y = _with_nans(34)
    y[1, 1] = np.nan
    check(ig_fn, np_fn, x, y, dtype=np.float32)
    check(ig_fn, np_fn, y, x, dtype=np.float32)
    check(lambda a: ig_fn(a, 0.0), lambda a: np_fn(a, np.float32(0)), x, dtype=np.float32)


@pytest.mark.parametrize("ig_fn, np_fn", [(ig.max, np.max), (ig.min, np.min)])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_propagates_through_max_min(ig_fn, np_fn, axis):
    x = _with_nans(35)
    check(lambda a: ig_fn(a, axis=axis), lambda a: np_fn(a, axis=axis), x, dtype=np.float32)


def test_nan_propagates_through_relu():
    x = _with_nans(36)
    check(ig.relu, lambda a: np.maximum(a, np.float32(0)), x, dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# Creation and astype
# ---------------------------------------------------------------------------------------------


def _traced_const(fn):
    """A creation function takes no arrays: run it eagerly and as a traced function of nothing."""
    return {"eager": fn(), "traced": ig.trace(fn)()}


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda: ig.zeros((2, 3)), np.zeros((2, 3), np.float32)),
        (lambda: ig.zeros(4, dtype=ig.int32), np.zeros(4, np.int32)),
        (lambda: ig.ones((3,), ig.float64), np.ones(3, np.float64)),
        (lambda: ig.ones((2, 2), dtype=bool), np.ones((2, 2), bool)),
        (lambda: ig.full((2, 3), 7.5), np.full((2, 3), 7.5, np.float32)),
        (lambda: ig.full((2,), 3), np.full((2,), 3, np.int32)),
        (lambda: ig.full((2, 2), 3, dtype=ig.float16), np.full((2, 2), 3, np.float16)),
        (lambda: ig.arange(5), np.arange(5, dtype=np.int32)),
        (lambda: ig.arange(2, 11, 3), np.arange(2, 11, 3, dtype=np.int32)),
        (lambda: ig.arange(5, 0, -2), np.arange(5, 0, -2, dtype=np.int32)),
        (lambda: ig.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25, dtype=np.float32)),
        (lambda: ig.arange(4, dtype=ig.float32), np.arange(4, dtype=np.float32)),
        (lambda: ig.arange(3, 3), np.arange(3, 3, dtype=np.int32)),
    ],
)
def test_creation(fn, expected):
    for mode, got in _traced_const(fn).items():
        assert_array(got, expected, what=mode)


def test_zeros_like_ones_like():
    x = randn(2, 3, seed=37)
    check(ig.zeros_like, np.zeros_like, x, dtype=np.float32)
    check(ig.ones_like, np.ones_like, x, dtype=np.float32)
    check(lambda a: ig.ones_like(a, dtype=ig.int32), lambda a: np.ones_like(a, dtype=np.int32), x, dtype=np.int32)
    i = randint(0, 4, 5, seed=38)
    check(ig.zeros_like, np.zeros_like, i, dtype=np.int32)


@pytest.mark.parametrize(
    "src, dst",
    [(np.float32, np.int32), (np.float32, np.float64), (np.int32, np.float32), (np.float32, np.bool_),
     (np.bool_, np.float32), (np.float64, np.float16), (np.int32, np.int64)],
)
def test_astype(src, dst):
    x = (randn(3, 4, seed=39) * 5).astype(src)
    check(lambda a: ig.astype(a, dst), lambda a: a.astype(dst), x, dtype=dst, rtol=1e-3)
    check_traced(lambda a: ig.add(a, a).astype(dst) if src != np.bool_ else ig.astype(a, dst),
          lambda a: (a + a).astype(dst) if src != np.bool_ else a.astype(dst), x, dtype=dst, rtol=1e-3)


def test_astype_bfloat16():
    x = randn(5, seed=40)
    got = ig.trace(lambda a: a.astype(ig.bfloat16).astype(ig.float32), x)(x)
    assert_array(got, x.astype(ig.bfloat16).astype(np.float32), dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4,)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(shapes):
    a = randn(*shapes[0], seed=41)
    b = randn(*shapes[1], seed=42)
    check(ig.matmul, np.matmul, a, b, dtype=np.float32, rtol=1e-5, atol=1e-5)
    check_traced(lambda x, y: x @ y, np.matmul, a, b, dtype=np.float32, rtol=1e-5, atol=1e-5)


def test_matmul_with_a_shared_weight_is_one_two_dimensional_product():
    """(..., M, K) @ (K, N) folds the batch into the rows, as XLA's dot_general: one GEMM
    forward and one for the weight's gradient, never the weight broadcast over the batch."""
    a = randn(3, 5, 4, seed=49).astype(np.float64)
    w = randn(4, 6, seed=50).astype(np.float64)
    text = str(ig.trace(lambda x, y: x @ y, a, w))
    assert "tensor<15x4xf64>, tensor<4x6xf64>) -> tensor<15x6xf64>" in text
    assert "nn.broadcast_in_dim" not in text
    np.testing.assert_allclose(ig.matmul(a, w), a @ w, rtol=1e-13)
    u = randn(3, 5, 6, seed=51).astype(np.float64)
    ga, gw = ig.grad(lambda x, y: ig.sum((x @ y) * u), argnums=(0, 1))(a, w)
    np.testing.assert_allclose(ga, u @ w.T, rtol=1e-13)
    np.testing.assert_allclose(gw, np.einsum("btk,btn->kn", a, u), rtol=1e-13)


def test_matmul_dtypes():
    a = randn(2, 3, seed=43)
    b = randn(3, 2, dtype=np.float64, seed=44)
    check(ig.matmul, lambda x, y: x.astype(np.float64) @ y, a, b, dtype=np.float64, rtol=1e-6)
    i = randint(-3, 4, 2, 3, seed=45)
    j = randint(-3, 4, 3, 4, seed=46)
    check(ig.matmul, np.matmul, i, j, dtype=np.int32)
    check(ig.matmul, lambda x, y: x @ y.astype(np.float32), i, a.T.copy(), dtype=np.float32, rtol=1e-6)


def test_dot_of_vectors():
    a, b = randn(6, seed=47), randn(6, seed=48)
    check(ig.dot, np.dot, a, b, dtype=np.float32, rtol=1e-5)


@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((5, 2), (3, 2, 4)), ((2, 3, 4), (6, 4, 2)), ((2, 3, 4), (4, 5)), ((3,), (2, 3, 4)), ((2, 3, 4), (4,)),
     ((), (3, 4)), ((3, 4), ()), ((3, 4), (4, 5))],
)
def test_dot_follows_numpy_not_matmul_batching(shape_a, shape_b):
    """numpy's dot: a's last axis with b's second-to-last, free axes of a then of b."""
    a = np.random.default_rng(1).standard_normal(shape_a)
    b = np.random.default_rng(2).standard_normal(shape_b)
    check(ig.dot, np.dot, a, b, dtype=np.float64, rtol=1e-12, atol=1e-12)


def test_dot_gradient_of_nd_operands_matches_finite_differences():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3, 2))
    loss = lambda a, b: ig.sum(ig.sin(ig.dot(a, b)))  # noqa: E731
    ga, gb = ig.grad(loss, argnums=(0, 1))(a, b)
    cos = np.cos(np.dot(a, b))  # (2, 2, 2): [i, k, m]
    np.testing.assert_allclose(np.asarray(ga), np.einsum("ikm,kjm->ij", cos, b), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), np.einsum("ikm,ij->kjm", cos, a), rtol=1e-12)
    eps, e = 1e-6, np.zeros_like(a)
    e[1, 2] = eps
    numeric = (np.sin(np.dot(a + e, b)).sum() - np.sin(np.dot(a - e, b)).sum()) / (2 * eps)
    assert abs(np.asarray(ga)[1, 2] - numeric) < 1e-8


# ---------------------------------------------------------------------------------------------
# dtype promotion (JAX's rules, documented in irgrad/tracing/dtypes.py)
# ---------------------------------------------------------------------------------------------

F16, BF16, F32, F64 = np.float16, ig.bfloat16, np.float32, np.float64
I32, I64, B = np.int32, np.int64, np.bool_


def _array(dtype):
    return (np.arange(1, 4) % 2 == 0).astype(dtype) if dtype == B else np.arange(1, 4).astype(dtype)


@pytest.mark.parametrize(
    "a, b, want",
    [
        (F32, F32, F32), (F32, F64, F64), (F16, BF16, F32), (F16, F32, F32), (BF16, F64, F64),
        (I32, F32, F32), (I64, F16, F16), (I32, I64, I64), (B, I32, I32), (B, F32, F32),
        (I32, I32, I32), (F16, F16, F16),
    ],
    ids=str,
)
def test_promotion_of_arrays(a, b, want):
    x, y = _array(a), _array(b)
    for mode, got in {"eager": ig.maximum(x, y), "traced": ig.trace(ig.maximum, x, y)(x, y)}.items():
        assert got.dtype == np.dtype(want), mode
        np.testing.assert_array_equal(got.astype(np.float64), np.maximum(x.astype(np.float64), y.astype(np.float64)))
    got = ig.trace(lambda u, v: u + v if a != B or b != B else u, x, y)(x, y)
    assert got.dtype == np.dtype(want)


@pytest.mark.parametrize(
    "dtype, scalar, want",
    [
        (F16, 2.0, F16), (BF16, 2.0, BF16), (F32, 2.0, F32), (F64, 2, F64), (I32, 1, I32),
        (I64, 1, I64), (I32, 1.5, F32), (I64, 0.5, F32), (B, 1, I32), (B, 1.5, F32), (F16, 3, F16),
    ],
    ids=str,
)
def test_weak_python_scalars(dtype, scalar, want):
    x = _array(dtype)
    for mode, got in eager_and_traced_pairs(x, scalar).items():
        assert got.dtype == np.dtype(want), mode
        np.testing.assert_allclose(got.astype(np.float64), x.astype(np.float64) * 0 + np.maximum(x.astype(np.float64), scalar),
                                   rtol=1e-2)


def eager_and_traced_pairs(x, scalar):
    return {
        "eager": ig.maximum(x, scalar),
        "eager-reversed": ig.maximum(scalar, x),
        "traced": ig.trace(lambda a: ig.maximum(a, scalar), x)(x),
        "traced-reversed": ig.trace(lambda a: ig.maximum(scalar, a), x)(x),
    }


def test_scalar_only_operands():
    got = ig.trace(lambda: ig.add(1, 2.5))()
    assert_array(got, np.float32(3.5), dtype=np.float32)
    got = ig.trace(lambda: ig.add(1, 2))()
    assert_array(got, np.int32(3), dtype=np.int32)


def test_numpy_scalars_are_strongly_typed():
    # np.float64(2) is a numpy value, not a weak Python scalar: f32 with it gives f64.
    x = randn(3, seed=49)
    got = ig.trace(lambda a: a * np.float64(2.0), x)(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, x.astype(np.float64) * 2)


def test_eager_cache_tells_minus_zero_from_zero():
    """Eager programs are cached per signature; a static -0.0 must not reuse 0.0's program."""
    assert not np.signbit(ig.full((2,), 0.0)).any()
    assert np.signbit(ig.full((2,), -0.0)).all()
    x = np.array([-0.0], np.float32)
    assert not np.signbit(ig.add(x, 0.0)).any()
    assert np.signbit(ig.add(x, -0.0)).all()


def test_eager_results_are_numpy_arrays():
    x = randn(2, 2, seed=50)
    for out in [ig.add(x, x), ig.sum(x), ig.exp(x), ig.less(x, 0.0), ig.zeros((2,)), ig.arange(3)]:
        assert type(out) is np.ndarray
    assert ig.sum(x).shape == ()


# ---------------------------------------------------------------------------------------------
# remainder / %: the divisor's sign, as numpy and Python
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_remainder_integers_signs_and_zero(dtype):
    x = np.array([5, -5, 5, -5, 7, 0, -7, 9], dtype)
    y = np.array([3, 3, -3, -3, 0, 4, 7, -2], dtype)
    with np.errstate(divide="ignore"):
        expected = np.remainder(x, y)
    assert_array(ig.remainder(x, y), expected)
    assert_array(ig.trace(lambda a, b: a % b, x, y)(x, y), expected)
    assert_array(ig.jit(lambda a, b: a % b)(x, y), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_remainder_random_floats(dtype):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((6, 7)) * 10).astype(dtype)
    y = rng.choice([-1.0, 1.0], (6, 7)).astype(dtype) * rng.uniform(0.5, 3.0, (6, 7)).astype(dtype)
    expected = np.remainder(x, y)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got in (ig.remainder(x, y), ig.trace(lambda a, b: a % b, x, y)(x, y), ig.jit(lambda a, b: a % b)(x, y)):
        got = np.asarray(got)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, expected, atol=tol * 10)
        assert np.all((got == 0) | (np.sign(got) == np.sign(y)))
    np.testing.assert_allclose(np.asarray(ig.mod(x, 2.5)), np.mod(x, dtype(2.5)), atol=tol * 10)
    np.testing.assert_allclose(np.asarray(ig.jit(lambda a: 7.0 % a)(y)), np.remainder(dtype(7.0), y), atol=tol * 10)


def test_remainder_gradient():
    rng = np.random.default_rng(12)
    x = rng.uniform(0.1, 9.9, 20)
    x = x[np.abs(x / 1.5 - np.round(x / 1.5)) > 0.05]  # away from the jumps
    gx = ig.grad(lambda a: ig.sum(a % 1.5))(x)
    np.testing.assert_array_equal(np.asarray(gx), np.ones_like(x))
    gy = ig.grad(lambda b: ig.sum(x % b))(np.float64(1.5))
    np.testing.assert_allclose(float(gy), -np.sum(np.floor(x / 1.5)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_remainder_and_floor_divide_at_the_infinities(dtype):
    """numpy's divmod: x % +-inf is x (or +-inf where the signs differ), x // +-inf is 0 or
    -1, an infinite or NaN dividend gives NaN; compiled and eager alike."""
    x = np.array([5.0, 0.5, -0.5, np.inf, 0.0, -2.0, -np.inf, np.nan, 3.0], dtype)
    y = np.array([np.inf, -np.inf, np.inf, 1.0, np.inf, -np.inf, 3.0, 1.0, 2.0], dtype)
    with np.errstate(invalid="ignore"):
        want_r, want_q = np.remainder(x, y), np.floor_divide(x, y)
    for got_r, got_q in ((ig.remainder(x, y), ig.floor_divide(x, y)),
                         ig.jit(lambda a, b: (a % b, a // b))(x, y)):
        np.testing.assert_array_equal(got_r, want_r)
        np.testing.assert_array_equal(got_q, want_q)


def test_a_list_of_python_numbers_promotes_as_its_default_dtype_array():
    """[1, 2] is int32 and [0.5] float32 (as ig.asarray and jnp.asarray make them), so they
    join an array's dtype as such arrays would, not as numpy's int64/float64."""
    i32, f64 = np.ones(2, np.int32), np.ones(2, np.float64)
    assert ig.add([1, 2], i32).dtype == np.int32
    assert ig.add([1.5, 2], i32).dtype == np.float32
    assert ig.add([1.5, 2], f64).dtype == np.float64
    assert ig.polyval([1, 2], np.arange(3, dtype=np.int32)).dtype == np.int32
    assert ig.add(np.array([1, 2]), i32).dtype == np.int64  # a numpy array keeps its dtype


def test_heaviside_is_a_float_and_polyval_keeps_integers():
    a = np.array([-1, 0, 2], np.int32)
    h = ig.heaviside(a, np.int32(3))
    assert h.dtype == np.float32 and np.asarray(h).tolist() == [0.0, 3.0, 1.0]
    p = ig.polyval(np.array([1, 2, 3], np.int32), a)
    assert p.dtype == np.int32 and np.array_equal(np.asarray(p), np.polyval([1, 2, 3], a))
