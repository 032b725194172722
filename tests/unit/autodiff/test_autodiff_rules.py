"""Every derivative rule, checked numerically in float64 through the reference interpreter.

The table (JAX's `lax_autodiff_test.py` in irgrad): one row per op and interesting shape/geometry, with an
input generator that stays away from kinks. Each row is checked in reverse and forward mode against central
differences and for vjp/jvp consistency, and at second order (jvp of grad, grad of grad, grad of jvp)
against finite differences of gradients (_autodiff_harness.py); a row can opt out with `order2=False`.
Behaviour at the kinks and the other contracts of docs/autodiff.md are separate tests at the end.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import IndexType, ModuleOp, TensorType, f16, f32, f64, i1, i32
from xdsl.ir import Operation

from _autodiff_harness import (
    Case,
    Emitter,
    S,
    T,
    away_from_zero,
    build_function,
    check_first_order,
    check_second_order,
    fixed,
    positive,
    run_pass,
)
from irgrad.autodiff.registry import JVP_RULES, NON_DIFFERENTIABLE, NOT_SUPPORTED_YET, VJP_RULES
from irgrad.autodiff.rules import load_rules
from irgrad.backends.interpreter import run_function
from irgrad.dialects import autodiff as ad, nn


def index(e: Emitter, value: int) -> Any:
    return e(arith.ConstantOp.from_int_and_width(value, IndexType()))


def unary(op: type[Operation]):
    return lambda e, x: e(op(x))


def binary(op: type[Operation]):
    return lambda e, x, y: e(op(x, y))


def distinct_pair(rng: np.random.Generator) -> list[Any]:
    """x and y at least 0.2 apart everywhere: maximum/minimum away from ties."""
    x = rng.standard_normal((2, 3))
    gap = rng.uniform(0.2, 1.0, (2, 3)) * np.where(rng.random((2, 3)) < 0.5, -1, 1)
    return [x, x + gap]


def distinct_scalars(rng: np.random.Generator) -> list[Any]:
    x = np.float64(rng.standard_normal())
    return [x, np.float64(x + 0.5)]


def distinct(shape: tuple[int, ...]):
    """A permutation of well-separated values: reduce_max/min and max_pool away from ties."""

    def gen(rng: np.random.Generator, _: tuple[int, ...]) -> np.ndarray:
        return (rng.permutation(int(np.prod(shape))) * 0.1 + rng.uniform(0, 0.01)).reshape(shape)

    return gen


def conv(stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1)):
    return lambda e, x, w: e(nn.Conv2DOp(x, w, stride, padding, dilation))


def pool(kernel, stride=None, padding=(0, 0, 0, 0)):
    return lambda e, x: e(nn.MaxPool2DOp(x, kernel, stride, padding))


def softmax(e: Emitter, x):
    m = e(nn.ReduceMaxOp(x, [1], keepdims=True))
    shifted = e(nn.SubOp(x, e(nn.BroadcastInDimOp(m, [2, 4], [0, 1]))))
    ex = e(nn.ExpOp(shifted))
    total = e(nn.ReduceSumOp(ex, [1], keepdims=True))
    return e(nn.DivOp(ex, e(nn.BroadcastInDimOp(total, [2, 4], [0, 1]))))


def mlp(e: Emitter, x, w1, b1, w2):
    h = e(nn.AddOp(e(nn.MatmulOp(x, w1)), e(nn.BroadcastInDimOp(b1, [3, 5], [1]))))
    return e(nn.MatmulOp(e(nn.TanhOp(h)), w2))


IDX = np.array([3, 0, 3, 1], np.int32)  # repeats: the adjoint must accumulate

CASES = [
    # Elementwise unary (nn).
    Case("neg", [T(2, 3)], unary(nn.NegOp)),
    Case("abs", [T(2, 3, gen=away_from_zero)], unary(nn.AbsOp)),
    Case("exp", [T(2, 3)], unary(nn.ExpOp)),
    Case("log", [T(2, 3, gen=positive)], unary(nn.LogOp)),
    Case("tanh", [T(2, 3)], unary(nn.TanhOp)),
    Case("sigmoid", [T(2, 3)], unary(nn.SigmoidOp)),
    Case("relu", [T(2, 3, gen=away_from_zero)], unary(nn.ReluOp)),
    Case("sqrt", [T(2, 3, gen=positive)], unary(nn.SqrtOp)),
    Case("rsqrt", [T(2, 3, gen=positive)], unary(nn.RsqrtOp)),
    Case("sin", [T(2, 3)], unary(nn.SinOp)),
    Case("cos", [T(2, 3)], unary(nn.CosOp)),
    Case("erf", [T(2, 3)], unary(nn.ErfOp)),
    # Elementwise binary (nn).
    Case("add", [T(2, 3), T(2, 3)], binary(nn.AddOp)),
    Case("sub", [T(2, 3), T(2, 3)], binary(nn.SubOp)),
    Case("mul", [T(2, 3), T(2, 3)], binary(nn.MulOp)),
    Case("div", [T(2, 3), T(2, 3, gen=away_from_zero)], binary(nn.DivOp)),
    Case("pow", [T(2, 3, gen=positive), T(2, 3)], binary(nn.PowOp)),
    Case("maximum", [T(2, 3), T(2, 3)], binary(nn.MaximumOp), inputs=distinct_pair),
    Case("minimum", [T(2, 3), T(2, 3)], binary(nn.MinimumOp), inputs=distinct_pair),
    Case(
        "select",
        [fixed(np.array([[True, False, True], [False, False, True]]), TensorType(i1, [2, 3])), T(2, 3), T(2, 3)],
        lambda e, p, x, y: e(nn.SelectOp(p, x, y)),
    ),
    Case(
        "compare_select",  # compare has no gradient; select routes it
        [T(2, 3), T(2, 3)],
        lambda e, x, y: e(nn.SelectOp(e(nn.CompareOp("gt", x, y)), e(nn.MulOp(x, y)), e(nn.ExpOp(y)))),
        inputs=distinct_pair,
    ),
    Case("sign_times_x", [T(2, 3, gen=away_from_zero)], lambda e, x: e(nn.MulOp(e(nn.SignOp(x)), x))),
    # Reductions.
    Case("reduce_sum", [T(2, 3, 4)], lambda e, x: e(nn.ReduceSumOp(x, [0, 2]))),
    Case("reduce_sum_keepdims", [T(2, 3)], lambda e, x: e(nn.ReduceSumOp(x, [1], keepdims=True))),
    Case("reduce_sum_all", [T(2, 3)], lambda e, x: e(nn.ReduceSumOp(x, [0, 1]))),
    Case("reduce_max", [T(3, 4, gen=distinct((3, 4)))], lambda e, x: e(nn.ReduceMaxOp(x, [1]))),
    Case("reduce_max_keepdims", [T(3, 4, gen=distinct((3, 4)))], lambda e, x: e(nn.ReduceMaxOp(x, [0], True))),
    Case("reduce_min", [T(2, 3, 2, gen=distinct((2, 3, 2)))], lambda e, x: e(nn.ReduceMinOp(x, [0, 2]))),
    # Shapes.
    Case("broadcast_new_dim", [T(3)], lambda e, x: e(nn.BroadcastInDimOp(x, [2, 3], [1]))),
    Case("broadcast_size_one", [T(3, 1)], lambda e, x: e(nn.BroadcastInDimOp(x, [3, 4], [0, 1]))),
    Case("broadcast_permuted", [T(2, 3)], lambda e, x: e(nn.BroadcastInDimOp(x, [3, 4, 2], [2, 0]))),
    Case("broadcast_scalar", [T()], lambda e, x: e(nn.BroadcastInDimOp(x, [2, 2], []))),
    Case("reshape", [T(2, 3)], lambda e, x: e(nn.ReshapeOp(x, [3, 1, 2]))),
    Case("transpose", [T(2, 3, 4)], lambda e, x: e(nn.TransposeOp(x, [2, 0, 1]))),
    Case("slice", [T(5, 4)], lambda e, x: e(nn.SliceOp(x, [1, 0], [4, 3]))),
    Case("slice_strided", [T(7, 6)], lambda e, x: e(nn.SliceOp(x, [1, 0], [7, 5], [2, 3]))),
    Case("slice_reversed", [T(4, 3)], lambda e, x: e(nn.SliceOp(x, [3, 0], [-1, 3], [-1, 1]))),
    Case("slice_negative_stride", [T(7, 5)], lambda e, x: e(nn.SliceOp(x, [5, 4], [0, -1], [-2, -3]))),
    Case(
        "dynamic_slice",
        [T(5, 4)],
        lambda e, x: e(nn.DynamicSliceOp(x, [index(e, 1), index(e, 2)], [3, 2])),
    ),
    Case(
        "dynamic_slice_clamped",  # start 4 of a 3-row window on 5 rows clamps to 2
        [T(5, 4)],
        lambda e, x: e(nn.DynamicSliceOp(x, [index(e, 4), index(e, 0)], [3, 4])),
    ),
    Case(
        "dynamic_update_slice",
        [T(5, 4), T(2, 3)],
        lambda e, x, u: e(nn.DynamicUpdateSliceOp(x, e(nn.ExpOp(u)), [index(e, 2), index(e, 1)])),
    ),
    Case("concatenate", [T(2, 3), T(1, 3)], lambda e, x, y: e(nn.ConcatenateOp([x, y], 0))),
    Case(
        "concatenate_three", [T(2, 1), T(2, 3), T(2, 2)], lambda e, x, y, z: e(nn.ConcatenateOp([x, y, z], 1))
    ),
    Case("pad", [T(2, 3), T()], lambda e, x, v: e(nn.PadOp(x, v, [1, 0], [0, 2]))),
    # Contractions.
    Case("matmul", [T(3, 4), T(4, 5)], binary(nn.MatmulOp)),
    Case("matmul_batched", [T(2, 3, 4), T(2, 4, 2)], binary(nn.MatmulOp)),
    Case("mlp", [T(3, 4), T(4, 5), T(5), T(5, 2)], mlp),
    Case("conv2d", [T(2, 3, 5, 5), T(4, 3, 3, 3)], conv()),
    Case("conv2d_stride_pad", [T(1, 2, 6, 7), T(3, 2, 3, 2)], conv((2, 2), (1, 1, 1, 1))),
    Case("conv2d_dilation", [T(1, 2, 7, 7), T(2, 2, 2, 3)], conv(dilation=(2, 2))),
    Case("conv2d_all", [T(2, 2, 8, 9), T(3, 2, 3, 2)], conv((2, 3), (1, 0, 2, 1), (2, 1))),
    Case("conv2d_kernel1_stride2", [T(1, 2, 6, 5), T(2, 2, 1, 1)], conv((2, 2))),
    Case("conv2d_big_padding", [T(1, 1, 3, 4), T(2, 1, 2, 2)], conv((1, 2), (3, 2, 0, 3))),
    Case("im2col", [T(2, 3, 5, 5)], lambda e, x: e(nn.Im2ColOp(x, [3, 3], [1, 1], [1, 1, 1, 1]))),
    Case("im2col_all", [T(1, 2, 8, 7)], lambda e, x: e(nn.Im2ColOp(x, [3, 2], [2, 1], [1, 0, 2, 1], [2, 2]))),
    Case("col2im", [T(27, 50)], lambda e, c: e(nn.Col2ImOp(c, [2, 3, 5, 5], [3, 3], [1, 1], [1, 1, 1, 1]))),
    Case(
        "col2im_all", [T(12, 24)],
        lambda e, c: e(nn.Col2ImOp(c, [1, 2, 8, 7], [3, 2], [2, 1], [1, 0, 2, 1], [2, 2])),
    ),
    Case("max_pool2d", [T(1, 2, 4, 6, gen=distinct((1, 2, 4, 6)))], pool([2, 2])),
    Case("max_pool2d_overlap", [T(2, 1, 5, 5, gen=distinct((2, 1, 5, 5)))], pool([3, 3], [1, 1], (1, 1, 1, 1))),
    Case("max_pool2d_strided", [T(1, 1, 7, 6, gen=distinct((1, 1, 7, 6)))], pool([3, 2], [2, 3], (1, 0, 0, 1))),
    Case(
        "gather",
        [T(5, 3), fixed(IDX, TensorType(i32, [4]))],
        lambda e, x, i: e(nn.GatherOp(x, i, 0)),
    ),
    Case(
        "gather_axis1",
        [T(2, 4), fixed(np.array([[1, 1], [3, -1]], np.int32), TensorType(i32, [2, 2]))],
        lambda e, x, i: e(nn.GatherOp(x, i, 1)),
    ),
    Case(
        "scatter_add",
        [T(5, 3), fixed(IDX, TensorType(i32, [4])), T(4, 3)],
        lambda e, x, i, u: e(nn.ScatterAddOp(x, i, u, 0)),
    ),
    # Composites: fan-out, calls, several results.
    Case(
        "fan_out",
        [T(3)],
        lambda e, x: (lambda a: e(nn.AddOp(e(nn.AddOp(a, a)), e(nn.MulOp(a, x)))))(e(nn.MulOp(x, x))),
    ),
    Case("softmax", [T(2, 4)], softmax),
    Case("two_results", [T(3), T(3)], lambda e, x, y: (e(nn.MulOp(x, y)), e(nn.SinOp(x)))),
    # Scalars: arith and math.
    Case("addf", [S(), S()], binary(arith.AddfOp)),
    Case("subf", [S(), S()], binary(arith.SubfOp)),
    Case("mulf", [S(), S()], binary(arith.MulfOp)),
    Case("divf", [S(), S(away_from_zero)], binary(arith.DivfOp)),
    Case("negf", [S()], unary(arith.NegfOp)),
    Case("maximumf", [S(), S()], binary(arith.MaximumfOp), inputs=distinct_scalars),
    Case("minimumf", [S(), S()], binary(arith.MinimumfOp), inputs=distinct_scalars),
    Case(
        "select_cmpf",
        [S(), S()],
        lambda e, x, y: e(arith.SelectOp(e(arith.CmpfOp(x, y, "olt")), e(arith.MulfOp(x, y)), y)),
        inputs=distinct_scalars,
    ),
    Case("math_exp", [S()], unary(math.ExpOp)),
    Case("math_log", [S(positive)], unary(math.LogOp)),
    Case("math_tanh", [S()], unary(math.TanhOp)),
    Case("math_sqrt", [S(positive)], unary(math.SqrtOp)),
    Case("math_rsqrt", [S(positive)], unary(math.RsqrtOp)),
    Case("math_sin", [S()], unary(math.SinOp)),
    Case("math_cos", [S()], unary(math.CosOp)),
    Case("math_erf", [S()], unary(math.ErfOp)),
    Case("math_powf", [S(positive), S()], binary(math.PowFOp)),
    Case("math_absf", [S(away_from_zero)], unary(math.AbsFOp)),
    Case("arith_on_tensors", [T(3), T(3)], lambda e, x, y: e(arith.MulfOp(e(arith.AddfOp(x, y)), x))),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_first_order(case: Case) -> None:
    check_first_order(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.order2], ids=str)
def test_second_order(case: Case) -> None:
    check_second_order(case)


# ---------------------------------------------------------------------------------------------------------------
# Coverage: every nn op has both rules or is declared non-differentiable
# ---------------------------------------------------------------------------------------------------------------


def test_every_nn_op_has_rules_or_is_non_differentiable() -> None:
    load_rules()
    missing = [
        op.name
        for op in nn.NN.operations
        if op not in NON_DIFFERENTIABLE and (op not in VJP_RULES or op not in JVP_RULES)
        and op not in nn.EXPANDED_OPS  # complex parts: rewritten by nn-expand-complex before autodiff
        and op not in NOT_SUPPORTED_YET  # declared, with the reason the error gives (nn.eig)
    ]
    assert missing == []


def test_every_rule_has_both_modes() -> None:
    load_rules()
    assert set(VJP_RULES) == set(JVP_RULES)


# ---------------------------------------------------------------------------------------------------------------
# Contracts at the kinks (docs/autodiff.md, "Contracts")
# ---------------------------------------------------------------------------------------------------------------


def gradient(body, arg_types, args, wrt=(0,)) -> list[np.ndarray]:
    """grad of sum(body(args)) w.r.t. `wrt`, through autodiff.grad."""

    def loss(e: Emitter, *a):
        y = body(e, *a)
        return e(nn.ReduceSumOp(y, list(range(y.type.get_num_dims()))))

    f = build_function("f", arg_types, loss)
    g = build_function("g", arg_types, lambda e, *a: e(ad.GradOp(f, a, wrt)))
    module = run_pass(ModuleOp([f, g]))
    return list(run_function(module, "g", args))


def tangent(body, arg_types, args, tangents, wrt=(0,)) -> list[np.ndarray]:
    f = build_function("f", arg_types, body)
    n = len(arg_types)
    j = build_function(
        "j", [*arg_types, *(arg_types[i] for i in wrt)], lambda e, *a: e(ad.JVPOp(f, a[:n], a[n:], wrt))
    )
    module = run_pass(ModuleOp([f, j]))
    out = run_function(module, "j", [*args, *tangents])
    return list(out[len(out) // 2 :])


def t64(*shape: int) -> TensorType:
    return TensorType(f64, list(shape))


def test_relu_derivative_at_zero_is_zero() -> None:
    x = np.array([0.0, 1.0, -1.0])
    (g,) = gradient(lambda e, x: e(nn.ReluOp(x)), [t64(3)], [x])
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0])
    (t,) = tangent(lambda e, x: e(nn.ReluOp(x)), [t64(3)], [x], [np.ones(3)])
    np.testing.assert_array_equal(t, [0.0, 1.0, 0.0])


def test_abs_derivative_at_zero_is_zero() -> None:
    x = np.array([0.0, 2.0, -2.0])
    (g,) = gradient(lambda e, x: e(nn.AbsOp(x)), [t64(3)], [x])
    np.testing.assert_array_equal(g, [0.0, 1.0, -1.0])
    (t,) = tangent(lambda e, x: e(nn.AbsOp(x)), [t64(3)], [x], [np.ones(3)])
    np.testing.assert_array_equal(t, [0.0, 1.0, -1.0])


def test_maximum_tie_splits_the_gradient() -> None:
    x, y = np.array([1.0, 2.0, 0.0]), np.array([1.0, 1.0, 3.0])
    gx, gy = gradient(lambda e, x, y: e(nn.MaximumOp(x, y)), [t64(3), t64(3)], [x, y], (0, 1))
    np.testing.assert_array_equal(gx, [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.5, 0.0, 1.0])
    gx, gy = gradient(lambda e, x, y: e(nn.MinimumOp(x, y)), [t64(3), t64(3)], [x, y], (0, 1))
    np.testing.assert_array_equal(gx, [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(gy, [0.5, 1.0, 0.0])
    (t,) = tangent(
        lambda e, x, y: e(nn.MaximumOp(x, y)), [t64(3), t64(3)], [x, y], [np.ones(3), 3 * np.ones(3)], (0, 1)
    )
    np.testing.assert_array_equal(t, [2.0, 1.0, 3.0])


def test_reduce_max_ties_share_equally() -> None:
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 5.0]])
    (g,) = gradient(lambda e, x: e(nn.ReduceMaxOp(x, [1])), [t64(2, 4)], [x])
    np.testing.assert_allclose(g, [[0, 0.5, 0.5, 0], [0.25] * 4])
    (g,) = gradient(lambda e, x: e(nn.ReduceMinOp(x, [1])), [t64(2, 4)], [x])
    np.testing.assert_allclose(g, [[1, 0, 0, 0], [0.25] * 4])
    (t,) = tangent(lambda e, x: e(nn.ReduceMaxOp(x, [1])), [t64(2, 4)], [x], [np.arange(8.0).reshape(2, 4)])
    np.testing.assert_allclose(t, [1.5, 5.5])  # the mean tangent over the tied positions


def test_reduce_max_ties_in_half_precision() -> None:
    """Ties are counted in the primal dtype: f16 still gives 1/3 each, not 0."""
    t16 = TensorType(f16, [3])
    f = build_function(
        "f", [t16], lambda e, x: e(nn.ReduceMaxOp(x, [0]))
    )
    g = build_function("g", [t16], lambda e, x: e(ad.GradOp(f, [x])))
    module = run_pass(ModuleOp([f, g]))
    (grad,) = run_function(module, "g", [np.full(3, 7.0, np.float16)])
    assert grad.dtype == np.float16
    np.testing.assert_allclose(grad.astype(np.float64), [1 / 3] * 3, rtol=1e-3)


def test_max_pool_ties_share_equally() -> None:
    x = np.array([[[[1.0, 1.0], [0.0, 1.0]]]])
    (g,) = gradient(lambda e, x: e(nn.MaxPool2DOp(x, [2, 2])), [t64(1, 1, 2, 2)], [x])
    np.testing.assert_allclose(g, [[[[1 / 3, 1 / 3], [0, 1 / 3]]]])


def test_sqrt_derivative_at_zero_is_inf() -> None:
    (g,) = gradient(lambda e, x: e(nn.SqrtOp(x)), [t64(2)], [np.array([0.0, 4.0])])
    np.testing.assert_array_equal(g, [np.inf, 0.25])


@pytest.mark.parametrize("unsafe", [nn.SqrtOp, nn.LogOp, nn.RsqrtOp])
def test_select_never_leaks_nan_from_the_untaken_branch(unsafe: type[Operation]) -> None:
    """where(x > 0, f(x), 0) with f's derivative inf/NaN at x <= 0: the gradient there is 0, not NaN."""

    def where(e: Emitter, x):
        zero = e(nn.FullOp(0.0, t64(4)))
        return e(nn.SelectOp(e(nn.CompareOp("gt", x, zero)), e(unsafe(x)), zero))

    x = np.array([-1.0, 0.0, 4.0, -0.0])
    (g,) = gradient(where, [t64(4)], [x])
    assert np.all(np.isfinite(g)), g
    assert g[0] == 0 and g[1] == 0 and g[3] == 0
    # Second order as well: the Hessian diagonal through the same select.
    (h,) = gradient(lambda e, x: e(nn.MulOp(where(e, x), where(e, x))), [t64(4)], [x])
    assert np.all(np.isfinite(h)), h


