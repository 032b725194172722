"""ig.linalg.eig / eigvals of real non-symmetric matrices against numpy.linalg.eig and
jax.numpy.linalg.eig: eagerly (the interpreter: numpy) and under ig.jit (the CPU: LAPACK's geev),
f32/f64, conjugate pairs, real spectra, batches, 1x1, a diagonal matrix, integers, NaN; A v = v
diag(w) and unit columns checked as JAX's testEig does (eigenvectors compared up to a phase);
dtypes as JAX's; the errors (shapes, complex input, ig.grad, the GPU pipeline)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import irgrad as ig
from irgrad.autodiff.errors import AutodiffError
from irgrad.backends.gpu import compile_program
from irgrad.diagnostics import PassError

jax.config.update("jax_enable_x64", True)

MODES = ["eager", "jit"]
TOL = {np.float32: 2e-4, np.float64: 1e-10}


def run_eig(mode: str, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    fn = ig.linalg.eig if mode == "eager" else ig.jit(ig.linalg.eig)
    w, v = fn(a)
    return np.asarray(w), np.asarray(v)


def run_eigvals(mode: str, a: np.ndarray) -> np.ndarray:
    fn = ig.linalg.eigvals if mode == "eager" else ig.jit(ig.linalg.eigvals)
    return np.asarray(fn(a))


def matching(w: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """For each eigenvalue of w (last axis), the index of the nearest one of ref (the spectra are
    distinct, so this is a permutation, asserted)."""
    distance = np.abs(w.astype(np.complex128)[..., :, None] - ref.astype(np.complex128)[..., None, :])
    index = np.argmin(distance, axis=-1)
    assert (np.sort(index, axis=-1) == np.arange(w.shape[-1])).all(), "not a one-to-one match"
    return index


def check_residual(a: np.ndarray, w: np.ndarray, v: np.ndarray, dtype) -> None:
    """JAX's testEig check: ||A v - v diag(w)|| small relative to (n + 1) eps ||A||; unit columns."""
    n = a.shape[-1]
    eps = np.finfo(dtype).eps
    a64 = a.astype(np.float64)
    res = np.linalg.norm(a64 @ v - w[..., None, :] * v, axis=(-2, -1))
    scale = np.maximum(np.linalg.norm(a64, axis=(-2, -1)), 1.0)
    assert np.all(res / scale < 100 * (n + 1) * eps), res
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=50 * eps)


def assert_vectors_up_to_phase(v: np.ndarray, ref: np.ndarray, atol: float) -> None:
    """Each column of v is the matching column of ref times a unit complex number."""
    inner = np.sum(np.conj(ref) * v, axis=-2, keepdims=True)
    phase = inner / np.abs(inner)
    np.testing.assert_allclose(v, ref * phase, atol=atol)


def assert_matches(w, v, ref_w, ref_v, dtype) -> None:
    """Spectra matched eigenvalue by eigenvalue; vectors up to phase."""
    j = matching(w, ref_w)
    tol = TOL[dtype] * max(1.0, np.abs(ref_w).max())
    np.testing.assert_allclose(w, np.take_along_axis(ref_w, j, -1), atol=tol)
    assert_vectors_up_to_phase(v, np.take_along_axis(ref_v, j[..., None, :], -1), atol=100 * TOL[dtype])


def well_separated(rng, shape, dtype) -> np.ndarray:
    """Random matrices; a spectrum with distinct eigenvalues (almost surely), complex pairs included."""
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 4, 4), (1, 1), (8, 8)])
def test_eig_against_numpy_and_jax(mode, dtype, shape):
    rng = np.random.default_rng(sum(shape))
    a = well_separated(rng, shape, dtype)
    w, v = run_eig(mode, a)
    assert w.dtype == (np.complex64 if dtype == np.float32 else np.complex128)
    assert v.dtype == w.dtype and w.shape == shape[:-1] and v.shape == shape
    check_residual(a, w, v, dtype)
    ref_w, ref_v = np.linalg.eig(a)
    assert_matches(w, v, ref_w.astype(np.complex128), ref_v.astype(np.complex128), dtype)
    jw, jv = jnp.linalg.eig(jnp.asarray(a))
    assert jw.dtype == w.dtype
    assert_matches(w, v, np.asarray(jw), np.asarray(jv), dtype)


