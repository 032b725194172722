"""ig.vmap: the request it traces, in_axes/out_axes handling, and its errors. The batching
rules of the ops are tested in test_vmap_rules.py and test_vmap_programs.py."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from irgrad.autodiff.errors import AutodiffError
from irgrad.tracing.errors import ShapeError


def f(x, w):
    return ig.tanh(x * w + 1.0)


def _loop(fn, *args, in_axes):
    n = next(a.shape[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = [fn(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]) for i in range(n)]
    return np.stack([np.asarray(o) for o in outs])


def test_trace_shows_one_request_on_one_example() -> None:
    xs, w = np.ones((5, 3)), np.ones(3)
    text = str(ig.trace(ig.vmap(f, in_axes=(0, None)), xs, w))
    assert "func.func private @f_1(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64>" in text
    assert "autodiff.batch @f_1(%x, %w) in_axes = [0, -1] out_axes = [0]" in text


@pytest.mark.parametrize("backend", ["eager", "interp", "cpu"])
def test_mapped_and_unmapped_arguments(backend: str) -> None:
    rng = np.random.default_rng(0)
    xs, w = rng.standard_normal((5, 3)), rng.standard_normal(3)
    mapped = ig.vmap(f, in_axes=(0, None))
    if backend != "eager":
        mapped = ig.jit(mapped, backend=backend)
    np.testing.assert_allclose(mapped(xs, w), _loop(f, xs, w, in_axes=(0, None)), rtol=1e-14)


def test_axes_other_than_the_first_and_negative_axes() -> None:
    rng = np.random.default_rng(1)
    xs, ws = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    expected = _loop(f, xs, ws, in_axes=(1, 1))  # [5, 3]
    np.testing.assert_allclose(ig.vmap(f, in_axes=(1, -1))(xs, ws), expected, rtol=1e-14)
    np.testing.assert_allclose(ig.vmap(f, in_axes=1, out_axes=1)(xs, ws), expected.T, rtol=1e-14)
    np.testing.assert_allclose(ig.vmap(f, in_axes=1, out_axes=-1)(xs, ws), expected.T, rtol=1e-14)


def test_pytrees_closures_and_unbatched_results() -> None:
    rng = np.random.default_rng(2)
    params = {"w": rng.standard_normal(3), "b": rng.standard_normal(())}
    xs = rng.standard_normal((4, 3))
    scale = 2.0

    def g(p, x):
        return {"y": ig.sum(x * p["w"]) * scale + p["b"], "w2": p["w"] * p["w"]}

    out = ig.vmap(g, in_axes=({"w": None, "b": None}, 0), out_axes={"y": 0, "w2": None})(params, xs)
    np.testing.assert_allclose(out["y"], xs @ params["w"] * scale + params["b"], rtol=1e-14)
    np.testing.assert_allclose(out["w2"], params["w"] ** 2, rtol=1e-14)

    def h(x):  # a closure over a traced value is an unmapped argument
        return ig.vmap(lambda row: row * ig.sum(x))(x)

    np.testing.assert_allclose(h(xs), xs * xs.sum(), rtol=1e-14)


def test_nested_vmap_and_gradients() -> None:
    rng = np.random.default_rng(3)
    xss = rng.standard_normal((2, 4, 3))
    w = rng.standard_normal(3)
    twice = ig.vmap(ig.vmap(f, in_axes=(0, None)), in_axes=(0, None))
    np.testing.assert_allclose(twice(xss, w), np.tanh(xss * w + 1.0), rtol=1e-14)

    def loss(w, xs):
        return ig.sum(ig.vmap(f, in_axes=(0, None))(xs, w))

    xs = xss[0]
    expected = ((1 - np.tanh(xs * w + 1.0) ** 2) * xs).sum(axis=0)
    np.testing.assert_allclose(ig.grad(loss)(w, xs), expected, rtol=1e-13)
    per_example = ig.vmap(ig.grad(lambda w, x: ig.sum(f(x, w))), in_axes=(None, 0))(w, xs)
    np.testing.assert_allclose(per_example, (1 - np.tanh(xs * w + 1.0) ** 2) * xs, rtol=1e-13)


def test_errors_name_the_axes_and_shapes() -> None:
    xs = np.ones((5, 3))
    with pytest.raises(ShapeError, match="in_axes 2 is out of range for argument leaf 0 of shape"):
        ig.vmap(f, in_axes=(2, None))(xs, np.ones(3))
    with pytest.raises(ShapeError, match="mapped axes have different sizes: 5 and 4"):
        ig.vmap(f)(xs, np.ones((4, 3)))
    with pytest.raises(ValueError, match="one entry per positional argument"):
        ig.vmap(f, in_axes=(0,))(xs, np.ones(3))
    with pytest.raises(ValueError, match="maps no argument"):
        ig.vmap(f, in_axes=None)(xs, np.ones(3))
    with pytest.raises(AutodiffError, match="depends on the mapped arguments, so it cannot have out_axes -1"):
        ig.vmap(f, in_axes=(0, None), out_axes=None)(xs, np.ones(3))
