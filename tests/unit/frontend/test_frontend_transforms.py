"""Transforms: grad / value_and_grad (argnums, pytrees, has_aux), vjp, jvp, grad of grad,
stop_gradient, checkpoint, custom_vjp, closures inside grad, check_grads, and their errors.

Every transform emits `autodiff` ops that the autodiff pass expands; the numbers are checked
against hand-derived numpy derivatives, and check_grads against finite differences, through
control flow (scf.for / scf.if / scf.while), custom_vjp and checkpoint too.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import assert_array, check, check_traced, randint, randn
from irgrad.driver import opt as opt_tool

X = randn(3, seed=1)
Y = randn(3, seed=2)
W = randn(3, 2, seed=3)
RTOL = 1e-5


def f_sin(x, y):
    return ig.sum(ig.sin(x) * y)


def _sech2(x):
    return 1 - np.tanh(x) ** 2


# ---------------------------------------------------------------------------------------------
# grad and value_and_grad
# ---------------------------------------------------------------------------------------------


def test_grad_eager_and_traced():
    check(ig.grad(f_sin), lambda x, y: np.cos(x) * y, X, Y, dtype=np.float32, rtol=RTOL)


def test_grad_argnums():
    check(ig.grad(f_sin, argnums=1), lambda x, y: np.sin(x), X, Y, dtype=np.float32, rtol=RTOL)
    check(ig.grad(f_sin, argnums=-1), lambda x, y: np.sin(x), X, Y, dtype=np.float32, rtol=RTOL)
    for mode, (gx, gy) in {"eager": ig.grad(f_sin, argnums=(0, 1))(X, Y),
                           "traced": ig.trace(ig.grad(f_sin, argnums=(0, 1)), X, Y)(X, Y)}.items():
        assert_array(gx, np.cos(X) * Y, rtol=RTOL, what=mode)
        assert_array(gy, np.sin(X), rtol=RTOL, what=mode)
    # The order follows argnums.
    gy, gx = ig.grad(f_sin, argnums=(1, 0))(X, Y)
    assert_array(gy, np.sin(X), rtol=RTOL)
    assert_array(gx, np.cos(X) * Y, rtol=RTOL)


def test_grad_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums"):
        ig.grad(f_sin, argnums=2)(X, Y)


def test_value_and_grad():
    for mode, (value, g) in {"eager": ig.value_and_grad(f_sin)(X, Y),
                             "traced": ig.trace(ig.value_and_grad(f_sin), X, Y)(X, Y)}.items():
        assert_array(value, np.float32(np.sum(np.sin(X) * Y)), rtol=RTOL, what=mode)
        assert_array(g, np.cos(X) * Y, rtol=RTOL, what=mode)


def test_grad_of_pytree_params():
    params = {"w": W, "b": randn(2, seed=4), "layers": [randn(2, seed=5)]}
    x = randn(4, 3, seed=6)

    def loss(params, x):
        h = ig.tanh(x @ params["w"] + params["b"])
        return ig.sum(h * params["layers"][0])

    z = x @ W + params["b"]
    dh = np.broadcast_to(params["layers"][0], z.shape) * _sech2(z)
    want = {"w": x.T @ dh, "b": dh.sum(0), "layers": [np.tanh(z).sum(0)]}
    for mode, g in {"eager": ig.grad(loss)(params, x), "traced": ig.trace(ig.grad(loss), params, x)(params, x)}.items():
        assert set(g) == {"w", "b", "layers"} and isinstance(g["layers"], list)
        assert_array(g["w"], want["w"], rtol=RTOL, atol=1e-6, what=mode)
        assert_array(g["b"], want["b"], rtol=RTOL, atol=1e-6, what=mode)
        assert_array(g["layers"][0], want["layers"][0], rtol=RTOL, atol=1e-6, what=mode)


def test_grad_has_aux():
    def loss(x, y):
        pred = ig.sin(x) * y
        return ig.sum(pred), {"pred": pred, "count": ig.sum(x > 0)}

    for mode, (g, aux) in {"eager": ig.grad(loss, has_aux=True)(X, Y),
                           "traced": ig.trace(ig.grad(loss, has_aux=True), X, Y)(X, Y)}.items():
        assert_array(g, np.cos(X) * Y, rtol=RTOL, what=mode)
        assert_array(aux["pred"], np.sin(X) * Y, rtol=RTOL, what=mode)
        assert_array(aux["count"], np.int32((X > 0).sum()), what=mode)
    (value, aux), g = ig.value_and_grad(loss, has_aux=True)(X, Y)
    assert_array(value, np.float32(np.sum(np.sin(X) * Y)), rtol=RTOL)
    assert_array(g, np.cos(X) * Y, rtol=RTOL)


def test_grad_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match="pair"):
        ig.grad(lambda x: ig.sum(x), has_aux=True)(X)


def test_grad_passes_keyword_arguments_through():
    """As in JAX: keyword arguments reach fn and are not differentiated."""
    def loss(x, scale=2.0, *, shift):
        return ig.sum(x * scale + shift)

    assert_array(ig.grad(loss)(X, scale=3.0, shift=1.0), np.full(3, 3.0, np.float32))
    assert_array(ig.grad(loss)(X, shift=Y), np.full(3, 2.0, np.float32))
    value, g = ig.value_and_grad(loss)(X, scale=Y, shift=0.0)
    assert_array(value, np.float32(np.sum(X * Y)), rtol=RTOL)
    assert_array(g, Y)
    got = ig.trace(lambda x, y: ig.grad(loss)(x, scale=ig.exp(y), shift=y), X, Y)(X, Y)
    assert_array(got, np.exp(Y), rtol=RTOL)


def test_grad_of_python_scalar_and_float64_and_float16():
    assert_array(ig.grad(lambda a: a * a * a)(2.0), np.float32(12.0))
    x64 = X.astype(np.float64)
    assert_array(ig.grad(lambda a: ig.sum(a ** 3))(x64), 3 * x64 ** 2, rtol=1e-12)
    x16 = X.astype(np.float16)
    assert_array(ig.grad(lambda a: ig.sum(a * a))(x16), 2 * x16, rtol=1e-3)


def test_grad_with_integer_argument_not_differentiated():
    n = np.array(3, np.int32)
    check(ig.grad(lambda x, n: ig.sum(x) * n.astype(ig.float32)), np.full(3, 3.0, np.float32), X, n,
          dtype=np.float32)


def test_grad_with_respect_to_an_int_argument_is_a_dtype_error():
    with pytest.raises(ig.DTypeError, match="int32") as info:
        ig.grad(lambda i: ig.sum(i.astype(ig.float32)))(randint(0, 3, 3, seed=7))
    assert "grad" in str(info.value) and __file__ in str(info.value)
    with pytest.raises(ig.DTypeError):
        ig.trace(ig.grad(lambda x, i: ig.sum(x), argnums=1), X, randint(0, 3, 3, seed=7))


def test_grad_of_a_non_scalar_output_is_a_type_error():
    with pytest.raises(TypeError, match="scalar") as info:
        ig.grad(lambda x: ig.sin(x))(X)
    assert "(3,)" in str(info.value)
    with pytest.raises(TypeError, match="scalar"):
        ig.grad(lambda x: (ig.sum(x), ig.sum(x)))(X)
    with pytest.raises(TypeError, match="requires real-valued outputs"):
        ig.grad(lambda x: ig.sum(x > 0))(X)


def test_grad_request_is_visible_in_the_ir():
    program = ig.trace(ig.grad(f_sin), X, Y)
    text = str(program)
    assert "autodiff.value_and_grad @f_sin_1(%x, %y) wrt [0]" in text
    assert text.count("func.func private @") == 1  # the primal
    assert text.count("func.func @") == 1  # the entry
    assert program.entry == "f_sin"


def test_irgrad_opt_autodiff_expands_the_request(tmp_path):
    path = tmp_path / "grad.mlir"
    path.write_text(str(ig.trace(ig.grad(f_sin), X, Y)))
    out = tmp_path / "out.mlir"
    assert opt_tool.main([str(path), "-p", "autodiff", "-o", str(out)]) == 0
    expanded = out.read_text()
    assert "autodiff." not in expanded
    assert "nn.cos" in expanded  # sin's derivative


def test_closure_over_traced_values_inside_grad():
    def f(x, y):
        scale = ig.exp(y)  # a traced outer value, captured as an extra argument of the primal
        return ig.grad(lambda z: ig.sum(ig.sin(z) * scale))(x)

    program = ig.trace(f, X, Y)
    assert_array(program(X, Y), np.cos(X) * np.exp(Y), rtol=RTOL)
    primal = str(program).split("func.func private @")[1]
    assert primal.count("tensor<3xf32>") >= 2  # z and the captured scale


def test_closure_over_numpy_constant_inside_grad():
    table = randn(3, seed=8)
    check(ig.grad(lambda x: ig.sum(x * table)), table, X, dtype=np.float32)


def test_grad_of_grad():
    def d2(x):
        return ig.grad(lambda u: ig.sum(ig.grad(lambda v: ig.sum(ig.sin(v) * v))(u)))(x)

    # d/dv (sin v * v) = cos v * v + sin v; d/du of that = -sin u * u + 2 cos u
    check(d2, lambda x: -np.sin(x) * x + 2 * np.cos(x), X, dtype=np.float32, rtol=RTOL)


def test_third_order_grad_of_scalar_function():
    f = lambda x: x * x * x * x  # noqa: E731
    g3 = ig.grad(ig.grad(ig.grad(f)))
    assert_array(g3(1.5), np.float32(24 * 1.5))


def test_stop_gradient():
    check(ig.stop_gradient, lambda x: x, X, dtype=np.float32)
    check(ig.grad(lambda x: ig.sum(x * ig.stop_gradient(x))), lambda x: x, X, dtype=np.float32)
    check(ig.grad(lambda x: ig.sum(ig.stop_gradient(ig.sin(x)))), np.zeros(3, np.float32), X, dtype=np.float32)
    out = ig.stop_gradient({"a": X, "b": (Y,)})
    assert_array(out["a"], X)
    assert_array(out["b"][0], Y)
    assert "autodiff.stop_gradient" in str(ig.trace(ig.stop_gradient, X))


def test_grad_through_softmax_family_with_stop_gradient_inside():
    """logsumexp's shift is a stop_gradient: the derivative is still softmax."""
    x = randn(4, seed=9) * 3
    e = np.exp(x - x.max())
    check(ig.grad(ig.logsumexp), e / e.sum(), x, dtype=np.float32, rtol=RTOL)