@pytest.mark.parametrize("mode", MODES)
def test_eig_f64_is_lapacks_exactly_as_numpy(mode):
    """numpy.linalg.eig calls LAPACK's dgeev too: the same order and the same vectors (unit norm,
    largest component real), not only up to phase."""
    a = np.random.default_rng(7).standard_normal((3, 6, 6))
    w, v = run_eig(mode, a)
    ref_w, ref_v = np.linalg.eig(a)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(v, ref_v, rtol=1e-12, atol=1e-12)
    largest = np.argmax(np.abs(v), axis=-2)
    np.testing.assert_array_equal(np.take_along_axis(v, largest[..., None, :], -2).imag, 0.0)


@pytest.mark.parametrize("mode", MODES)
def test_complex_conjugate_pairs(mode):
    """A rotation-scaling block: eigenvalues 1 +- 2i (adjacent, positive imaginary part first),
    eigenvectors conjugate to each other, next to real eigenvalues 3 and -0.5."""
    a = np.array([[1.0, -2.0, 0.3, 0.1], [2.0, 1.0, -0.2, 0.4], [0.0, 0.0, 3.0, 0.7], [0.0, 0.0, 0.0, -0.5]])
    w, v = run_eig(mode, a)
    pair = int(np.flatnonzero(np.abs(w.imag) > 0.5)[0])
    np.testing.assert_allclose(w[pair], 1 + 2j, atol=1e-12)
    np.testing.assert_allclose(w[pair + 1], 1 - 2j, atol=1e-12)
    np.testing.assert_allclose(v[:, pair + 1], np.conj(v[:, pair]), atol=1e-14)
    np.testing.assert_allclose(np.sort(w.real[np.abs(w.imag) < 1e-12]), [-0.5, 3.0], atol=1e-12)
    check_residual(a, w, v, np.float64)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_real_spectrum(mode, dtype):
    """A matrix similar to diag(1..5) (real, distinct eigenvalues): imaginary parts exactly zero."""
    rng = np.random.default_rng(11)
    s = rng.standard_normal((5, 5)) + 5 * np.eye(5)
    a = (s @ np.diag(np.arange(1.0, 6.0)) @ np.linalg.inv(s)).astype(dtype)
    w, v = run_eig(mode, a)
    np.testing.assert_array_equal(w.imag, 0.0)
    np.testing.assert_array_equal(v.imag, 0.0)
    np.testing.assert_allclose(np.sort(w.real), np.arange(1.0, 6.0), rtol=1e3 * TOL[dtype])
    check_residual(a, w, v, dtype)
    jw, jv = jnp.linalg.eig(jnp.asarray(a))
    assert_matches(w, v, np.asarray(jw), np.asarray(jv), dtype)


@pytest.mark.parametrize("mode", MODES)
def test_diagonal_matrix(mode):
    """A diagonal matrix: its diagonal in order and the identity's columns, as LAPACK and JAX."""
    d = np.array([3.0, -1.0, 2.5, 0.0])
    w, v = run_eig(mode, np.diag(d))
    np.testing.assert_array_equal(w, d.astype(np.complex128))
    np.testing.assert_array_equal(v, np.eye(4, dtype=np.complex128))
    jw, jv = jnp.linalg.eig(jnp.diag(jnp.asarray(d)))
    np.testing.assert_array_equal(w, np.asarray(jw))
    np.testing.assert_array_equal(v, np.asarray(jv))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_eigvals_is_eigs_values(mode, dtype):
    a = np.random.default_rng(5).standard_normal((2, 5, 5)).astype(dtype)
    got = run_eigvals(mode, a)
    w, _ = run_eig(mode, a)
    np.testing.assert_array_equal(got, w)
    jw = np.asarray(jnp.linalg.eigvals(jnp.asarray(a)))
    assert got.dtype == jw.dtype
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(jw), atol=TOL[dtype] * 10)


@pytest.mark.parametrize("mode", MODES)
def test_integers_give_complex64(mode):
    """Integers become float32, so the results are complex64 (JAX's dtype without x64)."""
    a = np.array([[2, -3, 1], [4, 0, 5], [1, 1, -2]], np.int32)
    w, v = run_eig(mode, a)
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    ref = np.linalg.eigvals(a.astype(np.float64))
    np.testing.assert_allclose(np.sort_complex(w.astype(np.complex128)), np.sort_complex(ref), atol=1e-4)
    with jax.enable_x64(False):
        assert jnp.linalg.eigvals(jnp.asarray(a)).dtype == w.dtype


@pytest.mark.parametrize("mode", MODES)
def test_non_finite_matrix_is_all_nan(mode):
    a = np.random.default_rng(6).standard_normal((3, 4, 4))
    a[1, 2, 0] = np.nan
    a[2, 0, 3] = np.inf
    w, v = run_eig(mode, a)
    for x in (w[1:], v[1:]):
        assert np.isnan(x.real).all() and np.isnan(x.imag).all()
    ref_w, ref_v = np.linalg.eig(a[0])
    np.testing.assert_allclose(w[0], ref_w, atol=1e-12)
    np.testing.assert_allclose(v[0], ref_v, atol=1e-12)


