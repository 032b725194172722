"""The runtime's LAPACK entry points (irgrad/backends/cpu/lapack/), called through ctypes on
numpy arrays against numpy/scipy: Cholesky, triangular solves, LU, the symmetric
eigendecomposition, the SVD and QR, both precisions, strided rows, empty sizes, the failure
conventions, IRGRAD_LAPACK=none and a library lacking a routine; and ig.linalg.eigh / svd / qr
compiled for the CPU, which call them."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import llvmlite.binding as llvm
import numpy as np
import pytest
import scipy.linalg

from irgrad.backends.cpu.lapack import ENTRY_POINTS, install_lapack, lapack_info

pytestmark = pytest.mark.skipif(not lapack_info().available, reason=f"no LAPACK: {lapack_info().reason}")

I64, PTR = ctypes.c_int64, ctypes.c_void_p
DTYPES = [np.float64, np.float32]
P = {np.float32: "s", np.float64: "d"}
TOL = {np.float32: 2e-5, np.float64: 1e-12}
PAD = 3  # extra columns of the strided buffers


def entry(name: str, *argtypes):
    install_lapack()
    address = llvm.address_of_symbol(name)
    assert address, name
    return ctypes.CFUNCTYPE(None, *argtypes)(address)


def potrf(dtype):
    return entry(f"irgrad_lapack_{P[dtype]}potrf", I64, PTR, I64)


def trsm(dtype):
    return entry(f"irgrad_lapack_{P[dtype]}trsm", I64, I64, I64, I64, PTR, I64, PTR, I64)


def getrf(dtype):
    return entry(f"irgrad_lapack_{P[dtype]}getrf", I64, PTR, I64, PTR, PTR)


def syevd(dtype):
    return entry(f"irgrad_lapack_{P[dtype]}syevd", I64, PTR, I64, PTR)


def gesdd(dtype):
    return entry(f"irgrad_lapack_{P[dtype]}gesdd", I64, I64, PTR, I64, PTR, PTR, I64, PTR, I64)


def geqrf(dtype):
    return entry(f"irgrad_lapack_{P[dtype]}geqrf", I64, I64, PTR, I64, PTR, I64)


def ld(view: np.ndarray) -> int:
    assert view.strides[1] == view.itemsize
    return view.strides[0] // view.itemsize


def strided(matrix: np.ndarray, pad: int, fill=-7.0) -> tuple[np.ndarray, np.ndarray]:
    """`matrix` copied into the first columns of a wider buffer: (buffer, view)."""
    rows, cols = matrix.shape
    buffer = np.full((rows, cols + pad), fill, dtype=matrix.dtype)
    buffer[:, :cols] = matrix
    return buffer, buffer[:, :cols]


def spd(rng, n, dtype):
    x = rng.standard_normal((n, n))
    return (x @ x.T / max(n, 1) + np.eye(n)).astype(dtype)


def test_info_and_symbols():
    info = lapack_info()
    # potrf, trsm, getrf, syevd, gesdd, geqrf + orgqr in both precisions, none missing
    assert info.available and info.int_bits in (32, 64) and len(info.symbols) == 16
    assert info.fallbacks == ()
    assert os.path.basename(info.library) in info.describe()
    assert all("_work" in s for s in info.symbols if "LAPACKE" in s)
    for name in ENTRY_POINTS:
        assert llvm.address_of_symbol(name)


# ---------------------------------------------------------------------------------------------
# potrf
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 5, 33, 100])
@pytest.mark.parametrize("pad", [0, PAD])
def test_potrf_matches_cholesky(dtype, n, pad):
    rng = np.random.default_rng(n * 10 + pad)
    a = spd(rng, n, dtype)
    work = a.copy()
    work[np.triu_indices(n, 1)] = np.nan  # the upper triangle is not read
    buffer, view = strided(work, pad)
    potrf(dtype)(n, view.ctypes.data, ld(view))
    expected = np.linalg.cholesky(a.astype(np.float64))
    np.testing.assert_allclose(view, expected, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    assert np.all(np.triu(view, 1) == 0)
    assert np.all(buffer[:, n:] == -7.0), "padding touched"


@pytest.mark.parametrize("dtype", DTYPES)
def test_potrf_failure_fills_nan(dtype):
    rng = np.random.default_rng(1)
    n = 6
    not_pd = spd(rng, n, dtype)
    not_pd[3, 3] = -5.0
    nan_in = spd(rng, n, dtype)
    nan_in[4, 1] = np.nan
    nan_diag = spd(rng, n, dtype)
    nan_diag[0, 0] = np.nan
    for bad in (not_pd, nan_in, nan_diag, np.zeros((n, n), dtype)):
        buffer, view = strided(bad, PAD)
        potrf(dtype)(n, view.ctypes.data, ld(view))
        assert np.isnan(view).all()
        assert np.all(buffer[:, n:] == -7.0), "padding touched"


@pytest.mark.parametrize("dtype", DTYPES)
def test_potrf_batch_and_empty(dtype):
    """One matrix of a batch: the others untouched; n = 0 touches nothing."""
    rng = np.random.default_rng(2)
    n = 7
    batch = np.stack([spd(rng, n, dtype) for _ in range(3)])
    wide = np.full((3, n, n + PAD), 5.0, dtype)
    wide[:, :, :n] = batch
    before = wide.copy()
    potrf(dtype)(n, wide[1].ctypes.data, n + PAD)
    np.testing.assert_array_equal(wide[0], before[0])
    np.testing.assert_array_equal(wide[2], before[2])
    np.testing.assert_array_equal(wide[1, :, n:], before[1, :, n:])
    np.testing.assert_allclose(wide[1, :, :n], np.linalg.cholesky(batch[1].astype(np.float64)), rtol=1e-4, atol=1e-5)
    potrf(dtype)(0, wide.ctypes.data, 0)
    potrf(dtype)(-1, wide.ctypes.data, n)
    assert not np.isnan(wide).any()


@pytest.mark.parametrize("dtype", DTYPES)
def test_bad_stride_fills_nan(dtype):
    """lda below the row length: no call into the library, the output is NaN."""
    buffer = np.zeros(16, dtype)
    potrf(dtype)(3, buffer.ctypes.data, 2)  # rows 0..2 at 0, 2, 4
    assert np.isnan(buffer[:7]).all() and not np.isnan(buffer[7:]).any()


# ---------------------------------------------------------------------------------------------
# trsm
# ---------------------------------------------------------------------------------------------


def triangular(rng, n, lower, unit, dtype):
    """(clean A, A with NaN in the triangle and diagonal that must not be read)."""
    a = rng.standard_normal((n, n)) / max(n, 1)
    np.fill_diagonal(a, 1.0 + rng.random(n))
    clean = np.tril(a) if lower else np.triu(a)
    if unit:
        np.fill_diagonal(clean, 1.0)
    garbage = clean.copy()
    garbage[np.triu_indices(n, 1) if lower else np.tril_indices(n, -1)] = np.nan
    if unit:
        np.fill_diagonal(garbage, np.nan)
    return clean.astype(dtype), garbage.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit", [True, False])
@pytest.mark.parametrize("nk", [(1, 1), (5, 3), (3, 8), (40, 17)])
def test_trsm_matches_solve_triangular(dtype, lower, unit, nk):
    n, k = nk
    rng = np.random.default_rng(n * 100 + k)
    clean, garbage = triangular(rng, n, lower, unit, dtype)
    b = rng.standard_normal((n, k)).astype(dtype)
    a_buffer, a_view = strided(garbage, PAD)
    b_buffer, b_view = strided(b, PAD + 2)
    trsm(dtype)(int(lower), int(unit), n, k, a_view.ctypes.data, ld(a_view), b_view.ctypes.data, ld(b_view))
    expected = scipy.linalg.solve_triangular(
        clean.astype(np.float64), b.astype(np.float64), lower=lower, unit_diagonal=unit
    )
    np.testing.assert_allclose(b_view, expected, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10 * np.abs(expected).max())
    assert np.all(b_buffer[:, k:] == -7.0) and np.all(a_buffer[:, n:] == -7.0)
    np.testing.assert_array_equal(a_view, garbage)


@pytest.mark.parametrize("dtype", DTYPES)
def test_trsm_empty_and_zero_diagonal(dtype):
    a = np.eye(3, dtype=dtype)
    b = np.ones((3, 2), dtype)
    trsm(dtype)(1, 0, 0, 2, a.ctypes.data, 3, b.ctypes.data, 2)
    trsm(dtype)(1, 0, 3, 0, a.ctypes.data, 3, b.ctypes.data, 2)
    np.testing.assert_array_equal(b, 1.0)
    a[1, 1] = 0.0
    with np.errstate(all="ignore"):
        trsm(dtype)(1, 0, 3, 2, a.ctypes.data, 3, b.ctypes.data, 2)
    assert not np.isfinite(b[1:]).all()  # inf/NaN, as BLAS gives
    np.testing.assert_array_equal(b[0], 1.0)


# ---------------------------------------------------------------------------------------------
# getrf
# ---------------------------------------------------------------------------------------------


def run_getrf(a: np.ndarray, pad: int):
    n = a.shape[0]
    buffer, view = strided(a, pad)
    pivots = np.full(n, -1, np.int32)
    perm = np.full(n, -1, np.int32)
    getrf(a.dtype.type)(n, view.ctypes.data, ld(view), pivots.ctypes.data, perm.ctypes.data)
    assert np.all(buffer[:, n:] == -7.0), "padding touched"
    return view, pivots, perm


def unpack(lu):
    return np.tril(lu, -1) + np.eye(lu.shape[0]), np.triu(lu)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 6, 33, 80])
@pytest.mark.parametrize("pad", [0, PAD])
def test_getrf_matches_lu_factor(dtype, n, pad):
    rng = np.random.default_rng(n * 10 + pad)
    a = rng.standard_normal((n, n)).astype(dtype)
    lu, pivots, perm = run_getrf(a, pad)
    ref_lu, ref_piv = scipy.linalg.lu_factor(a.astype(np.float64))
    np.testing.assert_array_equal(pivots, ref_piv)
    np.testing.assert_allclose(lu, ref_lu, rtol=TOL[dtype] * 50, atol=TOL[dtype] * 50 * np.abs(ref_lu).max())
    assert sorted(perm) == list(range(n))
    lower, upper = unpack(lu.astype(np.float64))
    tol = TOL[dtype] * 50
    np.testing.assert_allclose(a[perm].astype(np.float64), lower @ upper, rtol=tol, atol=tol * n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_getrf_singular_and_empty(dtype):
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype)
    for a in (singular, np.zeros((4, 4), dtype)):
        lu, pivots, perm = run_getrf(a, PAD)
        assert np.isfinite(lu).all() and (np.diag(lu) == 0).any()
        assert sorted(perm) == list(range(len(a))) and np.all((0 <= pivots) & (pivots < len(a)))
        lower, upper = unpack(lu.astype(np.float64))
        np.testing.assert_allclose(a[perm], lower @ upper, atol=1e-6)
    # NaN input: no crash, pivots in range
    a = np.random.default_rng(3).standard_normal((5, 5)).astype(dtype)
    a[2, 1] = np.nan
    lu, pivots, perm = run_getrf(a, 0)
    assert sorted(perm) == list(range(5)) and np.all((0 <= pivots) & (pivots < 5))
    # n = 0: nothing written
    pivots = np.full(1, -1, np.int32)
    getrf(dtype)(0, a.ctypes.data, 5, pivots.ctypes.data, pivots.ctypes.data)
    assert pivots[0] == -1


# ---------------------------------------------------------------------------------------------
# syevd
# ---------------------------------------------------------------------------------------------


def symmetric(rng, n, dtype):
    x = rng.standard_normal((n, n))
    return ((x + x.T) / 2).astype(dtype)


def sign_fixed(vectors: np.ndarray) -> np.ndarray:
    """Columns with the nn ops' sign convention (the entry points give any signs)."""
    from irgrad.backends.interpreter.nn_linalg import sign_fix

    return vectors * sign_fix(vectors)[..., None, :]


