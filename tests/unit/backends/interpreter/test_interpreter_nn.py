"""The reference interpreter on nn's elementwise ops, conversions, reductions and constants.

Each op runs against hand-written numpy on random inputs (fixed seeds) and on the edge cases
its docstring defines: NaN and inf propagation, signed zeros, integer division by zero,
saturating conversion, empty reductions.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType, TensorType, f32, i1, i32

from _interpreter_util import assert_same, parse, run1, run_ops, run_text
from irgrad.backends.interpreter import run_function
from irgrad.ir_numpy import to_attribute
from irgrad.dialects import nn

BF16 = np.dtype(ml_dtypes.bfloat16)
NAN, INF = np.nan, np.inf


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def in_f32(fn, *xs):
    """A reference computed in f32 and rounded to the operands' dtype (f16/bf16 rule)."""
    return fn(*(x.astype(np.float32) for x in xs)).astype(xs[0].dtype)


# ---------------------------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------------------------

UNARY_FLOAT = [
    (nn.ExpOp, np.exp),
    (nn.LogOp, np.log),
    (nn.TanhOp, np.tanh),
    (nn.SqrtOp, np.sqrt),
    (nn.RsqrtOp, lambda x: 1 / np.sqrt(x)),
    (nn.SinOp, np.sin),
    (nn.CosOp, np.cos),
    (nn.ErfOp, lambda x: np.vectorize(math.erf)(x.astype(np.float64)).astype(x.dtype)),
    (nn.NegOp, np.negative),
    (nn.AbsOp, np.abs),
]


@pytest.mark.parametrize("op, ref", UNARY_FLOAT, ids=lambda v: getattr(v, "name", ""))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_float(op, ref, dtype):
    x = rng(1).uniform(0.1, 4.0, size=(3, 5)).astype(dtype)
    with np.errstate(all="ignore"):
        assert_same(run1(op, x), ref(x))


@pytest.mark.parametrize("op, ref", UNARY_FLOAT, ids=lambda v: getattr(v, "name", ""))
@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=["f16", "bf16"])
def test_unary_low_precision_computes_in_f32(op, ref, dtype):
    x = rng(2).uniform(0.1, 4.0, size=(7,)).astype(dtype)
    assert_same(run1(op, x), in_f32(ref, x))


def test_sigmoid_is_stable_for_large_magnitudes():
    x = np.array([-1000.0, -30.0, -1.0, 0.0, 2.0, 1000.0, NAN], dtype=np.float32)
    y = run1(nn.SigmoidOp, x)
    with np.errstate(over="ignore"):
        expected = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(y, expected.astype(np.float32), rtol=1e-6)
    assert y.dtype == np.float32 and y[0] == 0.0 and y[-2] == 1.0 and np.isnan(y[-1])


def test_relu_propagates_nan_and_gives_positive_zero():
    x = np.array([-1.0, -0.0, 0.0, 2.5, NAN, -INF, INF], dtype=np.float32)
    assert_same(run1(nn.ReluOp, x), np.array([0, 0, 0, 2.5, NAN, 0, INF], dtype=np.float32))


def test_relu_on_integers():
    x = np.array([-3, 0, 7, np.iinfo(np.int32).min], dtype=np.int32)
    assert_same(run1(nn.ReluOp, x), np.array([0, 0, 7, 0], dtype=np.int32))


def test_sign():
    x = np.array([-2.5, -0.0, 0.0, 3.0, NAN, -INF], dtype=np.float64)
    y = run1(nn.SignOp, x)
    np.testing.assert_array_equal(y, [-1, 0, 0, 1, NAN, -1])
    assert y.dtype == np.float64
    assert_same(run1(nn.SignOp, np.array([-5, 0, 9], np.int64)), np.array([-1, 0, 1], np.int64))
    bf = np.array([-2, 0, 5, NAN], dtype=BF16)
    np.testing.assert_array_equal(run1(nn.SignOp, bf).astype(np.float32), [-1, 0, 1, NAN])


def test_integer_neg_and_abs_wrap():
    x = np.array([np.iinfo(np.int32).min, -4, 5], dtype=np.int32)
    assert_same(run1(nn.NegOp, x), np.array([np.iinfo(np.int32).min, 4, -5], np.int32))
    assert_same(run1(nn.AbsOp, x), np.array([np.iinfo(np.int32).min, 4, 5], np.int32))


def test_log_and_sqrt_edge_values():
    x = np.array([0.0, -1.0, INF, NAN], dtype=np.float32)
    np.testing.assert_array_equal(run1(nn.LogOp, x), [-INF, NAN, INF, NAN])
    np.testing.assert_array_equal(run1(nn.SqrtOp, x), [0.0, NAN, INF, NAN])
    np.testing.assert_array_equal(run1(nn.RsqrtOp, x), [INF, NAN, 0.0, NAN])