# ---------------------------------------------------------------------------------------------
# vjp and jvp
# ---------------------------------------------------------------------------------------------


def test_vjp():
    def fn(x, w):
        return ig.tanh(x @ w)

    x = randn(4, 3, seed=10)
    ct = randn(4, 2, seed=11)
    z = x @ W
    dz = ct * _sech2(z)
    out, vjp_fn = ig.vjp(fn, x, W)
    assert_array(out, np.tanh(z), rtol=RTOL)
    cts = vjp_fn(ct)
    assert isinstance(cts, tuple) and len(cts) == 2
    assert_array(cts[0], dz @ W.T, rtol=RTOL, atol=1e-6)
    assert_array(cts[1], x.T @ dz, rtol=RTOL, atol=1e-6)
    # vjp_fn can be called again with another cotangent.
    assert_array(vjp_fn(ct * 2)[0], 2 * dz @ W.T, rtol=RTOL, atol=1e-6)


def test_vjp_traced():
    def f(x, ct):
        out, vjp_fn = ig.vjp(lambda u: ig.sin(u) * 2.0, x)
        (g,) = vjp_fn(ct)
        return out, g

    out, g = ig.trace(f, X, Y)(X, Y)
    assert_array(out, np.sin(X) * 2, rtol=RTOL)
    assert_array(g, 2 * np.cos(X) * Y, rtol=RTOL)


