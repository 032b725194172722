"""Transform keywords and checks that JAX users reach for (api_test.py's jvp/linearize with
has_aux, linear_transpose, and the dtype checks of tangents and cotangents), eager and
under jit, against float64 finite differences and closed forms."""

import numpy as np
import pytest

import irgrad as ig


def _f(x):
    return ig.sin(x) * x, {"norm": ig.sum(x * x), "count": ig.asarray(np.int32(3))}


def test_jvp_with_aux_returns_the_aux_undifferentiated():
    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    out, tangent, aux = ig.jvp(_f, (x,), (v,), has_aux=True)
    np.testing.assert_allclose(out, np.sin(x) * x, rtol=1e-15)
    np.testing.assert_allclose(tangent, (np.cos(x) * x + np.sin(x)) * v, rtol=1e-14)
    np.testing.assert_allclose(aux["norm"], np.sum(x * x), rtol=1e-15)
    assert aux["count"] == 3
    staged = ig.jit(lambda x, v: ig.jvp(_f, (x,), (v,), has_aux=True))(x, v)
    np.testing.assert_allclose(staged[1], tangent, rtol=1e-14)
    with pytest.raises(TypeError, match="needs fn to return a pair"):
        ig.jvp(ig.sin, (x,), (v,), has_aux=True)


def test_linearize_with_aux():
    x = np.array([0.3, -1.2])
    out, f_jvp, aux = ig.linearize(_f, x, has_aux=True)
    np.testing.assert_allclose(out, np.sin(x) * x, rtol=1e-15)
    np.testing.assert_allclose(aux["norm"], np.sum(x * x))
    v = np.array([2.0, -1.0])
    np.testing.assert_allclose(f_jvp(v), (np.cos(x) * x + np.sin(x)) * v, rtol=1e-14)


def test_linear_transpose_is_the_adjoint_of_a_linear_map():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4))
    f = lambda x: a @ x * 2.0
    transpose = ig.linear_transpose(f, ig.ShapeDtype((4,), np.float64))
    u = rng.normal(size=3)
    (ct,) = transpose(u)
    np.testing.assert_allclose(ct, 2.0 * a.T @ u, rtol=1e-14)
    x = rng.normal(size=4)
    assert np.isclose(u @ np.asarray(f(x)), ct @ x, rtol=1e-13)  # <u, f x> = <f^T u, x>


def test_tangents_and_cotangents_of_another_float_dtype_are_refused():
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="cotangent has dtype float16; the output's dtype is float32"):
        ig.vjp(lambda x: x * 2, x)[1](np.ones(3, np.float16))
    with pytest.raises(TypeError, match="tangent has dtype float64; its primal's dtype is float32"):
        ig.jvp(lambda x: x * 2, (x,), (np.ones(3),))
    with pytest.raises(ig.ShapeError, match=r"tangent shape \(3, 2\) differs from primal shape \(3,\)"):
        ig.linearize(lambda x: x * 2, x)[1](np.ones((3, 2), np.float32))
    # Python scalars are weakly typed: they take the primal's dtype, as in JAX.
    (ct,) = ig.vjp(lambda s: s * 2, np.float32(1.0))[1](1.0)
    assert ct.dtype == np.float32 and ct == 2.0


def test_grad_of_a_jitted_function_traces_it_once():
    """grad(jit(f)) keeps jit's cache across calls: f is traced once for one signature (JAX's
    behaviour; issue 24 reported a retrace on every call), and again for a new shape."""
    traces = []

    def f(x):
        traces.append(x.shape)
        return ig.sum(ig.sin(x) * x)

    g = ig.grad(ig.jit(f))
    x = np.linspace(-1.0, 1.0, 3)
    for _ in range(3):
        np.testing.assert_allclose(g(x), np.sin(x) + x * np.cos(x), rtol=1e-12)
    assert len(traces) == 1
    g(np.ones(4))
    assert len(traces) == 2
