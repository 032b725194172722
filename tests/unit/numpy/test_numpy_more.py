"""irgrad/numpy/more.py against numpy: array/asarray (traced leaves, JAX's dtypes),
flips, rotations, appends, splits, index constructions, log/geometric ranges, fill_diagonal
and the static queries; eagerly and traced, with gradients against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig

rng = np.random.default_rng(11)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((2, 3, 4))


def _same(got, want, rtol=1e-13):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-14)


def _both(fn, *args):
    """fn run eagerly and inside one traced program."""
    return fn(*args), ig.trace(fn, *args)(*args)


def test_array_dtypes_follow_jax():
    assert ig.array([1.0, 2.0]).dtype == np.float32  # Python floats are weak: float32
    assert ig.array([1, 2]).dtype == np.int32
    assert ig.array([True, False]).dtype == np.bool_
    assert ig.array(A).dtype == np.float64  # numpy arrays keep theirs
    assert ig.array([[1, 2]], dtype=ig.float64).dtype == np.float64
    assert ig.asarray(np.arange(3, dtype=np.int64)).dtype == np.int64
    assert ig.array(2.5, ndmin=2).shape == (1, 1)


def test_array_of_traced_values_stacks_them_and_differentiates():
    fn = lambda x: ig.array([[x[0, 0], 2.0], [x[1, 1], x[2, 2]]])  # noqa: E731
    for got in _both(fn, A):
        _same(got, np.array([[A[0, 0], 2.0], [A[1, 1], A[2, 2]]]))
    g = ig.grad(lambda x: ig.sum(ig.array([x[0, 0] * 2, x[1, 1], x[0, 0]]) ** 2))(A)
    want = np.zeros_like(A)
    want[0, 0] = 8 * A[0, 0] + 2 * A[0, 0]
    want[1, 1] = 2 * A[1, 1]
    _same(g, want)
    rows = lambda x: ig.asarray([x[0], x[2]])  # noqa: E731
    _same(ig.jit(rows)(A), A[[0, 2]])


def test_array_errors():
    with pytest.raises(ig.ShapeError, match="inhomogeneous"):
        ig.trace(lambda x: ig.array([x[0], x[0, :2]]), A)


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 5])
def test_rot90(k):
    for got in _both(lambda m: ig.rot90(m, k), A):
        _same(got, np.rot90(A, k))
    for got in _both(lambda m: ig.rot90(m, k, axes=(2, 1)), B):
        _same(got, np.rot90(B, k, axes=(2, 1)))


def test_flips_append_and_splits():
    cases = [
        (lambda a: ig.fliplr(a), lambda a: np.fliplr(a)),
        (lambda a: ig.flipud(a), lambda a: np.flipud(a)),
        (lambda a: ig.append(a, a[:1], axis=0), lambda a: np.append(a, a[:1], axis=0)),
        (lambda a: ig.append(a, [1.0, 2.0]), lambda a: np.append(a, [1.0, 2.0])),
        (lambda a: ig.hsplit(a, 2)[1], lambda a: np.hsplit(a, 2)[1]),
        (lambda a: ig.vsplit(a, [1])[1], lambda a: np.vsplit(a, [1])[1]),
    ]
    for fn, want in cases:
        for got in _both(fn, A):
            _same(got, want(A))
    for g, w in zip(ig.dsplit(B, [1, 3]), np.dsplit(B, [1, 3])):
        _same(g, w)
    _same(ig.hsplit(A[0], 2)[0], np.hsplit(A[0], 2)[0])
    with pytest.raises(ig.ShapeError, match="dsplit"):
        ig.dsplit(A, 2)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_rollaxis(axis):
    for start in range(-3, 4):
        _same(ig.rollaxis(B, axis, start), np.rollaxis(B, axis, start))


def test_index_constructions():
    _same(ig.indices((2, 3)), np.indices((2, 3)))
    for g, w in zip(ig.indices((2, 3, 2), sparse=True), np.indices((2, 3, 2), sparse=True)):
        _same(g, w)
    ix = (np.array([0, 2]), np.array([1, 3]))
    for g, w in zip(ig.ix_(*ix), np.ix_(*ix)):
        _same(g, w)
    _same(ig.jit(lambda a: a[ig.ix_(*ix)])(A), A[np.ix_(*ix)])
    for got, want in [
        (ig.tril_indices(4, -1), np.tril_indices(4, -1)),
        (ig.triu_indices(3, 1, 4), np.triu_indices(3, 1, 4)),
        (ig.tril_indices_from(A), np.tril_indices_from(A)),
        (ig.triu_indices_from(A, 1), np.triu_indices_from(A, 1)),
        (ig.diag_indices(3, 3), np.diag_indices(3, 3)),
        (ig.diag_indices_from(np.ones((2, 2))), np.diag_indices_from(np.ones((2, 2)))),
    ]:
        assert all(g.dtype == np.int32 for g in got)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    _same(ig.jit(lambda a: a[ig.triu_indices(3, 1, 4)])(A), A[np.triu_indices(3, 1, 4)])


def test_unravel_and_ravel_multi_index():
    flat = np.array([0, 5, 11, 7, -1, 30, -20], np.int32)
    clipped = np.clip(np.where(flat < 0, flat + 12, flat), 0, 11)
    for g, w in zip(ig.unravel_index(flat, (3, 4)), np.unravel_index(clipped, (3, 4))):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == np.int32
    rows, cols = np.array([0, 2, 5], np.int32), np.array([1, 3, -1], np.int32)
    np.testing.assert_array_equal(ig.ravel_multi_index((rows, cols), (3, 4)), [1, 11, 8])
    np.testing.assert_array_equal(ig.ravel_multi_index((rows, cols), (3, 4), mode="wrap"),
                                  np.ravel_multi_index((rows, cols), (3, 4), mode="wrap"))
    with pytest.raises(ValueError, match="'clip' or 'wrap'"):
        ig.ravel_multi_index((rows, cols), (3, 4), mode="raise")


def test_logspace_and_geomspace():
    _same(ig.logspace(0.0, 2.0, 5), np.logspace(0, 2, 5), rtol=1e-6)
    _same(ig.logspace(np.float64(1), np.float64(3), 7, base=2.0), np.logspace(1, 3, 7, base=2.0))
    _same(ig.geomspace(np.float64(1), np.float64(1000), 4), np.geomspace(1, 1000, 4))
    _same(ig.geomspace(np.float64(-2), np.float64(-32), 5, endpoint=False), np.geomspace(-2, -32, 5, endpoint=False))
    g = ig.geomspace(np.float64(3), np.float64(7), 6)
    assert g[0] == 3.0 and g[-1] == 7.0  # the ends exact, as numpy


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((5, 3), False), ((5, 3), True), ((3, 5), False), ((3, 3, 3), False)])
def test_fill_diagonal(shape, wrap):
    a = rng.standard_normal(shape)
    for val in (7.0, np.arange(1.0, 5.0)):
        want = a.copy()
        np.fill_diagonal(want, val, wrap=wrap)
        for got in _both(lambda m, v: ig.fill_diagonal(m, v, wrap=wrap), a, np.asarray(val)):
            _same(got, want)
    with pytest.raises(ValueError, match="inplace=False"):
        ig.fill_diagonal(a, 1.0, inplace=True)


def test_gradients_against_finite_differences():
    def f(a, b):
        return (
            ig.rot90(b, 1, axes=(1, 2)) * 2,
            ig.append(a, b[0]),
            ig.fill_diagonal(a, b[1, 0]),
            ig.geomspace(ig.abs(a[0, 0]) + 1.0, ig.abs(a[1, 1]) + 2.0, 5),
            ig.array([a[0, 1], b[1, 2, 3]]),
        )

    ig.check_grads(f, (A, B), order=1, modes=("fwd", "rev"))


def test_static_queries_and_broadcasting():
    assert (ig.size(A), ig.size(A, 1), ig.ndim(B), ig.shape(B)) == (12, 4, 3, (2, 3, 4))
    assert ig.isscalar(3.0) and ig.isscalar(np.float32(1)) and not ig.isscalar(A)
    assert ig.broadcast_shapes((3, 1), (4,), 1) == (3, 4)
    for g, w in zip(ig.broadcast_arrays(A[:, :1], A[0]), np.broadcast_arrays(A[:, :1], A[0])):
        _same(g, w)
    seen = []
    ig.trace(lambda x: seen.append((ig.size(x), ig.ndim(x), ig.shape(x), ig.isscalar(x[0, 0]))) or x, A)
    assert seen == [(12, 2, (3, 4), True)]


def test_geomspace_of_arrays_and_ravel_multi_index_in_fortran_order():
    start, stop = np.array([1.0, 2.0]), np.array([100.0, 8.0])
    _same(ig.geomspace(start, stop, num=3), np.geomspace(start, stop, num=3))
    _same(ig.geomspace(start, stop, num=4, axis=1), np.geomspace(start, stop, num=4, axis=1))
    idx = (np.array([0, 2, 1], np.int32), np.array([1, 3, 0], np.int32))
    np.testing.assert_array_equal(ig.ravel_multi_index(idx, (3, 4), order="F"),
                                  np.ravel_multi_index(idx, (3, 4), order="F"))