def test_vmap():
    a = np.random.default_rng(8).standard_normal((3, 4, 4))
    got = np.asarray(ig.vmap(ig.linalg.eigvals)(a))
    np.testing.assert_allclose(got, np.linalg.eigvals(a), atol=1e-12)


def test_shape_and_dtype_errors():
    with pytest.raises(ig.ShapeError, match=r"eig: expected a square matrix .* got \(2, 3\)"):
        ig.linalg.eig(np.zeros((2, 3)))
    with pytest.raises(ig.ShapeError, match=r"eigvals: expected a square matrix .* got \(3,\)"):
        ig.linalg.eigvals(np.zeros(3))
    with pytest.raises(ig.DTypeError, match=r"eig: complex input \(dtype complex128, shape \(2, 2\)\) is not supported"):
        ig.linalg.eig(np.eye(2) + 1j)
    with pytest.raises(ig.DTypeError, match=r"eigvals: dtype float16 is not supported"):
        ig.linalg.eigvals(np.eye(2, dtype=np.float16))


@pytest.mark.parametrize("how", ["grad", "jit_grad", "jvp"])
def test_derivative_is_a_clear_error(how):
    """No derivative yet: ig.grad / ig.jvp through eig say so, naming the op (not a wrong number)."""
    a = np.random.default_rng(9).standard_normal((3, 3))

    def loss(x):
        w, v = ig.linalg.eig(x)
        return ig.sum(ig.real(w)) + ig.sum(ig.imag(v))

    with pytest.raises(AutodiffError, match=r"nn\.eig .*derivative of eig/eigvals .*not implemented yet"):
        if how == "grad":
            ig.grad(loss)(a)
        elif how == "jit_grad":
            ig.jit(ig.grad(loss))(a)
        else:
            ig.jvp(loss, (a,), (np.ones_like(a),))


def test_gpu_pipeline_refuses_eig():
    """The GPU has no eig (no reference loop to inline): nn-expand-factorizations{outline=false}
    names the op; compiling for the GPU needs no GPU up to that point."""
    program = ig.trace(ig.linalg.eig, np.eye(3))
    with pytest.raises(PassError, match=r"'nn\.eig' op nn-expand-factorizations\{outline=false\}: nn\.eig of 3x3xf64 "
                                        r"has no reference loop"):
        compile_program(program, check_ptx=False)


def test_jit_calls_lapack_geev():
    """Under ig.jit the eigendecomposition is one blas.geev per matrix (LAPACK), no loop."""
    text = ig.jit(ig.linalg.eig).lower(np.zeros((2, 4, 4))).as_text("loops")
    assert text.count("blas.geev") == 1 and "scf.for" in text
    assert 'kind = "geev"' in text


EIG_TEXT = """
func.func @main(%a: tensor<2x5x5xf64>) -> (tensor<2x5x2xf64>, tensor<2x5x5x2xf64>) {
  %w, %v = nn.eig %a : (tensor<2x5x5xf64>) -> (tensor<2x5x2xf64>, tensor<2x5x5x2xf64>)
  func.return %w, %v : tensor<2x5x2xf64>, tensor<2x5x5x2xf64>
}
"""


@pytest.mark.parametrize("stage", ["linalg", "bufferized", "loops"])
def test_every_stage_runs_on_the_interpreter(stage):
    """The CPU pipeline's geev declaration runs on the interpreter at every stage (numpy as the
    tagged reference, then blas.geev): numpy.linalg.eig's values in the (re, im) pairs layout."""
    from irgrad.backends.interpreter import run_function
    from irgrad.context import make_context
    from irgrad.diagnostics import parse_module
    from irgrad.registry import lower

    a = np.random.default_rng(10).standard_normal((2, 5, 5))
    lowered = lower(parse_module(make_context(), EIG_TEXT), stage)
    if stage == "linalg":
        w, v = run_function(lowered, "main", [a])
    else:  # results in caller-provided buffers
        w, v = np.full((2, 5, 2), -7.0), np.full((2, 5, 5, 2), -7.0)
        run_function(lowered, "main", [a, w, v])
    ref_w, ref_v = np.linalg.eig(a)
    np.testing.assert_allclose(w[..., 0] + 1j * w[..., 1], ref_w, atol=1e-12)
    np.testing.assert_allclose(v[..., 0] + 1j * v[..., 1], ref_v, atol=1e-12)
