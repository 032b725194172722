"""Complex log, sqrt, rsqrt, tanh, tan, sinh, cosh, log1p, expm1, exp2, log2, log10, reciprocal,
square, power, sign and comparisons: values against numpy (eager on the interpreter, which runs
the nn ops with numpy, and `ig.jit` on the CPU through nn-expand-complex's real formulas),
principal branches and signed zeros, precision at extreme magnitudes, and derivatives against
jax.grad / jax.jvp (JAX's convention: the gradient of a real loss w.r.t. z = x + iy is
dL/dx - i dL/dy) and central differences.
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
TOL = {np.complex64: 1e-5, np.complex128: 1e-12}
BACKENDS = {"eager": lambda f: f, "jit": ig.jit}


def crandn(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _inputs(dtype) -> np.ndarray:
    """Random values of several magnitudes (small ones test log1p/expm1/sinh's digits)."""
    rng = np.random.default_rng(11)
    z = crandn(rng, (24,), np.complex128)
    return np.concatenate([z, 1e-3 * z[:6], 1e-8 * z[:6], 8 * z[:6]]).astype(dtype)


def _exponent(dtype) -> np.ndarray:
    return crandn(np.random.default_rng(12), (42,), dtype)


# name -> (irgrad's function, reference's function on the module `np_`). The reference is numpy,
# except log1p: numpy's complex log1p is log(1 + z), which loses a small z's digits; JAX's is not.
FUNCTIONS = {
    "log": (ig.log, lambda np_: np_.log),
    "sqrt": (ig.sqrt, lambda np_: np_.sqrt),
    "rsqrt": (ig.rsqrt, lambda np_: lambda v: 1 / np_.sqrt(v)),
    "tanh": (ig.tanh, lambda np_: np_.tanh),
    "tan": (ig.tan, lambda np_: np_.tan),
    "sinh": (ig.sinh, lambda np_: np_.sinh),
    "cosh": (ig.cosh, lambda np_: np_.cosh),
    "expm1": (ig.expm1, lambda np_: np_.expm1),
    "exp2": (ig.exp2, lambda np_: np_.exp2),
    "log2": (ig.log2, lambda np_: np_.log2),
    "log10": (ig.log10, lambda np_: np_.log10),
    "reciprocal": (ig.reciprocal, lambda np_: np_.reciprocal),
    "square": (ig.square, lambda np_: np_.square),
    "sign": (ig.sign, lambda np_: np_.sign),
    "power_complex": (lambda v: ig.power(v, v[::-1] * 0.5), lambda np_: lambda v: np_.power(v, v[::-1] * 0.5)),
    "power_real": (lambda v: ig.power(v, 2.5), lambda np_: lambda v: v ** 2.5),
    "power_int": (lambda v: ig.power(v, 7), lambda np_: lambda v: v ** 7),
    "power_negative_int": (lambda v: ig.power(v, -3), lambda np_: lambda v: v ** -3),
    "rpow": (lambda v: ig.power(1.5, v), lambda np_: lambda v: np_.power(1.5, v)),
}
REFERENCE = {"log1p": jnp}


def _reference(name, fn, v):
    """The reference in complex128, rounded to v's dtype (numpy's complex64 functions are
    themselves only as accurate as their float32 parts)."""
    np_ = REFERENCE.get(name, np)
    with np.errstate(all="ignore"):
        return np.asarray(fn(np_)(v.astype(np.complex128))).astype(v.dtype)


FUNCTIONS["log1p"] = (ig.log1p, lambda np_: np_.log1p)


def _close(got, want, dtype) -> None:
    assert_complex_close(got, want, TOL[dtype])


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_match_numpy(name, dtype, backend):
    fn, reference = FUNCTIONS[name]
    v = _inputs(dtype)
    _close(BACKENDS[backend](fn)(v), _reference(name, reference, v), dtype)


# --- branches, signed zeros, special values and extreme magnitudes ---------------------------

NEG0 = -0.0
SPECIAL = np.array([
    complex(-4, 0), complex(-4, NEG0), complex(0, 0), complex(NEG0, 0), complex(0, NEG0), complex(NEG0, NEG0),
    complex(-1, 1e-300), complex(-1, -1e-300), complex(2, NEG0), complex(0, -3), complex(0, 5), complex(-2, -3),
    complex(np.inf, 1), complex(-np.inf, 1), complex(1, np.inf), complex(1, -np.inf), complex(np.nan, 1),
    complex(1e-310, 1e-310), complex(1e-300, -2e-300), complex(1e300, 1e300), complex(-1e308, 1e308),
])  # fmt: skip


def _same_bits(got, want) -> None:
    """Equal values (NaN where numpy's is), and the sign of every zero part too."""
    assert_same_signed_values(got, want, rtol=1e-13)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("name", ["log", "sqrt"])
def test_principal_branches_and_signed_zeros_match_numpy(name, backend):
    fn = {"log": ig.log, "sqrt": ig.sqrt}[name]
    with np.errstate(all="ignore"):
        want = getattr(np, name)(SPECIAL)
    _same_bits(BACKENDS[backend](fn)(SPECIAL), want)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_tanh_far_out_and_at_infinity(backend):
    z = np.array([complex(30, 1), complex(-400, 2), complex(800, -1), complex(np.inf, 3), complex(-np.inf, -2),
                  complex(0.5, 1.5707963267948966), complex(1e-9, 3)])  # fmt: skip
    _close(BACKENDS[backend](ig.tanh)(z), np.tanh(z), np.complex128)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_log_near_the_unit_circle_keeps_its_digits(backend):
    # log|z| for |z| = 1 + e: hi^2 + lo^2 - 1 cancels to e; a plain log(hypot) or log1p of it in
    # working precision keeps ~1e-16 / e of its digits. The reference is mpmath's, on the rounded z.
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(4)
    e, t = 10.0 ** rng.uniform(-14, -4, 20) * rng.choice([-1, 1], 20), rng.uniform(-3, 3, 20)
    z = (1 + e) * np.exp(1j * t)
    with mpmath.workdps(40):
        want = np.array([float(mpmath.log(abs(mpmath.mpc(v.real, v.imag)))) for v in z])
    got = BACKENDS[backend](ig.log)(z)
    np.testing.assert_allclose(got.real, want, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got.imag, np.angle(z), rtol=1e-13)


# Eagerly the functions (numpy arrays' own operators would run numpy); under jit the operators.
POWERS = {
    "eager": lambda v: (ig.power(v, 0), ig.power(v, 2), ig.power(v, 5), ig.power(v, 2.0)),
    "jit": ig.jit(lambda v: (v ** 0, v ** 2, v ** 5, v ** 2.0)),
}
COMPARISONS = {
    "eager": lambda x, y: (ig.equal(x, y), ig.not_equal(x, y), ig.less(x, y), ig.less_equal(x, y),
                           ig.greater(x, y), ig.greater_equal(x, y)),
    "jit": ig.jit(lambda x, y: (x == y, x != y, x < y, x <= y, x > y, x >= y)),
}  # fmt: skip


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_integer_powers_are_products_as_jax(backend):
    z = np.array([1 + 2j, -1.5 + 0.5j, 0j, 3 - 1j])
    got = POWERS[backend](z)
    for g, want in zip(got, (jnp.power(z, 0), jnp.power(z, 2), jnp.power(z, 5), jnp.power(z, 2.0))):
        np.testing.assert_allclose(g, np.asarray(want), rtol=1e-13, atol=1e-13)
    assert np.asarray(got[1])[2] == 0 and np.asarray(got[0]).tolist() == [1, 1, 1, 1]
    # x ** 0 for complex exponents at z = 0: 1; 0 ** w with Re w > 0: 0 (numpy's values)
    zero = np.zeros(2, np.complex128)
    assert np.asarray(BACKENDS[backend](ig.power)(zero, np.array([0j, 2 + 0j]))).tolist() == [1, 0]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_comparisons_of_complex_values_follow_jax(backend):
    a = np.array([1 + 2j, 1 + 2j, 1 + 3j, 2 + 0j, -1 - 1j, complex(np.nan, 0)])
    b = np.array([1 + 2j, 1 + 1j, 1 + 2j, 1 + 5j, -1 + 1j, 0j])
    want = (jnp.equal(a, b), jnp.not_equal(a, b), jnp.less(a, b), jnp.less_equal(a, b), jnp.greater(a, b),
            jnp.greater_equal(a, b))  # fmt: skip
    with np.errstate(invalid="ignore"):
        got = COMPARISONS[backend](a, b)
    for g, w in zip(got, want):
        assert np.asarray(g).tolist() == np.asarray(w).tolist()
    assert ig.equal(a, a.real).tolist() == (a == a.real).tolist()  # a real operand is promoted


# --- derivatives --------------------------------------------------------------------------------

GRADIENTS = {  # name -> function of (np_, v)
    "log": lambda np_, v: np_.log(v), "sqrt": lambda np_, v: np_.sqrt(v), "tanh": lambda np_, v: np_.tanh(v),
    "tan": lambda np_, v: np_.tan(v), "sinh": lambda np_, v: np_.sinh(v), "cosh": lambda np_, v: np_.cosh(v),
    "log1p": lambda np_, v: np_.log1p(v), "expm1": lambda np_, v: np_.expm1(v),
    "reciprocal": lambda np_, v: np_.reciprocal(v), "square": lambda np_, v: np_.square(v),
    "exp2": lambda np_, v: np_.exp2(v), "log10": lambda np_, v: np_.log10(v),
    "power": lambda np_, v: np_.power(v, v[::-1] + 0.5j), "power_int": lambda np_, v: v ** 6,
    "power_real": lambda np_, v: v ** 1.7, "sign": lambda np_, v: np_.sign(v) * v,
}  # fmt: skip


def _loss(np_, name, c):
    f = GRADIENTS[name]
    return lambda v: np_.sum(np_.abs(f(np_, v)) ** 2) + np_.sum(np_.real(f(np_, v) * c))


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradient_and_jvp_match_jax(name, backend):
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    z, c, t = (crandn(rng, (5,), np.complex128) for _ in range(3))
    want = jax.grad(_loss(jnp, name, c))(z)
    got = BACKENDS[backend](ig.grad(_loss(ig, name, c)))(z)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-10, atol=1e-10)
    f = lambda np_: lambda v: GRADIENTS[name](np_, v)  # noqa: E731
    _, tangent = ig.jvp(f(ig), (z,), (t,))
    np.testing.assert_allclose(tangent, jax.jvp(f(jnp), (z,), (t,))[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["log", "sqrt", "tanh", "power"])
def test_gradient_matches_central_differences(name):
    rng = np.random.default_rng(8)
    z, c = crandn(rng, (4,), np.complex128), crandn(rng, (4,), np.complex128)
    loss, eps = _loss(np, name, c), 1e-6
    g = ig.grad(_loss(ig, name, c))(z)
    for k in range(4):
        dz = np.zeros_like(z)
        dz[k] = eps
        dx = (loss(z + dz) - loss(z - dz)) / (2 * eps)
        dy = (loss(z + 1j * dz) - loss(z - 1j * dz)) / (2 * eps)
        np.testing.assert_allclose(g[k], dx - 1j * dy, rtol=1e-6, atol=1e-6)


def test_power_gradient_in_both_operands_matches_jax():
    rng = np.random.default_rng(9)
    z, w = crandn(rng, (4,), np.complex128), crandn(rng, (4,), np.complex128)
    loss = lambda np_: lambda a, b: np_.sum(np_.abs(np_.power(a, b)) ** 2)  # noqa: E731
    want = jax.grad(loss(jnp), argnums=(0, 1))(z, w)
    for grad in (ig.grad(loss(ig), argnums=(0, 1)), ig.jit(ig.grad(loss(ig), argnums=(0, 1)))):
        for g, j in zip(grad(z, w), want):
            np.testing.assert_allclose(g, np.asarray(j), rtol=1e-10, atol=1e-12)


def test_vmap_of_complex_functions():
    z = crandn(np.random.default_rng(2), (3, 4), np.complex128)
    got = ig.vmap(lambda v: ig.sqrt(ig.log(v)) + ig.tanh(v) ** 2)(z)
    np.testing.assert_allclose(got, np.sqrt(np.log(z)) + np.tanh(z) ** 2, rtol=1e-12)
