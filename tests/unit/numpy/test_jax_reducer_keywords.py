"""The reductions' `initial=` and `where=` keywords, ported from JAX's
tests/lax_numpy_reducers_test.py (`JAX_REDUCER_INITIAL_RECORDS` with testReducerInitial and
testReducerWhere, `JAX_REDUCER_WHERE_NO_INITIAL_RECORDS` with testReducerWhereNoInitial): the
same names, shapes, axes, initial values and where-shapes, checked as JAX checks them, against
numpy. JAX's tables take every combination; here a fixed-seed sample of each record's product
keeps the file to a few hundred cases (every name, dtype and keyword combination is in it).

Dtypes are irgrad's (bool, int32, float32, float64); results keep the input's integer width, as
JAX without x64 (docs/api/python.md, differences from JAX).
"""

from __future__ import annotations

import itertools
import random
import warnings
import zlib

import numpy as np
import pytest

import irgrad as ig

SHAPES = [(), (4,), (3, 4), (3, 1), (1, 4), (2, 1, 4), (2, 3, 4)]
EMPTY_SHAPES = [(0,), (0, 4), (3, 0)]
FLOATS = [np.float32, np.float64]
NUMBERS = [np.int32, *FLOATS]
ALL = [np.bool_, *NUMBERS]

# name, dtypes, input generator, whether empty shapes are in the record (JAX's all_shapes)
INITIAL_RECORDS = [
    ("prod", ALL, "small_positive", True),
    ("sum", ALL, "default", True),
    ("max", ALL, "default", True),
    ("min", ALL, "default", True),
    ("nanprod", FLOATS, "small_positive", True),
    ("nansum", FLOATS, "default", True),
    ("nanmax", FLOATS, "default", True),
    ("nanmin", FLOATS, "default", True),
]
WHERE_NO_INITIAL_RECORDS = [
    ("all", [np.bool_], "some_zero"),
    ("any", [np.bool_], "some_zero"),
    ("mean", ALL, "default"),
    ("var", ALL, "default"),
    ("std", ALL, "default"),
    ("nanmean", FLOATS, "default"),
    ("nanvar", FLOATS, "default"),
    ("nanstd", FLOATS, "default"),
]


def _values(kind: str, shape: tuple[int, ...], dtype: type, seed: int) -> np.ndarray:
    """JAX's rand_default, rand_small_positive and rand_some_zero, in spirit."""
    rng = np.random.default_rng(seed)
    if dtype is np.bool_:
        return rng.random(shape) < 0.5
    if kind == "small_positive":
        x = rng.uniform(0.5, 1.5, shape)
    else:
        x = rng.normal(0.0, 3.0, shape)
        if kind == "some_zero":
            x = np.where(rng.random(shape) < 0.3, 0.0, x)
    return np.asarray(x if np.dtype(dtype).kind == "f" else np.round(x), dtype)


