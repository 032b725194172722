"""irgrad_lapack_{s,d}geev (irgrad/backends/cpu/shims/lapack/geev.ll), called through ctypes on
numpy arrays: eigenvalues and unit right eigenvectors in the (re, im) pairs layout, against
numpy.linalg.eig (LAPACK's dgeev: the same vectors, so f64 agrees to roundoff) and, for f32,
scipy's sgeev; strided rows and padding left alone, conjugate pairs unpacked, the failure
convention (NaN), n = 0; and the numpy callback with IRGRAD_LAPACK=none, same contract."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import llvmlite.binding as llvm
import numpy as np
import pytest
import scipy.linalg.lapack

from irgrad.backends.cpu.lapack import install_lapack, lapack_info

pytestmark = pytest.mark.skipif(not lapack_info().available, reason=f"no LAPACK: {lapack_info().reason}")

I64, PTR = ctypes.c_int64, ctypes.c_void_p
P = {np.float32: "s", np.float64: "d"}
PAD = 3


def geev(dtype):
    install_lapack()
    address = llvm.address_of_symbol(f"irgrad_lapack_{P[dtype]}geev")
    assert address
    return ctypes.CFUNCTYPE(None, I64, PTR, I64, PTR, PTR, I64)(address)


def call(dtype, a: np.ndarray, pad: int = PAD) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(w complex, v complex, a's buffer after the call, v's buffer) with `pad` extra columns
    (filled with -7) in a's and v's row-major buffers."""
    n = a.shape[0]
    abuf = np.full((n, n + pad), -7.0, dtype)
    abuf[:, :n] = a
    w = np.full((n, 2), -7.0, dtype)
    vbuf = np.full((n, 2 * n + pad), -7.0, dtype)
    geev(dtype)(n, abuf.ctypes.data, n + pad, w.ctypes.data, vbuf.ctypes.data, 2 * n + pad)
    v = vbuf[:, : 2 * n].reshape(n, n, 2)
    return w[:, 0] + 1j * w[:, 1], v[..., 0] + 1j * v[..., 1], abuf, vbuf


def reference(dtype, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's geev in a's own precision (scipy's {s,d}geev), unpacked as numpy does."""
    routine = scipy.linalg.lapack.sgeev if dtype == np.float32 else scipy.linalg.lapack.dgeev
    wr, wi, _, vr, info = routine(a, compute_vl=0, compute_vr=1)
    assert info == 0
    n = a.shape[0]
    w = wr + 1j * wi
    v = vr.astype(np.complex128)
    j = 0
    while j < n:
        if wi[j] > 0 and j + 1 < n:
            v[:, j] = vr[:, j] + 1j * vr[:, j + 1]
            v[:, j + 1] = vr[:, j] - 1j * vr[:, j + 1]
            j += 2
        else:
            j += 1
    return w, v


TOL = {np.float32: 1e-5, np.float64: 1e-13}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_geev_matches_lapack(dtype, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(dtype)
    w, v, abuf, vbuf = call(dtype, a)
    ref_w, ref_v = reference(dtype, a)
    scale = max(1.0, np.abs(ref_w).max())
    np.testing.assert_allclose(w, ref_w, atol=TOL[dtype] * scale * 10)
    np.testing.assert_allclose(v, ref_v, atol=TOL[dtype] * 100)
    np.testing.assert_array_equal(abuf[:, n:], -7.0)  # the padding is not touched
    np.testing.assert_array_equal(vbuf[:, 2 * n :], -7.0)
    if dtype == np.float64:
        np_w, np_v = np.linalg.eig(a)
        np.testing.assert_allclose(w, np_w, atol=1e-12 * scale)
        np.testing.assert_allclose(v, np_v, atol=1e-12)


def test_geev_conjugate_pairs_and_real_eigenvalues():
    """A rotation block (eigenvalues 1 +- 2i) and a real one: a pair's columns are x + iy and
    x - iy, unit norm, A v = v diag(w)."""
    a = np.array([[1.0, -2.0, 0.5], [2.0, 1.0, 0.25], [0.0, 0.0, 3.0]])
    w, v, _, _ = call(np.float64, a)
    assert sorted(np.round(w, 12), key=lambda z: (z.real, z.imag)) == [1 - 2j, 1 + 2j, 3]
    pair = np.flatnonzero(w.imag > 0)[0]
    assert w[pair + 1] == np.conj(w[pair])
    np.testing.assert_array_equal(v[:, pair + 1], np.conj(v[:, pair]))
    np.testing.assert_allclose(a @ v, v * w, atol=1e-13)
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_geev_non_finite_is_all_nan(dtype, bad):
    a = np.random.default_rng(3).standard_normal((4, 4)).astype(dtype)
    a[2, 1] = bad
    w, v, _, vbuf = call(dtype, a)
    assert np.isnan(w.real).all() and np.isnan(w.imag).all()
    assert np.isnan(v.real).all() and np.isnan(v.imag).all()
    np.testing.assert_array_equal(vbuf[:, 8:], -7.0)


def test_geev_empty_and_bad_stride():
    w = np.full((1, 2), 5.0)
    geev(np.float64)(0, w.ctypes.data, 1, w.ctypes.data, w.ctypes.data, 1)
    np.testing.assert_array_equal(w, 5.0)  # n = 0: nothing
    a = np.eye(3)
    wo = np.zeros((3, 2))
    vo = np.zeros((3, 6))
    geev(np.float64)(3, a.ctypes.data, 3, wo.ctypes.data, vo.ctypes.data, 5)  # ldv < 2n: the failure convention
    assert np.isnan(wo).all() and np.isnan(vo.ravel()[:16]).all()  # 3 rows of 6, 5 apart


def test_geev_numpy_callback_without_lapack():
    script = """
        import ctypes, numpy as np, llvmlite.binding as llvm
        from irgrad.backends.cpu.lapack import lapack_info
        assert not lapack_info().available
        I, P = ctypes.c_int64, ctypes.c_void_p
        geev = ctypes.CFUNCTYPE(None, I, P, I, P, P, I)(llvm.address_of_symbol("irgrad_lapack_dgeev"))
        a = np.random.default_rng(4).standard_normal((5, 5))
        buf = np.full((5, 7), -7.0); buf[:, :5] = a
        w = np.zeros((5, 2)); v = np.full((5, 12), -7.0)
        geev(5, buf.ctypes.data, 7, w.ctypes.data, v.ctypes.data, 12)
        ref_w, ref_v = np.linalg.eig(a)
        vv = v[:, :10].reshape(5, 5, 2)
        assert np.allclose(w[:, 0] + 1j * w[:, 1], ref_w, atol=1e-12)
        assert np.allclose(vv[..., 0] + 1j * vv[..., 1], ref_v, atol=1e-12) and np.all(v[:, 10:] == -7.0)
        print("ok")
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=dict(os.environ, IRGRAD_CACHE_DIR="off", IRGRAD_LAPACK="none"),
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