# ---------------------------------------------------------------------------------------------
# Binary
# ---------------------------------------------------------------------------------------------

BINARY = [
    (nn.AddOp, np.add),
    (nn.SubOp, np.subtract),
    (nn.MulOp, np.multiply),
    (nn.DivOp, np.divide),
    (nn.PowOp, np.power),
    (nn.MaximumOp, np.maximum),
    (nn.MinimumOp, np.minimum),
]


@pytest.mark.parametrize("op, ref", BINARY, ids=lambda v: getattr(v, "name", ""))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16], ids=str)
def test_binary_float(op, ref, dtype):
    g = rng(3)
    a = g.uniform(0.5, 3.0, size=(4, 3)).astype(dtype)
    b = g.uniform(0.5, 3.0, size=(4, 3)).astype(dtype)
    expected = in_f32(ref, a, b) if dtype == BF16 or op is nn.PowOp else ref(a, b)
    if op is nn.PowOp and dtype == np.float64:
        expected = ref(a, b)
    assert_same(run_ops(lambda x, y: op(x, y), a, b)[0], expected)


@pytest.mark.parametrize("op", [nn.MaximumOp, nn.MinimumOp])
def test_maximum_minimum_propagate_nan_and_order_zeros(op):
    a = np.array([NAN, 1.0, -0.0, 0.0, -0.0, INF], dtype=np.float32)
    b = np.array([1.0, NAN, 0.0, -0.0, -0.0, NAN], dtype=np.float32)
    y = run_ops(lambda x, z: op(x, z), a, b)[0]
    if op is nn.MaximumOp:
        expected = np.array([NAN, NAN, 0.0, 0.0, -0.0, NAN], np.float32)
    else:
        expected = np.array([NAN, NAN, -0.0, -0.0, -0.0, NAN], np.float32)
    assert_same(y, expected)


def test_integer_arithmetic_wraps():
    big = np.array([np.iinfo(np.int32).max, 7], dtype=np.int32)
    one = np.array([1, -9], dtype=np.int32)
    assert_same(run_ops(lambda x, y: nn.AddOp(x, y), big, one)[0], np.array([np.iinfo(np.int32).min, -2], np.int32))
    assert_same(run_ops(lambda x, y: nn.MulOp(x, y), big, big)[0], big * big)


def test_integer_division_truncates_and_divides_by_zero_to_zero():
    a = np.array([7, -7, 7, -7, 5, 0, np.iinfo(np.int32).min], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 0, 0, -1], dtype=np.int32)
    expected = np.array([3, -3, -3, 3, 0, 0, np.iinfo(np.int32).min], dtype=np.int32)
    assert_same(run_ops(lambda x, y: nn.DivOp(x, y), a, b)[0], expected)


def test_float_division_is_ieee():
    a = np.array([1.0, -1.0, 0.0, NAN], dtype=np.float32)
    b = np.array([0.0, 0.0, 0.0, 1.0], dtype=np.float32)
    np.testing.assert_array_equal(run_ops(lambda x, y: nn.DivOp(x, y), a, b)[0], [INF, -INF, NAN, NAN])