def test_fan_out_sums_adjoints() -> None:
    """a = x * x; z = a + a: dz/dx = 4x."""
    x = np.array([1.0, -2.0, 3.0])
    (g,) = gradient(lambda e, x: (lambda a: e(nn.AddOp(a, a)))(e(nn.MulOp(x, x))), [t64(3)], [x])
    np.testing.assert_array_equal(g, 4 * x)


def test_gather_with_repeated_indices_accumulates() -> None:
    idx = np.array([0, 0, 2, 0], np.int32)
    (g,) = gradient(
        lambda e, x, i: e(nn.GatherOp(x, i, 0)), [t64(3, 2), TensorType(i32, [4])], [np.ones((3, 2)), idx]
    )
    np.testing.assert_array_equal(g, [[3, 3], [0, 0], [1, 1]])


def test_stop_gradient_blocks() -> None:
    """d/dx [x * stop_gradient(x)] = stop_gradient(x) = x, not 2x; at second order it stays blocked."""
    x = np.array([1.0, -2.0, 3.0])
    body = lambda e, x: e(nn.MulOp(x, e(ad.StopGradientOp(x))))  # noqa: E731
    (g,) = gradient(body, [t64(3)], [x])
    np.testing.assert_array_equal(g, x)
    (t,) = tangent(body, [t64(3)], [x], [np.ones(3)])
    np.testing.assert_array_equal(t, x)


