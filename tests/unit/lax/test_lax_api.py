"""ig.lax / irgrad.lax.structured: switch, map, associative_scan, dynamic slices, top_k, clamp,
select_n, integer_pow, and nonzero / argwhere / flatnonzero / unique with a static size.

Values against numpy references and JAX's documented semantics, eagerly, traced and under
`ig.jit`; derivatives against finite differences (`ig.check_grads`, float64) and the documented
contracts (taken branch only, clamped boxes, chosen positions, JAX's clamp rule); `ig.vmap` with
per-example indices; error messages.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
import irgrad.lax as lax
from irgrad.tracing.errors import ConcretizationError, DTypeError, ShapeError

rng = np.random.default_rng(7)

BRANCHES = [lambda a: a + 1.0, lambda a: ig.sin(a) * 2.0, lambda a: a * a, lambda a: -a]
BRANCHES_NP = [lambda a: a + 1.0, lambda a: np.sin(a) * 2.0, lambda a: a * a, lambda a: -a]


def np_dynamic_slice(x, starts, sizes):
    """JAX's rule: a negative start counts from the end once, then clamp to [0, dim - size]."""
    fit = [min(max(s + n if s < 0 else s, 0), n - k) for s, n, k in zip(starts, x.shape, sizes)]
    return x[tuple(slice(s, s + k) for s, k in zip(fit, sizes))], fit


def np_top_k(x, k):
    """Descending, equal values lower index first, NaN largest."""
    key = np.where(np.isnan(x), np.inf, x)
    nan_first = np.isnan(x)
    order = np.lexsort((np.arange(x.shape[-1]), -key, ~nan_first), axis=-1) if x.ndim == 1 else None
    if order is None:
        idx = np.stack([np_top_k(row, k)[1] for row in x.reshape(-1, x.shape[-1])]).reshape(*x.shape[:-1], k)
        return np.take_along_axis(x, idx, -1), idx
    idx = order[:k].astype(np.int32)
    return x[idx], idx


# ---------------------------------------------------------------------------------------------
# switch
# ---------------------------------------------------------------------------------------------


def test_switch_values_clamped_index_eager_and_traced():
    x = rng.standard_normal(5)

    def f(i, x):
        return lax.switch(i, BRANCHES, x)

    program = ig.trace(f, np.int32(0), x)
    assert str(program).count("scf.if") == 3  # a balanced tree of 4 leaves
    for i in range(-2, 7):
        want = BRANCHES_NP[min(max(i, 0), 3)](x)
        np.testing.assert_allclose(lax.switch(np.int32(i), BRANCHES, x), want, rtol=1e-14)
        np.testing.assert_allclose(program(np.int32(i), x), want, rtol=1e-14)
        np.testing.assert_allclose(lax.switch(i, BRANCHES, x), want, rtol=1e-14)  # a Python int
    # A static index calls the branch: no scf.if.
    assert "scf.if" not in str(ig.trace(lambda x: lax.switch(2, BRANCHES, x), x))
    # Odd counts, one branch, several operands and pytree results.
    three = [lambda a, b: (a + b, b), lambda a, b: (a - b, b * 2.0), lambda a, b: (a * b, -b)]
    for i in range(3):
        out = lax.switch(np.int64(i), three, x, 2.0 * x)
        want = [(x + 2 * x, 2 * x), (x - 2 * x, 4 * x), (2 * x * x, -2 * x)][i]
        np.testing.assert_allclose(out[0], want[0], rtol=1e-14)
        np.testing.assert_allclose(out[1], want[1], rtol=1e-14)
    np.testing.assert_allclose(lax.switch(np.int32(3), [lambda a: a * 3.0], x), 3 * x)


