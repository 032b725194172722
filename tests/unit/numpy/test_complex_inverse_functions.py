"""Complex arcsin, arccos, arctan, arcsinh, arccosh, arctanh (and their numpy-2 and lax names)
and the logistic: values against numpy (eager on the interpreter and under `ig.jit` through
nn-expand-complex's real formulas), in complex64 and complex128, on random inputs, on both
sides of every branch cut (signed zeros included), near the branch points and at tiny and huge
magnitudes (catrig's regions); derivatives against jax.grad of a real loss and jax.jvp.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from _complex_util import assert_complex_close, assert_same_signed_values

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

COMPLEX = [np.complex64, np.complex128]
TOL = {np.complex64: 2e-6, np.complex128: 1e-13}
BACKENDS = {"eager": lambda f: f, "jit": ig.jit}

# name -> (irgrad's function, numpy's). The logistic's reference is its formula (JAX's).
FUNCTIONS = {
    "arcsin": (ig.arcsin, np.arcsin), "arccos": (ig.arccos, np.arccos), "arctan": (ig.arctan, np.arctan),
    "arcsinh": (ig.arcsinh, np.arcsinh), "arccosh": (ig.arccosh, np.arccosh), "arctanh": (ig.arctanh, np.arctanh),
    "sigmoid": (ig.sigmoid, lambda v: 1 / (1 + np.exp(-v))),
}  # fmt: skip


def crandn(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _random(dtype) -> np.ndarray:
    """Random values of several magnitudes."""
    z = crandn(np.random.default_rng(21), (24,), np.complex128)
    return np.concatenate([z, 1e-4 * z[:6], 1e-9 * z[:6], 30 * z[:6]]).astype(dtype)


def _reference(fn, v: np.ndarray) -> np.ndarray:
    """numpy in complex128 on v's values, rounded to v's dtype."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(v.astype(np.complex128))).astype(v.dtype)


def _close(got, want, dtype) -> None:
    assert_complex_close(got, want, TOL[dtype])


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_match_numpy(name, dtype, backend):
    fn, reference = FUNCTIONS[name]
    v = _random(dtype)
    _close(BACKENDS[backend](fn)(v), _reference(reference, v), dtype)


def test_aliases_are_the_same_functions():
    assert (ig.asin, ig.acos, ig.atan) == (ig.arcsin, ig.arccos, ig.arctan)
    assert (ig.asinh, ig.acosh, ig.atanh) == (ig.arcsinh, ig.arccosh, ig.arctanh)
    assert (ig.lax.asin, ig.lax.acos, ig.lax.atan, ig.lax.logistic) == (ig.arcsin, ig.arccos, ig.arctan, ig.sigmoid)


# --- branch cuts, branch points, signed zeros, extreme magnitudes -----------------------------

NEG0 = -0.0
# Both sides of each cut (the real axis past +-1, the imaginary axis past +-i), the branch points
# and their neighbourhoods, the unit circle, tiny and huge parts (each of catrig's regions).
HARD = np.array([
    complex(2, 0), complex(2, NEG0), complex(-2, 0), complex(-2, NEG0), complex(0, 2), complex(NEG0, 2),
    complex(0, -2), complex(NEG0, -2), complex(0.5, 0), complex(0.5, NEG0), complex(0, 0.5), complex(NEG0, -0.5),
    complex(0, 0), complex(NEG0, 0), complex(0, NEG0), complex(NEG0, NEG0), complex(1.5, 1e-300),
    complex(1.5, -1e-300), complex(-3, 1e-20), complex(1e-300, 3), complex(-1e-300, -3), complex(1, 1e-20),
    complex(1, -1e-20), complex(-1, 1e-9), complex(1e-20, 1), complex(1e-20, 1.0000001), complex(1e-20, 0.9999999),
    complex(0.99999999, 1e-9), complex(1.00000001, 1e-9), complex(1e-300, 1e-300), complex(1e-10, 1e-12),
    complex(-1e-160, 2e-160), complex(3e7, 1), complex(1, 1e8), complex(1e20, 1e20), complex(-1e300, 1e300),
    complex(1e200, -3), complex(-3, 1e-200), complex(1e308, 1e-308), complex(0.3, 0.99), complex(-0.7, 0.7),
    complex(np.cos(1) + 1e-12, np.sin(1)), complex(0.6, 0.8), complex(9, 1e-3), complex(1e-3, 11),
])  # fmt: skip
INVERSE = ["arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh"]


def _same_bits(got, want) -> None:
    """Equal values within a few ulp, and the sign of every zero part too."""
    assert_same_signed_values(got, want, rtol=2e-14)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("name", INVERSE)
def test_branch_cuts_signed_zeros_and_extreme_magnitudes_match_numpy(name, backend):
    fn, reference = FUNCTIONS[name]
    with np.errstate(all="ignore"):
        want = reference(HARD)
    _same_bits(BACKENDS[backend](fn)(HARD), want)


@pytest.mark.parametrize("name", INVERSE)
def test_branch_cuts_in_complex64(name):
    fn, reference = FUNCTIONS[name]
    hard = HARD[(np.abs(HARD.real) < 1e30) & (np.abs(HARD.imag) < 1e30)].astype(np.complex64)
    got = np.asarray(fn(hard))
    want = _reference(reference, hard)
    np.testing.assert_allclose(got, want, rtol=4e-6, atol=1e-30)


