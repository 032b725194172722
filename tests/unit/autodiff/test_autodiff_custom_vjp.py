"""autodiff.custom_vjp: the user's fwd/bwd replace the derived reverse rule; forward mode differentiates @f.

Every rule here is deliberately different from the function's true derivative, so a test can tell which one
ran: the reverse sweep must run the user's `bwd` (with the residuals `fwd` saved), never a derivative of
`@f`'s body; forward mode (which JAX rejects) differentiates `@f` itself, documented in docs/autodiff.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import irgrad as ig
from _autodiff_harness import run_pass
from irgrad.backends.interpreter import run_function
from irgrad.context import make_context

# @g is exp; its "VJP" is 3 * ct * x (not ct * exp(x)), with x as the residual.
MODULE = """
func.func @g(%x: tensor<3xf64>) -> tensor<3xf64> {
  %y = nn.exp %x : tensor<3xf64>
  func.return %y : tensor<3xf64>
}
func.func @g_fwd(%x: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %y = nn.exp %x : tensor<3xf64>
  func.return %y, %x : tensor<3xf64>, tensor<3xf64>
}
func.func @g_bwd(%x: tensor<3xf64>, %ct: tensor<3xf64>) -> tensor<3xf64> {
  %three = nn.full 3.0 : tensor<3xf64>
  %a = nn.mul %ct, %three : tensor<3xf64>
  %b = nn.mul %a, %x : tensor<3xf64>
  func.return %b : tensor<3xf64>
}
func.func @f(%x: tensor<3xf64>) -> tensor<f64> {
  %s = nn.sin %x : tensor<3xf64>
  %y = autodiff.custom_vjp @g(%s) fwd @g_fwd bwd @g_bwd : (tensor<3xf64>) -> tensor<3xf64>
  %r = nn.reduce_sum %y axes = [0] : tensor<3xf64> -> tensor<f64>
  func.return %r : tensor<f64>
}
func.func @grad(%x: tensor<3xf64>) -> tensor<3xf64> {
  %g = autodiff.grad @f(%x) : (tensor<3xf64>) -> tensor<3xf64>
  func.return %g : tensor<3xf64>
}
func.func @jvp(%x: tensor<3xf64>, %v: tensor<3xf64>) -> tensor<f64> {
  %y, %t = autodiff.jvp @f(%x) tangents(%v : tensor<3xf64>) : (tensor<3xf64>) -> (tensor<f64>, tensor<f64>)
  func.return %t : tensor<f64>
}
func.func @sum_of_grad(%x: tensor<3xf64>) -> tensor<f64> {
  %g = func.call @grad(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %r = nn.reduce_sum %g axes = [0] : tensor<3xf64> -> tensor<f64>
  func.return %r : tensor<f64>
}
func.func @grad_of_grad(%x: tensor<3xf64>) -> tensor<3xf64> {
  %g = autodiff.grad @sum_of_grad(%x) : (tensor<3xf64>) -> tensor<3xf64>
  func.return %g : tensor<3xf64>
}
"""

X = np.array([0.3, -1.2, 2.0])


def _module() -> ModuleOp:
    return run_pass(Parser(make_context(), MODULE).parse_module())


def test_the_user_rule_replaces_the_derived_one() -> None:
    (g,) = run_function(_module(), "grad", [X])
    np.testing.assert_allclose(g, 3 * np.sin(X) * np.cos(X), rtol=1e-14)  # bwd's 3 * s, chained through sin


def test_forward_sweep_calls_fwd_and_reverse_sweep_calls_bwd() -> None:
    module = _module()
    vjp = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "f_vjp")
    callees = [op.callee.root_reference.data for op in vjp.walk() if isinstance(op, func.CallOp)]
    assert callees == ["g_fwd", "g_bwd"]
    assert not [op for op in module.walk() if op.name.startswith("autodiff.")]


def test_forward_mode_differentiates_the_callee_itself() -> None:
    v = np.array([1.0, -0.5, 2.0])
    (t,) = run_function(_module(), "jvp", [X, v])
    np.testing.assert_allclose(t, np.sum(np.exp(np.sin(X)) * np.cos(X) * v), rtol=1e-14)


def test_grad_of_grad_differentiates_the_user_bwd() -> None:
    """sum(grad f) = sum(3 sin x cos x) = 1.5 sum(sin 2x): its gradient is 3 cos 2x (from bwd, not exp)."""
    (h,) = run_function(_module(), "grad_of_grad", [X])
    np.testing.assert_allclose(h, 3 * np.cos(2 * X), rtol=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# Through the Python API
# ---------------------------------------------------------------------------------------------------------------


def _clipped_sin() -> Any:
    """sin with a gradient clipped to [-0.5, 0.5] (a rule that differs from the true derivative)."""

    @ig.custom_vjp
    def f(x: Any) -> Any:
        return ig.sin(x)

    def fwd(x: Any) -> Any:
        return ig.sin(x), (ig.cos(x),)

    def bwd(residuals: Any, g: Any) -> Any:
        (c,) = residuals
        return (ig.minimum(ig.maximum(g * c, -0.5), 0.5),)

    f.defvjp(fwd, bwd)
    return f


def test_api_grad_uses_the_clipped_rule() -> None:
    f = _clipped_sin()
    x = np.array([0.1, 1.4, -0.2, 3.0])
    g = ig.grad(lambda x: ig.sum(f(x) * 3.0))(x)
    np.testing.assert_allclose(g, np.clip(3 * np.cos(x), -0.5, 0.5), rtol=1e-14)


def test_api_jvp_is_the_true_derivative() -> None:
    f = _clipped_sin()
    x = np.array([0.1, 1.4, -0.2])
    _, t = ig.jvp(f, (x,), (np.ones(3),))
    np.testing.assert_allclose(t, np.cos(x), rtol=1e-14)


def test_api_custom_vjp_inside_a_loop() -> None:
    """Each iteration's reverse step runs the user's rule: h <- f(h) * w, 3 times."""

    @ig.custom_vjp
    def f(x: Any) -> Any:
        return ig.tanh(x)

    def fwd(x: Any) -> Any:
        y = ig.tanh(x)
        return y, (y,)

    def bwd(residuals: Any, g: Any) -> Any:
        (y,) = residuals
        return (g * (1.0 - y * y) * 2.0,)  # twice the true derivative

    f.defvjp(fwd, bwd)
    w = np.array([0.7, -1.1, 0.4])
    x = np.array([0.5, 0.2, -0.3])
    g = ig.grad(lambda x: ig.sum(ig.fori_loop(0, 3, lambda i, h: f(h) * w, x)))(x)
    h, dh = x, np.ones(3)
    hs = []
    for _ in range(3):
        hs.append(h)
        h = np.tanh(h) * w
    for h in reversed(hs):
        dh = dh * w * (1 - np.tanh(h) ** 2) * 2.0
    np.testing.assert_allclose(g, dh, rtol=1e-13)


def test_api_unused_result_gets_a_zero_cotangent() -> None:
    """A two-result custom_vjp of which only the first is used: bwd sees zeros for the second."""

    @ig.custom_vjp
    def f(x: Any, y: Any) -> Any:
        return x * y, x + y

    def fwd(x: Any, y: Any) -> Any:
        return (x * y, x + y), (x, y)

    def bwd(residuals: Any, cts: Any) -> Any:
        x, y = residuals
        a, b = cts
        return (a * y + b * 10.0, a * x + b * 10.0)

    f.defvjp(fwd, bwd)
    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    gx, gy = ig.grad(lambda x, y: ig.sum(f(x, y)[0]), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, y)
    np.testing.assert_allclose(gy, x)


@pytest.mark.parametrize(
    "fwd,bwd,message",
    [
        (lambda a: (a * 2.0, a), lambda r, g: (g[:2],), r"bwd's cotangent 0 is float64\[2\], but the argument it belongs to is float64\[3\]"),
        (lambda a: (a * 2.0, a), lambda r, g: (ig.sum(g),), r"bwd's cotangent 0 is float64\[\]"),
        (lambda a: (ig.sum(a), a), lambda r, g: (g * r,), r"fwd's output 0 is float64\[\], but f returns float64\[3\]"),
        (lambda a: ((a * 2.0).astype(ig.float32), a), lambda r, g: (g * r,), r"fwd's output 0 is float32\[3\]"),
    ],
    ids=["bwd-shape", "bwd-scalar", "fwd-shape", "fwd-dtype"],
)
def test_rules_of_the_wrong_type_are_user_errors(fwd, bwd, message):
    """A fwd output or bwd cotangent whose shape or dtype differs from the function's is the
    user's mistake: an ig.ShapeError naming it (as JAX's ValueError), not an internal error."""

    @ig.custom_vjp
    def f(a):
        return a * 2.0

    f.defvjp(fwd, bwd)
    with pytest.raises(ig.ShapeError, match=message):
        ig.grad(lambda a: ig.sum(f(a)))(np.array([0.1, -0.2, 0.3]))