def test_switch_gradient_only_through_taken_branch_and_vmap():
    x = rng.standard_normal(4)
    for i in range(4):
        ig.check_grads(lambda x, i=i: ig.sum(lax.switch(np.int32(i), BRANCHES, x) ** 2), (x,), order=1,
                       modes=("fwd", "rev"))
    # Branch 3 is -a: gradient -1 everywhere, nothing from the others.
    g = ig.grad(lambda x: ig.sum(lax.switch(np.int32(9), BRANCHES, x)))(x)
    np.testing.assert_array_equal(g, -np.ones(4))
    # Per-example indices under vmap, and per-example gradients.
    idx = np.array([0, 1, 2, 3, -1, 7], np.int32)
    xs = rng.standard_normal((6, 4))
    out = ig.vmap(lambda i, x: lax.switch(i, BRANCHES, x))(idx, xs)
    want = np.stack([BRANCHES_NP[min(max(i, 0), 3)](x) for i, x in zip(idx, xs)])
    np.testing.assert_allclose(out, want, rtol=1e-14)
    grads = ig.vmap(ig.grad(lambda x, i: ig.sum(lax.switch(i, BRANCHES, x)), argnums=0))(xs, idx)
    dwant = np.stack([[np.ones(4), 2 * np.cos(x), 2 * x, -np.ones(4)][min(max(i, 0), 3)] for i, x in zip(idx, xs)])
    np.testing.assert_allclose(grads, dwant, rtol=1e-12)


def test_switch_errors():
    x = np.ones(3)
    with pytest.raises(ValueError, match="switch: branches must be a non-empty"):
        lax.switch(np.int32(0), [], x)
    with pytest.raises(DTypeError, match="switch: the index must be an integer scalar, got dtype float"):
        lax.switch(np.float32(1.0), BRANCHES, x)
    with pytest.raises(ShapeError, match="switch: the index must be a scalar"):
        lax.switch(np.array([0, 1], np.int32), BRANCHES, x)
    with pytest.raises(DTypeError, match="expected float64"):
        # A traced index (a concrete one, numpy's included, picks its branch statically).
        ig.jit(lambda i, x: lax.switch(i, [lambda a: a, lambda a: a.astype(np.float32)], x))(np.int32(0), x)


# ---------------------------------------------------------------------------------------------
# map, associative_scan
# ---------------------------------------------------------------------------------------------


def test_map_values_batch_sizes_pytrees_and_gradient():
    xs = rng.standard_normal((7, 3))
    want = np.tanh(xs) * xs.sum(1, keepdims=True)

    def f(x):
        return ig.tanh(x) * ig.sum(x)

    for bs in (None, 1, 3, 7, 10):
        np.testing.assert_allclose(lax.map(f, xs, batch_size=bs), want, rtol=1e-14, err_msg=str(bs))
    out = lax.map(lambda d: {"s": d["a"] + d["b"], "p": (d["a"] * 2.0,)}, {"a": xs, "b": xs[:, :1]}, batch_size=3)
    np.testing.assert_allclose(out["s"], xs + xs[:, :1], rtol=1e-14)
    np.testing.assert_allclose(out["p"][0], 2 * xs, rtol=1e-14)
    assert lax.map(f, np.zeros((0, 3))).shape == (0, 3)
    ig.check_grads(lambda xs: ig.sum(lax.map(f, xs) ** 2), (xs,), order=1, modes=("fwd", "rev"))
    ig.check_grads(lambda xs: ig.sum(lax.map(f, xs, batch_size=3) ** 2), (xs,), order=1, modes=("rev",))
    with pytest.raises(ValueError, match="map: batch_size must be positive"):
        lax.map(f, xs, batch_size=0)


def test_associative_scan_matches_sequential_scans():
    x = rng.standard_normal((9, 2))
    np.testing.assert_allclose(lax.associative_scan(ig.add, x), np.cumsum(x, 0), rtol=1e-13)
    np.testing.assert_allclose(lax.associative_scan(ig.add, x, reverse=True), np.cumsum(x[::-1], 0)[::-1], rtol=1e-13)
    np.testing.assert_allclose(lax.associative_scan(ig.maximum, x, axis=1), np.maximum.accumulate(x, 1))
    np.testing.assert_array_equal(lax.associative_scan(ig.add, np.arange(4, dtype=np.int32), reverse=True), [6, 6, 5, 3])
    # Not commutative: matrix products keep their order (fn(earlier, later)).
    mats = rng.standard_normal((6, 2, 2))
    prods = [mats[0]]
    for m in mats[1:]:
        prods.append(prods[-1] @ m)
    np.testing.assert_allclose(lax.associative_scan(ig.matmul, mats), np.stack(prods), rtol=1e-12)
    rprods = [mats[-1]]
    for m in mats[-2::-1]:
        rprods.append(rprods[-1] @ m)
    np.testing.assert_allclose(lax.associative_scan(ig.matmul, mats, reverse=True), np.stack(rprods[::-1]), rtol=1e-12)
    # A pytree: the linear recurrence h_t = a_t h_{t-1} + b_t, h_{-1} = 0.
    a, b = rng.uniform(0.5, 1.0, 10), rng.standard_normal(10)

    def compose(p, q):
        return (p[0] * q[0], q[0] * p[1] + q[1])

    h, hs = 0.0, []
    for t in range(10):
        h = a[t] * h + b[t]
        hs.append(h)
    np.testing.assert_allclose(lax.associative_scan(compose, (a, b))[1], hs, rtol=1e-12)
    ig.check_grads(lambda a, b: ig.sum(lax.associative_scan(compose, (a, b))[1] ** 2), (a, b), order=1,
                   modes=("fwd", "rev"))
    # The lax-signature cumulative reductions.
    np.testing.assert_allclose(lax.cummax(x, axis=0, reverse=True), np.maximum.accumulate(x[::-1], 0)[::-1])
    np.testing.assert_allclose(lax.cumprod(x[:, 0]), np.cumprod(x[:, 0]), rtol=1e-13)
    with pytest.raises(ShapeError, match="associative_scan: every array of elems needs the same length"):
        lax.associative_scan(compose, (a, b[:5]))
    with pytest.raises(ShapeError, match="associative_scan: fn output 0 has shape"):
        lax.associative_scan(lambda p, q: ig.sum(p + q, axis=0), x)