def test_vjp_pytrees_and_int_primals():
    out, vjp_fn = ig.vjp(lambda p, n: (p["a"] * p["b"], ig.sum(p["a"]) * n.astype(ig.float32)),
                         {"a": X, "b": Y}, np.array(2, np.int32))
    assert_array(out[0], X * Y, rtol=RTOL)
    (gp, gn) = vjp_fn((np.ones(3, np.float32), np.float32(1.0)))
    assert_array(gp["a"], Y + 2, rtol=RTOL)
    assert_array(gp["b"], X, rtol=RTOL)
    assert_array(gn, np.int32(0))  # integer primals get zero cotangents


def test_vjp_cotangent_errors():
    _, vjp_fn = ig.vjp(lambda u: ig.sin(u), X)
    with pytest.raises(ig.ShapeError, match=r"cotangent shape \(2,\)"):
        vjp_fn(np.ones(2, np.float32))
    with pytest.raises(ValueError, match="structure"):
        vjp_fn((np.ones(3, np.float32),))


def test_vjp_has_aux():
    out, vjp_fn, aux = ig.vjp(lambda u: (ig.sin(u), {"c": ig.cos(u)}), X, has_aux=True)
    assert_array(out, np.sin(X), rtol=RTOL)
    assert_array(aux["c"], np.cos(X), rtol=RTOL)
    assert_array(vjp_fn(Y)[0], np.cos(X) * Y, rtol=RTOL)

    def traced(x, ct):
        o, fn, a = ig.vjp(lambda u: (ig.sin(u), ig.sum(u)), x, has_aux=True)
        return o, fn(ct)[0], a

    o, g, a = ig.trace(traced, X, Y)(X, Y)
    assert_array(g, np.cos(X) * Y, rtol=RTOL)
    assert_array(a, np.float32(X.sum()), rtol=RTOL)