def assert_orthonormal_columns(x: np.ndarray, tol: float) -> None:
    x = x.astype(np.float64)
    np.testing.assert_allclose(x.T @ x, np.eye(x.shape[1]), atol=tol * max(x.shape[0], 1))


def run_syevd(a: np.ndarray, pad: int, garbage: bool = True):
    """syevd on a copy of `a` in a strided buffer, its strict upper triangle NaN (not read):
    (buffer, eigenvectors view, eigenvalues)."""
    n = a.shape[0]
    work = a.copy()
    if garbage:
        work[np.triu_indices(n, 1)] = np.nan
    buffer, view = strided(work, pad)
    w = np.full(n, -3.0, a.dtype)
    syevd(a.dtype.type)(n, view.ctypes.data, ld(view), w.ctypes.data)
    return buffer, view, w


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 5, 33, 100])
@pytest.mark.parametrize("pad", [0, PAD])
def test_syevd_matches_eigh(dtype, n, pad):
    rng = np.random.default_rng(n * 10 + pad + 1)
    a = symmetric(rng, n, dtype)
    buffer, v, w = run_syevd(a, pad)
    assert np.all(buffer[:, n:] == -7.0), "padding touched"
    ref_w, ref_v = np.linalg.eigh(a.astype(np.float64))
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(w, ref_w, rtol=tol, atol=tol * np.abs(ref_w).max())
    assert np.all(np.diff(w) >= 0), "eigenvalues ascending"
    assert_orthonormal_columns(v, tol)
    v64 = v.astype(np.float64)
    np.testing.assert_allclose(v64 @ np.diag(w.astype(np.float64)) @ v64.T, a, atol=tol * n * np.abs(a).max())
    if dtype == np.float64 and n <= 33:  # distinct enough eigenvalues: the vectors up to sign
        np.testing.assert_allclose(sign_fixed(v), sign_fixed(ref_v), atol=1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_syevd_non_finite_fills_nan(dtype):
    """A NaN or inf in the lower triangle: all of V and w NaN (LAPACK not called); in the
    upper triangle it is not read (run_syevd puts NaN there every time)."""
    rng = np.random.default_rng(4)
    n = 6
    for i, j, bad in ((3, 1, np.nan), (0, 0, np.inf), (5, 5, -np.inf), (5, 0, np.nan)):
        a = symmetric(rng, n, dtype)
        a[i, j] = bad
        buffer, v, w = run_syevd(a, PAD)
        assert np.isnan(v).all() and np.isnan(w).all()
        assert np.all(buffer[:, n:] == -7.0), "padding touched"
    a = symmetric(rng, n, dtype)
    a[1, 4] = np.nan  # upper triangle only
    _, v, w = run_syevd(a, 0, garbage=False)
    assert np.isfinite(v).all() and np.isfinite(w).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_syevd_batch_empty_and_bad_stride(dtype):
    """One matrix of a batch: the others untouched; n = 0 touches nothing; lda < n is NaN."""
    rng = np.random.default_rng(5)
    n = 5
    batch = np.stack([symmetric(rng, n, dtype) for _ in range(3)])
    wide = np.full((3, n, n + PAD), 5.0, dtype)
    wide[:, :, :n] = batch
    before = wide.copy()
    w = np.full((3, n), 8.0, dtype)
    syevd(dtype)(n, wide[1].ctypes.data, n + PAD, w[1].ctypes.data)
    np.testing.assert_array_equal(wide[0], before[0])
    np.testing.assert_array_equal(wide[2], before[2])
    np.testing.assert_array_equal(wide[1, :, n:], before[1, :, n:])
    assert np.all(w[0] == 8.0) and np.all(w[2] == 8.0)
    np.testing.assert_allclose(w[1], np.linalg.eigvalsh(batch[1].astype(np.float64)), rtol=1e-4, atol=1e-5)
    syevd(dtype)(0, wide.ctypes.data, 0, w.ctypes.data)
    syevd(dtype)(-1, wide.ctypes.data, n, w.ctypes.data)
    assert not np.isnan(wide).any() and not np.isnan(w).any()
    buffer = np.zeros(16, dtype)
    w = np.zeros(4, dtype)
    syevd(dtype)(3, buffer.ctypes.data, 2, w.ctypes.data)
    assert np.isnan(buffer[:7]).all() and not np.isnan(buffer[7:]).any() and np.isnan(w[:3]).all() and w[3] == 0


# ---------------------------------------------------------------------------------------------
# gesdd
# ---------------------------------------------------------------------------------------------


def run_gesdd(a: np.ndarray, pad: int):
    """gesdd on a strided copy of `a`, outputs in strided buffers: (s, u view, vt view, the
    three buffers)."""
    m, n = a.shape
    k = min(m, n)
    a_buffer, a_view = strided(a.copy(), pad)
    u_buffer, u_view = strided(np.full((m, k), -1.0, a.dtype), pad + 1)
    vt_buffer, vt_view = strided(np.full((k, n), -1.0, a.dtype), pad + 2)
    s = np.full(k, -1.0, a.dtype)
    gesdd(a.dtype.type)(
        m, n, a_view.ctypes.data, ld(a_view), s.ctypes.data, u_view.ctypes.data, ld(u_view),
        vt_view.ctypes.data, ld(vt_view),
    )
    for buffer, cols in ((a_buffer, n), (u_buffer, k), (vt_buffer, n)):
        assert np.all(buffer[:, cols:] == -7.0), "padding touched"
    return s, u_view, vt_view


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mn", [(1, 1), (5, 3), (3, 5), (1, 6), (40, 17), (17, 40), (64, 64)])
@pytest.mark.parametrize("pad", [0, PAD])
def test_gesdd_matches_svd(dtype, mn, pad):
    m, n = mn
    rng = np.random.default_rng(m * 100 + n + pad)
    a = rng.standard_normal((m, n)).astype(dtype)
    s, u, vt = run_gesdd(a, pad)
    ref_u, ref_s, ref_vt = np.linalg.svd(a.astype(np.float64), full_matrices=False)
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(s, ref_s, rtol=tol, atol=tol * ref_s.max())
    assert np.all(np.diff(s) <= 0) and np.all(s >= 0)
    assert_orthonormal_columns(u, tol)
    assert_orthonormal_columns(vt.T, tol)
    u64, vt64 = u.astype(np.float64), vt.astype(np.float64)
    np.testing.assert_allclose(u64 * s.astype(np.float64) @ vt64, a, atol=tol * max(m, n) * ref_s.max())
    if dtype == np.float64:  # the same vectors up to sign, u's columns and vt's rows flipped together
        sign = np.sign(np.sum(u64 * ref_u, axis=0))
        np.testing.assert_allclose(u64 * sign, ref_u, atol=1e-9)
        np.testing.assert_allclose(vt64 * sign[:, None], ref_vt, atol=1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gesdd_non_finite_empty_and_bad_stride(dtype):
    rng = np.random.default_rng(6)
    for shape, at, bad in (((5, 3), (4, 2), np.nan), ((3, 5), (0, 0), np.inf), ((4, 4), (2, 3), -np.inf)):
        a = rng.standard_normal(shape).astype(dtype)
        a[at] = bad
        s, u, vt = run_gesdd(a, PAD)
        assert np.isnan(s).all() and np.isnan(u).all() and np.isnan(vt).all()
    # m = 0 or n = 0: k = 0, nothing to write (and nothing read)
    out = np.full(4, 9.0, dtype)
    gesdd(dtype)(0, 3, out.ctypes.data, 3, out.ctypes.data, out.ctypes.data, 0, out.ctypes.data, 3)
    gesdd(dtype)(3, 0, out.ctypes.data, 0, out.ctypes.data, out.ctypes.data, 0, out.ctypes.data, 0)
    assert np.all(out == 9.0)
    # ldu below k: NaN outputs, LAPACK not called
    a = rng.standard_normal((4, 3)).astype(dtype)
    s = np.zeros(3, dtype)
    u = np.zeros((4, 3), dtype)
    vt = np.zeros((3, 3), dtype)
    gesdd(dtype)(4, 3, a.ctypes.data, 3, s.ctypes.data, u.ctypes.data, 2, vt.ctypes.data, 3)
    assert np.isnan(s).all() and np.isnan(vt).all() and np.isnan(u.reshape(-1)[:9]).all()


# ---------------------------------------------------------------------------------------------
# geqrf (+ orgqr)
# ---------------------------------------------------------------------------------------------


def run_geqrf(a: np.ndarray, pad: int):
    m, n = a.shape
    q_buffer, q = strided(a.copy(), pad)
    r_buffer, r = strided(np.full((n, n), np.nan, a.dtype), pad + 1)  # R is only written
    geqrf(a.dtype.type)(m, n, q.ctypes.data, ld(q), r.ctypes.data, ld(r))
    assert np.all(q_buffer[:, n:] == -7.0) and np.all(r_buffer[:, n:] == -7.0), "padding touched"
    return q, r


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mn", [(1, 1), (5, 3), (6, 6), (7, 1), (40, 17), (100, 100)])
@pytest.mark.parametrize("pad", [0, PAD])
def test_geqrf_matches_numpy_qr(dtype, mn, pad):
    """numpy.linalg.qr is geqrf + orgqr too: the same signs, so the same Q and R."""
    m, n = mn
    rng = np.random.default_rng(m * 100 + n + pad + 2)
    a = rng.standard_normal((m, n)).astype(dtype)
    q, r = run_geqrf(a, pad)
    ref_q, ref_r = np.linalg.qr(a.astype(np.float64))
    tol = TOL[dtype] * 20
    np.testing.assert_allclose(q, ref_q, atol=tol * np.sqrt(m))
    np.testing.assert_allclose(r, ref_r, atol=tol * np.abs(ref_r).max())
    assert np.all(np.tril(r, -1) == 0)
    assert_orthonormal_columns(q, tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_geqrf_failures_and_empty(dtype):
    rng = np.random.default_rng(7)
    for at, bad in (((3, 1), np.nan), ((0, 0), np.inf)):
        a = rng.standard_normal((5, 3)).astype(dtype)
        a[at] = bad
        q, r = run_geqrf(a, PAD)
        assert np.isnan(q).all() and np.isnan(r).all()
    # a wide matrix is outside the contract: NaN, no call
    q, r = run_geqrf(rng.standard_normal((2, 4)).astype(dtype), 0)
    assert np.isnan(q).all() and np.isnan(r).all()
    # a rank-deficient matrix is no failure: R gets a (near) zero on its diagonal
    a = rng.standard_normal((6, 3)).astype(dtype)
    a[:, 2] = a[:, 0]
    q, r = run_geqrf(a, 0)
    assert np.isfinite(q).all() and abs(r[2, 2]) < 1e-4
    np.testing.assert_allclose(q.astype(np.float64) @ r, a, atol=1e-4)
    # n = 0: nothing
    out = np.full(3, 9.0, dtype)
    geqrf(dtype)(3, 0, out.ctypes.data, 0, out.ctypes.data, 0)
    geqrf(dtype)(0, 0, out.ctypes.data, 0, out.ctypes.data, 0)
    assert np.all(out == 9.0)


# ---------------------------------------------------------------------------------------------
# The blas ops written by hand, on row slices: the interpreter and the compiled code
# ---------------------------------------------------------------------------------------------

DECOMPOSITIONS = """
func.func @syevd(%a: memref<2x5x8xf64>, %w: memref<5xf64>) {
  %m = memref.subview %a[1, 0, 2] [1, 5, 5] [1, 1, 1] : memref<2x5x8xf64> to memref<5x5xf64, strided<[8, 1], offset: 42>>
  blas.syevd %m, %w : memref<5x5xf64, strided<[8, 1], offset: 42>>, memref<5xf64>
  func.return
}

func.func @gesdd(%a: memref<5x8xf32>, %s: memref<3xf32>, %u: memref<5x3xf32>, %vt: memref<3x3xf32>) {
  %m = memref.subview %a[0, 1] [5, 3] [1, 1] : memref<5x8xf32> to memref<5x3xf32, strided<[8, 1], offset: 1>>
  blas.gesdd %m, %s, %u, %vt : memref<5x3xf32, strided<[8, 1], offset: 1>>, memref<3xf32>, memref<5x3xf32>, memref<3x3xf32>
  func.return
}

func.func @geqrf(%q: memref<6x4xf64>, %r: memref<4x7xf64>) {
  %m = memref.subview %r[0, 3] [4, 4] [1, 1] : memref<4x7xf64> to memref<4x4xf64, strided<[7, 1], offset: 3>>
  blas.geqrf %q, %m : memref<6x4xf64>, memref<4x4xf64, strided<[7, 1], offset: 3>>
  func.return
}
"""


def _run_both(entry: str, *args: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """`entry` of DECOMPOSITIONS on copies of `args` (modified in place), by the reference
    interpreter and compiled: (interpreter's arrays, compiled arrays)."""
    from _cpu_util import entry_function, function, parse
    from irgrad.backends.interpreter.runner import make_interpreter

    interp = [x.copy() for x in args]
    module = parse(DECOMPOSITIONS)
    make_interpreter(module).call_op(entry_function(module, entry), interp)
    compiled = [x.copy() for x in args]
    function(DECOMPOSITIONS, entry, len(args))(*compiled)
    return interp, compiled


def test_blas_ops_on_the_interpreter_and_compiled():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((2, 5, 8))
    sym = symmetric(rng, 5, np.float64)
    a[1, :, 2:7] = np.tril(sym) + np.triu(np.full((5, 5), np.nan), 1)  # the upper triangle is not read
    ref_w = np.linalg.eigvalsh(sym)
    for got_a, got_w in _run_both("syevd", a, np.zeros(5)):
        np.testing.assert_allclose(got_w, ref_w, atol=1e-12)
        v = got_a[1, :, 2:7]
        np.testing.assert_allclose(v * got_w @ v.T, sym, atol=1e-12)
        np.testing.assert_array_equal(got_a[0], a[0])
        np.testing.assert_array_equal(got_a[1, :, [0, 1, 7]], a[1, :, [0, 1, 7]])
    b = rng.standard_normal((5, 8)).astype(np.float32)
    ref_s = np.linalg.svd(b[:, 1:4].astype(np.float64), compute_uv=False)
    outs = (np.zeros(3, np.float32), np.zeros((5, 3), np.float32), np.zeros((3, 3), np.float32))
    for got in _run_both("gesdd", b, *outs):
        _, s, u, vt = got
        np.testing.assert_allclose(s, ref_s, rtol=1e-5)
        np.testing.assert_allclose(u * s @ vt, b[:, 1:4], atol=1e-5)
        np.testing.assert_array_equal(got[0][:, [0, 4, 5, 6, 7]], b[:, [0, 4, 5, 6, 7]])
    c = rng.standard_normal((6, 4))
    ref_q, ref_r = np.linalg.qr(c)
    for q, r in _run_both("geqrf", c, np.full((4, 7), 5.0)):
        np.testing.assert_allclose(q, ref_q, atol=1e-13)
        np.testing.assert_allclose(r[:, 3:], ref_r, atol=1e-13)
        assert np.all(r[:, :3] == 5.0)


# ---------------------------------------------------------------------------------------------
# Compiled: ig.linalg.eigh / svd / qr call the entry points
# ---------------------------------------------------------------------------------------------


def _decompose(a_sym, a_tall, a_wide):
    import irgrad as ig

    L = ig.linalg
    return L.eigh(a_sym), L.svd(a_tall, full_matrices=False), L.svd(a_wide, full_matrices=False), L.qr(a_tall)


@pytest.mark.parametrize("dtype", DTYPES)
def test_compiled_eigh_svd_qr_call_lapack(dtype, monkeypatch):
    """ig.jit on the CPU: one LAPACK call per matrix, results the reference interpreter's (its
    nn_linalg applies the ops' sign convention, which the compiled code applies after the call),
    batched, tall and wide, a NaN batch element all NaN."""
    import irgrad as ig
    from irgrad.backends.interpreter import nn_linalg as ref

    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 6, 6))
    a_sym = ((x + np.swapaxes(x, -1, -2)) / 2).astype(dtype)
    a_sym[2, 4, 1] = np.nan  # that batch element all NaN
    a_tall = rng.standard_normal((2, 7, 4)).astype(dtype)
    a_wide = rng.standard_normal((3, 6)).astype(dtype)
    jitted = ig.jit(_decompose)
    p = P[dtype]
    text = jitted.lower(a_sym, a_tall, a_wide).as_text("llvm")
    for routine in ("syevd", "gesdd", "geqrf"):
        assert f"llvm.call @irgrad_lapack_{p}{routine}" in text
    (w, v), (u, s, vt), (u2, s2, vt2), (q, r) = jitted(a_sym, a_tall, a_wide)
    tol = {np.float32: 1e-4, np.float64: 1e-11}[dtype]

    def close(got, want):
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        scale = max(float(np.nanmax(np.abs(want), initial=0.0)), 1.0)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)

    for got, want in zip((w, v), ref.eigh(a_sym)):
        close(got, want)
    assert np.isnan(w[2]).all() and np.isnan(v[2]).all()
    for got, want in zip((u, s, vt), ref.svd(a_tall)):
        close(got, want)
    for got, want in zip((u2, s2, vt2), ref.svd(a_wide)):
        close(got, want)
    for got, want in zip((q, r), ref.qr(a_tall)):
        close(got, want)


# ---------------------------------------------------------------------------------------------
# Other configurations, in subprocesses
# ---------------------------------------------------------------------------------------------


def run_script(script: str, **env: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=dict(os.environ, IRGRAD_CACHE_DIR="off", **env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_disabled_by_environment():
    out = run_script(
        """
        import llvmlite.binding as llvm
        from irgrad.backends.cpu.lapack import ENTRY_POINTS, lapack_info
        info = lapack_info()
        assert not info.available and info.symbols == () and "IRGRAD_LAPACK=none" in info.describe()
        # The entry points are the numpy reference, through ctypes: same contract.
        assert all(llvm.address_of_symbol(name) is not None for name in ENTRY_POINTS)
        import ctypes
        import numpy as np
        potrf = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)(
            llvm.address_of_symbol("irgrad_lapack_dpotrf"))
        x = np.random.default_rng(0).standard_normal((4, 4))
        a = np.zeros((4, 6))
        a[:, :4] = x @ x.T + 4 * np.eye(4)
        a[:, 4:] = 7.0
        expected = np.linalg.cholesky(a[:, :4])
        a[0, 3] = 99.0  # the upper triangle is not read
        potrf(4, a.ctypes.data, 6)
        assert np.allclose(a[:, :4], expected, rtol=1e-14, atol=1e-14) and np.all(a[:, 4:] == 7.0)
        b = -np.eye(3)
        potrf(3, b.ctypes.data, 3)
        assert np.all(np.isnan(b))
        I, P = ctypes.c_int64, ctypes.c_void_p
        f = lambda name, *t: ctypes.CFUNCTYPE(None, *t)(llvm.address_of_symbol(name))
        syevd = f("irgrad_lapack_ssyevd", I, P, I, P)
        gesdd = f("irgrad_lapack_dgesdd", I, I, P, I, P, P, I, P, I)
        geqrf = f("irgrad_lapack_dgeqrf", I, I, P, I, P, I)
        rng = np.random.default_rng(1)
        s = rng.standard_normal((5, 5)).astype(np.float32); s = s + s.T
        e = np.zeros((5, 7), np.float32); e[:, :5] = s; e[:, 5:] = 7.0; w = np.zeros(5, np.float32)
        syevd(5, e.ctypes.data, 7, w.ctypes.data)
        assert np.allclose(w, np.linalg.eigvalsh(s), atol=1e-5) and np.all(e[:, 5:] == 7.0)
        assert np.allclose(e[:, :5] * w @ e[:, :5].T, s, atol=1e-4)
        a = rng.standard_normal((3, 5)); c = a.copy()
        sv = np.zeros(3); u = np.zeros((3, 3)); vt = np.zeros((3, 5))
        gesdd(3, 5, c.ctypes.data, 5, sv.ctypes.data, u.ctypes.data, 3, vt.ctypes.data, 5)
        assert np.allclose(sv, np.linalg.svd(a, compute_uv=False)) and np.allclose(u * sv @ vt, a)
        a = rng.standard_normal((6, 4)); q = a.copy(); r = np.zeros((4, 4))
        geqrf(6, 4, q.ctypes.data, 4, r.ctypes.data, 4)
        ref_q, ref_r = np.linalg.qr(a)
        assert np.allclose(q, ref_q) and np.allclose(r, ref_r)
        a[2, 2] = np.nan; q = a.copy(); geqrf(6, 4, q.ctypes.data, 4, r.ctypes.data, 4)
        assert np.isnan(q).all() and np.isnan(r).all()
        q = np.ones((2, 3)); r = np.ones((3, 3)); geqrf(2, 3, q.ctypes.data, 3, r.ctypes.data, 3)
        assert np.isnan(q).all() and np.isnan(r).all()
        # compiled code calls them, as it calls the library's
        import irgrad as ig
        from irgrad.backends.interpreter import nn_linalg as ref
        x = rng.standard_normal((2, 5, 3))
        got = ig.jit(lambda x: (ig.linalg.svd(x, full_matrices=False), ig.linalg.qr(x)))(x)
        for g, want in zip([*got[0], *got[1]], [*ref.svd(x), *ref.qr(x)]):
            assert np.allclose(g, want, atol=1e-12), (g, want)
        print("ok")
        """,
        IRGRAD_LAPACK="none",
    )
    assert out.strip() == "ok"


def test_library_lacking_a_routine_serves_the_others():
    """A library without (here: with a renamed) syevd is still chosen; irgrad_lapack_{s,d}syevd
    alone are the numpy callbacks, with the same contract."""
    out = run_script(
        """
        import ctypes, numpy as np, llvmlite.binding as llvm
        from irgrad.backends.cpu import lapack
        from irgrad.backends.cpu.lapack import library
        library._LIBRARY_ROUTINES["syevd"] = ("LAPACKE_{p}syevd_nonexistent",)
        info = lapack.lapack_info()
        assert info.available and info.fallbacks == ("irgrad_lapack_ssyevd", "irgrad_lapack_dsyevd"), info
        assert len(info.symbols) == 14 and not any("syevd" in s for s in info.symbols)
        assert "numpy reference callbacks for irgrad_lapack_ssyevd" in info.describe()
        I, P = ctypes.c_int64, ctypes.c_void_p
        syevd = ctypes.CFUNCTYPE(None, I, P, I, P)(llvm.address_of_symbol("irgrad_lapack_dsyevd"))
        x = np.random.default_rng(2).standard_normal((4, 4)); s = x + x.T
        a = s.copy(); w = np.zeros(4)
        syevd(4, a.ctypes.data, 4, w.ctypes.data)
        assert np.allclose(w, np.linalg.eigvalsh(s)) and np.allclose(a * w @ a.T, s)
        a[1, 0] = np.nan; syevd(4, a.ctypes.data, 4, w.ctypes.data)
        assert np.isnan(a).all() and np.isnan(w).all()
        gesdd = ctypes.CFUNCTYPE(None, I, I, P, I, P, P, I, P, I)(llvm.address_of_symbol("irgrad_lapack_dgesdd"))
        c = s.copy(); sv = np.zeros(4); u = np.zeros((4, 4)); vt = np.zeros((4, 4))
        gesdd(4, 4, c.ctypes.data, 4, sv.ctypes.data, u.ctypes.data, 4, vt.ctypes.data, 4)
        assert np.allclose(u * sv @ vt, s)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def _scipy_32bit_openblas() -> str | None:
    import glob

    base = os.path.join(os.path.dirname(scipy.__file__), "..", "scipy.libs")
    found = sorted(glob.glob(os.path.join(base, "libscipy_openblas-*.so")))
    return os.path.realpath(found[0]) if found else None


@pytest.mark.skipif(_scipy_32bit_openblas() is None, reason="no 32-bit OpenBLAS in scipy.libs")
def test_32bit_library_and_int_overflow():
    """scipy's own OpenBLAS (32-bit ints) through IRGRAD_LAPACK: the same results, and a row
    stride above int32 max fills the output with NaN instead of being truncated."""
    out = run_script(
        """
        import ctypes, numpy as np, scipy.linalg, llvmlite.binding as llvm
        from irgrad.backends.cpu.lapack import lapack_info
        info = lapack_info()
        assert info.available and info.int_bits == 32, info
        I, P = ctypes.c_int64, ctypes.c_void_p
        f = lambda name, *t: ctypes.CFUNCTYPE(None, *t)(llvm.address_of_symbol(name))
        potrf = f("irgrad_lapack_dpotrf", I, P, I)
        trsm = f("irgrad_lapack_strsm", I, I, I, I, P, I, P, I)
        getrf = f("irgrad_lapack_dgetrf", I, P, I, P, P)
        rng = np.random.default_rng(0)
        x = rng.standard_normal((9, 9)); a = x @ x.T + np.eye(9)
        c = a.copy(); potrf(9, c.ctypes.data, 9)
        assert np.allclose(c, np.linalg.cholesky(a), atol=1e-12)
        t = (np.tril(rng.standard_normal((9, 9))) / 9 + 2 * np.eye(9)).astype(np.float32)
        b = rng.standard_normal((9, 4)).astype(np.float32); r = b.copy()
        trsm(1, 0, 9, 4, t.ctypes.data, 9, r.ctypes.data, 4)
        assert np.allclose(r, scipy.linalg.solve_triangular(t, b, lower=True), atol=1e-5)
        g = x.copy(); piv = np.zeros(9, np.int32); perm = np.zeros(9, np.int32)
        getrf(9, g.ctypes.data, 9, piv.ctypes.data, perm.ctypes.data)
        lu, ref = scipy.linalg.lu_factor(x)
        assert np.allclose(g, lu, atol=1e-12) and (piv == ref).all()
        huge = 1 << 31  # one row: only element 0 is addressed
        one = np.array([4.0]); potrf(1, one.ctypes.data, huge); assert np.isnan(one).all()
        one = np.array([4.0], np.float32); trsm(1, 0, 1, 1, t.ctypes.data, huge, one.ctypes.data, 1)
        assert np.isnan(one).all()
        one = np.array([4.0]); piv = np.full(1, 7, np.int32); perm = np.full(1, 7, np.int32)
        getrf(1, one.ctypes.data, huge, piv.ctypes.data, perm.ctypes.data)
        assert np.isnan(one).all() and piv[0] == 0 and perm[0] == 0
        syevd = f("irgrad_lapack_ssyevd", I, P, I, P)
        gesdd = f("irgrad_lapack_dgesdd", I, I, P, I, P, P, I, P, I)
        geqrf = f("irgrad_lapack_sgeqrf", I, I, P, I, P, I)
        s = (x + x.T).astype(np.float32); e = s.copy(); w = np.zeros(9, np.float32)
        syevd(9, e.ctypes.data, 9, w.ctypes.data)
        assert np.allclose(w, np.linalg.eigvalsh(s), atol=1e-4) and np.allclose(e * w @ e.T, s, atol=1e-4)
        a = rng.standard_normal((9, 5)); c = a.copy(); sv = np.zeros(5); u = np.zeros((9, 5)); vt = np.zeros((5, 5))
        gesdd(9, 5, c.ctypes.data, 5, sv.ctypes.data, u.ctypes.data, 5, vt.ctypes.data, 5)
        assert np.allclose(sv, np.linalg.svd(a, compute_uv=False)) and np.allclose(u * sv @ vt, a)
        a32 = a.astype(np.float32); q = a32.copy(); r = np.zeros((5, 5), np.float32)
        geqrf(9, 5, q.ctypes.data, 5, r.ctypes.data, 5)
        ref_q, ref_r = np.linalg.qr(a32)
        assert np.allclose(q, ref_q, atol=1e-5) and np.allclose(r, ref_r, atol=1e-5)
        one = np.array([4.0], np.float32); w = np.zeros(1, np.float32)
        syevd(1, one.ctypes.data, huge, w.ctypes.data); assert np.isnan(one).all() and np.isnan(w).all()
        one = np.array([4.0], np.float32); r = np.zeros(1, np.float32)
        geqrf(1, 1, one.ctypes.data, huge, r.ctypes.data, 1); assert np.isnan(one).all() and np.isnan(r).all()
        print("ok")
        """,
        IRGRAD_LAPACK=_scipy_32bit_openblas(),
    )
    assert out.strip() == "ok"


def test_64bit_library_takes_huge_stride():
    if lapack_info().int_bits != 64:
        pytest.skip("32-bit library")
    one = np.array([4.0])
    potrf(np.float64)(1, one.ctypes.data, 1 << 31)
    assert one[0] == 2.0


def test_a_program_defines_only_the_entry_points_it_calls():
    """Each shim is compiled when code first calls it (about 20 ms each, against 125 ms for all
    twelve on a first call): an eigh program in a fresh process defines dsyevd alone."""
    code = textwrap.dedent(
        """
        import numpy as np, llvmlite.binding as llvm, irgrad as ig
        from irgrad.backends.cpu import lapack
        from irgrad.backends.cpu.lapack import install
        a = np.random.default_rng(0).standard_normal((5, 5))
        w, v = ig.jit(lambda a: ig.linalg.eigh(a))(a + a.T)
        assert np.allclose(w, np.linalg.eigvalsh(a + a.T))
        assert install._installed == {"irgrad_lapack_dsyevd"}, install._installed
        assert llvm.address_of_symbol("irgrad_lapack_dsyevd")
        assert not llvm.address_of_symbol("irgrad_lapack_dpotrf")
        assert lapack.lapack_info().available and llvm.address_of_symbol("irgrad_lapack_dpotrf")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "IRGRAD_CACHE_DIR": "off"})
    assert done.returncode == 0, done.stderr


def test_cached_object_code_gets_the_shims_it_calls(tmp_path):
    """A process loading a program from the disk cache compiles no IR, so the LAPACK entry
    points its object code calls must be found in the object code itself (a missing one would
    be a call to address 0)."""
    code = textwrap.dedent(
        """
        import numpy as np, irgrad as ig
        a = np.random.default_rng(0).standard_normal((6, 4))
        u, s, vt = ig.jit(lambda a: ig.linalg.svd(a, full_matrices=False))(a)
        assert np.allclose(s, np.linalg.svd(a, compute_uv=False)), s
        """
    )
    env = {**os.environ, "IRGRAD_CACHE_DIR": str(tmp_path)}
    for _ in range(2):  # the first run fills the cache, the second loads from it
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
    assert any(tmp_path.rglob("*")), "nothing was cached"