@pytest.mark.parametrize("direction, ref", [
    ("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
    ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
])
def test_compare_with_nan(direction, ref):
    a = np.array([1.0, NAN, 2.0, NAN, -0.0], dtype=np.float32)
    b = np.array([1.0, 1.0, NAN, NAN, 0.0], dtype=np.float32)
    y = run_ops(lambda x, z: nn.CompareOp(direction, x, z), a, b)[0]
    assert_same(y, ref(a, b))
    if direction == "ne":
        assert y[1] and y[3]  # NaN is unequal to everything, itself included
    elif direction == "eq":
        assert not y[1] and not y[3] and y[4]


def test_compare_integers_and_select():
    g = rng(4)
    a = g.integers(-5, 5, size=(3, 4)).astype(np.int64)
    b = g.integers(-5, 5, size=(3, 4)).astype(np.int64)

    def body(x, y):
        pred = nn.CompareOp("lt", x, y)
        return nn.SelectOp(pred, x, y)

    assert_same(run_ops(body, a, b)[0], np.where(a < b, a, b))


# ---------------------------------------------------------------------------------------------
# Convert
# ---------------------------------------------------------------------------------------------


def convert(x: np.ndarray, element_type) -> np.ndarray:
    return run1(lambda v: nn.ConvertOp(v, element_type), x)


def test_convert_float_to_int_saturates_and_maps_nan_to_zero():
    x = np.array([2.7, -2.7, 1e10, -1e10, NAN, INF, -INF, 2147483647.0, -2147483648.0], np.float64)
    mx, mn = np.iinfo(np.int32).max, np.iinfo(np.int32).min
    assert_same(convert(x, i32), np.array([2, -2, mx, mn, 0, mx, mn, mx, mn], np.int32))
    x64 = np.array([9.3e18, -9.3e18, 9.2e18], np.float32)
    y = convert(x64, IntegerType(64))
    assert y[0] == np.iinfo(np.int64).max and y[1] == np.iinfo(np.int64).min
    assert y[2] == int(np.float32(9.2e18))


def test_convert_to_and_from_i1():
    x = np.array([0.0, -0.0, 0.5, NAN, -3.0], np.float32)
    assert_same(convert(x, i1), np.array([False, False, True, True, True]))
    b = np.array([True, False])
    assert_same(convert(b, f32), np.array([1.0, 0.0], np.float32))
    assert_same(convert(b, i32), np.array([1, 0], np.int32))
    assert_same(convert(np.array([0, 5, -1], np.int64), i1), np.array([False, True, True]))


def test_convert_integers_wrap():
    x = np.array([2**40 + 5, -1, 2**31], np.int64)
    assert_same(convert(x, i32), x.astype(np.int32))
    assert_same(convert(np.array([-1, 7], np.int32), IntegerType(64)), np.array([-1, 7], np.int64))


def test_convert_float_to_float_rounds_once():
    # Halfway between two bf16 values plus a tiny bit: must round up. Going through f32
    # first (as ml_dtypes does) loses the tiny bit and rounds to even (down).
    x = np.array([1 + 2**-8 + 2**-30, 1 + 2**-8, -(1 + 2**-8 + 2**-30), 1e300, -1e-300], np.float64)
    y = convert(x, BFloat16Type())
    assert y.dtype == BF16
    assert_same(y.astype(np.float64), np.array([1 + 2**-7, 1.0, -(1 + 2**-7), INF, -0.0]))
    assert_same(convert(np.array([70000.0, 1e-9], np.float32), Float16Type()), np.array([INF, 0.0], np.float16))
    z = np.array([1.5, NAN, -INF], BF16)
    assert_same(convert(z, Float32Type()), z.astype(np.float32))


def test_convert_int_to_float():
    x = np.array([2**24 + 1, -3, 0], np.int32)
    assert_same(convert(x, f32), x.astype(np.float32))
    assert_same(convert(np.array([257, 259], np.int32), BFloat16Type()), np.array([256, 260], BF16))


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("axes, keepdims", [([0], False), ([1, 2], False), ([0, 2], True), ([], False)])
def test_reduce_sum(axes, keepdims):
    x = rng(5).standard_normal((3, 4, 5))
    y = run1(lambda v: nn.ReduceSumOp(v, axes, keepdims), x)
    assert_same(y, np.sum(x, axis=tuple(axes), keepdims=keepdims))


def test_reduce_sum_low_precision_accumulates_in_f32():
    x = np.full((4096,), 1.0, dtype=np.float16)  # an f16 running sum would stop at 2048
    assert_same(run1(lambda v: nn.ReduceSumOp(v, [0]), x), np.array(4096.0, np.float16))
    b = rng(6).standard_normal((8, 300)).astype(BF16)
    expected = b.astype(np.float32).sum(axis=1).astype(BF16)
    assert_same(run1(lambda v: nn.ReduceSumOp(v, [1]), b), expected)


def test_reduce_sum_integers_wrap_in_their_width():
    x = np.array([np.iinfo(np.int32).max, 1, 1], np.int32)
    assert_same(run1(lambda v: nn.ReduceSumOp(v, [0]), x), np.array(np.iinfo(np.int32).min + 1, np.int32))


@pytest.mark.parametrize("op, ref", [(nn.ReduceMaxOp, np.max), (nn.ReduceMinOp, np.min)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16, BF16], ids=str)
def test_reduce_max_min(op, ref, dtype):
    x = (rng(7).standard_normal((4, 6)) * 10).astype(dtype)
    y = run1(lambda v: op(v, [1], True), x)
    assert_same(y, ref(x.astype(np.float64), axis=1, keepdims=True).astype(dtype))


def test_reduce_max_propagates_nan_and_empty_axes_give_identity():
    x = np.array([[1.0, NAN, 3.0], [1.0, 2.0, -INF]], np.float32)
    assert_same(run1(lambda v: nn.ReduceMaxOp(v, [1]), x), np.array([NAN, 2.0], np.float32))
    assert_same(run1(lambda v: nn.ReduceMinOp(v, [1]), x), np.array([NAN, -INF], np.float32))
    empty = np.zeros((3, 0), np.float32)
    assert_same(run1(lambda v: nn.ReduceMaxOp(v, [1]), empty), np.full((3,), -INF, np.float32))
    assert_same(run1(lambda v: nn.ReduceMinOp(v, [1]), empty), np.full((3,), INF, np.float32))
    empty_i = np.zeros((0, 2), np.int64)
    assert_same(run1(lambda v: nn.ReduceMaxOp(v, [0]), empty_i), np.full((2,), np.iinfo(np.int64).min))
    assert_same(run1(lambda v: nn.ReduceMinOp(v, [0]), empty_i), np.full((2,), np.iinfo(np.int64).max))
    assert_same(run1(lambda v: nn.ReduceSumOp(v, [0]), empty_i), np.zeros((2,), np.int64))


def test_reduce_max_of_signed_zeros():
    x = np.array([[-0.0, 0.0], [0.0, -0.0], [-0.0, -0.0]], np.float32)
    assert_same(run1(lambda v: nn.ReduceMaxOp(v, [1]), x), np.array([0.0, 0.0, -0.0], np.float32))
    assert_same(run1(lambda v: nn.ReduceMinOp(v, [1]), x), np.array([-0.0, -0.0, -0.0], np.float32))


def test_reduce_max_on_i1():
    x = np.array([[True, False], [False, False]])
    assert_same(run1(lambda v: nn.ReduceMaxOp(v, [1]), x), np.array([True, False]))


# ---------------------------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------------------------


def test_constant_full_iota():
    values = rng(8).standard_normal((2, 3)).astype(BF16)
    (c,) = run_ops(lambda: nn.ConstantOp(to_attribute(values)))
    assert_same(c, values)
    (f,) = run_ops(lambda: nn.FullOp(-1.5, TensorType(Float16Type(), [2, 2])))
    assert_same(f, np.full((2, 2), -1.5, np.float16))
    (b,) = run_ops(lambda: nn.FullOp(True, TensorType(i1, [3])))
    assert_same(b, np.ones(3, bool))
    (i,) = run_ops(lambda: nn.IotaOp(1, TensorType(i32, [2, 4])))
    assert_same(i, np.broadcast_to(np.arange(4, dtype=np.int32), (2, 4)))
    (z,) = run_ops(lambda: nn.IotaOp(0, TensorType(f32, [0, 3])))
    assert_same(z, np.zeros((0, 3), np.float32))


def test_constants_from_text():
    text = """
    func.func @main() -> (tensor<2x2xf32>, tensor<3xi1>, tensor<f64>, tensor<2xf32>, tensor<2xi64>) {
      %a = nn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %b = nn.constant dense<[true, false, true]> : tensor<3xi1>
      %c = nn.full -inf : tensor<f64>
      %d = nn.full nan : tensor<2xf32>
      %e = nn.constant dense<-7> : tensor<2xi64>
      func.return %a, %b, %c, %d, %e : tensor<2x2xf32>, tensor<3xi1>, tensor<f64>, tensor<2xf32>, tensor<2xi64>
    }
    """
    a, b, c, d, e = run_text(text)
    assert_same(a, np.array([[1, 2], [3, 4]], np.float32))
    assert_same(b, np.array([True, False, True]))
    assert_same(c, np.array(-INF))
    assert np.isnan(d).all() and d.dtype == np.float32
    assert_same(e, np.array([-7, -7], np.int64))


def test_elementwise_from_text_with_rank_zero_and_zero_size():
    text = """
    func.func @main(%x: tensor<f32>, %e: tensor<0x3xf16>) -> (tensor<f32>, tensor<0x3xf16>) {
      %y = nn.mul %x, %x : tensor<f32>
      %z = nn.exp %e : tensor<0x3xf16>
      func.return %y, %z : tensor<f32>, tensor<0x3xf16>
    }
    """
    y, z = run_text(text, np.array(3.0, np.float32), np.zeros((0, 3), np.float16))
    assert_same(y, np.array(9.0, np.float32))
    assert_same(z, np.zeros((0, 3), np.float16))


def test_results_are_fresh_writeable_arrays():
    x = np.arange(4, dtype=np.float32)
    module = parse(
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  func.return %x : tensor<4xf32>\n}"
    )
    (y,) = run_function(module, "main", [x])
    y[0] = 100
    assert x[0] == 0 and y.flags.writeable
