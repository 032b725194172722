"""x.at[index].set/add/...: results against numpy on random inputs for every index kind, both
lowerings (box and scattered), both backends; out-of-range updates dropped as in JAX; gradients
against central finite differences in float64; located errors."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from irgrad.tracing.errors import ShapeError

rng = np.random.default_rng(11)
X = rng.standard_normal((4, 5))
OPS = {
    "set": lambda a, v: v,
    "add": np.add,
    "multiply": np.multiply,
    "divide": np.divide,
    "min": np.minimum,
    "max": np.maximum,
}

# (index, numpy's equivalent for an in-place update, values shape)
INDICES = [
    ((1,), (1,), (5,)),
    ((-1, 2), (-1, 2), ()),
    ((slice(1, 3),), (slice(1, 3),), (2, 5)),
    ((Ellipsis, slice(0, 4)), (Ellipsis, slice(0, 4)), (4,)),  # broadcast over the rows
    ((None, 2), (2,), (5,)),
    ((slice(None, None, 2), 3), (slice(None, None, 2), 3), (2,)),  # strided: scattered
    ((slice(None, None, -1),), (slice(None, None, -1),), (4, 5)),  # reversed: scattered
    ((np.array([3, 0]), slice(1, 4)), (np.array([3, 0]), slice(1, 4)), (2, 3)),
    ((np.array([[0], [2]]),), (np.array([[0], [2]]),), (2, 1, 5)),
    ((slice(1, 3), np.array([-1, 0])), (slice(1, 3), np.array([-1, 0])), (2, 2)),
]


def expected(op: str, index, values) -> np.ndarray:
    out = X.copy()
    out[index] = OPS[op](out[index], values)
    return out


@pytest.mark.parametrize("case", range(len(INDICES)), ids=lambda k: str(INDICES[k][0]))
def test_matches_numpy(case: int) -> None:
    """Every update kind at one index, compiled together (one compile per index)."""
    index, np_index, vshape = INDICES[case]
    values = rng.uniform(0.5, 2.0, vshape)
    fn = lambda x, v: [getattr(x.at[index], op)(v) for op in OPS]  # noqa: E731
    wants = [expected(op, np_index, values) for op in OPS]
    backends = ["cpu", "interp"] if case % 3 == 0 else ["cpu"]
    for backend in backends:
        for op, got, want in zip(OPS, ig.jit(fn, backend=backend)(X, values), wants):
            np.testing.assert_allclose(got, want, rtol=1e-15, err_msg=f"{op} on {backend}")


def test_power_apply_and_get() -> None:
    x = np.abs(X) + 0.5
    got = ig.jit(lambda x: (x.at[1:3, 0].power(2.0), x.at[::2].apply(ig.exp), x.at[np.array([1, 1])].get()))(x)
    want0, want1 = x.copy(), x.copy()
    want0[1:3, 0] **= 2
    want1[::2] = np.exp(want1[::2])
    np.testing.assert_allclose(got[0], want0, rtol=1e-15)
    np.testing.assert_allclose(got[1], want1, rtol=1e-15)
    np.testing.assert_allclose(got[2], x[[1, 1]], rtol=0)


def test_repeated_positions_accumulate_with_add() -> None:
    idx = np.array([0, 2, 0, 0, 3])
    updates = rng.standard_normal((5, 5))
    want = X.copy()
    np.add.at(want, idx, updates)
    np.testing.assert_allclose(ig.jit(lambda x, u: x.at[idx].add(u))(X, updates), want, rtol=1e-14)


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_out_of_range_traced_indices_are_dropped(backend: str) -> None:
    box = ig.jit(lambda x, i: x.at[i, 1:3].set(9.0), backend=backend)
    for i in (0, 3, -1, -4, 4, -5, 100):
        want = X.copy()
        if -4 <= i < 4:
            want[i, 1:3] = 9.0
        np.testing.assert_array_equal(box(X, np.int64(i)), want)
    scattered = ig.jit(lambda x, idx: x.at[idx, 2].add(1.0), backend=backend)
    idx = np.array([0, 7, -1, -9, 3])
    want = X.copy()
    np.add.at(want, (np.array([0, 3, 3]), 2), 1.0)
    np.testing.assert_array_equal(scattered(X, idx), want)
    # get clamps, as x[i] does
    np.testing.assert_array_equal(ig.jit(lambda x, i: x.at[i].get(), backend=backend)(X, np.int64(9)), X[3])


def test_integer_and_bool_arrays() -> None:
    ints = np.arange(10, dtype=np.int32)
    got = ig.jit(lambda a: (a.at[np.array([1, 8])].set(-3), a.at[2:5].add(np.int32(10))))(ints)
    want0, want1 = ints.copy(), ints.copy()
    want0[[1, 8]] = -3
    want1[2:5] += 10
    assert got[0].dtype == np.int32
    np.testing.assert_array_equal(got[0], want0)
    np.testing.assert_array_equal(got[1], want1)
    mask = np.zeros(6, np.bool_)
    got = ig.jit(lambda m: m.at[np.array([4, 1])].set(True))(mask)
    np.testing.assert_array_equal(got, [False, True, False, False, True, False])


def test_in_a_loop_the_box_update_is_one_dynamic_update_slice() -> None:
    def fill(x):
        return ig.fori_loop(0, 4, lambda i, x: x.at[i].set(i.astype(np.float64) * 2.0), x)

    np.testing.assert_array_equal(ig.jit(fill)(np.zeros((4, 3))), np.repeat([[0.0], [2.0], [4.0], [6.0]], 3, 1))
    text = str(ig.trace(fill, np.zeros((4, 3))))
    assert text.count("nn.dynamic_update_slice") == 1 and "nn.scatter_add" not in text


@pytest.mark.parametrize(
    "update",
    [
        lambda x, v: x.at[1:3, ::2].set(v),
        lambda x, v: x.at[np.array([2, 0, 2]), 1:4].add(v[0][:, None] * v[1][None, :]),
        lambda x, v: x.at[1:3, 0:3].multiply(v),
        lambda x, v: x.at[np.array([3, 1])].max(ig.concatenate([v, v[:, :2]], axis=1)),
    ],
)
def test_gradients_match_finite_differences(update) -> None:
    v0 = rng.uniform(0.5, 1.5, (3, 3))[:2]  # (2, 3)

    def loss(x, v):
        return ig.sum(ig.sin(update(x, v)) * X)

    gx, gv = ig.grad(loss, argnums=(0, 1))(X, v0)
    value = ig.jit(loss)  # numpy arrays have no .at: evaluate traced
    eps = 1e-6
    for _ in range(2):
        dx, dv = rng.standard_normal(X.shape), rng.standard_normal(v0.shape)
        numeric = (value(X + eps * dx, v0 + eps * dv) - value(X - eps * dx, v0 - eps * dv)) / (2 * eps)
        np.testing.assert_allclose(np.sum(gx * dx) + np.sum(gv * dv), numeric, rtol=1e-6, atol=1e-9)


def test_set_sends_no_cotangent_to_the_overwritten_elements() -> None:
    gx, gv = ig.grad(lambda x, v: ig.sum(x.at[1].set(v) * 3.0), argnums=(0, 1))(X, np.ones(5))
    want = np.full(X.shape, 3.0)
    want[1] = 0.0
    np.testing.assert_array_equal(gx, want)
    np.testing.assert_array_equal(gv, np.full(5, 3.0))


def test_errors() -> None:
    with pytest.raises(ShapeError, match=r"at\[\].set: values of shape \(3,\) do not broadcast to the indexed shape \(5,\)"):
        ig.jit(lambda x: x.at[0].set(np.ones(3)))(X)
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        ig.jit(lambda x: x.at[4].add(1.0))(X)
    with pytest.raises(TypeError, match=r"cannot write floating-point values \(float32\) into an array of int32"):
        ig.jit(lambda a: a.at[0].set(1.5))(np.arange(3, dtype=np.int32))
    with pytest.raises(IndexError, match="boolean mask"):
        ig.jit(lambda x: x.at[x > 0].set(0.0))(X)
    with pytest.raises(IndexError, match="too many indices"):
        ig.jit(lambda x: x.at[0, 0, 0].set(0.0))(X)