# ---------------------------------------------------------------------------------------------
# dynamic slices
# ---------------------------------------------------------------------------------------------


def test_dynamic_slice_and_update_clamp_like_jax():
    x = rng.standard_normal((5, 6))
    sizes = [2, 3]
    trace_s = ig.trace(lambda x, i, j: lax.dynamic_slice(x, [i, j], sizes), x, np.int32(0), np.int32(0))
    trace_u = ig.trace(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)), x, np.ones((2, 3)), np.int32(0), np.int32(0))
    assert "nn.dynamic_slice" in str(trace_s) and "nn.dynamic_update_slice" in str(trace_u)
    u = rng.standard_normal((2, 3))
    for starts in [(0, 0), (3, 3), (4, 5), (-1, -2), (-9, 2), (100, -100), (1, 3)]:
        want, fit = np_dynamic_slice(x, starts, sizes)
        i, j = np.int32(starts[0]), np.int32(starts[1])
        for got in (lax.dynamic_slice(x, [i, j], sizes), lax.dynamic_slice(x, list(starts), sizes),
                    lax.dynamic_slice(x, np.array(starts, np.int64), sizes), trace_s(x, i, j)):
            np.testing.assert_array_equal(got, want, err_msg=str(starts))
        upd = x.copy()
        upd[fit[0] : fit[0] + 2, fit[1] : fit[1] + 3] = u
        for got in (lax.dynamic_update_slice(x, u, [i, j]), lax.dynamic_update_slice(x, u, list(starts)), trace_u(x, u, i, j)):
            np.testing.assert_array_equal(got, upd, err_msg=str(starts))
    # The in_dim forms.
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, np.int32(4), 2, axis=1), x[:, 4:6])
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, np.int32(9), 2, axis=0), x[3:5])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, np.int32(-1), axis=1), x[:, 5:6])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, np.int32(2), axis=0, keepdims=False), x[2])
    want = x.copy()
    want[:2, 4:6] = u[:, :2]
    np.testing.assert_array_equal(lax.dynamic_update_slice_in_dim(x, u[:, :2], np.int32(5), axis=1), want)
    want = x.copy()
    want[1] = 7.0
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(x, np.full(6, 7.0), np.int32(1), 0), want)
    # allow_negative_indices=False: a negative start is out of range, clamped to 0.
    np.testing.assert_array_equal(lax.dynamic_slice(x, [np.int32(-1), 0], [1, 6], allow_negative_indices=False), x[:1])