def test_vjp_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match="pair"):
        ig.vjp(lambda u: ig.sin(u), X, has_aux=True)
    with pytest.raises(TypeError, match="pair"):
        ig.trace(lambda x: ig.vjp(lambda u: (u, u, u), x, has_aux=True)[0], X)


def test_jvp():
    for mode, (out, tangent) in {
        "eager": ig.jvp(lambda u: ig.sin(u) * u, (X,), (Y,)),
        "traced": ig.trace(lambda x, t: ig.jvp(lambda u: ig.sin(u) * u, (x,), (t,)), X, Y)(X, Y),
    }.items():
        assert_array(out, np.sin(X) * X, rtol=RTOL, what=mode)
        assert_array(tangent, (np.cos(X) * X + np.sin(X)) * Y, rtol=RTOL, what=mode)


def test_jvp_pytrees_and_int_primals():
    out, tangent = ig.jvp(lambda p, n: p["a"] * p["b"] * n.astype(ig.float32),
                          ({"a": X, "b": Y}, np.array(2, np.int32)),
                          ({"a": Y, "b": X}, np.array(0, np.int32)))
    assert_array(out, X * Y * 2, rtol=RTOL)
    assert_array(tangent, (Y * Y + X * X) * 2, rtol=RTOL)


def test_jvp_tangent_errors():
    with pytest.raises(ig.ShapeError, match="tangent shape"):
        ig.jvp(ig.sin, (X,), (np.ones(2, np.float32),))
    with pytest.raises(ValueError, match="structure"):
        ig.jvp(lambda a, b: a * b, (X, Y), (X,))


def test_forward_over_reverse_and_reverse_over_forward():
    # Hessian-vector product of sum(sin(x)): -sin(x) * v, both ways.
    hvp_fwd = ig.jvp(ig.grad(lambda u: ig.sum(ig.sin(u))), (X,), (Y,))[1]
    assert_array(hvp_fwd, -np.sin(X) * Y, rtol=RTOL)
    hvp_rev = ig.grad(lambda u: ig.sum(ig.jvp(lambda v: ig.sum(ig.sin(v)), (u,), (Y,))[1]))(X)
    assert_array(hvp_rev, -np.sin(X) * Y, rtol=RTOL)


# ---------------------------------------------------------------------------------------------
# checkpoint and custom_vjp
# ---------------------------------------------------------------------------------------------


def test_checkpoint_primal():
    fn = ig.checkpoint(lambda z: ig.sin(z) * z)
    check(fn, lambda x: np.sin(x) * x, X, dtype=np.float32)
    assert "autodiff.checkpoint" in str(ig.trace(fn, X))
    assert ig.remat is ig.checkpoint


def test_grad_through_checkpoint():
    fn = ig.checkpoint(lambda z: ig.sin(z) * z)
    check(ig.grad(lambda x: ig.sum(fn(x))), lambda x: np.cos(x) * x + np.sin(x), X, dtype=np.float32, rtol=RTOL)


