"""`holomorphic=True` and `allow_int=True` of grad, value_and_grad, jacrev, jacfwd, jacobian and
hessian, as JAX defines them (jax/_src/api.py): f'(z) of a holomorphic function (the VJP with
cotangent 1, no conjugation) against jax's, eagerly and under ig.jit, on random complex128
inputs; JAX's dtype checks (complex inputs and outputs with holomorphic, a complex output an
error without it) with its messages; float0 zeros for integer inputs.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import irgrad as ig

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

BACKENDS = {"eager": lambda f: f, "jit": ig.jit}


def crandn(rng: np.random.Generator, shape, dtype=np.complex128) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


# Holomorphic scalar functions of a complex scalar, written once for both libraries.
SCALAR = {
    "polynomial": lambda np_, z: z ** 3 - 2 * z + 1,
    "exp_sin": lambda np_, z: np_.exp(z) * np_.sin(z),
    "log_sqrt": lambda np_, z: np_.log(z) / np_.sqrt(z + 2),
    "tanh_arcsin": lambda np_, z: np_.tanh(z) + np_.arcsin(z),
}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("name", sorted(SCALAR))
def test_grad_is_the_complex_derivative_as_jax(name, backend):
    f = SCALAR[name]
    for z in crandn(np.random.default_rng(1), (3,)):
        want = jax.grad(lambda v: f(jnp, v), holomorphic=True)(z)
        got = BACKENDS[backend](ig.grad(lambda v: f(ig, v), holomorphic=True))(z)
        assert np.asarray(got).dtype == np.complex128
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)


def test_value_and_grad_several_arguments_and_aux():
    rng = np.random.default_rng(2)
    z, w = crandn(rng, ()), crandn(rng, ())

    def f(np_):
        return lambda a, b: (np_.sin(a) * b ** 2, np_.abs(a))

    want = jax.value_and_grad(f(jnp), argnums=(0, 1), holomorphic=True, has_aux=True)(z, w)
    got = ig.value_and_grad(f(ig), argnums=(0, 1), holomorphic=True, has_aux=True)(z, w)
    (value, aux), grads = got
    (want_value, want_aux), want_grads = want
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    np.testing.assert_allclose(aux, want_aux, rtol=1e-13)
    for g, j in zip(grads, want_grads):
        np.testing.assert_allclose(g, np.asarray(j), rtol=1e-12)
    g, a = ig.grad(f(ig), holomorphic=True, has_aux=True)(z, w)
    np.testing.assert_allclose(g, np.asarray(want_grads[0]), rtol=1e-12)
    np.testing.assert_allclose(a, want_aux, rtol=1e-13)


def test_holomorphic_grad_is_not_the_real_loss_gradient():
    """grad(f, holomorphic=True) is f'(z) = 2z for f = z**2; the gradient of the real loss
    L = Im f = 2xy is, in JAX's convention, dL/dx - i dL/dy = 2y - 2ix. The two requests
    differ, and each is JAX's."""
    z = crandn(np.random.default_rng(3), ())
    np.testing.assert_allclose(ig.grad(lambda v: v ** 2, holomorphic=True)(z), 2 * z, rtol=1e-14)
    im = ig.grad(lambda v: ig.imag(v ** 2))(z)
    np.testing.assert_allclose(im, 2 * z.imag - 2j * z.real, rtol=1e-14)
    np.testing.assert_allclose(im, np.asarray(jax.grad(lambda v: jnp.imag(v ** 2))(z)), rtol=1e-14)


def _vector(np_):
    return lambda z: np_.stack([np_.sin(z[0]) * z[1], np_.exp(z[1] - z[2]), z[0] * z[1] * z[2], np_.log(z[2] + 3)])


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("mode", ["jacrev", "jacfwd", "jacobian"])
def test_jacobians_match_jax(mode, backend):
    z = crandn(np.random.default_rng(4), (3,))
    want = getattr(jax, mode)(_vector(jnp), holomorphic=True)(z)
    got = BACKENDS[backend](getattr(ig, mode)(_vector(ig), holomorphic=True))(z)
    assert np.asarray(got).shape == (4, 3) and np.asarray(got).dtype == np.complex128
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12, atol=1e-14)


def test_jacobians_with_pytrees_and_argnums_match_jax():
    rng = np.random.default_rng(5)
    a, b = crandn(rng, (2,)), crandn(rng, (2, 2))

    def f(np_):
        return lambda x, y: {"p": np_.tanh(y @ x), "q": np_.sum(x * x)}

    for mode in ("jacrev", "jacfwd"):
        want = getattr(jax, mode)(f(jnp), argnums=(0, 1), holomorphic=True)(a, b)
        got = getattr(ig, mode)(f(ig), argnums=(0, 1), holomorphic=True)(a, b)
        for key in ("p", "q"):
            for g, w in zip(got[key], want[key]):
                np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12, atol=1e-14)


def test_hessian_matches_jax():
    z = crandn(np.random.default_rng(6), (3,))

    def f(np_):
        return lambda v: np_.sum(np_.sin(v) * v[::-1]) + v[0] ** 3

    want = jax.hessian(f(jnp), holomorphic=True)(z)
    np.testing.assert_allclose(ig.hessian(f(ig), holomorphic=True)(z), np.asarray(want), rtol=1e-12, atol=1e-14)


def test_jacrev_of_a_real_function_of_complex_inputs_matches_jax():
    """Without holomorphic, jacrev takes complex inputs and real outputs (JAX's convention
    for each row: dL/dx - i dL/dy)."""
    z = crandn(np.random.default_rng(7), (3,))

    def f(np_):
        return lambda v: np_.stack([np_.abs(v[0] * v[1]) ** 2, np_.real(np_.exp(v[2])), np_.imag(v[0] * v[2])])

    np.testing.assert_allclose(ig.jacrev(f(ig))(z), np.asarray(jax.jacrev(f(jnp))(z)), rtol=1e-12, atol=1e-14)