def test_integer_results_carry_no_gradient() -> None:
    """A result converted to an integer gets a zero tangent of its own type; its cotangent is ignored."""
    types = [t64(3)]
    body = lambda e, x: (e(nn.MulOp(x, x)), e(nn.ConvertOp(x, i32)))  # noqa: E731
    f = build_function("f", types, body)
    v = build_function(
        "v",
        [t64(3), t64(3), TensorType(i32, [3])],
        lambda e, x, c0, c1: e(ad.VJPOp(f, [x], [c0, c1])),
    )
    j = build_function("j", [t64(3), t64(3)], lambda e, x, t: e(ad.JVPOp(f, [x], [t])))
    module = run_pass(ModuleOp([f, v, j]))
    x = np.array([1.5, -2.0, 3.0])
    *_, gx = run_function(module, "v", [x, np.ones(3), np.array([7, 7, 7], np.int32)])
    np.testing.assert_array_equal(gx, 2 * x)
    *_, t_float, t_int = run_function(module, "j", [x, np.ones(3)])
    np.testing.assert_array_equal(t_float, 2 * x)
    assert t_int.dtype == np.int32 and not t_int.any()


def test_inactive_argument_gets_zero_gradient() -> None:
    (gx, gy) = gradient(lambda e, x, y: e(nn.ExpOp(y)), [t64(2), t64(2)], [np.ones(2), np.zeros(2)], (0, 1))
    np.testing.assert_array_equal(gx, [0, 0])
    np.testing.assert_array_equal(gy, [1, 1])


