"""The runtime's LAPACK entry points (irgrad/backends/cpu/lapack.py), called through ctypes on
numpy arrays against numpy/scipy: Cholesky, triangular solves and LU, both precisions,
strided rows, empty sizes, the failure conventions, and IRGRAD_LAPACK=none."""

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
    assert info.available and info.int_bits in (32, 64) and len(info.symbols) == 6
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
        print("ok")
        """,
        IRGRAD_LAPACK="none",
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
