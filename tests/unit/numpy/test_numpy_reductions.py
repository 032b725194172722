"""Reductions, scans, sorting and statistics of irgrad/numpy/reductions.py and
`ig.linalg.norm` against numpy: eagerly and in one `ig.jit` compile, ints exact, sort stability
and NaN order, gradients against finite differences (prod at zeros, median's halves, sort's
permutation), and errors."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import same_values

rng = np.random.default_rng(5)
A = rng.standard_normal((4, 6))
B = rng.standard_normal((3, 5, 7))
V = rng.standard_normal(9)
I = rng.integers(-3, 4, (5, 6)).astype(np.int32)  # noqa: E741
TIES = np.array([[3, 1, 2, 1, 3, 0, 1, 2], [0, 0, 0, 0, 0, 0, 0, 0]], np.int32)
NANS = np.array([2.0, np.nan, -1.0, np.inf, -np.inf, np.nan, 0.0, -0.0, 2.0, -5.0])
XP = np.sort(rng.uniform(-2, 2, 8))
FP = rng.standard_normal(8)
XQ = np.concatenate([rng.uniform(-3, 3, 20), XP[[0, 3, 7]], [np.nan]])


def _i32(x):
    return np.asarray(x).astype(np.int32)


# (name, ig function of the module m, numpy function, args); numpy's integer results are int64
# where ig's (JAX's) are int32: the numpy side converts.
CASES = [
    ("prod", lambda x: ig.prod(x), lambda x: np.prod(x), (A,)),
    ("prod_axis", lambda x: ig.prod(x, axis=(0, -1), keepdims=True), lambda x: np.prod(x, axis=(0, -1), keepdims=True), (B,)),
    ("prod_int", lambda x: ig.prod(x, axis=1), lambda x: _i32(np.prod(x, axis=1)), (I,)),
    ("prod_odd", lambda x: ig.prod(x), lambda x: np.prod(x), (V,)),
    ("cumsum", lambda x: ig.cumsum(x), lambda x: np.cumsum(x), (A,)),
    ("cumsum_axis", lambda x: ig.cumsum(x, axis=-2), lambda x: np.cumsum(x, axis=-2), (B,)),
    ("cumsum_int", lambda x: ig.cumsum(x, axis=1), lambda x: _i32(np.cumsum(x, axis=1)), (I,)),
    ("cumprod", lambda x: ig.cumprod(x, axis=1), lambda x: np.cumprod(x, axis=1), (A,)),
    ("cumprod_int", lambda x: ig.cumprod(x, 0), lambda x: _i32(np.cumprod(x, 0)), (I,)),
    ("sort", lambda x: ig.sort(x), lambda x: np.sort(x), (B,)),
    ("sort_axis0", lambda x: ig.sort(x, axis=0), lambda x: np.sort(x, axis=0), (B,)),
    ("sort_none", lambda x: ig.sort(x, axis=None), lambda x: np.sort(x, axis=None), (A,)),
    ("sort_nan", lambda x: ig.sort(x), lambda x: np.sort(x), (NANS,)),
    ("sort_int", lambda x: ig.sort(x, axis=-2), lambda x: np.sort(x, axis=-2), (I,)),
    ("argsort", lambda x: ig.argsort(x, axis=1), lambda x: _i32(np.argsort(x, axis=1, kind="stable")), (B,)),
    ("argsort_ties", lambda x: ig.argsort(x), lambda x: _i32(np.argsort(x, kind="stable")), (TIES,)),
    ("argsort_nan", lambda x: ig.argsort(x), lambda x: _i32(np.argsort(x, kind="stable")), (NANS,)),
    ("median", lambda x: ig.median(x), lambda x: np.median(x), (A,)),
    ("median_axis", lambda x: ig.median(x, axis=(0, 2), keepdims=True), lambda x: np.median(x, axis=(0, 2), keepdims=True), (B,)),
    ("median_odd", lambda x: ig.median(x, axis=-1), lambda x: np.median(x, axis=-1), (B,)),
    ("median_nan", lambda x: ig.median(x), lambda x: np.median(x), (NANS,)),
    ("average", lambda x: ig.average(x, axis=1), lambda x: np.average(x, axis=1), (A,)),
    ("average_w", lambda x, w: ig.average(x, axis=-1, weights=w), lambda x, w: np.average(x, axis=-1, weights=w), (A, np.abs(A[0]))),
    ("average_wfull", lambda x, w: ig.average(x, weights=w, returned=True), lambda x, w: np.average(x, weights=w, returned=True), (A, np.abs(A))),
    ("count_nonzero", lambda x: ig.count_nonzero(x, axis=0), lambda x: _i32(np.count_nonzero(x, axis=0)), (I,)),
    ("isclose", lambda x, y: ig.isclose(x, y, rtol=1e-3, equal_nan=True), lambda x, y: np.isclose(x, y, rtol=1e-3, equal_nan=True), (NANS, NANS * (1 + 1e-4))),
    ("isclose_inf", lambda x, y: ig.isclose(x, y), lambda x, y: np.isclose(x, y), (NANS, NANS[::-1])),
    ("allclose", lambda x, y: ig.allclose(x, y), lambda x, y: np.allclose(x, y), (A, A + 1e-9)),
    ("array_equal", lambda x, y: ig.array_equal(x, y), lambda x, y: np.array_equal(x, y), (I, I)),
    ("array_equal_nan", lambda x, y: ig.array_equal(x, y, equal_nan=True), lambda x, y: np.array_equal(x, y, equal_nan=True), (NANS, NANS)),
    ("searchsorted", lambda a, v: ig.searchsorted(a, v), lambda a, v: _i32(np.searchsorted(a, v)), (np.sort(NANS), NANS)),
    ("searchsorted_r", lambda a, v: ig.searchsorted(a, v, side="right"), lambda a, v: _i32(np.searchsorted(a, v, side="right")), (np.sort(NANS), NANS)),
    ("searchsorted_int", lambda a, v: ig.searchsorted(a, v, "right"), lambda a, v: _i32(np.searchsorted(a, v, "right")), (np.sort(TIES[0]), I)),
    ("interp", lambda x, xp, fp: ig.interp(x, xp, fp), lambda x, xp, fp: np.interp(x, xp, fp), (XQ, XP, FP)),
    ("interp_lr", lambda x, xp, fp: ig.interp(x, xp, fp, left=-9.0, right=9.0), lambda x, xp, fp: np.interp(x, xp, fp, left=-9.0, right=9.0), (XQ, XP, FP)),
    ("cov", lambda x: ig.cov(x), lambda x: np.cov(x), (A,)),
    ("cov_cols", lambda x, y: ig.cov(x, y, rowvar=False, bias=True), lambda x, y: np.cov(x, y, rowvar=False, bias=True), (A, A[:, :2] ** 2)),
    ("cov_1d", lambda x: ig.cov(x, ddof=0), lambda x: np.cov(x, ddof=0), (V,)),
    ("corrcoef", lambda x: ig.corrcoef(x), lambda x: np.corrcoef(x), (A,)),
    ("corrcoef_xy", lambda x, y: ig.corrcoef(x, y), lambda x, y: np.corrcoef(x, y), (V, V**3)),
]
NORMS = [
    (None, None), (2, 0), (1, 1), (np.inf, -1), (-np.inf, 0), (0, 1), (3.5, -1),
    ("fro", None), ("fro", (1, 0)), (1, (0, 1)), (-1, (1, 0)), (np.inf, (0, 1)), (-np.inf, (1, 0)),
]  # fmt: skip
CASES += [
    (f"norm_{o}_{ax}", lambda x, o=o, ax=ax: ig.linalg.norm(x, o, ax), lambda x, o=o, ax=ax: np.linalg.norm(x, o, ax), (A,))
    for o, ax in NORMS
]
CASES += [
    ("norm_vec", lambda x: ig.linalg.norm(x, 1), lambda x: np.linalg.norm(x, 1), (V,)),
    ("norm_3d", lambda x: ig.linalg.norm(x, axis=(0, 2), keepdims=True), lambda x: np.linalg.norm(x, axis=(0, 2), keepdims=True), (B,)),
    ("norm_none", lambda x: ig.linalg.norm(x, keepdims=True), lambda x: np.linalg.norm(x, keepdims=True), (B,)),
]


def test_against_numpy_eagerly():
    for name, fn, np_fn, args in CASES:
        with np.errstate(all="ignore"):
            want = np_fn(*args)
        same_values(fn(*args), want, name, rtol=1e-12)


# Under jit, one case per function (each sort is an scf.for whose compile costs ~0.3 s).
JIT_CASES = [c for c in CASES if c[0] in {
    "prod_axis", "prod_int", "cumsum_axis", "cumsum_int", "cumprod", "sort_nan", "argsort_ties", "median_axis",
    "average_w", "count_nonzero", "isclose_inf", "allclose", "array_equal_nan", "searchsorted_r", "interp",
    "cov_cols", "corrcoef", "norm_vec", "norm_3d", *(f"norm_{o}_{ax}" for o, ax in NORMS)}]  # fmt: skip


def test_against_numpy_under_one_jit():
    arrays = [a for *_, args in JIT_CASES for a in args]
    counts = [len(args) for *_, args in JIT_CASES]

    def all_cases(*flat):
        out, k = [], 0
        for (_, fn, _, _), n in zip(JIT_CASES, counts):
            out.append(fn(*flat[k : k + n]))
            k += n
        return out

    got = ig.jit(all_cases)(*arrays)
    assert len(JIT_CASES) == 19 + len(NORMS)
    for (name, _, np_fn, args), g in zip(JIT_CASES, got):
        with np.errstate(all="ignore"):
            want = np_fn(*args)
        same_values(g, want, name, rtol=1e-12)


def test_sort_stability_signed_zeros_and_float32():
    x = np.array([0.0, -0.0, 1.0, -0.0, 0.0, np.nan, -np.nan, 1.0], np.float32)
    order = ig.argsort(x)
    np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))
    s = ig.sort(x)
    assert s.dtype == np.float32
    np.testing.assert_array_equal(np.signbit(s[:4]), np.signbit(x[order[:4]]))
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(ig.sort(b), np.sort(b))
    np.testing.assert_array_equal(ig.argsort(b), np.argsort(b, kind="stable"))
    big = rng.integers(-(2**40), 2**40, 1000)  # int64: several rounds, not a power of two
    np.testing.assert_array_equal(ig.sort(big), np.sort(big))
    for empty in (np.zeros((0,)), np.zeros((3, 0))):
        same_values(ig.sort(empty), np.sort(empty))
        same_values(ig.argsort(empty), _i32(np.argsort(empty)))
    same_values(ig.prod(np.zeros((0, 2)), axis=0), np.prod(np.zeros((0, 2)), axis=0))
    same_values(ig.cumprod(np.array([True, True, False])), _i32(np.cumprod(np.array([True, True, False]))))


def test_vmap_of_sort_and_median():
    same_values(ig.vmap(ig.sort)(B), np.sort(B, axis=-1))
    same_values(ig.vmap(lambda r: ig.median(r), in_axes=1)(A), np.median(A, axis=0))
    same_values(ig.vmap(lambda r: ig.argsort(r))(TIES), _i32(np.argsort(TIES, axis=-1, kind="stable")))


def test_gradients_against_finite_differences():
    def f(a, b, v, xp, fp):
        return (ig.prod(a, axis=1), ig.cumsum(b, axis=1), ig.cumprod(a, axis=-1), ig.sort(b, axis=0),
                ig.median(a, axis=1), ig.median(b, axis=-1), ig.average(a, axis=1, weights=a[0] ** 2),
                ig.interp(v, xp, fp), ig.cov(a), ig.corrcoef(a)[0, 1:], ig.linalg.norm(a, axis=1),
                ig.linalg.norm(a, 3.0, 1), ig.linalg.norm(b, "fro", (0, 2)), ig.linalg.norm(a, 1))  # fmt: skip

    xq = rng.uniform(-1.9, 1.9, 9)
    ig.check_grads(f, (A, B, xq, XP, FP), order=1, modes=("fwd", "rev"))
    ig.check_grads(lambda a: (ig.prod(a, axis=0), ig.cumprod(a, 1), ig.sort(a)), (A[:, :3],), order=2, modes=("rev",))


def test_derivatives_at_zeros_ties_and_kinks():
    # prod: exact zeros, and the gradient at a single zero is the product of the others.
    x = np.array([2.0, 0.0, 3.0, -1.5])
    np.testing.assert_array_equal(ig.grad(ig.prod)(x), [0.0, -9.0, 0.0, 0.0])
    np.testing.assert_array_equal(ig.grad(ig.prod)(np.array([0.0, 0.0, 3.0])), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ig.grad(lambda t: ig.cumprod(t)[-1])(x), [0.0, -9.0, 0.0, 0.0])
    # sort: the cotangent follows the permutation (ties: the stable order's positions).
    w = np.array([10.0, 20.0, 30.0, 40.0])
    g = ig.grad(lambda t: ig.sum(ig.sort(t) * w))(np.array([3.0, 1.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [30.0, 10.0, 40.0, 20.0])
    # median of an even count: half to each middle element; odd: all to the middle one.
    np.testing.assert_array_equal(ig.grad(ig.median)(np.array([4.0, 1.0, 3.0, 2.0])), [0.0, 0.0, 0.5, 0.5])
    np.testing.assert_array_equal(ig.grad(ig.median)(np.array([4.0, 1.0, 3.0])), [0.0, 0.0, 1.0])
    # norm at the zero vector: 0, not NaN.
    np.testing.assert_array_equal(ig.grad(ig.linalg.norm)(np.zeros(3)), np.zeros(3))
    # argsort and searchsorted: integer results, no gradient.
    np.testing.assert_array_equal(ig.grad(lambda t: ig.sum(ig.argsort(t).astype(np.float64) * t))(x), x * 0 + ig.argsort(x))


def test_errors_name_the_function_and_shapes():
    with pytest.raises(ig.ShapeError, match=r"sort: axis 3 is out of range for an array of rank 2"):
        ig.sort(A, axis=3)
    with pytest.raises(NotImplementedError, match="argsort: order="):
        ig.argsort(A, order="x")
    with pytest.raises(ig.ShapeError, match=r"prod: axis -3 is out of range"):
        ig.prod(A, axis=-3)
    with pytest.raises(TypeError, match="cumsum: axis must be an int"):
        ig.cumsum(A, axis=(0, 1))
    with pytest.raises(ig.ShapeError, match=r"searchsorted: a must be 1-D, got shape \(4, 6\)"):
        ig.searchsorted(A, V)
    with pytest.raises(ValueError, match="searchsorted: side"):
        ig.searchsorted(V, V, side="middle")
    with pytest.raises(ValueError, match=r"interp: xp and fp must be 1-D of the same length, got \(8,\) and \(9,\)"):
        ig.interp(V, XP, V)
    with pytest.raises(ValueError, match=r"average: weights of length 9 do not match axis 1 of shape \(4, 6\)"):
        ig.average(A, axis=1, weights=V)
    with pytest.raises(TypeError, match="average: axis must be given"):
        ig.average(A, weights=V)
    np.testing.assert_allclose(ig.linalg.norm(A, "nuc"), np.linalg.norm(A, "nuc"), rtol=1e-12)
    np.testing.assert_allclose(ig.linalg.norm(B, "nuc", axis=(0, 2), keepdims=True),
                               np.linalg.norm(B, "nuc", axis=(0, 2), keepdims=True), rtol=1e-12)
    with pytest.raises(ValueError, match="norm: invalid norm order 'fro' for vectors"):
        ig.linalg.norm(V, "fro")
    with pytest.raises(ig.ShapeError, match=r"cov: m and y have 6 and 3 observations"):
        ig.cov(A, A[:, :3])


@pytest.mark.parametrize("backend", ["interp", "cpu"])
@pytest.mark.parametrize("reduction", ["sum", "prod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_bool_dtype_sums_are_or_and_products_are_and(backend, reduction, axis, monkeypatch):
    """numpy's add on bools is or and its multiply is and: sum(dtype=bool) is any, prod is
    all (the CPU backend's i1 sum wrapped: True + True was False)."""
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    x = np.array([[True, True, False], [True, True, True]])
    ints = np.array([[2, 0, 1], [0, 0, 0]])
    for v in (x, ints, np.zeros((2, 3), bool)):
        f = ig.jit(lambda a: getattr(ig, reduction)(a, axis=axis, dtype=bool), backend=backend)
        got, want = np.asarray(f(v)), getattr(np, reduction)(v, axis=axis, dtype=bool)
        assert got.dtype == np.bool_ and np.array_equal(got, want), (v, got, want)
