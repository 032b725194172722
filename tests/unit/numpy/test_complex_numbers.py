"""complex64 and complex128 end to end: values against numpy (eager on the interpreter, `ig.jit`
on the CPU through nn-expand-complex), promotion against jax.numpy, and derivatives in float64
against JAX's convention (the gradient of a real loss w.r.t. z = x + iy is dL/dx - i dL/dy;
vjp of a holomorphic f maps a cotangent c to c f'(z)) and against central differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from irgrad.tracing.errors import DTypeError

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

COMPLEX = [np.complex64, np.complex128]
TOL = {np.complex64: 2e-5, np.complex128: 1e-12, np.float32: 2e-5, np.float64: 1e-12}


def crandn(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _check(got, want, dtype) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * scale)


# name -> (irgrad's function, numpy's), on complex arrays x (3, 4) and y (3, 4), w (4, 2)
PROGRAMS = {
    "add": (lambda x, y, w: x + y, lambda x, y, w: x + y),
    "subtract": (lambda x, y, w: x - y, lambda x, y, w: x - y),
    "multiply": (lambda x, y, w: x * y, lambda x, y, w: x * y),
    "divide": (lambda x, y, w: x / y, lambda x, y, w: x / y),
    "negative": (lambda x, y, w: -x, lambda x, y, w: -x),
    "exp": (lambda x, y, w: ig.exp(x), lambda x, y, w: np.exp(x)),
    "sin": (lambda x, y, w: ig.sin(x), lambda x, y, w: np.sin(x)),
    "cos": (lambda x, y, w: ig.cos(x), lambda x, y, w: np.cos(x)),
    "conj": (lambda x, y, w: ig.conj(x), lambda x, y, w: np.conj(x)),
    "method_conj": (lambda x, y, w: x.conj() * 1.0, lambda x, y, w: x.conj()),
    "real": (lambda x, y, w: ig.real(x), lambda x, y, w: np.real(x)),
    "imag": (lambda x, y, w: ig.imag(x), lambda x, y, w: np.imag(x)),
    "attributes": (lambda x, y, w: (x * y).real - (x * y).imag, lambda x, y, w: (x * y).real - (x * y).imag),
    "abs": (lambda x, y, w: ig.abs(x), lambda x, y, w: np.abs(x)),
    "angle": (lambda x, y, w: ig.angle(x), lambda x, y, w: np.angle(x)),
    "angle_deg": (lambda x, y, w: ig.angle(x, deg=True), lambda x, y, w: np.angle(x, deg=True)),
    "matmul": (lambda x, y, w: x @ w, lambda x, y, w: x @ w),
    "sum": (lambda x, y, w: ig.sum(x, axis=1), lambda x, y, w: np.sum(x, axis=1)),
    "mean": (lambda x, y, w: ig.mean(x), lambda x, y, w: np.mean(x)),
    "transpose_reshape": (lambda x, y, w: ig.reshape(x.T, (2, 6)), lambda x, y, w: np.reshape(x.T, (2, 6))),
    "slicing": (lambda x, y, w: x[1:, ::-2], lambda x, y, w: x[1:, ::-2]),
    "concatenate": (lambda x, y, w: ig.concatenate([x, y], axis=0), lambda x, y, w: np.concatenate([x, y], axis=0)),
    "broadcast": (lambda x, y, w: x[:1] * y[:, :1], lambda x, y, w: x[:1] * y[:, :1]),
    "where": (lambda x, y, w: ig.where(ig.real(x) > 0, x, y), lambda x, y, w: np.where(x.real > 0, x, y)),
    "scalar_ops": (lambda x, y, w: (x + 1j) * 2.5 - (0.5 - 2j) / x, lambda x, y, w: (x + 1j) * 2.5 - (0.5 - 2j) / x),
    "complex_from_parts": (lambda x, y, w: ig.real(x) + 1j * ig.imag(y), lambda x, y, w: x.real + 1j * y.imag),
    "chain": (
        lambda x, y, w: ig.exp(ig.sin(x) * ig.conj(y)) @ w,
        lambda x, y, w: np.exp(np.sin(x) * np.conj(y)) @ w,
    ),
}


def _args(dtype):
    rng = np.random.default_rng(sorted(COMPLEX, key=str).index(dtype))
    return crandn(rng, (3, 4), dtype), crandn(rng, (3, 4), dtype), crandn(rng, (4, 2), dtype)


def _numpy_dtype_fix(want, dtype):
    """numpy's Python-scalar promotion matches JAX's here except that numpy may widen; the
    expected dtype is the array's (complex64 stays complex64, as in jnp)."""
    want = np.asarray(want)
    return want.astype(np.real(np.zeros((), dtype)).dtype if want.dtype.kind == "f" else dtype)


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_match_numpy_eager_and_jit(name, dtype):
    fn, reference = PROGRAMS[name]
    args = _args(dtype)
    want = _numpy_dtype_fix(reference(*args), dtype)
    tol_dtype = dtype if want.dtype.kind == "c" else np.real(np.zeros((), dtype)).dtype.type
    _check(fn(*args), want, tol_dtype)
    _check(ig.jit(fn)(*args), want, tol_dtype)