def test_dynamic_slice_gradients_and_vmap():
    x = rng.standard_normal((5, 4))
    u = rng.standard_normal((2, 2))
    w = rng.standard_normal((5, 4))
    for i, j in [(1, 1), (4, 3), (-1, 0)]:
        ii, jj = np.int32(i), np.int32(j)
        ig.check_grads(lambda x: ig.sum(lax.dynamic_slice(x, [ii, jj], [2, 2]) ** 2), (x,), order=1, modes=("fwd", "rev"))
        ig.check_grads(lambda x, u: ig.sum(w * lax.dynamic_update_slice(x, u * u, [ii, jj]) ** 2), (x, u), order=1,
                       modes=("fwd", "rev"))
    # Contracts: the cotangent lands on the clamped box; the overwritten box gets none.
    g = ig.grad(lambda x: ig.sum(lax.dynamic_slice(x, [np.int32(9), np.int32(-9)], [2, 2])))(x)
    want = np.zeros_like(x)
    want[3:5, 0:2] = 1.0
    np.testing.assert_array_equal(g, want)
    gx, gu = ig.grad(lambda x, u: ig.sum(w * lax.dynamic_update_slice(x, u, [np.int32(7), np.int32(1)])), argnums=(0, 1))(x, u)
    want = w.copy()
    want[3:5, 1:3] = 0.0
    np.testing.assert_array_equal(gx, want)
    np.testing.assert_array_equal(gu, w[3:5, 1:3])
    # Per-example starts under vmap.
    xs = rng.standard_normal((4, 6))
    starts = np.array([0, 5, -2, 3], np.int32)
    got = ig.vmap(lambda x, s: lax.dynamic_slice(x, [s], [3]))(xs, starts)
    np.testing.assert_array_equal(got, np.stack([np_dynamic_slice(x, [s], [3])[0] for x, s in zip(xs, starts)]))
    got = ig.vmap(lambda x, s: lax.dynamic_update_slice_in_dim(x, np.zeros(2), s, 0))(xs, starts)
    for row, x, s in zip(got, xs, starts):
        _, (f,) = np_dynamic_slice(x, [s], [2])
        want = x.copy()
        want[f : f + 2] = 0
        np.testing.assert_array_equal(row, want)


def test_dynamic_slice_errors():
    x = np.ones((3, 4))
    with pytest.raises(ShapeError, match=r"dynamic_slice: 1 start indices for an operand of rank 2"):
        lax.dynamic_slice(x, [np.int32(0)], [1, 1])
    with pytest.raises(ShapeError, match=r"dynamic_slice: slice_sizes \(4, 1\) do not fit"):
        lax.dynamic_slice(x, [0, 0], [4, 1])
    with pytest.raises(DTypeError, match="dynamic_slice: start indices must be integers, got dtype float"):
        lax.dynamic_slice(x, [np.float32(0), 0], [1, 1])
    with pytest.raises(DTypeError, match="dynamic_update_slice: update has dtype float32, operand float64"):
        lax.dynamic_update_slice(x, np.ones((1, 1), np.float32), [0, 0])
    with pytest.raises(ShapeError, match=r"dynamic_update_slice: update of shape \(4, 1\) does not fit"):
        lax.dynamic_update_slice(x, np.ones((4, 1)), [0, 0])


# ---------------------------------------------------------------------------------------------
# top_k
# ---------------------------------------------------------------------------------------------


def test_top_k_values_ties_nan_and_axis():
    x = rng.integers(0, 5, (3, 9)).astype(np.float64)  # many ties
    for k in (0, 1, 4, 9):
        v, i = lax.top_k(x, k)
        wv, wi = np_top_k(x, k)
        assert i.dtype == np.int32 and v.shape == (3, k)
        np.testing.assert_array_equal(i, wi)
        np.testing.assert_array_equal(v, wv)
    xi = rng.integers(-3, 3, 11).astype(np.int32)
    v, i = lax.top_k(xi, 5)
    np.testing.assert_array_equal(i, np_top_k(xi, 5)[1])
    assert v.dtype == np.int32
    v, i = lax.top_k(np.array([1.0, np.nan, 3.0, -np.inf, np.inf, 3.0]), 4)
    np.testing.assert_array_equal(i, [1, 4, 2, 5])
    np.testing.assert_array_equal(v, [np.nan, np.inf, 3.0, 3.0])
    np.testing.assert_array_equal(lax.top_k(x, 2, axis=0)[1], np_top_k(x.T, 2)[1].T)
    with pytest.raises(ValueError, match=r"top_k: k=10 must be in \[0, 9\]"):
        lax.top_k(x, 10)
    with pytest.raises(ShapeError, match="top_k: the operand must have at least one axis"):
        lax.top_k(np.float64(1.0), 1)