def test_jacfwd_of_a_complex_output_of_real_inputs_matches_jax():
    x = np.random.default_rng(8).standard_normal(3)

    def f(np_):
        return lambda v: np_.exp(1j * v) * v

    np.testing.assert_allclose(ig.jacfwd(f(ig))(x), np.asarray(jax.jacfwd(f(jnp))(x)), rtol=1e-13, atol=1e-15)


# --- allow_int ------------------------------------------------------------------------------------


def test_allow_int_gives_float0_zeros_as_jax():
    def f(x, n):
        return x * n

    got = ig.grad(f, argnums=(0, 1), allow_int=True)(np.float64(2.0), np.int32(3))
    want = jax.grad(f, argnums=(0, 1), allow_int=True)(np.float64(2.0), np.int32(3))
    np.testing.assert_allclose(got[0], np.asarray(want[0]))
    assert got[1].dtype == jax.dtypes.float0 and got[1].shape == np.shape(want[1]) == ()
    n = np.arange(4, dtype=np.int32)
    (value, grads) = ig.value_and_grad(lambda x, k: ig.sum(x * k), argnums=(0, 1), allow_int=True)(np.ones(4), n)
    assert value == 6.0 and grads[1].dtype == jax.dtypes.float0 and grads[1].shape == (4,)
    np.testing.assert_allclose(grads[0], n)


def test_allow_int_under_jit_gives_integer_zeros():
    """The IR has no float0: under ig.jit the integer input's gradient is zeros of its dtype."""
    got = ig.jit(ig.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True))(np.float64(2.0), np.int32(3))
    assert float(got[0]) == 3.0 and np.asarray(got[1]).dtype == np.int32 and int(got[1]) == 0


def test_jacrev_allow_int_gives_integer_zero_blocks_as_jax():
    def f(x, n):
        return x * n[:2]

    x, n = np.array([1.5, -2.0]), np.arange(3)
    got = ig.jacrev(f, argnums=(0, 1), allow_int=True)(x, n)
    want = jax.jacrev(f, argnums=(0, 1), allow_int=True)(x, n)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert np.asarray(g).dtype == w.dtype and np.asarray(g).shape == w.shape
        np.testing.assert_array_equal(g, w)


# --- the errors: JAX's TypeErrors and messages --------------------------------------------------

ERRORS = {  # name -> (the transform of a library namespace, the argument)
    "grad-complex-output": (lambda lib: lib.grad(lambda v: v * 2), np.complex128(0.5 + 0.25j)),
    "grad-holomorphic-real-input": (lambda lib: lib.grad(lambda v: v * 2, holomorphic=True), np.float64(0.5)),
    "grad-holomorphic-real-output": (lambda lib: lib.grad(lambda v: (v * 2).real, holomorphic=True), np.complex128(1j)),
    "grad-holomorphic-int-input": (lambda lib: lib.grad(lambda v: v * 2, holomorphic=True), np.int32(3)),
    "value_and_grad-complex-output": (lambda lib: lib.value_and_grad(lambda v: v * 2), np.complex128(1j)),
    "grad-int-input": (lambda lib: lib.grad(lambda n: n * 2.0), np.int32(3)),
    "grad-int-output": (lambda lib: lib.grad(lambda v: (v > 0).astype(np.int32)), np.float64(0.5)),
    "jacrev-complex-output": (lambda lib: lib.jacrev(lambda v: v * 2), np.array([1j, 2.0])),
    "jacrev-holomorphic-real-output": (lambda lib: lib.jacrev(lambda v: (v * 2).real, holomorphic=True), np.array([1j])),
    "jacrev-int-input": (lambda lib: lib.jacrev(lambda v: v * 2.0), np.arange(3, dtype=np.int32)),
    "jacfwd-complex-input": (lambda lib: lib.jacfwd(lambda v: v * 2), np.array([1j, 2.0])),
    "jacfwd-holomorphic-real-input": (lambda lib: lib.jacfwd(lambda v: v * 2, holomorphic=True), np.ones(2)),
    "jacfwd-holomorphic-real-output": (lambda lib: lib.jacfwd(lambda v: (v * 2).real, holomorphic=True), np.array([1j])),
}  # fmt: skip


def _message(lib, name: str) -> str:
    make, argument = ERRORS[name]
    with pytest.raises(TypeError) as info:
        make(lib)(argument)
    return str(info.value)


def _as_jax_writes_it(message: str) -> str:
    """irgrad's message without what it adds to JAX's (the shape, the user's line), with its
    names for JAX's (ig.vjp for jax.vjp)."""
    message = re.sub(r" \(shape \([0-9, ]*\)\)", "", message)
    message = re.sub(r" \(at [^()]*\)$", "", message)
    return message.replace("ig.", "jax.").rstrip(".")


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_dtype_errors_are_jax_type_errors_with_its_messages(name):
    ours = _message(ig, name)
    assert "(at " in ours and "(shape (" in ours, ours
    assert _as_jax_writes_it(ours) == _message(jax, name).rstrip("."), ours


def test_non_scalar_output_is_jax_type_error():
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. Output had shape: \(2,\)"):
        ig.grad(lambda v: v * 2, holomorphic=True)(np.array([1j, 2j]))
    with pytest.raises(TypeError, match=r"extract the scalar with output.reshape\(\(\)\) or output\[0\]"):
        ig.grad(lambda v: v * 2)(np.array([1.0]))