@pytest.mark.parametrize(
    "a, b",
    [
        (np.complex64, np.float32), (np.complex64, np.float64), (np.complex64, np.float16),
        (np.complex64, np.int32), (np.complex64, np.complex128), (np.float64, np.complex64),
        (np.complex128, np.bool_), (np.int64, np.complex64),
    ],
)
def test_promotion_matches_jax(a, b):
    x, y = np.ones((2,), a), np.ones((2,), b)
    assert ig.add(x, y).dtype == jnp.add(x, y).dtype
    assert ig.jit(lambda p, q: p * q)(x, y).dtype == jnp.multiply(x, y).dtype


@pytest.mark.parametrize(
    "array_dtype, want",
    [(np.float32, np.complex64), (np.float64, np.complex128), (np.float16, np.complex64),
     (np.int32, np.complex64), (np.complex64, np.complex64), (np.complex128, np.complex128)],
)
def test_python_complex_scalars_are_weak(array_dtype, want):
    x = np.ones((3,), array_dtype)
    assert ig.add(x, 1j).dtype == want
    assert ig.jit(lambda v: v * (2 - 1j))(x).dtype == want
    # as a jit argument, the scalar is weak at full width: exact next to a complex128 array
    c = 0.1 + 0.7j
    got = ig.jit(lambda s, v: s + v)(c, np.zeros((2,), np.complex128))
    assert got.dtype == np.complex128 and got[0] == c


def test_parts_of_real_arrays_and_predicates():
    x = np.array([1.5, -2.0], np.float32)
    z = np.array([1 + 0j, 2 - 3j], np.complex64)
    _check(ig.real(x), x, np.float32)
    _check(ig.imag(x), np.zeros(2, np.float32), np.float32)
    _check(ig.conj(x), x, np.float32)
    _check(ig.angle(np.array([-1.0, 2.0])), np.angle(np.array([-1.0, 2.0])), np.float64)
    assert ig.iscomplex(z).tolist() == [False, True] and ig.isreal(z).tolist() == [True, False]
    assert ig.iscomplex(x).tolist() == [False, False] and ig.isreal(x).tolist() == [True, True]
    assert ig.iscomplexobj(z) and not ig.iscomplexobj(x) and ig.isrealobj(x) and not ig.isrealobj(z)


def test_conversions():
    z = np.array([1.5 + 2j, 0 - 3j, 0j], np.complex128)
    f = ig.jit(lambda v: (v.astype(np.complex64), v.astype(np.float32), v.astype(bool), ig.real(v).astype(np.complex128)))
    c64, f32, b, back = f(z)
    assert c64.dtype == np.complex64 and np.allclose(c64, z)
    assert f32.dtype == np.float32 and f32.tolist() == [1.5, 0.0, 0.0]
    assert b.tolist() == [True, True, False]
    assert back.dtype == np.complex128 and back.tolist() == [1.5, 0, 0]


# --- derivatives -------------------------------------------------------------------------------


def _loss(np_):
    def loss(z, w):
        a = np_.exp(z) * w / (z + 2.0) - np_.conj(z) * np_.sin(w)
        return np_.sum(np_.real(a) ** 2 + np_.imag(a * z)) + np_.sum(np_.abs(a)) + np_.sum(np_.real(np_.cos(z) @ w.T))
    return loss


def test_gradient_of_a_real_loss_matches_jax_and_finite_differences():
    rng = np.random.default_rng(7)
    z, w = crandn(rng, (3, 2), np.complex128), crandn(rng, (3, 2), np.complex128)
    want = jax.grad(_loss(jnp), argnums=(0, 1))(z, w)
    for grad in (ig.grad(_loss(ig), argnums=(0, 1)), ig.jit(ig.grad(_loss(ig), argnums=(0, 1)))):
        got = grad(z, w)
        for g, j in zip(got, want):
            assert g.dtype == np.complex128
            np.testing.assert_allclose(g, np.asarray(j), rtol=1e-10, atol=1e-10)
    # central differences along the real and the imaginary axis of one entry: dL/dx - i dL/dy
    loss, eps = _loss(np), 1e-6
    g = ig.grad(_loss(ig))(z, w)
    for idx in [(0, 0), (2, 1)]:
        dz = np.zeros_like(z)
        dz[idx] = eps
        dx = (loss(z + dz, w) - loss(z - dz, w)) / (2 * eps)
        dy = (loss(z + 1j * dz, w) - loss(z - 1j * dz, w)) / (2 * eps)
        np.testing.assert_allclose(g[idx], dx - 1j * dy, rtol=1e-6, atol=1e-6)