def _compatible_shapes(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """JAX's _compatible_shapes: the shape and its trailing parts (where= broadcasts)."""
    return [shape[n:] for n in range(len(shape) + 1)]


def _axes(shape: tuple[int, ...]) -> list[int | None]:
    return [*range(-len(shape), len(shape)), None]


def _sample(cases: list[tuple], count: int, seed: int) -> list[tuple]:
    return cases if len(cases) <= count else random.Random(seed).sample(cases, count)


def _numpy(name: str, x: np.ndarray, **kwargs) -> np.ndarray:
    """numpy's answer in irgrad's dtypes (JAX compares with numpy the same way)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.asarray(getattr(np, name)(x, **kwargs))
    if x.dtype == np.bool_ and name in ("sum", "prod"):
        return out.astype(np.int32)  # a sum of bools is int32 (JAX without x64)
    if name in ("mean", "var", "std") and x.dtype.kind != "f":
        return out.astype(np.float32)  # integers average to float32
    return out.astype(x.dtype) if x.dtype.kind in "iub" or name not in ("mean", "var", "std") else out


def _check(got: np.ndarray, want: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    tol = 1e-5 if got.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


INITIAL_CASES = [
    (name, dtype, kind, shape, axis, initial, keepdims)
    for name, dts, kind, empty in INITIAL_RECORDS
    for dtype, shape in itertools.product(dts, SHAPES + (EMPTY_SHAPES if empty else []))
    for axis, initial, keepdims in itertools.product(_axes(shape), [0, 1], [False, True])
    if not (dtype is np.bool_ and name in ("max", "min") and initial not in (0, 1))
]


@pytest.mark.parametrize("case", _sample(INITIAL_CASES, 220, 0), ids=repr)
def test_reducer_initial(case):
    """testReducerInitial: `initial=` with every axis, keepdims, empty shapes included."""
    name, dtype, kind, shape, axis, initial, keepdims = case
    x = _values(kind, shape, dtype, zlib.crc32(repr(case).encode()))
    if dtype is np.bool_ and name in ("max", "min"):
        initial = bool(initial)
    want = _numpy(name, x, axis=axis, keepdims=keepdims, initial=initial)
    _check(getattr(ig, name)(x, axis=axis, keepdims=keepdims, initial=initial), want)


WHERE_CASES = [
    (name, dtype, kind, shape, axis, initial, keepdims, where_shape)
    for name, dts, kind, _ in INITIAL_RECORDS
    for dtype, shape in itertools.product(dts, SHAPES)
    for axis, initial, keepdims in itertools.product(_axes(shape), [0, 1], [False, True])
    for where_shape in _compatible_shapes(shape)
]


@pytest.mark.parametrize("case", _sample(WHERE_CASES, 220, 1), ids=repr)
def test_reducer_where(case):
    """testReducerWhere: `where=` of every broadcastable shape, with `initial=`."""
    name, dtype, kind, shape, axis, initial, keepdims, where_shape = case
    x = _values(kind, shape, dtype, zlib.crc32(repr(case).encode()))
    where = np.random.default_rng(7).random(where_shape) < 0.6
    if dtype is np.bool_ and name in ("max", "min"):
        initial = bool(initial)
    want = _numpy(name, x, axis=axis, keepdims=keepdims, initial=initial, where=where)
    _check(getattr(ig, name)(x, axis=axis, keepdims=keepdims, initial=initial, where=where), want)


WHERE_NO_INITIAL_CASES = [
    (name, dtype, kind, shape, axis, keepdims, where_shape)
    for name, dts, kind in WHERE_NO_INITIAL_RECORDS
    for dtype, shape in itertools.product(dts, SHAPES)
    for axis, keepdims in itertools.product(_axes(shape), [False, True])
    for where_shape in _compatible_shapes(shape)
]


@pytest.mark.parametrize("case", _sample(WHERE_NO_INITIAL_CASES, 200, 2), ids=repr)
def test_reducer_where_no_initial(case):
    """testReducerWhereNoInitial: mean, var, std, all, any and the nan-variants with `where=`
    (NaN where a slice selects nothing, as numpy)."""
    name, dtype, kind, shape, axis, keepdims, where_shape = case
    x = _values(kind, shape, dtype, zlib.crc32(repr(case).encode()))
    if name.startswith("nan") and x.size:
        x = np.where(np.random.default_rng(3).random(shape) < 0.2, np.nan, x).astype(dtype)
    where = np.random.default_rng(5).random(where_shape) < 0.6
    want = _numpy(name, x, axis=axis, keepdims=keepdims, where=where)
    _check(getattr(ig, name)(x, axis=axis, keepdims=keepdims, where=where), want)


@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin"])
def test_max_and_min_with_where_need_initial(name):
    """numpy's and JAX's rule: there is no identity to fall back on for an all-false slice."""
    x = np.arange(4.0)
    with pytest.raises(ValueError, match="to use a where mask one has to specify 'initial'"):
        getattr(ig, name)(x, where=x > 1)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "mean", "all"])
def test_where_must_be_bool_and_broadcast(name):
    x = np.ones((2, 3))
    with pytest.raises(TypeError, match="where= must be a bool array"):
        getattr(ig, name)(x, where=np.ones((2, 3), np.int32), **({"initial": 0.0} if name == "max" else {}))
    with pytest.raises(ig.ShapeError, match=r"where= of shape \(2,\) does not broadcast"):
        getattr(ig, name)(x, where=np.ones(2, bool), **({"initial": 0.0} if name == "max" else {}))


def test_where_and_initial_under_jit_vmap_and_grad():
    """The masked elements get gradient 0; the same values staged, batched and eager."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 4))
    f = lambda x: ig.sum(x * x, axis=1, where=x > 0, initial=1.0)
    want = np.sum(x * x, axis=1, where=x > 0, initial=1.0)
    np.testing.assert_allclose(ig.jit(f)(x), want, rtol=1e-12)
    np.testing.assert_allclose(ig.vmap(lambda r: ig.sum(r * r, where=r > 0, initial=1.0))(x), want, rtol=1e-12)
    np.testing.assert_allclose(ig.grad(lambda x: ig.sum(f(x)))(x), np.where(x > 0, 2 * x, 0.0), rtol=1e-12)
    g = ig.grad(lambda x: ig.mean(ig.var(x, axis=0, where=x > -0.5)))(x)
    eps, numeric = 1e-6, np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        v = lambda y: np.mean(np.var(y, axis=0, where=x > -0.5))  # the mask held fixed
        numeric[i] = (v(x + d) - v(x - d)) / (2 * eps)
    np.testing.assert_allclose(g, numeric, atol=1e-7)
