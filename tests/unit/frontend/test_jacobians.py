"""ig.jacrev, ig.jacfwd, ig.jacobian, ig.hessian: shapes and structure as in JAX, values against
central finite differences in float64 on random inputs, one batched sweep in the IR, errors."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from irgrad.tracing.errors import DTypeError


def numeric_jacobian(fn, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d fn / d x by central differences, shaped out.shape + x.shape."""
    columns = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = eps
        e = e.reshape(x.shape)
        columns.append((np.asarray(fn(x + e)) - np.asarray(fn(x - e))) / (2 * eps))
    out_shape = np.shape(fn(x))
    return np.moveaxis(np.array(columns), 0, -1).reshape(out_shape + x.shape)


def layer(x, w):
    return ig.tanh(x @ w) * ig.sum(x)


def layer_np(x, w):
    return np.tanh(x @ w) * x.sum()


rng = np.random.default_rng(7)
X = rng.standard_normal((2, 3))
W = rng.standard_normal((3, 4))


@pytest.mark.parametrize("transform", [ig.jacrev, ig.jacfwd])
@pytest.mark.parametrize("argnum", [0, 1])
def test_matches_finite_differences(transform, argnum: int) -> None:
    jac = transform(layer, argnums=argnum)(X, W)
    args = [X, W]

    def partial(v):
        a = list(args)
        a[argnum] = v
        return layer_np(*a)

    expected = numeric_jacobian(partial, args[argnum])
    assert jac.shape == (2, 4) + args[argnum].shape
    np.testing.assert_allclose(jac, expected, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("transform", [ig.jacrev, ig.jacfwd])
def test_forward_and_reverse_agree_under_jit(transform) -> None:
    eager = transform(layer, argnums=(0, 1))(X, W)
    compiled = ig.jit(transform(layer, argnums=(0, 1)))(X, W)
    reference = ig.jacrev(layer, argnums=(0, 1))(X, W)
    assert isinstance(eager, tuple) and len(eager) == 2
    for e, c, r in zip(eager, compiled, reference):
        np.testing.assert_allclose(e, r, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(c, r, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("transform", [ig.jacrev, ig.jacfwd])
def test_pytree_inputs_and_outputs(transform) -> None:
    """Output structure of input structures; blocks shaped out_leaf + in_leaf."""

    def f(params, x):
        h = ig.tanh(x @ params["w"] + params["b"])
        return {"h": h, "norm": ig.sum(h * h)}

    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    x = rng.standard_normal(3)
    jac = transform(f)(params, x)
    assert set(jac) == {"h", "norm"}
    assert jac["h"]["w"].shape == (2, 3, 2) and jac["h"]["b"].shape == (2, 2)
    assert jac["norm"]["w"].shape == (3, 2) and jac["norm"]["b"].shape == (2,)

    def h_of_b(b):
        return np.tanh(x @ params["w"] + b)

    np.testing.assert_allclose(jac["h"]["b"], numeric_jacobian(h_of_b, params["b"]), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jac["norm"]["w"], ig.grad(lambda p: f(p, x)["norm"])(params)["w"], rtol=1e-12)


def test_jacobian_is_jacrev_and_float32_stays_float32() -> None:
    assert ig.jacobian is ig.jacrev
    x = rng.standard_normal(5).astype(np.float32)
    for transform in (ig.jacrev, ig.jacfwd):
        jac = transform(ig.sin)(x)
        assert jac.dtype == np.float32
        np.testing.assert_allclose(jac, np.diag(np.cos(x)), rtol=1e-6, atol=1e-7)


def test_repeated_input_fans_out_and_sums() -> None:
    """x used twice (x * x): the Jacobian is 2 diag(x), the fan-out contributions summed."""
    x = rng.standard_normal(4)
    for transform in (ig.jacrev, ig.jacfwd):
        np.testing.assert_allclose(transform(lambda v: v * v)(x), np.diag(2 * x), rtol=1e-14)


@pytest.mark.parametrize("transform", [ig.jacrev, ig.jacfwd])
def test_has_aux(transform) -> None:
    jac, aux = transform(lambda x: (ig.exp(x), ig.sum(x)), has_aux=True)(X[0])
    np.testing.assert_allclose(jac, np.diag(np.exp(X[0])), rtol=1e-14)
    np.testing.assert_allclose(aux, X[0].sum(), rtol=1e-14)


def test_hessian_matches_finite_differences_of_the_gradient() -> None:
    def g(x):
        return ig.sum(ig.sin(x) * x[::-1]) ** 2 + ig.sum(ig.exp(x[:2]))

    x = rng.standard_normal(4)
    h = ig.hessian(g)(x)
    expected = numeric_jacobian(lambda v: np.asarray(ig.grad(g)(v)), x)
    assert h.shape == (4, 4)
    np.testing.assert_allclose(h, expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(ig.jit(ig.hessian(g))(x), h, rtol=1e-12)


def test_hessian_blocks_of_two_arguments() -> None:
    """A scalar of (a, b): blocks shaped in_i + in_j, the off-diagonal blocks transposes."""

    def g(a, b):
        return ig.sum(ig.tanh(a @ b))

    a, b = rng.standard_normal((2, 3)), rng.standard_normal(3)
    (haa, hab), (hba, hbb) = ig.hessian(g, argnums=(0, 1))(a, b)
    assert haa.shape == (2, 3, 2, 3) and hab.shape == (2, 3, 3) and hba.shape == (3, 2, 3) and hbb.shape == (3, 3)
    np.testing.assert_allclose(hab, np.moveaxis(hba, 0, -1), rtol=1e-10, atol=1e-12)
    grad_b = lambda bv: np.asarray(ig.grad(g, argnums=1)(a, bv))  # noqa: E731
    np.testing.assert_allclose(hbb, numeric_jacobian(grad_b, b), rtol=1e-6, atol=1e-8)


def test_one_batched_sweep_in_the_ir() -> None:
    """jacrev is one batch request over one pullback, not one sweep per output."""
    text = str(ig.trace(ig.jacrev(layer), X, W))
    assert text.count("autodiff.batch") == 1
    assert text.count("autodiff.vjp") == 1


def test_integer_inputs_and_outputs_are_rejected() -> None:
    ints = np.arange(3)
    with pytest.raises(DTypeError, match="jacrev requires real- or complex-valued inputs.*int64"):
        ig.jacrev(lambda x: x * 2)(ints)
    with pytest.raises(DTypeError, match="jacfwd requires real-valued inputs"):
        ig.jacfwd(lambda x: x * 2)(ints)
    with pytest.raises(DTypeError, match="jacrev requires real-valued outputs"):
        ig.jacrev(lambda x: ig.argmax(x))(X[0])
    with pytest.raises(ValueError, match="argnums 2 out of range"):
        ig.jacrev(layer, argnums=2)(X, W)
