"""NaN-ignoring reductions, order statistics, differences, histograms, polynomials and select
of irgrad/numpy (nan_reductions, order_statistics, differences, histograms, polynomials,
selection) against numpy: eagerly and in one `ig.jit` compile, ints exact, NaN placement,
keepdims/axis variants, dtypes, gradients against finite differences, the documented
derivatives at ties, kinks and NaN entries, and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import same_values

rng = np.random.default_rng(11)
A = rng.standard_normal((4, 6))
B = rng.standard_normal((3, 5, 7))
V = rng.standard_normal(9)
I = rng.integers(-3, 6, (5, 6)).astype(np.int32)  # noqa: E741
# NaNs scattered, one all-NaN row (row 3) and one all-NaN column (column 5 is NaN in rows 0-3).
AN = A.copy()
AN[0, 1] = AN[2, 3] = AN[2, 0] = np.nan
AN[3, :] = np.nan
AN[:, 5] = np.nan
# NaNs, but no all-NaN slice along axis 1 (for finite differences).
AG = A.copy()
AG[0, 1] = AG[2, 3] = AG[3, 0] = np.nan
BN = B.copy()
BN[0, 1, 2] = BN[2, :, 4] = np.nan
X6 = np.sort(rng.uniform(0, 3, 6))  # coordinates along A's axis 1
EDGES = np.array([-2.0, -0.5, 0.0, 0.3, 2.0])
BINS = np.array([-1.0, 0.0, 0.5, 2.0])
XD = np.array([-3, -1, 0, 0.2, 0.5, 1, 2, 5, np.nan])
XI = np.array([0, 1, 1, 3, 2, 1, 7, 3], np.int32)
P = np.array([1.5, -2.0, 0.3, 4.0])
QS = [0.0, 0.1, 0.5, 0.75, 1.0]
METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]


def _i32(x):
    if isinstance(x, tuple):
        return tuple(_i32(v) for v in x)
    x = np.asarray(x)
    return x.astype(np.int32) if x.dtype.kind in "iu" else x


def _numpy(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


# (name, ig function, numpy function, args); numpy's integer results are int64 where ig's
# (JAX's) are int32: the numpy side converts (_i32).
CASES = [
    ("nansum", lambda x: ig.nansum(x), lambda x: np.nansum(x), (AN,)),
    ("nansum_axis", lambda x: ig.nansum(x, axis=1), lambda x: np.nansum(x, axis=1), (AN,)),
    ("nansum_int", lambda x: ig.nansum(x, axis=0), lambda x: _i32(np.nansum(x, axis=0)), (I,)),
    ("nanprod", lambda x: ig.nanprod(x, axis=(0, 2), keepdims=True), lambda x: np.nanprod(x, axis=(0, 2), keepdims=True), (BN,)),
    ("nanmean", lambda x: ig.nanmean(x, axis=1), lambda x: np.nanmean(x, axis=1), (AN,)),
    ("nanmean_kd", lambda x: ig.nanmean(x, axis=(0, 2), keepdims=True), lambda x: np.nanmean(x, axis=(0, 2), keepdims=True), (BN,)),
    ("nanmean_all", lambda x: ig.nanmean(x), lambda x: np.nanmean(x), (AN,)),
    ("nanvar", lambda x: ig.nanvar(x, axis=0), lambda x: np.nanvar(x, axis=0), (AN,)),
    ("nanvar_ddof", lambda x: ig.nanvar(x, axis=1, ddof=4), lambda x: np.nanvar(x, axis=1, ddof=4), (AN,)),
    ("nanstd", lambda x: ig.nanstd(x, axis=-1, ddof=1, keepdims=True), lambda x: np.nanstd(x, axis=-1, ddof=1, keepdims=True), (BN,)),
    ("nanstd_all", lambda x: ig.nanstd(x), lambda x: np.nanstd(x), (AN,)),
    ("nanmax", lambda x: ig.nanmax(x, axis=1), lambda x: np.nanmax(x, axis=1), (AN,)),
    ("nanmax_kd", lambda x: ig.nanmax(x, axis=(1, 2), keepdims=True), lambda x: np.nanmax(x, axis=(1, 2), keepdims=True), (BN,)),
    ("nanmin", lambda x: ig.nanmin(x, axis=0), lambda x: np.nanmin(x, axis=0), (AN,)),
    ("nanmin_int", lambda x: ig.nanmin(x, axis=1), lambda x: np.nanmin(x, axis=1), (I,)),
    ("nanargmax", lambda x: ig.nanargmax(x, axis=1), lambda x: _i32(np.nanargmax(x, axis=1)), (AN[:3, :5],)),
    ("nanargmin", lambda x: ig.nanargmin(x, axis=0, keepdims=True), lambda x: _i32(np.nanargmin(x, axis=0, keepdims=True)), (AN[:3, :5],)),
    ("nanargmax_none", lambda x: ig.nanargmax(x), lambda x: _i32(np.nanargmax(x)), (AN,)),
    ("nanargmin_int", lambda x: ig.nanargmin(x, axis=1), lambda x: _i32(np.nanargmin(x, axis=1)), (I,)),
    ("nancumsum", lambda x: ig.nancumsum(x, axis=1), lambda x: np.nancumsum(x, axis=1), (AN,)),
    ("nancumsum_none", lambda x: ig.nancumsum(x), lambda x: np.nancumsum(x), (AN,)),
    ("nancumprod", lambda x: ig.nancumprod(x, axis=0), lambda x: np.nancumprod(x, axis=0), (AN,)),
    ("nanmedian", lambda x: ig.nanmedian(x, axis=1), lambda x: np.nanmedian(x, axis=1), (AN,)),
    ("nanmedian_kd", lambda x: ig.nanmedian(x, axis=(0, 2), keepdims=True), lambda x: np.nanmedian(x, axis=(0, 2), keepdims=True), (BN,)),
    ("nanmedian_all", lambda x: ig.nanmedian(x), lambda x: np.nanmedian(x), (AN,)),
    ("ptp", lambda x: ig.ptp(x, axis=1), lambda x: np.ptp(x, axis=1), (A,)),
    ("ptp_int", lambda x: ig.ptp(x, axis=0, keepdims=True), lambda x: np.ptp(x, axis=0, keepdims=True), (I,)),
    ("diff", lambda x: ig.diff(x), lambda x: np.diff(x), (B,)),
    ("diff_n2", lambda x, y: ig.diff(x, n=2, axis=0, prepend=1.5, append=y), lambda x, y: np.diff(x, n=2, axis=0, prepend=1.5, append=y), (A, A[:1])),
    ("diff_int", lambda x: ig.diff(x, 3, axis=1), lambda x: np.diff(x, 3, axis=1), (I,)),
    ("diff_bool", lambda x: ig.diff(x > 0, axis=0), lambda x: np.diff(x > 0, axis=0), (A,)),
    ("diff_long", lambda x: ig.diff(x, n=12), lambda x: np.diff(x, n=12), (V,)),
    ("ediff1d", lambda x: ig.ediff1d(x, to_end=7.0, to_begin=[1.0, 2.0]), lambda x: np.ediff1d(x, to_end=7.0, to_begin=[1.0, 2.0]), (A,)),
    ("ediff1d_int", lambda x: ig.ediff1d(x), lambda x: np.ediff1d(x), (I,)),
    ("trapezoid", lambda y, x: ig.trapezoid(y, x), lambda y, x: np.trapezoid(y, x), (A, X6)),
    ("trapezoid_dx", lambda y: ig.trapezoid(y, dx=0.3, axis=0), lambda y: np.trapezoid(y, dx=0.3, axis=0), (A,)),
    ("trapezoid_xnd", lambda y, x: ig.trapezoid(y, x, axis=1), lambda y, x: np.trapezoid(y, x, axis=1), (B, np.cumsum(np.abs(B), axis=1))),
    ("gradient", lambda f: ig.gradient(f), lambda f: list(np.gradient(f)), (A,)),
    ("gradient_1d", lambda f: ig.gradient(f, 0.5), lambda f: np.gradient(f, 0.5), (V,)),
    ("gradient_xs", lambda f, x: ig.gradient(f, 0.5, x, edge_order=2), lambda f, x: list(np.gradient(f, 0.5, x, edge_order=2)), (A, X6)),
    ("gradient_axis", lambda f, x: ig.gradient(f, x, axis=-1, edge_order=2), lambda f, x: np.gradient(f, x, axis=-1, edge_order=2), (A, X6)),
    ("gradient_axes", lambda f: ig.gradient(f, 2.0, axis=(2, 0), edge_order=2), lambda f: list(np.gradient(f, 2.0, axis=(2, 0), edge_order=2)), (B,)),
    ("digitize", lambda x, b: ig.digitize(x, b), lambda x, b: _i32(np.digitize(x, b)), (XD, BINS)),
    ("digitize_right", lambda x, b: ig.digitize(x, b, right=True), lambda x, b: _i32(np.digitize(x, b, right=True)), (XD, BINS)),
    ("digitize_dec", lambda x, b: ig.digitize(x, b), lambda x, b: _i32(np.digitize(x, b)), (XD, BINS[::-1].copy())),
    ("digitize_dec_right", lambda x, b: ig.digitize(x, b, True), lambda x, b: _i32(np.digitize(x, b, True)), (XD, BINS[::-1].copy())),
    ("digitize_int", lambda x, b: ig.digitize(x, b), lambda x, b: _i32(np.digitize(x, b)), (I, np.array([-1, 0, 2, 4], np.int32))),
    ("bincount", lambda x: ig.bincount(x), lambda x: _i32(np.bincount(x)), (XI,)),
    ("bincount_w", lambda x, w: ig.bincount(x, w, minlength=10), lambda x, w: np.bincount(x, w, minlength=10), (XI, V[:8])),
    ("histogram", lambda a: ig.histogram(a), lambda a: _i32(np.histogram(a)), (A,)),
    ("histogram_range", lambda a: ig.histogram(a, bins=4, range=(-1.0, 1.5), density=True), lambda a: np.histogram(a, bins=4, range=(-1.0, 1.5), density=True), (A,)),
    ("histogram_edges", lambda a, e, w: ig.histogram(a, e, weights=w), lambda a, e, w: np.histogram(a, e, weights=w), (A, EDGES, A**2)),
    ("histogram_edges_int", lambda a, e: ig.histogram(a, e), lambda a, e: _i32(np.histogram(a, e)), (np.clip(A, -2, 2), EDGES)),
    ("select", lambda x: ig.select([x > 0.5, x < -0.5], [x, x * 2.0], default=-1.0), lambda x: np.select([x > 0.5, x < -0.5], [x, x * 2.0], default=-1.0), (A,)),
    ("select_bcast", lambda x, y: ig.select([x > 0, y > 1], [1.0, y]), lambda x, y: np.select([x > 0, y > 1], [1.0, y]), (A, A[:1] * 3)),
    ("select_int", lambda x: ig.select([x > 2, x < 0], [x, -x], 7), lambda x: np.select([x > 2, x < 0], [x, -x], 7).astype(np.int32), (I,)),
    ("polyval", lambda p, x: ig.polyval(p, x), lambda p, x: np.polyval(p, x), (P, A)),
    ("vander", lambda x: ig.vander(x, 4), lambda x: np.vander(x, 4), (X6,)),
    ("vander_inc", lambda x: ig.vander(x, increasing=True), lambda x: _i32(np.vander(x, increasing=True)), (I[0],)),
    ("vander_1", lambda x: ig.vander(x, 1), lambda x: np.vander(x, 1), (X6,)),
]
CASES += [
    (f"quantile_{m}", lambda x, m=m: ig.quantile(x, QS, axis=1, method=m), lambda x, m=m: np.quantile(x, QS, axis=1, method=m), (A,))
    for m in METHODS
]
CASES += [
    (f"nanpercentile_{m}", lambda x, m=m: ig.nanpercentile(x, [[10.0, 90.0], [50.0, 100 / 3]], axis=0, method=m, keepdims=True),
     lambda x, m=m: np.nanpercentile(x, [[10.0, 90.0], [50.0, 100 / 3]], axis=0, method=m, keepdims=True), (AN,))
    for m in METHODS
]  # fmt: skip
CASES += [
    ("percentile", lambda x: ig.percentile(x, 37.5), lambda x: np.percentile(x, 37.5), (B,)),
    ("percentile_axes", lambda x: ig.percentile(x, [5.0, 50.0], axis=(0, 2), keepdims=True), lambda x: np.percentile(x, [5.0, 50.0], axis=(0, 2), keepdims=True), (B,)),
    ("quantile_nan", lambda x: ig.quantile(x, 0.3, axis=0), lambda x: np.quantile(x, 0.3, axis=0), (AN,)),
    ("quantile_q_array", lambda x, q: ig.quantile(x, q, axis=-1), lambda x, q: np.quantile(x, q, axis=-1), (B, np.array([[0.2, 0.9]]))),
    ("nanquantile", lambda x: ig.nanquantile(x, 0.8, axis=1), lambda x: np.nanquantile(x, 0.8, axis=1), (AN,)),
    ("nanquantile_3d", lambda x: ig.nanquantile(x, [0.25, 0.5], axis=(0, 1)), lambda x: np.nanquantile(x, [0.25, 0.5], axis=(0, 1)), (BN,)),
]


def test_against_numpy_eagerly():
    for name, fn, np_fn, args in CASES:
        _same_stats(fn(*args), _numpy(np_fn, *args), name)


# Under jit, a selection that covers every function; each quantile is a sort (an scf.for whose
# compile costs ~0.3 s), so only a few of those.
JIT_NAMES = {
    "nansum_axis", "nansum_int", "nanprod", "nanmean_kd", "nanvar_ddof", "nanstd", "nanmax", "nanmin_int",
    "nanargmax", "nanargmin", "nancumsum", "nancumprod", "nanmedian", "ptp_int", "diff_n2", "diff_bool",
    "ediff1d", "trapezoid", "trapezoid_dx", "gradient_xs", "gradient_axes", "digitize", "digitize_dec_right",
    "histogram", "histogram_edges", "select", "select_int", "polyval", "vander", "quantile_linear",
    "nanpercentile_nearest", "quantile_nan",
}  # fmt: skip
JIT_CASES = [c for c in CASES if c[0] in JIT_NAMES]


def test_against_numpy_under_one_jit():
    assert len(JIT_CASES) == len(JIT_NAMES)
    arrays = [a for *_, args in JIT_CASES for a in args]
    counts = [len(args) for *_, args in JIT_CASES]

    def all_cases(xi, w, *flat):
        out, k = [ig.bincount(xi, length=9), ig.bincount(xi, w, length=5)], 0
        for (_, fn, _, _), n in zip(JIT_CASES, counts):
            out.append(fn(*flat[k : k + n]))
            k += n
        return out

    got = ig.jit(all_cases)(XI, V[:8], *arrays)
    _same_stats(got[0], _i32(np.bincount(XI, minlength=9)), "bincount_length")
    _same_stats(got[1], np.bincount(XI, V[:8])[:5], "bincount_length_w")  # values >= length dropped
    for (name, _, np_fn, args), g in zip(JIT_CASES, got[2:]):
        _same_stats(g, _numpy(np_fn, *args), name)


def test_dtypes_ints_and_weak_scalars():
    f32 = A.astype(np.float32)
    # Float-only functions turn ints into float32; Python q does not change the dtype.
    for out in (ig.nanmean(I), ig.nanvar(I, axis=0), ig.nanstd(I), ig.nanmedian(I, axis=1), ig.percentile(I, 50),
                ig.quantile(I, [0.25, 0.5], axis=0), ig.nanquantile(f32, 0.5), ig.trapezoid(I), ig.gradient(I[0]),
                ig.percentile(f32, [10.0, 20.0])):  # fmt: skip
        assert out.dtype == np.float32, out.dtype
    np.testing.assert_allclose(ig.percentile(I, 50, axis=0), np.percentile(I, 50, axis=0).astype(np.float32))
    np.testing.assert_allclose(ig.gradient(I[0]), np.gradient(I[0]).astype(np.float32))
    np.testing.assert_allclose(ig.polyval([1, 2], I), np.polyval([1, 2], I))
    # A numpy q array is an operand: float64 q promotes float32 data (JAX's rule).
    assert ig.quantile(f32, np.array([0.5])).dtype == np.float64
    # Integer results: int32, exact; integer data keeps its dtype where numpy's does.
    for out in (ig.nanargmax(A), ig.digitize(A, BINS), ig.bincount(XI), ig.histogram(A)[0]):
        assert out.dtype == np.int32
    for out in (ig.nansum(I), ig.nancumsum(I), ig.nanprod(I), ig.nanmax(I), ig.ptp(I), ig.diff(I), ig.vander(I[0]),
                ig.polyval([1, 2], I)):  # polyval keeps integers, as JAX and numpy
        assert out.dtype == np.int32
    _same_stats(ig.nansum(I > 0, axis=1), _i32(np.nansum(I > 0, axis=1)))
    _same_stats(ig.nancumprod(I, axis=1), _i32(np.nancumprod(I, axis=1)))
    h, e = ig.histogram(I, bins=3)
    hn, en = np.histogram(I, bins=3)
    _same_stats(h, _i32(hn))
    assert e.dtype == np.float32
    np.testing.assert_allclose(e, en, rtol=1e-6)
    # Counts with weights take the weights' dtype (JAX; numpy's are float64); empty and
    # constant data as numpy.
    _same_stats(ig.bincount(XI, weights=XI), np.bincount(XI, weights=XI).astype(np.int32))
    _same_stats(ig.bincount(np.zeros(0, np.int32), minlength=3), _i32(np.bincount(np.zeros(0, np.int32), minlength=3)))
    _same_stats(ig.histogram(np.full(5, 2.0), bins=2), _i32(np.histogram(np.full(5, 2.0), bins=2)))
    _same_stats(ig.diff(V, n=0), V)
    _same_stats(ig.trapezoid(V[:1]), np.trapezoid(V[:1]))


def test_nan_placement():
    allnan = np.full((2, 3), np.nan)
    allnan[1] = [1.0, 2.0, 4.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanmedian"):
            _same_stats(getattr(ig, name)(allnan, axis=1), getattr(np, name)(allnan, axis=1), name)
        _same_stats(ig.nanquantile(allnan, [0.1, 0.6], axis=1), np.nanquantile(allnan, [0.1, 0.6], axis=1))
        _same_stats(ig.nanvar(allnan, axis=1, ddof=3), np.nanvar(allnan, axis=1, ddof=3))  # count - ddof = 0: NaN
    _same_stats(ig.nansum(allnan, axis=1), np.nansum(allnan, axis=1))
    _same_stats(ig.nanprod(allnan, axis=1), np.nanprod(allnan, axis=1))
    _same_stats(ig.nancumsum(allnan, axis=1), np.nancumsum(allnan, axis=1))
    # nanargmax/nanargmin: -1 for an all-NaN slice (JAX; numpy raises); -inf beats NaN.
    _same_stats(ig.nanargmax(allnan, axis=1), np.array([-1, 2], np.int32))
    _same_stats(ig.nanargmin(allnan, axis=1, keepdims=True), np.array([[-1], [0]], np.int32))
    assert int(ig.nanargmax(np.array([np.nan, -np.inf, np.nan]))) == 1
    assert int(ig.nanargmin(np.array([np.nan, np.inf]))) == 1
    # quantile: NaN in a slice makes that slice's result NaN; an empty slice gives NaN.
    assert np.isnan(ig.quantile(np.array([1.0, np.nan, 3.0]), 0.0))
    assert np.isnan(ig.nanmedian(np.zeros((0,))))
    # histogram ignores NaNs when the range is given, digitize puts them past the last bin.
    _same_stats(ig.histogram(AN, bins=3, range=(-2.0, 2.0)), _i32(np.histogram(AN, bins=3, range=(-2.0, 2.0))))


def test_traced_q_vmap_and_bincount_length():
    q = np.array([0.15, 0.8])
    got = ig.jit(lambda x, q: (ig.quantile(x, q, axis=1), ig.percentile(x, q * 100.0, method="midpoint")))(A, q)
    _same_stats(got[0], np.quantile(A, q, axis=1))
    _same_stats(got[1], np.percentile(A, q * 100.0, method="midpoint"))
    _same_stats(ig.vmap(lambda r: ig.nanmedian(r))(AN[:3]), np.nanmedian(AN[:3], axis=1))
    _same_stats(ig.vmap(lambda r: ig.percentile(r, [20.0, 70.0]), in_axes=1)(A), np.percentile(A, [20.0, 70.0], axis=0).T)
    _same_stats(ig.vmap(lambda r: ig.bincount(r, length=8))(I % 8), np.stack([np.bincount(r, minlength=8) for r in I % 8]).astype(np.int32))
    # Under a trace, values >= length are dropped and negative ones count as 0 (JAX).
    _same_stats(ig.jit(lambda x: ig.bincount(x, length=3))(np.array([-2, 0, 2, 3, 9], np.int32)), np.array([2, 0, 1], np.int32))


def test_gradients_against_finite_differences():
    def f(a, ag, b, v, x6, p):
        return (ig.nansum(ag, axis=1), ig.nanmean(ag, axis=1), ig.nanvar(ag, axis=1, ddof=1), ig.nanstd(ag, axis=0),
                ig.nanprod(ag, axis=1), ig.nanmax(ag, axis=1), ig.nanmin(ag, axis=0), ig.nancumsum(ag, axis=1),
                ig.nancumprod(ag, axis=0), ig.nanmedian(ag, axis=1), ig.nanpercentile(ag, [20.0, 65.0], axis=1),
                ig.quantile(b, [0.1, 0.9], axis=(0, 2)), ig.percentile(a, 30.0, axis=0, method="midpoint"),
                ig.quantile(a, 0.4, axis=1, method="nearest"), ig.ptp(b, axis=1), ig.diff(a, n=2, prepend=v[:4, None]),
                ig.ediff1d(v, to_begin=v[0]), ig.trapezoid(a, x6), ig.gradient(a, 0.5, x6, edge_order=2),
                ig.gradient(v, edge_order=1), ig.histogram(v, bins=3, weights=v**2), ig.histogram(v, bins=3, density=True)[0],
                ig.bincount(np.array([1, 0, 1, 3], np.int32), weights=v[:4]), ig.select([a > 0.5, a < -0.5], [a * a, 2.0], a),
                ig.polyval(p, a), ig.vander(v, 4))  # fmt: skip

    ig.check_grads(f, (A, AG, B, V, X6, P), order=1, modes=("fwd", "rev"))
    # q traced (linear interpolation): its derivative is (n - 1) (s[i+1] - s[i]); virtual indices
    # 5 q and 20 q (21 non-NaN values) kept away from integers (kinks).
    ig.check_grads(lambda q, a, ag: (ig.quantile(a, q, axis=1), ig.nanpercentile(ag, q * 100.0)),
                   (np.array([0.33, 0.57]), A, AG), order=1, modes=("fwd", "rev"))  # fmt: skip


def test_derivatives_at_ties_kinks_and_nans():
    nan = np.nan
    x = np.array([2.0, nan, -1.0, 3.0, nan, 0.5])
    live = ~np.isnan(x)
    # NaN entries get 0, never NaN.
    want = {
        "nansum": live * 1.0, "nanmean": live / 4.0, "nanmax": [0, 0, 0, 1, 0, 0], "nanmin": [0, 0, 1, 0, 0, 0],
        "nanprod": [-1.5, 0, 3, -1, 0, -6], "nanmedian": [0.5, 0, 0, 0, 0, 0.5],
        "nanvar": np.where(live, 2 * (np.nan_to_num(x) - 1.125) / 4, 0.0),
    }  # fmt: skip
    for name, w in want.items():
        np.testing.assert_array_equal(ig.grad(getattr(ig, name))(x), w, err_msg=name)
    g = ig.grad(ig.nanstd)(x)
    np.testing.assert_allclose(g, want["nanvar"] / (2 * np.nanstd(x)), rtol=1e-14)
    assert g[1] == 0.0 and g[4] == 0.0
    np.testing.assert_allclose(ig.grad(lambda t: ig.nanpercentile(t, 30.0))(x), [0, 0, 0.1, 0, 0, 0.9], rtol=1e-14, atol=0)
    np.testing.assert_array_equal(ig.grad(lambda t: ig.sum(ig.nancumsum(t)))(x), [6, 0, 4, 3, 0, 1])
    # All-NaN slices are constants: gradient 0 there (and the other row as usual).
    rows = np.array([[nan, nan, nan], [1.0, 2.0, 4.0]])
    for name, row in [("nanmean", [1 / 3] * 3), ("nanmax", [0, 0, 1]), ("nanmedian", [0, 1, 0])]:
        g = ig.grad(lambda t, name=name: ig.nansum(getattr(ig, name)(t, axis=1)))(rows)
        np.testing.assert_allclose(g, [[0, 0, 0], row], rtol=1e-15, atol=0, err_msg=name)
    for name in ("nanvar", "nanstd"):
        g = ig.grad(lambda t, name=name: ig.nansum(getattr(ig, name)(t, axis=1)))(rows)
        assert np.all(g[0] == 0.0) and np.all(np.isfinite(g)), name
    g = ig.grad(lambda t: ig.nansum(ig.nanquantile(t, [0.2, 0.7], axis=1)))(rows)
    np.testing.assert_allclose(g, [[0, 0, 0], [0.6, 1.0, 0.4]], rtol=1e-14)
    # quantile of a slice holding a NaN is a constant NaN: gradient 0 to all of that slice.
    g = ig.grad(lambda t: ig.nansum(ig.quantile(t, [0.2, 1.0], axis=1)))(rows)
    np.testing.assert_allclose(g, [[0, 0, 0], [0.6, 0.4, 1.0]], rtol=1e-14)
    # nanstd of a constant: 0, not NaN.
    np.testing.assert_array_equal(ig.grad(ig.nanstd)(np.array([2.0, nan, 2.0])), [0.0, 0.0, 0.0])
    # Quantiles at duplicates follow the stable sort: s = [0, 2(#0), 2(#2), 5].
    dup = np.array([2.0, 5.0, 2.0, 0.0])
    np.testing.assert_array_equal(ig.grad(lambda t: ig.quantile(t, 0.25))(dup), [0.75, 0, 0, 0.25])
    np.testing.assert_array_equal(ig.grad(lambda t: ig.quantile(t, 0.5))(dup), [0.5, 0, 0.5, 0])
    np.testing.assert_array_equal(ig.grad(lambda t: ig.quantile(t, 1 / 3))(dup), [1.0, 0, 0, 0])
    np.testing.assert_array_equal(ig.grad(lambda t: ig.percentile(t, 100.0))(np.array([3.0, 1.0, 3.0])), [0, 0, 1])
    np.testing.assert_array_equal(ig.grad(lambda t: ig.quantile(t, 0.3, method="lower"))(np.array([3.0, 1.0, 3.0, 0.0])), [0, 0, 0, 1])
    np.testing.assert_array_equal(ig.grad(lambda t: ig.quantile(t, 0.3, method="midpoint"))(np.array([3.0, 1.0, 3.0, 0.0])), [0, 0.5, 0, 0.5])
    # The derivative in q: (n - 1) (s[i+1] - s[i]), the right-hand slope; 0 at q = 1.
    data = np.array([3.0, 1.0, 4.0, 0.0])
    assert ig.grad(lambda q: ig.quantile(data, q))(np.float64(0.3)) == 3.0
    assert ig.grad(lambda q: ig.quantile(data, q))(np.float64(1.0)) == 0.0
    assert ig.grad(lambda q: ig.percentile(data, q))(np.float64(30.0)) == pytest.approx(0.03, rel=1e-15)
    assert ig.grad(lambda q: ig.quantile(data, q, method="nearest"))(np.float64(0.3)) == 0.0
    # ptp at ties: shared equally by max and min; a constant slice has gradient 0.
    np.testing.assert_array_equal(ig.grad(ig.ptp)(np.array([3.0, 1.0, 3.0, 1.0, 2.0])), [0.5, -0.5, 0.5, -0.5, 0])
    np.testing.assert_array_equal(ig.grad(ig.ptp)(np.array([2.0, 2.0, 2.0])), [0, 0, 0])
    # Integer results carry no gradient.
    np.testing.assert_array_equal(ig.grad(lambda t: ig.sum(ig.nanargmax(t, axis=0).astype(np.float64)) + ig.sum(t))(A), np.ones_like(A))


def test_errors_name_the_function():
    with pytest.raises(ig.ShapeError, match=r"nansum: axis 2 is out of range for an array of rank 2"):
        ig.nansum(A, axis=2)
    with pytest.raises(ig.ShapeError, match=r"nanmedian: axis -4 is out of range"):
        ig.nanmedian(B, axis=-4)
    with pytest.raises(ig.ShapeError, match=r"percentile: axis 3 is out of range"):
        ig.percentile(B, 50.0, axis=3)
    with pytest.raises(TypeError, match="nanargmax: axis must be an int"):
        ig.nanargmax(A, axis=(0, 1))
    with pytest.raises(ValueError, match=r"percentile: q must be in the range \[0, 100\]"):
        ig.percentile(A, 101.0)
    with pytest.raises(ValueError, match=r"quantile: q must be in the range \[0, 1\]"):
        ig.quantile(A, np.array([0.5, -0.1]))
    with pytest.raises(ValueError, match=r"nanquantile: q must be in the range \[0, 1\]"):
        ig.nanquantile(A, [50.0])
    with pytest.raises(ValueError, match=r"quantile: 'cubic' is not a valid method"):
        ig.quantile(A, 0.5, method="cubic")
    with pytest.raises(NotImplementedError, match=r"percentile: method 'hazen' is not supported"):
        ig.percentile(A, 5.0, method="hazen")
    with pytest.raises(NotImplementedError, match="nanmean: out= is not supported"):
        ig.nanmean(A, out=np.zeros(6))
    with pytest.raises(ig.ShapeError, match=r"bincount: the output length depends on the values of a traced x; pass a static length="):
        ig.jit(lambda x: ig.bincount(x))(XI)
    with pytest.raises(ValueError, match="bincount: x must be non-negative"):
        ig.bincount(np.array([1, -1], np.int32))
    with pytest.raises(ig.DTypeError, match="bincount: x must be integers, got float64"):
        ig.bincount(V)
    with pytest.raises(ig.ShapeError, match=r"bincount: x must be 1-D, got shape \(5, 6\)"):
        ig.bincount(I, length=4)
    with pytest.raises(ValueError, match="diff: order must be non-negative but got -1"):
        ig.diff(A, n=-1)
    with pytest.raises(ValueError, match="diff: diff requires input that is at least one dimensional"):
        ig.diff(np.float64(3.0))
    with pytest.raises(ValueError, match=r"gradient: shape \(4, 2\) is too small along axis 1"):
        ig.gradient(A[:, :2], edge_order=2)
    with pytest.raises(ValueError, match="gradient: when 1d, distances must match the length"):
        ig.gradient(A, X6, X6)
    with pytest.raises(TypeError, match="gradient: 3 spacings given for 2 axes"):
        ig.gradient(A, 1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="digitize: bins must be monotonically increasing or decreasing"):
        ig.digitize(V, np.array([0.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="histogram: bins must increase monotonically"):
        ig.histogram(V, np.array([0.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="histogram: max must be larger than min in range parameter"):
        ig.histogram(V, 3, range=(2.0, 1.0))
    with pytest.raises(ValueError, match="select: list of cases must be same length as list of conditions"):
        ig.select([A > 0], [A, A])
    with pytest.raises(ig.DTypeError, match="select: invalid entry 1 in condlist: should be boolean, got float64"):
        ig.select([A > 0, A], [A, A])
    with pytest.raises(ValueError, match=r"vander: x must be a one-dimensional array or sequence, got shape \(4, 6\)"):
        ig.vander(A)
    with pytest.raises(ig.ShapeError, match=r"trapezoid: x of length 4 does not match axis 1"):
        ig.trapezoid(A, X6[:4])


def _same_stats(got, want, what="", rtol=1e-12):
    same_values(got, want, what, rtol, atol=1e-13)