def _custom_sin(wrong: bool):
    @ig.custom_vjp
    def my_sin(x):
        return ig.sin(x)

    def fwd(x):
        return ig.sin(x), ig.cos(x)

    def bwd(cos_x, ct):
        return (cos_x * ct * (2.0 if wrong else 1.0),)

    my_sin.defvjp(fwd, bwd)
    return my_sin


def test_custom_vjp_primal_and_ir():
    my_sin = _custom_sin(wrong=False)
    check(my_sin, np.sin, X, dtype=np.float32, rtol=RTOL)
    text = str(ig.trace(my_sin, X))
    assert "autodiff.custom_vjp" in text
    assert re.search(r"fwd @my_sin\w*_fwd bwd @my_sin\w*_bwd", text), text


def test_custom_vjp_without_rule_is_a_type_error():
    @ig.custom_vjp
    def f(x):
        return x

    with pytest.raises(TypeError, match="defvjp"):
        f(X)


def test_custom_vjp_fwd_may_call_the_function_itself():
    """JAX's documented pattern, `def f_fwd(x): return f(x), residuals`: inside its own fwd
    rule the function is its primal (it used to recurse without end)."""

    @ig.custom_vjp
    def f(x):
        return ig.sin(x)

    def fwd(x):
        return f(x), ig.cos(x)

    def bwd(cos_x, ct):
        return (3.0 * cos_x * ct,)

    f.defvjp(fwd, bwd)
    check(f, np.sin, X, dtype=np.float32, rtol=RTOL)
    check(ig.grad(lambda x: ig.sum(f(x))), lambda x: 3 * np.cos(x), X, dtype=np.float32, rtol=RTOL)


def test_grad_uses_the_custom_vjp_rule():
    wrong = _custom_sin(wrong=True)
    # The rule, not sin's true derivative, is what grad returns.
    check(ig.grad(lambda x: ig.sum(wrong(x))), lambda x: 2 * np.cos(x), X, dtype=np.float32, rtol=RTOL)


# ---------------------------------------------------------------------------------------------
# Control flow inside differentiated functions
# ---------------------------------------------------------------------------------------------


def test_grad_through_fori_loop_with_traced_bound():
    def f(x, n):
        return ig.grad(lambda v: ig.sum(ig.fori_loop(0, n, lambda i, c: c * v, ig.ones_like(v))))(x)

    program = ig.trace(f, X, np.array(0, np.int32))
    for n in (0, 1, 4):
        want = n * X ** (n - 1) if n else np.zeros_like(X)
        assert_array(program(X, np.array(n, np.int32)), want, rtol=RTOL)


def test_grad_through_fori_loop():
    check(ig.grad(lambda x: ig.sum(ig.fori_loop(0, 3, lambda i, c: c * x, ig.ones_like(x)))),
          lambda x: 3 * x ** 2, X, dtype=np.float32, rtol=RTOL)


def test_grad_through_cond():
    check(ig.grad(lambda x: ig.sum(ig.cond(ig.sum(x) > 0, lambda: x * 2.0, lambda: x * 3.0))),
          lambda x: np.full(3, 2.0 if x.sum() > 0 else 3.0, np.float32), X, dtype=np.float32)


