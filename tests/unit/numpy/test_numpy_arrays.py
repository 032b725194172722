"""Construction, shape and product functions (irgrad/numpy/arrays.py, products.py) vs numpy:
each eagerly on several dtypes and edge cases (negative axes, empty arrays, uneven splits), all
of them again in one `ig.jit` compile, gradients against finite differences, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig

rng = np.random.default_rng(11)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((2, 3, 4))
V = rng.standard_normal(5)
W = rng.standard_normal(5)
I = rng.integers(-9, 9, (3, 4)).astype(np.int32)  # noqa: E741


def _same(got, want, what=""):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), what
        for g, w in zip(got, want):
            _same(g, w, what)
        return
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14, err_msg=what)


# (ig callable, numpy callable, args): ig and numpy take the same arguments.
CASES = [
    ("eye", lambda m: m.eye(4, 5, 1, dtype=np.float64), ()),
    ("eye_neg_k", lambda m: m.eye(3, k=-2, dtype=np.int32), ()),
    ("identity", lambda m: m.identity(3, dtype=np.float32), ()),
    ("tri", lambda m: m.tri(3, 5, -1, dtype=np.float64), ()),
    ("tril", lambda m, x: m.tril(x, -1), (B,)),
    ("triu", lambda m, x: m.triu(x, 2), (I,)),
    ("tril_1d", lambda m, x: m.tril(x), (V,)),
    ("linspace", lambda m: m.linspace(np.float64(-1.0), np.float64(2.5), 7), ()),
    ("linspace_open", lambda m: m.linspace(np.float64(0.0), np.float64(1.0), 5, endpoint=False), ()),
    ("linspace_arrays", lambda m, a, b: m.linspace(a, b, 4, axis=-1), (V, W)),
    ("linspace_one", lambda m: m.linspace(np.float64(3.0), np.float64(4.0), 1), ()),
    ("linspace_int", lambda m: m.linspace(np.float64(0.0), np.float64(10.0), 4, dtype=np.int32), ()),
    ("full_like", lambda m, x: m.full_like(x, 2.5), (A,)),
    ("full_like_int", lambda m, x: m.full_like(x, 7, dtype=np.float32), (I,)),
    ("ravel", lambda m, x: m.ravel(x), (B,)),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), (B,)),
    ("moveaxis_multi", lambda m, x: m.moveaxis(x, [0, -1], [-1, 0]), (B,)),
    ("atleast_1d", lambda m, x: m.atleast_1d(x), (np.array(3.0),)),
    ("atleast_2d", lambda m, x, y: m.atleast_2d(x, y), (V, A)),
    ("atleast_3d", lambda m, x, y, z: m.atleast_3d(x, y, z), (np.array(1.0), V, A)),
    ("vstack", lambda m, x, y: m.vstack([x, y]), (V, W)),
    ("vstack2", lambda m, x, y: m.vstack((x, y)), (A, A)),
    ("hstack", lambda m, x, y: m.hstack([x, y]), (V, W)),
    ("hstack2", lambda m, x, y: m.hstack([x, y]), (A, I)),
    ("dstack", lambda m, x, y: m.dstack([x, y]), (A, A)),
    ("column_stack", lambda m, x, y: m.column_stack([x, y]), (V, W)),
    ("split", lambda m, x: m.split(x, 2, axis=-1), (B,)),
    ("split_points", lambda m, x: m.split(x, [1, -1, 9]), (V,)),
    ("array_split", lambda m, x: m.array_split(x, 3), (V,)),
    ("array_split_ax", lambda m, x: m.array_split(x, 3, axis=-1), (A,)),
    ("tile", lambda m, x: m.tile(x, (2, 1, 3)), (A,)),
    ("tile_short", lambda m, x: m.tile(x, 2), (B,)),
    ("repeat", lambda m, x: m.repeat(x, 2), (A,)),
    ("repeat_axis", lambda m, x: m.repeat(x, 3, axis=-2), (B,)),
    ("repeat_counts", lambda m, x: m.repeat(x, [2, 0, 1, 3], axis=1), (I,)),
    ("flip", lambda m, x: m.flip(x), (B,)),
    ("flip_axis", lambda m, x: m.flip(x, (0, -1)), (B,)),
    ("roll", lambda m, x: m.roll(x, 5), (A,)),
    ("roll_axis", lambda m, x: m.roll(x, -1, axis=-1), (B,)),
    ("roll_multi", lambda m, x: m.roll(x, (1, 2, -3), (0, 2, 2)), (B,)),
    ("meshgrid_xy", lambda m, x, y: m.meshgrid(x, y), (V, A)),
    ("meshgrid_ij", lambda m, x, y, z: m.meshgrid(x, y, z, indexing="ij"), (V, W, V)),
    ("meshgrid_sparse", lambda m, x, y: m.meshgrid(x, y, sparse=True), (V, W)),
    ("diag_make", lambda m, x: m.diag(x), (V,)),
    ("diag_make_k", lambda m, x: m.diag(x, 2), (V,)),
    ("diag_make_neg", lambda m, x: m.diag(x, -1), (I[0],)),
    ("diag_take", lambda m, x: m.diag(x, 1), (A,)),
    ("diag_take_neg", lambda m, x: m.diag(x, -2), (A,)),
    ("diagonal", lambda m, x: m.diagonal(x), (B,)),
    ("diagonal_axes", lambda m, x: m.diagonal(x, 1, -1, 0), (B,)),
    ("diagonal_neg", lambda m, x: m.diagonal(x, -1, 1, 2), (B,)),
    ("diagonal_empty", lambda m, x: m.diagonal(x, 7), (A,)),
    ("outer", lambda m, x, y: m.outer(x, y), (V, A)),
    ("inner", lambda m, x, y: m.inner(x, y), (B, A)),
    ("inner_1d", lambda m, x, y: m.inner(x, y), (V, W)),
    ("vdot", lambda m, x, y: m.vdot(x, y), (A, A)),
    ("tensordot", lambda m, x, y: m.tensordot(x, y), (B, A)),
    ("tensordot_pairs", lambda m, x, y: m.tensordot(x, y, axes=([0, 2], [1, 0])), (B, rng.standard_normal((4, 2, 5)))),
    ("tensordot_0", lambda m, x, y: m.tensordot(x, y, 0), (V, W)),
    ("kron", lambda m, x, y: m.kron(x, y), (A, B)),
    ("kron_int", lambda m, x, y: m.kron(x, y), (I, I[:2, :2])),
    ("cross", lambda m, x, y: m.cross(x, y), (rng.standard_normal((4, 3)), rng.standard_normal(3))),
    ("cross_axis", lambda m, x, y: m.cross(x, y, axis=0), (rng.standard_normal((3, 2)), rng.standard_normal((3, 2)))),
]


def _want(fn, args):
    out = fn(np, *args)
    return list(out) if isinstance(out, tuple) else out


def test_every_function_against_numpy_eagerly():
    for name, fn, args in CASES:
        _same(fn(ig, *args), _want(fn, args), name)


def test_every_function_against_numpy_under_one_jit():
    arrays = [a for _, _, args in CASES for a in args]
    counts = [len(args) for _, _, args in CASES]

    def all_cases(*flat):
        out, k = [], 0
        for (_, fn, _), n in zip(CASES, counts):
            out.append(fn(ig, *flat[k : k + n]))
            k += n
        return out

    got = ig.jit(all_cases)(*arrays)
    for (name, fn, args), g in zip(CASES, got):
        _same(g, _want(fn, args), name)


def test_dtypes_and_edge_cases():
    assert ig.eye(2).dtype == np.float32  # JAX's default float
    assert ig.linspace(0, 1, 3).dtype == np.float32
    _same(ig.linspace(0, 1, 0), np.linspace(0, 1, 0, dtype=np.float32))
    y, step = ig.linspace(np.float64(0), np.float64(1), 5, retstep=True)
    assert float(step) == 0.25 and y[-1] == 1.0
    assert np.isnan(ig.linspace(np.float64(0), np.float64(1), 1, retstep=True)[1])
    _same(ig.empty((2, 3)), np.zeros((2, 3), np.float32))
    _same(ig.empty_like(I), np.zeros_like(I))
    empty = np.zeros((0, 3))
    _same(ig.flip(empty, 0), np.flip(empty, 0))
    _same(ig.roll(empty, 2, 0), np.roll(empty, 2, 0))
    _same(ig.repeat(V, 0), np.repeat(V, 0))
    _same(ig.tile(V, 0), np.tile(V, 0))
    _same(ig.split(empty, 3, axis=0), np.split(empty, 3, axis=0))
    _same(ig.cumsum(empty, 0), np.cumsum(empty, 0))
    b = np.array([True, False, True])
    _same(ig.flip(b), np.flip(b))
    _same(ig.tile(b, 2), np.tile(b, 2))
    _same(ig.diag(np.array([[1, 2], [3, 4]], np.int64)), np.diag(np.array([[1, 2], [3, 4]], np.int64)))
    # A NaN off the diagonal stays off it.
    m = np.array([[1.0, np.nan], [np.inf, 2.0]])
    _same(ig.diagonal(m), np.diagonal(m))
    _same(ig.diag(ig.diag(np.array([np.inf, -0.0]))), np.array([np.inf, -0.0]))


def test_gradients_against_finite_differences():
    def f(a, b, v, w):
        return (ig.tril(b, 1), ig.triu(a), ig.linspace(v, w, 3), ig.moveaxis(b, 0, 2), ig.vstack([v, w]),
                ig.hstack([a, a]), ig.column_stack([v, w]), ig.array_split(v, 2)[1], ig.tile(a, (2, 1)),
                ig.repeat(a, [1, 0, 2], axis=0), ig.repeat(v, 2), ig.flip(b, -1), ig.roll(b, 2, axis=1),
                ig.meshgrid(v, w[:3]), ig.diag(v, -1), ig.diag(a, 1), ig.diagonal(b, 0, 1, 2), ig.outer(v, w),
                ig.inner(b, a), ig.vdot(a, a), ig.tensordot(b, a, axes=([1, 2], [0, 1])), ig.kron(a, v[:2]),
                ig.cross(b[:, :, :3], a[:, 1:]))  # fmt: skip

    ig.check_grads(f, (A, B, V, W), order=1, modes=("fwd", "rev"))


def test_vmap_and_grad_compose():
    out = ig.vmap(lambda r: ig.roll(ig.flip(r), 1))(A)
    _same(out, np.stack([np.roll(np.flip(r), 1) for r in A]))
    g = ig.grad(lambda x: ig.sum(ig.tile(x, (2, 3))))(A)
    _same(g, np.full_like(A, 6.0))


def test_errors_name_the_function_and_shapes():
    with pytest.raises(ValueError, match="split: array split does not result in an equal division"):
        ig.split(V, 2)
    with pytest.raises(ig.ShapeError, match=r"moveaxis: axis 3 is out of range"):
        ig.moveaxis(A, 3, 0)
    with pytest.raises(ValueError, match="moveaxis: source"):
        ig.moveaxis(B, [0, 1], [0])
    with pytest.raises(ig.ShapeError, match=r"tensordot: shape mismatch for sum: axis 0 of \(3, 4\)"):
        ig.tensordot(A, A, axes=([0], [1]))
    with pytest.raises(ig.ShapeError, match=r"cross: vectors along axis -1 must have 3 components, got shapes \(3, 4\)"):
        ig.cross(A, A)
    with pytest.raises(ig.ShapeError, match=r"diag: input must be 1-D or 2-D, got shape \(2, 3, 4\)"):
        ig.diag(B)
    with pytest.raises(ValueError, match="diagonal: axis1 and axis2"):
        ig.diagonal(B, 0, 1, -2)
    with pytest.raises(ValueError, match=r"repeat: 2 repeats for axis 1 of shape \(3, 4\)"):
        ig.repeat(A, [1, 2], axis=1)
    with pytest.raises(ValueError, match="meshgrid: indexing"):
        ig.meshgrid(V, indexing="xx")
    with pytest.raises(ig.ShapeError, match=r"vstack|concatenate: shapes"):
        ig.vstack([V, A])
    with pytest.raises(ig.ShapeError, match=r"vdot: arrays of shapes \(3, 4\) and \(5,\)"):
        ig.vdot(A, V)
    with pytest.raises(TypeError, match="vstack: arrays to stack must be passed as a list"):
        ig.vstack(A)
    with pytest.raises(ig.DTypeError, match="outer: bool operands"):
        ig.outer(np.array([True]), np.array([False]))
