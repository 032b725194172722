"""Helpers shared by the Python API tests: run a function eagerly and traced, compare to numpy.

Every array function of `irgrad` works two ways: called on numpy arrays with no trace active
it runs at once on the reference interpreter (eager), and inside `ig.trace` it stages `nn`
ops. `check` runs both and holds each against the numpy oracle, dtype included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import irgrad as ig


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def randn(*shape: int, dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    return rng(seed).standard_normal(shape).astype(dtype)


def randint(low: int, high: int, *shape: int, dtype: Any = np.int32, seed: int = 0) -> np.ndarray:
    return rng(seed).integers(low, high, size=shape).astype(dtype)


def eager_and_traced(fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
    """`fn(*args)` run eagerly on numpy values, and traced with `ig.trace` then called."""
    return {"eager": fn(*args), "traced": ig.trace(fn, *args)(*args)}


def assert_array(got: Any, expected: Any, dtype: Any = None, rtol: float = 1e-6, atol: float = 1e-6,
                 what: str = "") -> None:
    """`got` is a numpy array equal to `expected` (NaN where it has NaN) with `dtype`."""
    expected = np.asarray(expected)
    want_dtype = np.dtype(dtype) if dtype is not None else expected.dtype
    assert isinstance(got, np.ndarray), f"{what}: expected a numpy array, got {type(got).__name__}"
    assert got.dtype == want_dtype, f"{what}: dtype {got.dtype}, expected {want_dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    if want_dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected, err_msg=what)
    else:
        np.testing.assert_allclose(
            got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol, err_msg=what
        )


def check(fn: Callable[..., Any], expected: Any, *args: Any, dtype: Any = None, rtol: float = 1e-6,
          atol: float = 1e-6) -> None:
    """`fn(*args)`, eager and traced, equals `expected` (an array or a callable on `args`)."""
    want = expected(*args) if callable(expected) else expected
    for mode, got in eager_and_traced(fn, *args).items():
        assert_array(got, want, dtype, rtol, atol, what=mode)


def check_tree(fn: Callable[..., Any], expected: Any, *args: Any, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """As `check`, for functions returning pytrees: the structure and every leaf must match."""
    for mode, got in eager_and_traced(fn, *args).items():
        got_leaves, got_tree = ig.tree_flatten(got)
        want_leaves, want_tree = ig.tree_flatten(expected)
        assert got_tree == want_tree, f"{mode}: structure {got_tree!r}, expected {want_tree!r}"
        for g, w in zip(got_leaves, want_leaves):
            assert_array(g, w, None, rtol, atol, what=mode)


def check_traced(fn: Callable[..., Any], expected: Any, *args: Any, dtype: Any = None, rtol: float = 1e-6,
                 atol: float = 1e-6) -> None:
    """As `check`, traced only: for code using Tracer operators (`x + y`, `x[i]`, `.T`), which on
    numpy arrays would be numpy's own."""
    want = expected(*args) if callable(expected) else expected
    assert_array(ig.trace(fn, *args)(*args), want, dtype, rtol, atol, what="traced")


def max_ulp(got: np.ndarray, want: np.ndarray) -> float:
    """The largest error of `got` in units in the last place of `want` (NaN matching NaN and
    equal infinities count as exact; a NaN against a number as infinitely far)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        err = np.where(same, 0.0, np.abs(got - want) / np.spacing(np.abs(want)))
    return float(np.nan_to_num(err, nan=np.inf).max(initial=0.0))


def same_values(got: Any, want: Any, what: str = "", rtol: float = 1e-13, atol: float = 1e-14) -> None:
    """`got` equals `want` leaf by leaf (lists and tuples element-wise, of the same length):
    shape and dtype exactly, integers and bools exactly, floats to rtol/atol (NaN == NaN)."""
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (what, type(got))
        for g, w in zip(got, want):
            same_values(g, w, what, rtol, atol)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)