def test_top_k_gradient_and_vmap():
    x = rng.standard_normal((2, 7))
    ig.check_grads(lambda x: ig.sum(lax.top_k(x, 3)[0] ** 3), (x,), order=1, modes=("fwd", "rev"))
    # Ties: the cotangent goes to the chosen (lower-index) positions only.
    t = np.array([2.0, 5.0, 5.0, 1.0, 5.0])
    g = ig.grad(lambda t: ig.sum(lax.top_k(t, 2)[0] * np.array([10.0, 1.0])))(t)
    np.testing.assert_array_equal(g, [0, 10, 1, 0, 0])
    xs = rng.standard_normal((4, 6))
    v, i = ig.vmap(lambda r: lax.top_k(r, 2))(xs)
    np.testing.assert_array_equal(i, np_top_k(xs, 2)[1])
    np.testing.assert_array_equal(v, np_top_k(xs, 2)[0])


# ---------------------------------------------------------------------------------------------
# clamp, select_n, integer_pow
# ---------------------------------------------------------------------------------------------


def test_clamp_values_and_jax_gradient_rule():
    x = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0, np.nan])
    np.testing.assert_array_equal(lax.clamp(-1.0, x, 1.0), np.clip(x, -1, 1))
    lo, hi = np.full(7, -1.0), np.array([1, 1, 1, 1, 1, 1, 1.0])
    np.testing.assert_array_equal(lax.clamp(lo, x, hi), np.clip(x, -1, 1))
    assert lax.clamp(2, np.arange(5, dtype=np.int32), 3).dtype == np.int32
    np.testing.assert_array_equal(lax.clamp(3.0, x[:6], 1.0), np.full(6, 1.0))  # min > max: max
    gmin, gx, gmax = ig.grad(lambda a, x, b: ig.sum(lax.clamp(a, x, b)), argnums=(0, 1, 2))(lo[:6], x[:6], hi[:6])
    np.testing.assert_array_equal(gx, [0, 0, 1, 1, 0, 0])  # none at x == min or x == max
    np.testing.assert_array_equal(gmin, [1, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(gmax, [0, 0, 0, 0, 0, 1])
    y = rng.standard_normal(8) * 2
    ig.check_grads(lambda y: ig.sum(lax.clamp(-1.0, y, 1.0) ** 2), (y,), order=1, modes=("fwd", "rev"))
    with pytest.raises(DTypeError, match="clamp: min has dtype float32 and x float64"):
        lax.clamp(np.float32(0), x, 1.0)
    with pytest.raises(ShapeError, match="clamp: max has shape"):
        lax.clamp(0.0, x, np.ones(3))


def test_select_n_and_integer_pow():
    a, b, c = (rng.standard_normal((2, 3)) for _ in range(3))
    which = np.array([[0, 1, 2], [2, 1, 0]], np.int32)
    np.testing.assert_array_equal(lax.select_n(which, a, b, c), np.choose(which, [a, b, c]))
    np.testing.assert_array_equal(lax.select_n(np.bool_(True), a, b), b)
    np.testing.assert_array_equal(lax.select(which > 0, a, b), np.where(which > 0, a, b))
    ga, gb, gc = ig.grad(lambda a, b, c: ig.sum(lax.select_n(which, a, b, c)), argnums=(0, 1, 2))(a, b, c)
    np.testing.assert_array_equal(ga + 2 * gb + 4 * gc, np.choose(which, [1, 2, 4]))
    with pytest.raises(DTypeError, match="select_n: a bool which selects between at most 2 cases"):
        lax.select_n(np.bool_(True), a, b, c)
    with pytest.raises(ShapeError, match="select_n: cases have shapes"):
        lax.select_n(np.int32(0), a, b[0])
    x = rng.standard_normal(6)
    for y in (0, 1, 2, 3, 5, 8, -1, -3):
        np.testing.assert_allclose(lax.integer_pow(x, y), x**y, rtol=1e-14, err_msg=str(y))
    np.testing.assert_array_equal(lax.integer_pow(np.arange(5, dtype=np.int32), 3), np.arange(5) ** 3)
    for y, want in [(1, 1.0), (2, 0.0), (3, 0.0), (0, 0.0), (-1, -np.inf), (-2, -np.inf)]:  # JAX's, at x = 0
        assert float(ig.grad(lambda t: lax.integer_pow(t, y))(0.0)) == want
    ig.check_grads(lambda x: ig.sum(lax.integer_pow(x, 5) + lax.integer_pow(x, -2)), (x,), order=2, modes=("fwd", "rev"))
    with pytest.raises(TypeError, match="integer_pow: y must be a Python int"):
        lax.integer_pow(x, 2.0)
    with pytest.raises(ValueError, match="integers cannot be raised to a negative power"):
        lax.integer_pow(np.arange(3), -1)


# ---------------------------------------------------------------------------------------------
# nonzero, argwhere, flatnonzero, unique
# ---------------------------------------------------------------------------------------------


def test_nonzero_family_against_numpy():
    a = rng.integers(0, 3, (4, 5)) * (rng.random((4, 5)) < 0.5)
    nz = np.nonzero(a)
    count = len(nz[0])
    for got in (ig.nonzero(a), ig.trace(lambda a: ig.nonzero(a, size=count), a)(a)):
        assert all(g.dtype == np.int32 for g in got)
        for g, w in zip(got, nz):
            np.testing.assert_array_equal(g, w)
    padded = ig.nonzero(a, size=count + 3, fill_value=(-1, 99))
    np.testing.assert_array_equal(padded[0], np.r_[nz[0], -1, -1, -1])
    np.testing.assert_array_equal(padded[1], np.r_[nz[1], 99, 99, 99])
    cut = ig.nonzero(a, size=2)
    np.testing.assert_array_equal(np.stack(cut), np.stack(nz)[:, :2])
    np.testing.assert_array_equal(ig.argwhere(a), np.argwhere(a))
    np.testing.assert_array_equal(ig.argwhere(a, size=count + 1, fill_value=7)[-1], [7, 7])
    np.testing.assert_array_equal(ig.flatnonzero(a), np.flatnonzero(a))
    np.testing.assert_array_equal(ig.flatnonzero(a > 1, size=30), np.r_[np.flatnonzero(a > 1), np.zeros(30 - (a > 1).sum())])
    np.testing.assert_array_equal(ig.nonzero(np.zeros(4))[0], np.zeros(0))
    assert ig.argwhere(np.float32(2.0)).shape == (1, 0)
    # A captured numpy constant is concrete: no size needed inside a trace.
    b = np.array([0.0, 2.0, 0.0, 1.0])
    np.testing.assert_array_equal(ig.trace(lambda x: x[ig.flatnonzero(b)], b)(b), [2.0, 1.0])


def test_unique_against_numpy():
    a = rng.integers(0, 6, 15).astype(np.float64)
    a[[2, 9]] = np.nan
    want = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    got = ig.unique(a, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert [g.dtype for g in got[1:]] == [np.int32] * 3
    n = len(want[0])
    v, i, inv, c = ig.unique(a, True, True, True, size=n + 2)
    np.testing.assert_array_equal(v, np.r_[want[0], want[0][0], want[0][0]])  # pads with the min
    np.testing.assert_array_equal(i, np.r_[want[1], want[1][0], want[1][0]])
    np.testing.assert_array_equal(c, np.r_[want[3], 0, 0])
    np.testing.assert_array_equal(inv, want[2])
    np.testing.assert_array_equal(ig.unique(a, size=2, fill_value=-1.0), want[0][:2])
    np.testing.assert_array_equal(ig.unique(a, size=n + 1, fill_value=-1.0), np.r_[want[0], -1.0])
    np.testing.assert_array_equal(ig.unique(a, equal_nan=False), np.unique(a, equal_nan=False))
    m = rng.integers(0, 4, (3, 4)).astype(np.int32)
    np.testing.assert_array_equal(ig.unique(m), np.unique(m))
    np.testing.assert_array_equal(ig.unique(m, return_inverse=True)[1], np.unique(m, return_inverse=True)[1])
    # unique's values are a gather: the first occurrence of each value gets the cotangent.
    x = np.array([3.0, 1.0, 3.0, 2.0, 1.0])
    g = ig.grad(lambda x: ig.sum(ig.unique(x, size=3) * np.array([1.0, 10.0, 100.0])))(x)
    np.testing.assert_array_equal(g, [100, 1, 0, 10, 0])


def test_data_dependent_shapes_need_size_when_traced():
    a = np.array([0, 1, 2])
    for fn, name in [(ig.nonzero, "nonzero"), (ig.argwhere, "argwhere"), (ig.flatnonzero, "flatnonzero"),
                     (ig.unique, "unique")]:
        with pytest.raises(ConcretizationError, match=f"{name}: the size of the result depends .*pass size="):
            ig.jit(lambda a, fn=fn: fn(a))(a)
    with pytest.raises(ConcretizationError, match="nonzero: .*pass size="):
        ig.vmap(lambda r: ig.nonzero(r)[0])(np.eye(3))
    with pytest.raises(ShapeError, match="nonzero: not defined for a 0-d array"):
        ig.nonzero(np.float32(1.0))
    with pytest.raises(NotImplementedError, match="unique: only axis=None"):
        ig.unique(np.ones((2, 2)), axis=0)
    # With size, vmap works per example.
    rows = np.array([[0, 3, 0, 4], [5, 0, 0, 0], [0, 0, 0, 0]])
    got = ig.vmap(lambda r: ig.flatnonzero(r, size=2, fill_value=-1))(rows)
    np.testing.assert_array_equal(got, [[1, 3], [0, -1], [-1, -1]])


# ---------------------------------------------------------------------------------------------
# Compiled, and the namespace
# ---------------------------------------------------------------------------------------------


def test_everything_under_jit_cpu():
    x = rng.standard_normal((5, 6))
    v = rng.integers(0, 4, 10).astype(np.float64)

    def f(x, v, i, j):
        s = lax.switch(i, BRANCHES, x)
        d = lax.dynamic_slice(s, [i, j], [2, 3])
        u = lax.dynamic_update_slice(x, d * 2.0, (j, i))
        top_v, top_i = lax.top_k(u, 2)
        scanned = lax.associative_scan(ig.add, x, axis=1)
        mapped = lax.map(lambda r: ig.sum(r * r), x)
        nz = ig.nonzero(v, size=12, fill_value=-1)[0]
        uq, counts = ig.unique(v, return_counts=True, size=5)
        c = lax.clamp(-0.5, x, 0.5) + lax.integer_pow(x, 3)
        return s, d, u, top_v, top_i, scanned, mapped, nz, uq, counts, c

    jf = ig.jit(f)
    for i, j in [(1, 2), (7, -1)]:
        args = (x, v, np.int32(i), np.int32(j))
        for got, want in zip(jf(*args), f(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
        grads = ig.jit(ig.grad(lambda x: ig.sum(f(x, v, np.int32(i), np.int32(j))[3] ** 2)))(x)
        np.testing.assert_allclose(grads, ig.grad(lambda x: ig.sum(f(x, v, np.int32(i), np.int32(j))[3] ** 2))(x),
                                   rtol=1e-13)


def test_lax_namespace_and_top_level_names():
    for name in ["cond", "fori_loop", "while_loop", "scan", "stop_gradient", "switch", "map", "associative_scan",
                 "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_update_slice_in_dim",
                 "dynamic_index_in_dim", "top_k", "clamp", "select_n", "select", "integer_pow", "square", "rsqrt",
                 "cumsum", "cummax"]:
        assert callable(getattr(lax, name)), name
    assert set(lax.__all__) <= set(dir(lax))
    for name in ["switch", "associative_scan", "dynamic_slice", "top_k", "clamp", "select_n", "integer_pow"]:
        assert getattr(ig, name) is getattr(__import__("irgrad.lax.structured", fromlist=[name]), name), name
    for name in ["nonzero", "argwhere", "flatnonzero", "unique", "where"]:
        assert getattr(ig, name) is getattr(__import__("irgrad.numpy.data_dependent", fromlist=[name]), name), name
    assert not hasattr(ig, "map")  # lax.map only: it would shadow the builtin under `import *`
    np.testing.assert_allclose(lax.logistic(np.zeros(2)), [0.5, 0.5])
    np.testing.assert_array_equal(lax.rem(np.array([-7, 7], np.int32), np.int32(3)), [-1, 1])


@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh"])
def test_inverse_hyperbolic_names_are_jax_lax_values(name):
    """lax.asinh/acosh/atanh: numpy's arcsinh/arccosh/arctanh under lax's names, real and
    complex, values and first derivatives against jax.lax."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    real = np.array([0.25, 0.5, 0.75]) + (1.5 if name == "acosh" else 0.0)
    z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    ours, theirs = getattr(lax, name), getattr(jax.lax, name)
    for x in (real, z):
        np.testing.assert_allclose(np.asarray(ours(x)), np.asarray(theirs(x)), rtol=1e-12)
    g = ig.grad(lambda x: ig.sum(ours(x)))(real)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(lambda x: jax.numpy.sum(theirs(x)))(real)), rtol=1e-12)