def test_convert_between_float_types() -> None:
    """convert is linear: its vjp converts the cotangent back, its jvp converts the tangent."""
    f = build_function("f", [t64(2)], lambda e, x: e(nn.ConvertOp(x, f32)))
    v = build_function(
        "v", [t64(2), TensorType(f32, [2])], lambda e, x, c: e(ad.VJPOp(f, [x], [c]))
    )
    j = build_function("j", [t64(2), t64(2)], lambda e, x, t: e(ad.JVPOp(f, [x], [t])))
    module = run_pass(ModuleOp([f, v, j]))
    _, g = run_function(module, "v", [np.ones(2), np.array([0.5, 2.0], np.float32)])
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, [0.5, 2.0])
    _, t = run_function(module, "j", [np.ones(2), np.array([0.25, -1.0])])
    assert t.dtype == np.float32
    np.testing.assert_array_equal(t, [0.25, -1.0])


def test_call_inside_differentiated_function() -> None:
    """@f calls @g twice; @g is differentiated once and its derivative called twice."""
    g = build_function("g", [t64(3)], lambda e, x: e(nn.SinOp(x)))

    def f_body(e: Emitter, x):
        a = e(func.CallOp("g", [x], [t64(3)]))
        b = e(func.CallOp("g", [a], [t64(3)]))
        return e(nn.ReduceSumOp(b, [0]))

    f = build_function("f", [t64(3)], f_body)
    d = build_function("d", [t64(3)], lambda e, x: e(ad.GradOp(f, [x])))
    j = build_function("j", [t64(3), t64(3)], lambda e, x, t: e(ad.JVPOp(f, [x], [t])))
    module = run_pass(ModuleOp([g, f, d, j]))
    names = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]
    assert names.count("g_vjp") == 1 and names.count("g_jvp") == 1
    x = np.array([0.3, -1.0, 2.0])
    (grad,) = run_function(module, "d", [x])
    np.testing.assert_allclose(grad, np.cos(np.sin(x)) * np.cos(x))
    _, tan = run_function(module, "j", [x, np.ones(3)])
    np.testing.assert_allclose(tan, np.sum(np.cos(np.sin(x)) * np.cos(x)))


