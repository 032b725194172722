"""jax.numpy's array edits (irgrad/numpy/array_edits.py: unstack, delete, insert, resize,
diagflat, block), `Tracer.mT`, and three shape functions made to agree with numpy and JAX
(repeat of a 0-d array along axis 0, roll of the flattened array by a tuple of shifts,
take(mode="clip") with negative indices): each against numpy and jax.numpy (x64) on random
float64 inputs, eagerly and under ig.jit, gradients against jax.grad and central finite
differences, and the error cases.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402


def _rand(*shape, seed=0, dtype=np.float64):
    x = np.random.default_rng(seed).standard_normal(shape)
    return x.astype(dtype) if np.dtype(dtype).kind == "f" else np.round(3 * x).astype(dtype)


def _same(got, want, what: str) -> None:
    """Equal values, shapes and dtypes (data movement is exact), leaf by leaf."""
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    assert len(got) == len(want), (what, len(got), len(want))
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_array_equal(g, w, err_msg=what)


def check(call, *args, numpy: bool = True) -> None:
    """call(module, *args) with irgrad eagerly and under ig.jit against jax.numpy (and numpy)."""
    want = call(jnp, *args)
    _same(call(ig, *args), want, "eager vs jax.numpy")
    _same(ig.jit(lambda *a: call(ig, *a))(*args), want, "jit vs jax.numpy")
    if numpy:
        _same(call(np, *args), want, "numpy vs jax.numpy")


def _finite_differences(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def check_grad(call, x: np.ndarray, *rest) -> None:
    """ig.grad of sum(w * call(ig, x, *rest)) (random weights) against jax.grad and finite
    differences of the jax.numpy function, in float64."""
    w = _rand(*np.shape(call(np, x, *rest)), seed=99)
    loss_ig = lambda v, *r: ig.sum(call(ig, v, *r) * w)
    loss_jnp = lambda v, *r: jnp.sum(call(jnp, v, *r) * w)
    got = np.asarray(ig.grad(loss_ig)(x, *rest))
    want = np.asarray(jax.grad(loss_jnp)(x, *rest))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    fd = _finite_differences(lambda v: float(loss_jnp(v, *rest)), x)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# repeat, roll, take: now as numpy and JAX
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("x", [np.float64(3.5), np.array(-2, np.int32), np.array(1.25)])
@pytest.mark.parametrize("axis, repeats", [(0, 3), (-1, 2), (0, 0), (0, [4]), (None, 2)])
def test_repeat_of_a_0d_array_along_axis_0_is_that_of_a_1d_one(x, axis, repeats):
    check(lambda m, a: m.repeat(a, repeats if m is not jnp else np.asarray(repeats), axis=axis), x)


def test_repeat_of_a_0d_array_gradient_and_axis_1_error():
    check_grad(lambda m, a: m.repeat(a, 3, axis=0), np.array(0.7))
    with pytest.raises(ValueError, match="repeat: axis 1 is out of range"):
        ig.repeat(np.float64(3.0), 3, axis=1)  # numpy's AxisError too (a ValueError)


@pytest.mark.parametrize("shift", [(1, 2), (4, 2, 5, 5, 2, 4), [-3, 1], (), (100,), (np.int64(2), np.int32(-7))])
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (7,)])
def test_roll_by_several_shifts_with_axis_none_rolls_by_their_sum(shape, shift):
    check(lambda m, a: m.roll(a, shift, axis=None), _rand(*shape, seed=len(shape)))


def test_roll_by_several_shifts_gradient_and_errors():
    check_grad(lambda m, a: m.roll(a, (3, -1, 5), axis=None), _rand(3, 4, seed=5))
    with pytest.raises(ValueError, match="roll: shift must be an int or a 1-D sequence, got shape"):
        ig.roll(np.zeros((3, 4)), [[1, 2]], axis=None)
    with pytest.raises(TypeError, match="roll: shift must be an int or a sequence of ints"):
        ig.roll(np.zeros((3, 4)), (1.5, 2.0), axis=None)


@pytest.mark.parametrize("shape, axis", [((5,), None), ((3, 4), 1), ((3, 4, 5), -1), ((3, 4), None), ((4, 3), 0)])
def test_take_clip_sends_negative_indices_to_0(shape, axis):
    x = _rand(*shape, seed=7)
    n = x.size if axis is None else shape[axis]
    idx = np.random.default_rng(8).integers(-2 * n, 2 * n, (2, 6)).astype(np.int32)
    check(lambda m, a, i: m.take(a, i, axis=axis, mode="clip"), x, idx)
    check_grad(lambda m, a: m.take(a, idx, axis=axis, mode="clip"), x)


def test_take_default_mode_still_counts_negative_indices_from_the_end():
    x, idx = _rand(6, seed=9), np.array([-1, -6, 2, -9, 8], np.int32)
    want = x[np.clip(np.where(idx < 0, idx + 6, idx), 0, 5)]  # irgrad's default
    np.testing.assert_array_equal(ig.take(x, idx), want)
    np.testing.assert_array_equal(ig.take(x, idx, mode="clip"), np.take(x, idx, mode="clip"))
    assert not np.array_equal(want, np.take(x, idx, mode="clip"))


# ---------------------------------------------------------------------------------------------
# Tracer.mT
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (1, 2, 0, 5)])
def test_mT_swaps_the_last_two_axes(shape):
    x = _rand(*shape, seed=11)
    want = jnp.asarray(x).mT
    _same(ig.jit(lambda a: a.mT)(x), want, "jit x.mT")
    _same(x.mT, want, "numpy x.mT")
    w = _rand(*want.shape, seed=12)
    g = ig.grad(lambda a: ig.sum(a.mT * w))(x)
    np.testing.assert_array_equal(g, jax.grad(lambda a: jnp.sum(a.mT * w))(x))


@pytest.mark.parametrize("shape", [(), (4,)])
def test_mT_of_fewer_than_two_dimensions_is_a_value_error(shape):
    with pytest.raises(ValueError):
        jnp.zeros(shape).mT
    with pytest.raises(ValueError, match=rf"matrix_transpose: needs at least 2 dimensions, got shape \({shape[0] if shape else ''},?\)"):
        ig.jit(lambda a: a.mT)(np.zeros(shape))


# ---------------------------------------------------------------------------------------------
# unstack
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape, axis", [((4,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -1), ((2, 3, 4), -2), ((2, 0), 1), ((0, 3), 1)])
def test_unstack(shape, axis):
    x = _rand(*shape, seed=12)
    check(lambda m, a: m.unstack(a, axis=axis), x)
    out = ig.unstack(x, axis=axis)
    assert isinstance(out, tuple)
    if out:
        np.testing.assert_array_equal(ig.stack(out, axis=axis), x)


def test_unstack_int_dtype_gradient_and_errors():
    check(lambda m, a: m.unstack(a, axis=1), _rand(2, 3, dtype=np.int32))
    check_grad(lambda m, a: m.stack(m.unstack(a, axis=1)[::-1], axis=0), _rand(3, 4, seed=13))
    with pytest.raises(ValueError, match=r"unstack: needs an array of at least one dimension, got shape \(\)"):
        ig.unstack(np.float64(1.0))
    with pytest.raises(ValueError, match="unstack: axis 2 is out of range"):
        ig.unstack(np.zeros((2, 3)), axis=2)


# ---------------------------------------------------------------------------------------------
# delete
# ---------------------------------------------------------------------------------------------

DELETES = [
    ((7,), 3, None), ((7,), -1, None), ((3, 4), 5, None), ((3, 4), 1, 1), ((3, 4), -3, 0), ((2, 3, 4), 2, -1),
    ((7,), slice(1, None, 2), None), ((3, 5), slice(None, None, -2), 1), ((3, 5), slice(4, 1, -1), -1),
    ((7,), np.array([0, 3, 3, -1]), None), ((3, 5), np.array([4, 0, -5]), 1), ((2, 3, 4), np.array([], np.int32), 2),
    ((3, 5), np.array([[1], [3]]), 1), ((7,), np.array([True, False, True, False, False, True, False]), None),
    ((3, 4), np.array([False, True, False]), 0), ((2, 3, 4), np.array([True] * 4), 2), ((1,), 0, None),
]  # fmt: skip


@pytest.mark.parametrize("shape, obj, axis", DELETES, ids=[f"{s}-{o!r}-{a}".replace(" ", "") for s, o, a in DELETES])
def test_delete(shape, obj, axis):
    check(lambda m, a: m.delete(a, obj, axis=axis), _rand(*shape, seed=14))
    if isinstance(obj, np.ndarray) and obj.dtype.kind == "i":  # numpy takes lists too; JAX does not
        _same(ig.delete(_rand(*shape, seed=14), obj.tolist(), axis=axis), np.delete(_rand(*shape, seed=14), obj.tolist(), axis=axis), "list")


@pytest.mark.parametrize("shape, obj, axis", [((7,), np.array([0, 3, 3, -1]), None), ((3, 5), slice(1, 4), 1), ((2, 3, 4), 1, 0)])
def test_delete_gradient_and_int_dtype(shape, obj, axis):
    check_grad(lambda m, a: m.delete(a, obj, axis=axis), _rand(*shape, seed=15))
    check(lambda m, a: m.delete(a, obj, axis=axis), _rand(*shape, seed=15, dtype=np.int32))
    unique = np.delete(np.arange(7), obj) if isinstance(obj, np.ndarray) else obj  # JAX's needs unique indices
    _same(ig.delete(_rand(*shape, seed=15), unique, axis, assume_unique_indices=True),
          jnp.delete(_rand(*shape, seed=15), unique, axis, assume_unique_indices=True), "assume_unique_indices")


def test_delete_errors():
    x = _rand(3, 5, seed=16)
    with pytest.raises(ig.ConcretizationError, match=r"delete: the indices \(obj, a traced int32 array of shape \(2,\)\) must be static"):
        ig.jit(lambda a, i: ig.delete(a, i, axis=1))(x, np.array([0, 1], np.int32))
    with pytest.raises(TypeError, match="delete: obj must be an int, a slice, or an array of ints, got the bool True"):
        ig.delete(x, True)
    with pytest.raises(IndexError, match="delete: index 5 is out of bounds for an axis of size 5"):
        ig.delete(x, 5, axis=1)
    with pytest.raises(IndexError, match="delete: index -4 is out of bounds for an axis of size 3"):
        ig.delete(x, np.array([0, -4]), axis=0)
    with pytest.raises(ValueError, match="delete: obj must be integer or bool, got dtype float64"):
        ig.delete(x, np.array([1.0]), axis=1)
    with pytest.raises(ValueError, match=r"delete: a boolean obj must be 1-D with the axis' length 5, got shape \(3,\)"):
        ig.delete(x, np.array([True, False, True]), axis=1)
    with pytest.raises(ValueError, match="delete: axis 2 is out of range"):
        ig.delete(x, 0, axis=2)
    for bad in (lambda: jnp.delete(x, np.array([1.0]), axis=1), lambda: jnp.delete(x, np.array([True]), axis=1)):
        with pytest.raises(ValueError):  # the kinds of error JAX raises
            bad()


# ---------------------------------------------------------------------------------------------
# insert
# ---------------------------------------------------------------------------------------------

INSERTS = [
    ((5,), 2, 9.5, None), ((5,), -1, 9.5, None), ((5,), 5, 9.5, None), ((3, 4), 0, 1.5, None),
    ((5,), np.array([1, 3]), np.array([7.0, 8.0]), None), ((5,), np.array([3, 1, 3]), np.array([7.0, 8.0, 9.0]), None),
    ((5,), np.array([2]), np.array([7.0, 8.0]), None), ((5,), slice(1, 4), 0.5, None), ((6,), slice(None, None, -2), np.array([1.0, 2.0, 3.0]), None),
    ((3, 4), 1, np.array([1.0, 2.0, 3.0]), 1), ((3, 4), 1, np.array([[1.0, 2.0, 3.0, 4.0]]), 0), ((3, 4), np.array([1]), np.array([[1.0], [2.0], [3.0]]), 1),
    ((3, 4), np.array([0, 4]), np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), -1), ((2, 3, 4), 3, np.array(0.25), 1),
    ((2, 3, 4), np.array([0, -1]), np.zeros((2, 2, 4)), 1), ((5,), np.array([], np.int64), 3.0, None), ((0,), 0, 1.0, None),
]  # fmt: skip


@pytest.mark.parametrize("shape, obj, values, axis", INSERTS, ids=[f"{s}-{o!r}-{np.shape(v)}-{a}".replace(" ", "") for s, o, v, a in INSERTS])
def test_insert(shape, obj, values, axis):
    x = _rand(*shape, seed=17)
    check(lambda m, a, v: m.insert(a, obj, v, axis=axis), x, np.asarray(values))


@pytest.mark.parametrize("obj", [7, -9, np.array([-8, 1, 12])])
def test_insert_clips_out_of_range_indices_as_jax(obj):
    x, v = _rand(5, seed=18), np.array([1.0, 2.0, 3.0]) if isinstance(obj, np.ndarray) else np.array(4.0)
    check(lambda m, a, b: m.insert(a, obj, b), x, v, numpy=False)
    with pytest.raises(IndexError):
        np.insert(x, obj, v)  # numpy raises instead


def test_insert_takes_the_arrays_dtype():
    x = _rand(2, 5, seed=19, dtype=np.int32)
    check(lambda m, a, v: m.insert(a, np.array([1, 1, 4]), v, axis=1), x, np.array([2.7, -1.5, 8.0]))
    check(lambda m, a: m.insert(a, 2, 7, axis=0), x)
    _same(ig.insert(x, [0, 2], 5, axis=1), np.insert(x, [0, 2], 5, axis=1), "a list of indices")


@pytest.mark.parametrize("obj, values_shape, axis", [(np.array([1, 3, 1]), (3,), None), (2, (3,), 1), (np.array([0]), (3, 2), 1), (slice(0, 2), (1,), 0)])
def test_insert_gradients_of_array_and_values(obj, values_shape, axis):
    x, v = _rand(3, 4, seed=20), _rand(*values_shape, seed=21)
    check_grad(lambda m, a: m.insert(a, obj, v, axis=axis), x)
    check_grad(lambda m, b: m.insert(x, obj, b, axis=axis), v)  # broadcast values sum their cotangents


def test_insert_errors():
    x = _rand(3, 4, seed=22)
    with pytest.raises(ig.ConcretizationError, match="insert: the indices .* must be static"):
        ig.jit(lambda a, i: ig.insert(a, i, 0.0))(x, np.array([1]))
    with pytest.raises(ValueError, match=r"insert: obj must be a slice, a 1-D array or a scalar, got shape \(1, 1\)"):
        ig.insert(x, np.array([[1]]), 0.0)
    with pytest.raises(ValueError, match="insert: the indices must be integers, got dtype float64"):
        ig.insert(x, np.array([1.0]), 0.0)
    with pytest.raises(ValueError, match="insert: the indices must be integers, got dtype bool"):
        ig.insert(x, np.array([True]), 0.0)
    with pytest.raises(ValueError, match=r"insert: values of shape \(1, 3\) do not broadcast to 2 insertions into axis 1"):
        ig.insert(x, np.array([0, 1]), np.ones(3), axis=1)
    with pytest.raises(ValueError):  # JAX: bool and float indices are ValueErrors too
        jnp.insert(x, np.array([True]), 0.0)


# ---------------------------------------------------------------------------------------------
# resize, diagflat, block
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape, new_shape", [((3,), (2, 4)), ((2, 3), 5), ((2, 3), (2, 3)), ((4,), (1,)), ((2, 2), (3, 0)), ((0,), (2, 3)), ((), (3,)), ((3,), ())])
def test_resize(shape, new_shape):
    check(lambda m, a: m.resize(a, new_shape), _rand(*shape, seed=23))
    check(lambda m, a: m.resize(a, new_shape), _rand(*shape, seed=23, dtype=np.int32))


def test_resize_gradient_and_errors():
    check_grad(lambda m, a: m.resize(a, (3, 5)), _rand(2, 3, seed=24))  # repeated elements sum their cotangents
    with pytest.raises(ValueError, match=r"resize: all elements of new_shape must be non-negative, got \(-1, 4\)"):
        ig.resize(np.arange(3.0), (-1, 4))
    with pytest.raises(TypeError, match="resize: new_shape must be an int"):
        ig.resize(np.arange(3.0), (2.0, 4))


@pytest.mark.parametrize("shape", [(3,), (2, 2), (2, 1, 3), ()])
@pytest.mark.parametrize("k", [0, 1, -2])
def test_diagflat(shape, k):
    check(lambda m, a: m.diagflat(a, k), _rand(*shape, seed=25))
    check(lambda m, a: m.diagflat(a, k=k), _rand(*shape, seed=25, dtype=np.int32))
    if shape:
        check_grad(lambda m, a: m.diagflat(a, k), _rand(*shape, seed=26))


def _blocks(seed: int) -> dict:
    r = lambda *s: _rand(*s, seed=seed + len(s) + sum(s))
    return {
        "flat": lambda: [r(2), r(3), r(1)],
        "grid": lambda: [[r(2, 2), r(2, 3)], [r(1, 5)]],
        "ranks": lambda: [[r(2, 2), r(2, 1)], [r(3)]],
        "three_d": lambda: [[[r(1, 2, 2), r(1, 2, 3)]], [[r(2, 2, 5)]]],
        "array": lambda: r(2, 3),
        "one": lambda: [r(4)],
    }


@pytest.mark.parametrize("case", sorted(_blocks(0)))
def test_block(case):
    arrays = _blocks(30)[case]()
    leaves = arrays if isinstance(arrays, list) else [arrays]
    flat = [a for x in leaves for a in (x if isinstance(x, list) else [x])]
    flat = [a for x in flat for a in (x if isinstance(x, list) else [x])]
    structure = lambda m, *xs: m.block(_rebuild(arrays, iter(xs)))
    check(structure, *flat)


def _rebuild(template, it):
    return [_rebuild(t, it) for t in template] if isinstance(template, list) else next(it)


def test_block_dtypes_scalars_and_gradient():
    i32, f64 = _rand(2, dtype=np.int32), _rand(3, seed=31)
    check(lambda m, a, b: m.block([a, b]), i32, f64)
    _same(ig.block([i32, 2]), jnp.block([i32, 2]), "weak int")
    assert np.asarray(ig.block([i32, 2.5])).dtype == np.float32  # irgrad's default float; JAX x64's is float64
    np.testing.assert_array_equal(ig.block([i32, 2.5]), np.block([i32, 2.5]))
    np.testing.assert_array_equal(ig.block([[1, 2], [3, 4]]), np.block([[1, 2], [3, 4]]))
    check(lambda m, a: m.block(a), np.float64(2.5))
    x = _rand(2, 2, seed=32)
    check_grad(lambda m, a: m.block([[a, 2 * a], [a.T, a[:, :1] * a[:1, :]]]), x)


def test_block_errors():
    x = np.zeros((2, 2))
    with pytest.raises(ValueError, match="block: arrays is a tuple; only lists arrange blocks"):
        ig.block((x, x))
    with pytest.raises(ValueError, match=r"block: arrays\[1\] is a tuple"):
        ig.block([x, (x,)])
    with pytest.raises(ValueError, match="block: arrays is an empty list"):
        ig.block([])
    with pytest.raises(ValueError, match=r"block: mismatched list depths in arrays \(\[0, 1\]\)"):
        ig.block([x, [x]])
    with pytest.raises(ValueError, match="concatenate"):
        ig.block([[x, np.zeros((3, 1))]])
    for bad in ((x, x), [], [x, [x]]):
        with pytest.raises(ValueError):  # JAX's errors are ValueErrors too
            jnp.block(bad)


def test_new_functions_are_in_the_api():
    from irgrad.numpy import array_edits

    assert sorted(array_edits.__all__) == ["block", "delete", "diagflat", "insert", "resize", "unstack"]
    assert all(getattr(ig, name) is getattr(array_edits, name) for name in array_edits.__all__)