def test_grad_through_while_loop():
    x = np.abs(X) + 1
    check(ig.grad(lambda x: ig.sum(ig.while_loop(lambda c: ig.sum(c) < 100.0, lambda c: c * 2.0, x))),
          lambda x: np.full(3, 2.0 ** int(np.ceil(np.log2(100 / x.sum()))), np.float32), x, dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# check_grads
# ---------------------------------------------------------------------------------------------

CHECK_GRADS_FUNCTIONS = [
    ("sin_times_x", lambda x: ig.sin(x) * x, (X,)),
    ("tanh_matmul", lambda x, w: ig.tanh(x @ w), (randn(2, 3, seed=12), W)),
    ("scalar_output", lambda x, y: ig.tanh(x) @ y, (X, Y)),
    ("softmax_logsumexp", lambda x: ig.softmax(x) * ig.logsumexp(x), (X,)),
    ("broadcast_div", lambda x, y: x[:, None] / (ig.exp(y) + 1.0), (X, Y)),
    ("pytree", lambda p: p["a"] * ig.sigmoid(p["b"][0]), ({"a": X, "b": (Y,)},)),
    ("rnn_fori_loop", lambda w, x: ig.fori_loop(0, 3, lambda i, h: ig.tanh(h @ w + x), x), (W @ W.T * 0.5, X)),
    ("indexed_product_loop", lambda xs: ig.fori_loop(0, 3, lambda i, acc: acc * xs[i], ig.ones_like(xs[0])), (X,)),
    ("cond", lambda x: ig.cond(ig.sum(x) > 0, lambda: ig.sin(x) * x, lambda: ig.cos(x)), (X,)),
    ("while_loop", lambda x: ig.while_loop(lambda c: c[1] < 3, lambda c: (ig.sin(c[0]) * 1.5, c[1] + 1), (x, 0))[0],
     (X,)),
]


@pytest.mark.parametrize("name, fn, args", CHECK_GRADS_FUNCTIONS, ids=[c[0] for c in CHECK_GRADS_FUNCTIONS])
@pytest.mark.parametrize("order, modes", [(1, ("fwd", "rev")), (2, ("fwd",)), (2, ("rev",))], ids=str)
def test_check_grads_passes(name, fn, args, order, modes):
    ig.check_grads(fn, args, order=order, modes=modes)


def test_check_grads_fails_for_a_wrong_function_of_finite_differences():
    with pytest.raises(ig.GradientCheckError, match="finite differences"):
        # A large step makes the finite difference of sin visibly wrong.
        ig.check_grads(ig.sin, (X,), order=1, modes=("fwd",), eps=0.3)
    assert issubclass(ig.GradientCheckError, AssertionError)


def test_check_grads_catches_a_wrong_custom_vjp():
    wrong = _custom_sin(wrong=True)
    with pytest.raises(ig.GradientCheckError):
        ig.check_grads(wrong, (X,), order=1, modes=("rev",))


def test_check_grads_accepts_a_right_custom_vjp():
    ig.check_grads(_custom_sin(wrong=False), (X,), order=1, modes=("rev",))


_Z = X + 0.5j * X[::-1]


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)], ids=str)
def test_check_grads_takes_complex_arguments(modes):
    """Complex tangents and cotangents, as jax's check_grads: a holomorphic and a
    non-holomorphic function pass, and a visibly wrong finite difference (a large step) is
    caught, so the complex directions are compared."""
    ig.check_grads(lambda z: z * ig.exp(z), (_Z,), order=1, modes=modes)
    ig.check_grads(lambda z: ig.real(z) * ig.conj(z) + ig.abs(z), (_Z,), order=1, modes=modes)
    with pytest.raises(ig.GradientCheckError):
        ig.check_grads(lambda z: ig.exp(z) * z, (_Z,), order=1, modes=modes, eps=0.3)


# ---------------------------------------------------------------------------------------------
# Every differentiable API function through check_grads (float64, finite differences)
# ---------------------------------------------------------------------------------------------

_A = randn(2, 3, seed=20)
_P = np.abs(randn(2, 3, seed=21)) + 0.5
_IMG = randn(1, 2, 5, 5, seed=22)
_K = randn(3, 2, 3, 3, seed=23)