def test_pow_at_zero_base() -> None:
    """0 ** y for y > 0: d/dy is 0 (not NaN); d/dx is y * 0 ** (y - 1)."""
    x, y = np.array([0.0, 0.0]), np.array([2.0, 0.0])
    gx, gy = gradient(lambda e, x, y: e(nn.PowOp(x, y)), [t64(2), t64(2)], [x, y], (0, 1))
    np.testing.assert_array_equal(gy, [0.0, 0.0])
    np.testing.assert_array_equal(gx, [0.0, 0.0])


def test_integer_round_trip_blocks_gradient() -> None:
    """Values of integer type are never active: convert(convert(x, i32), f64) has zero derivative."""
    body = lambda e, x: e(nn.ConvertOp(e(nn.ConvertOp(x, i32)), f64))  # noqa: E731
    (g,) = gradient(body, [t64(3)], [np.array([1.5, -2.0, 3.0])])
    np.testing.assert_array_equal(g, [0, 0, 0])


def test_third_order() -> None:
    """grad of grad of grad of sin is -cos: requests on generated functions reach a fixed point."""
    f = build_function("f", [f64], lambda e, x: e(math.SinOp(x)))
    d1 = build_function("d1", [f64], lambda e, x: e(ad.GradOp(f, [x])))
    d2 = build_function("d2", [f64], lambda e, x: e(ad.GradOp(d1, [x])))
    d3 = build_function("d3", [f64], lambda e, x: e(ad.GradOp(d2, [x])))
    j3 = build_function("j3", [f64, f64], lambda e, x, t: e(ad.JVPOp(d2, [x], [t])))
    module = run_pass(ModuleOp([f, d1, d2, d3, j3]))
    x = 0.7
    np.testing.assert_allclose(run_function(module, "d1", [x])[0], np.cos(x))
    np.testing.assert_allclose(run_function(module, "d2", [x])[0], -np.sin(x))
    np.testing.assert_allclose(run_function(module, "d3", [x])[0], -np.cos(x))
    np.testing.assert_allclose(run_function(module, "j3", [x, 2.0])[1], -2 * np.cos(x))