def test_vjp_and_jvp_of_holomorphic_and_non_holomorphic_functions_match_jax():
    rng = np.random.default_rng(3)
    z, c, t = (crandn(rng, (4,), np.complex128) for _ in range(3))
    for make in (lambda np_: lambda v: v * v * (1 + 2j) - np_.exp(v), lambda np_: lambda v: np_.conj(v) * np_.real(v)):
        out, vjp = ig.vjp(make(ig), z)
        out_j, vjp_j = jax.vjp(make(jnp), z)
        np.testing.assert_allclose(out, out_j, rtol=1e-12)
        np.testing.assert_allclose(vjp(c)[0], vjp_j(c)[0], rtol=1e-10, atol=1e-12)
        _, tangent = ig.jvp(make(ig), (z,), (t,))
        np.testing.assert_allclose(tangent, jax.jvp(make(jnp), (z,), (t,))[1], rtol=1e-10, atol=1e-12)
        jitted = ig.jit(lambda v, ct: ig.vjp(make(ig), v)[1](ct)[0])
        np.testing.assert_allclose(jitted(z, c), vjp_j(c)[0], rtol=1e-10, atol=1e-12)


def test_second_derivative_through_complex_intermediates():
    # f(x) = Re(exp(i x) * (1 + 2i)) = cos x - 2 sin x; f'' = -cos x + 2 sin x
    f = lambda x: ig.real(ig.exp(1j * x) * (1 + 2j))  # noqa: E731
    x = np.float64(0.3)
    assert ig.grad(ig.grad(f))(x) == pytest.approx(-np.cos(x) + 2 * np.sin(x), rel=1e-12)


def test_vmap_over_complex_arrays():
    rng = np.random.default_rng(5)
    z, w = crandn(rng, (5, 3), np.complex64), crandn(rng, (3,), np.complex64)
    got = ig.vmap(lambda v: ig.sum(v * w) + ig.conj(v[0]))(z)
    _check(got, (z * w).sum(axis=1) + np.conj(z[:, 0]), np.complex64)


# --- what is not supported yet says so ------------------------------------------------------


@pytest.mark.parametrize("fn", [ig.erf, ig.cbrt, ig.sinc])
def test_unsupported_functions_of_complex_arrays_raise_a_dtype_error(fn):
    z = np.array([1 + 1j], np.complex64)
    with pytest.raises(DTypeError, match=r"complex input \(dtype complex64, shape \(1,\)\) is not supported"):
        fn(z)


def test_functions_without_complex_support_never_drop_the_imaginary_part():
    # arctan2 and friends convert their operands to a float type: for complex ones that is
    # refused, where a silent convert would compute on the real part alone.
    z = np.array([0.5 + 0.25j], np.complex128)
    for fn in (lambda v: ig.arctan2(v, v), lambda v: ig.hypot(v, v)):
        with pytest.raises(DTypeError, match="would drop its imaginary part"):
            fn(z)
    assert ig.astype(z, np.float64).tolist() == [0.5]  # astype says so explicitly


def test_lax_complex_ops_have_lax_dtypes():
    x, y = np.array([1.0, 2.0], np.float32), np.array([3.0, -1.0])
    assert ig.lax.complex(x, x).dtype == np.complex64 and ig.lax.complex(y, y).dtype == np.complex128
    assert ig.lax.conj(x).dtype == jax.lax.conj(x).dtype == np.complex64
    with pytest.raises(DTypeError, match="takes a complex array"):
        ig.lax.real(x)


def test_gpu_pipeline_lowers_complex_programs_to_real_kernels():
    """No GPU is needed to lower: the gradient of a complex program reaches NVVM with no complex type."""
    from irgrad.pipelines import GPU_PIPELINE
    from irgrad.registry import run_pipeline

    z, w = np.ones((8, 4), np.complex64), np.ones((4, 3), np.complex64)
    program = ig.trace(ig.grad(lambda z, w: ig.sum(ig.abs(ig.exp(z) @ w))), z, w)
    module = program.module.clone()
    run_pipeline(module, GPU_PIPELINE)
    text = str(module)
    assert "complex" not in text and ("gpu.func" in text or "llvm.func" in text)