API_GRADS = [
    ("exp_log", lambda x: ig.log(ig.exp(x) + 1.0), (_A,)),
    ("sqrt_rsqrt_log1p", lambda p: ig.sqrt(p) * ig.rsqrt(p + 1.0) + ig.log1p(p), (_P,)),
    ("sigmoid_tanh_sin_cos", lambda x: ig.sigmoid(x) * ig.tanh(x) + ig.sin(x) * ig.cos(x), (_A,)),
    ("abs_sign_relu_square", lambda x: ig.abs(x) * ig.sign(x) + ig.relu(x) * x + ig.square(x), (_A,)),
    ("maximum_minimum", lambda x, p: ig.maximum(x, p * 0.1) + ig.minimum(x, -p * 0.1), (_A, _P)),
    ("power", lambda p, x: ig.power(p, x) + p ** 2.5 + p ** -2, (_P, _A)),
    ("divide_where", lambda x, p: ig.where(x > 0, x / p, p), (_A, _P)),
    ("reductions", lambda x: ig.sum(x, 0) * ig.mean(x, 1, keepdims=True) + ig.max(x, 1, keepdims=True)
     - ig.min(x, axis=0), (_A,)),
    ("matmul_batched", ig.matmul, (randn(2, 2, 3, seed=24), randn(3, 4, seed=25))),
    ("matmul_vector", ig.matmul, (randn(3, seed=26), randn(3, 2, seed=27))),
    ("shape_functions", lambda x: ig.transpose(ig.reshape(x, (3, 2))) * ig.squeeze(ig.expand_dims(x, 0), 0)
     + ig.swapaxes(ig.broadcast_to(x[None], (2, 2, 3)), 0, 1).sum(1), (_A,)),
    ("slicing", lambda x: x[::-1, 1:] * 2 + x[:, np.array([0, 0])] + x[-1, None, :2], (_A,)),
    ("concatenate_stack_pad", lambda x: ig.concatenate([x, ig.pad(x, ((0, 0), (1, 0)))], axis=1)
     + ig.stack([x] * 7, 2).sum(-1)[:, :1], (_A,)),
    ("take_take_along_axis", lambda x: ig.take(x, np.array([2, 0, -1]), axis=1)
     + ig.take_along_axis(x, np.array([[0], [2]]), axis=1), (_A,)),
    ("softmax_family", lambda x: ig.softmax(x) + ig.log_softmax(x, axis=0) * ig.logsumexp(x), (_A,)),
    ("conv2d", lambda x, k: ig.conv2d(x, k, stride=2, padding=1) + ig.conv2d(x, k, padding=2, dilation=2)[..., ::2, ::2],
     (_IMG, _K)),
    ("max_pool2d", lambda x: ig.max_pool2d(x, 2, padding=1), (_IMG,)),
    ("floor_divide", lambda x: x // 0.7 + x, (_A,)),  # floor's derivative is zero almost everywhere
]


@pytest.mark.parametrize("name, fn, args", API_GRADS, ids=[c[0] for c in API_GRADS])
def test_api_functions_pass_check_grads(name, fn, args):
    ig.check_grads(fn, args, order=1, modes=("fwd", "rev"), rtol=1e-5, atol=1e-6)
    ig.check_grads(fn, args, order=2, modes=("rev",), rtol=1e-5, atol=1e-6)


def test_eval_shape_traces_without_running():
    calls = []

    def f(x, w):
        calls.append(1)
        return {"y": x @ w, "best": ig.argmax(x)}

    out = ig.eval_shape(f, ig.ShapeDtype((3, 4)), np.ones((4, 5), np.float64))
    assert out["y"] == ig.ShapeDtype((3, 5), np.float64) and out["best"] == ig.ShapeDtype((), np.int32)
    assert len(calls) == 1  # traced once, never executed


def test_linearize_is_the_jvp_at_fixed_primals():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal(3), rng.standard_normal(3)
    y, f_jvp = ig.linearize(lambda a, b: ig.sin(a) * b, x, w)
    np.testing.assert_allclose(y, np.sin(x) * w, rtol=1e-15)
    tx, tw = rng.standard_normal(3), rng.standard_normal(3)
    np.testing.assert_allclose(f_jvp(tx, tw), np.cos(x) * tx * w + np.sin(x) * tw, rtol=1e-14)
    with pytest.raises(TypeError, match="takes 2 tangents"):
        f_jvp(tx)


def test_keyword_arguments_through_vmap_and_checkpoint():
    """As JAX: vmap maps keyword arguments over their axis 0; checkpoint passes them on and
    differentiates them like positional ones."""
    x = np.arange(3.0)
    scale = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ig.vmap(lambda v, scale=1.0: v * scale)(x, scale=scale), x * scale)
    mapped = ig.vmap(lambda v, w, scale=1.0: v * w * scale, in_axes=(0, None))(x, np.float64(2.0), scale=scale)
    np.testing.assert_array_equal(mapped, 2 * x * scale)
    f = lambda v, scale=1.0: ig.sum(ig.sin(v) * scale)  # noqa: E731
    gx, gs = ig.grad(lambda v, s: ig.checkpoint(f)(v, scale=s), argnums=(0, 1))(x, np.float64(2.0))
    np.testing.assert_allclose(gx, 2 * np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(gs, np.sin(x).sum(), rtol=1e-15)
