"""ig.custom_jvp: forward mode uses the rule, reverse mode its transpose (the body of f is never
differentiated), higher orders differentiate the rule, vmap and jit compose; errors are clear."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig


@ig.custom_jvp
def softplus(x):
    return ig.log(1.0 + ig.exp(x))  # overflows to inf for large x; its own derivative would be inf/inf


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t * ig.sigmoid(x)


@ig.custom_jvp
def tripled(x, w):
    """f's own derivative (x * w) differs from the rule (3 t_x w + x t_w), to show which is used."""
    return x * w


@tripled.defjvp
def _tripled_jvp(primals, tangents):
    (x, w), (tx, tw) = primals, tangents
    return tripled(x, w), 3.0 * tx * w + x * tw


X = np.array([-3.0, -0.5, 0.0, 0.7, 2.0, 800.0])


def _sigmoid(x):
    return 0.5 * (1 + np.tanh(x / 2))


def test_reverse_mode_transposes_the_rule_where_the_body_would_give_nan() -> None:
    grad = ig.grad(lambda x: ig.sum(softplus(x)))(X)
    np.testing.assert_allclose(grad, _sigmoid(X), rtol=1e-15)
    assert np.isfinite(grad).all()


def test_forward_mode_calls_the_rule() -> None:
    t = np.linspace(-1, 1, X.size)
    _, tangent = ig.jvp(softplus, (X,), (t,))
    np.testing.assert_allclose(tangent, t * _sigmoid(X), rtol=1e-15)


def test_the_rule_not_the_body_is_used_in_both_modes() -> None:
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(4), rng.standard_normal(4)
    gx, gw = ig.grad(lambda x, w: ig.sum(tripled(x, w)), argnums=(0, 1))(x, w)
    np.testing.assert_allclose(gx, 3 * w, rtol=1e-15)
    np.testing.assert_allclose(gw, x, rtol=1e-15)
    tx, tw = rng.standard_normal(4), rng.standard_normal(4)
    _, tangent = ig.jvp(tripled, (x, w), (tx, tw))
    np.testing.assert_allclose(tangent, 3 * tx * w + x * tw, rtol=1e-15)


def test_higher_orders_differentiate_the_rule() -> None:
    x = X[:5]
    s = _sigmoid(x)
    second = ig.grad(lambda v: ig.sum(ig.grad(lambda u: ig.sum(softplus(u)))(v)))(x)
    np.testing.assert_allclose(second, s * (1 - s), rtol=1e-13)
    hessian = ig.hessian(lambda v: ig.sum(softplus(v)))(x)
    np.testing.assert_allclose(hessian, np.diag(s * (1 - s)), rtol=1e-13, atol=1e-16)
    # A rule consistent with f passes the finite-difference check at first and second order.
    ig.check_grads(softplus, (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_jit_and_vmap_compose(backend: str) -> None:
    per_example = ig.jit(ig.vmap(ig.grad(lambda x: softplus(x))), backend=backend)(X)
    np.testing.assert_allclose(per_example, _sigmoid(X), rtol=1e-15)
    rng = np.random.default_rng(1)
    xs, w = rng.standard_normal((3, 4)), rng.standard_normal(4)
    jac = ig.jit(ig.vmap(ig.jacrev(lambda x: tripled(x, w))), backend=backend)(xs)
    np.testing.assert_allclose(jac, np.stack([np.diag(3 * w)] * 3), rtol=1e-15)


def test_pytree_and_integer_arguments() -> None:
    @ig.custom_jvp
    def scaled(params, n):
        return params["a"] * params["b"] * n

    @scaled.defjvp
    def _scaled_jvp(primals, tangents):
        (params, n), (dp, dn) = primals, tangents
        assert dn.dtype == np.int32  # an integer argument's tangent: zeros of its dtype
        return scaled(params, n), (dp["a"] * params["b"] + params["a"] * dp["b"]) * n

    params = {"a": np.array([1.5, -2.0]), "b": np.array([0.5, 3.0])}
    grads = ig.grad(lambda p: ig.sum(scaled(p, np.int32(4))))(params)
    np.testing.assert_allclose(grads["a"], params["b"] * 4, rtol=1e-15)
    np.testing.assert_allclose(grads["b"], params["a"] * 4, rtol=1e-15)


def test_the_ir_shows_the_request_and_its_expansion() -> None:
    text = str(ig.trace(ig.grad(lambda x: ig.sum(softplus(x))), X))
    assert "autodiff.custom_jvp @softplus(" in text and "jvp @softplus_jvp_rule" in text
    expanded = str(ig.trace(ig.grad(lambda x: ig.sum(softplus(x))), X).executable_module())
    assert "softplus_jvp_rule_tangents_vjp" in expanded and "autodiff.custom_jvp" not in expanded
    # The pipeline's autodiff stage then inlines those functions: one function, no call.
    stage = ig.jit(ig.grad(lambda x: ig.sum(softplus(x)))).lower(X).as_text("autodiff")
    assert "func.call" not in stage and "autodiff.custom_jvp" not in stage


def test_errors() -> None:
    @ig.custom_jvp
    def bare(x):
        return x

    with pytest.raises(TypeError, match="has no rule"):
        bare(X)

    @ig.custom_jvp
    def wrong(x):
        return x * 2.0

    @wrong.defjvp
    def _wrong_jvp(primals, tangents):
        return primals[0] * 2.0, (tangents[0], tangents[0])

    with pytest.raises(TypeError, match="tangent_out has structure"):
        ig.grad(lambda x: ig.sum(wrong(x)))(X)