@pytest.mark.parametrize("name", ["arcsin", "arcsinh", "arctanh"])
def test_small_arguments_keep_their_digits(name):
    # f(z) = z (1 + O(z**2)): a naive log(z + sqrt(z**2 + 1)) would give 0 or lose most digits.
    fn, _ = FUNCTIONS[name]
    z = np.array([1e-9 + 2e-9j, -3e-12 + 1e-13j, 1e-200 - 1e-201j])
    np.testing.assert_allclose(fn(z), z, rtol=1e-15)


def test_logistic_far_out_matches_jax():
    z = np.array([complex(30, 1), complex(-30, 2), complex(-600, 0.5), complex(700, -1), complex(1e-9, 3)])
    np.testing.assert_allclose(ig.sigmoid(z), np.asarray(jax.nn.sigmoid(z)), rtol=1e-13)


# --- derivatives --------------------------------------------------------------------------------

DERIVATIVES = {  # name -> function of (module, v), the same for irgrad and jax.numpy
    "arcsin": lambda np_, v: np_.arcsin(v), "arccos": lambda np_, v: np_.arccos(v),
    "arctan": lambda np_, v: np_.arctan(v), "arcsinh": lambda np_, v: np_.arcsinh(v),
    "arccosh": lambda np_, v: np_.arccosh(v) if np_ is ig else _jax_acosh(v),
    "arctanh": lambda np_, v: np_.arctanh(v),
    "sigmoid": lambda np_, v: (ig.sigmoid if np_ is ig else jax.nn.sigmoid)(v),
}  # fmt: skip


def _jax_acosh(v):
    """The principal acosh, log(z + sqrt(z - 1) sqrt(z + 1)), in jax.numpy: jnp.arccosh's values,
    but its derivative 1 / (sqrt(z - 1) sqrt(z + 1)). jnp.arccosh's derivative rule is
    rsqrt(z**2 - 1), which has the wrong sign where Re z < 0 (test_jax_arccosh_derivative_...)."""
    return jnp.log(v + jnp.sqrt(v - 1) * jnp.sqrt(v + 1))


def _loss(np_, name, c):
    f = DERIVATIVES[name]
    return lambda v: np_.sum(np_.abs(f(np_, v)) ** 2) + np_.sum(np_.real(f(np_, v) * c))


def _points(name) -> np.ndarray:
    """Random points, and points on the axes off the cuts (where a plain abs would drop a
    derivative) and of small and large size."""
    rng = np.random.default_rng(sum(map(ord, name)))
    on_axes = np.array([0.4 + 0j, -0.3 + 0j, 0.2j, complex(NEG0, -0.6), 3e-5 + 2e-5j, 40 - 25j])
    if name == "arccosh":
        on_axes = np.array([1.6 + 0j, 3 + 0j, 0.2j, complex(NEG0, -0.6), 3e-5 + 2e-5j, 40 - 25j])
    return np.concatenate([crandn(rng, (6,), np.complex128), on_axes])


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_gradient_of_a_real_loss_matches_jax(name, backend):
    z = _points(name)
    c = crandn(np.random.default_rng(5), z.shape, np.complex128)
    want = jax.grad(_loss(jnp, name, c))(z)
    got = BACKENDS[backend](ig.grad(_loss(ig, name, c)))(z)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_jvp_matches_jax(name):
    z = _points(name)
    t = crandn(np.random.default_rng(6), z.shape, np.complex128)
    f = lambda np_: lambda v: DERIVATIVES[name](np_, v)  # noqa: E731
    out, tangent = ig.jvp(f(ig), (z,), (t,))
    want_out, want_tangent = jax.jvp(f(jnp), (z,), (t,))
    np.testing.assert_allclose(out, want_out, rtol=1e-13)
    np.testing.assert_allclose(tangent, want_tangent, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["arcsin", "arctanh", "sigmoid"])
def test_gradient_matches_central_differences(name):
    z = crandn(np.random.default_rng(7), (3,), np.complex128)
    ig.check_grads(lambda v: DERIVATIVES[name](ig, v), (z,), order=2, modes=("fwd", "rev"))


def test_complex64_gradient_matches_jax():
    z = crandn(np.random.default_rng(3), (5,), np.complex64)
    def loss(np_):
        return lambda v: np_.sum(np_.abs(np_.arcsin(v) + np_.arctanh(v) * np_.arccos(v) - np_.arcsinh(v)) ** 2)

    got = ig.grad(loss(ig))(z)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.asarray(jax.grad(loss(jnp))(z)), rtol=1e-4, atol=1e-5)


def test_jax_arccosh_derivative_differs_where_the_real_part_is_negative():
    """irgrad's arccosh'(z) is the derivative of the function (central differences of numpy's
    arccosh); JAX's rule rsqrt(z**2 - 1) is its negative where Re z < 0. Fails once JAX agrees."""
    z = np.array([-1.2 + 0.5j, -0.3 - 2j, 1.5 + 1j])
    h = 1e-7
    central = (np.arccosh(z + h) - np.arccosh(z - h)) / (2 * h)
    ours = ig.vmap(ig.grad(lambda v: ig.real(ig.arccosh(v))))(z)
    np.testing.assert_allclose(ours, central, rtol=1e-6)  # grad of Re f is f' (JAX's convention)
    theirs = np.asarray(jax.vmap(jax.grad(jnp.arccosh, holomorphic=True))(z))
    np.testing.assert_allclose(theirs[:2], -central[:2], rtol=1e-6)
    np.testing.assert_allclose(theirs[2], central[2], rtol=1e-6)
