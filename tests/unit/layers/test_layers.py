"""`irgrad.layers`: forward passes against hand-written numpy, parameter trees, initialization.

Every forward runs twice, eagerly on numpy arrays and as a traced program on the reference
interpreter, in float32 and float64. Parameters are random (not the initial ones), so a bias or a
LayerNorm scale that was ignored would show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import math

import numpy as np
import pytest

import irgrad as ig
from irgrad import layers as L

DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def eager_and_traced(layer: L.Layer, params: Any, x: Any, **kwargs: Any) -> tuple[Any, Any]:
    """`layer.apply` run eagerly, and traced into a program then run on the interpreter."""
    eager = layer.apply(params, x, **kwargs)

    def forward(params: Any, x: Any, kwargs: Any) -> Any:
        return layer.apply(params, x, **kwargs)

    program = ig.trace(forward, params, x, kwargs)
    return eager, program(params, x, kwargs)


def random_params(params: Any, rng: np.random.Generator) -> Any:
    """Params of the same tree, shapes and dtypes, with every leaf random (biases included)."""
    return ig.tree_map(lambda p: rng.standard_normal(p.shape).astype(p.dtype), params)


def shapes(params: Any) -> Any:
    return ig.tree_map(lambda p: p.shape, params)


# ---------------------------------------------------------------------------------------------
# numpy oracles
# ---------------------------------------------------------------------------------------------


def np_conv2d(x, w, stride=(1, 1), padding=(0, 0), dilation=(1, 1)):
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def np_max_pool2d(x, k, s, p):
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
    oh = (xp.shape[2] - k) // s + 1
    ow = (xp.shape[3] - k) // s + 1
    out = np.full((*x.shape[:2], oh, ow), -np.inf, x.dtype)
    for i in range(k):
        for j in range(k):
            out = np.maximum(out, xp[:, :, i : i + s * (oh - 1) + 1 : s, j : j + s * (ow - 1) + 1 : s])
    return out


def np_layer_norm(x, scale, offset, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + offset


def np_mlp(p, x, act):
    n = len(p)
    for i in range(n):
        x = x @ p[str(i)]["w"] + p[str(i)]["b"]
        if i != n - 1:
            x = act(x)
    return x


# ---------------------------------------------------------------------------------------------
# Forward passes: one row per layer configuration
# ---------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    layer: L.Layer
    x_shape: tuple[int, ...]
    oracle: Callable[[Any, np.ndarray], np.ndarray]  # (params, x) -> expected output
    param_shapes: Any
    kwargs: dict[str, Any] = field(default_factory=dict)


def _seq_oracle(p, x):
    y = np.maximum(np_conv2d(x, p["0"]["w"], padding=(1, 1)) + p["0"]["b"][None, :, None, None], 0)
    y = np_max_pool2d(y, 2, 2, 0).reshape(x.shape[0], -1)
    return np.tanh(y @ p["4"]["w"] + p["4"]["b"])


CASES = [
    Case("linear", L.Linear(3, 4), (5, 3), lambda p, x: x @ p["w"] + p["b"], {"w": (3, 4), "b": (4,)}),
    Case("linear-nobias", L.Linear(3, 4, bias=False), (5, 3), lambda p, x: x @ p["w"], {"w": (3, 4)}),
    Case("linear-3d-input", L.Linear(3, 2), (2, 5, 3), lambda p, x: x @ p["w"] + p["b"], {"w": (3, 2), "b": (2,)}),
    Case(
        "mlp-relu",
        L.MLP([4, 8, 6, 3]),
        (5, 4),
        lambda p, x: np_mlp(p, x, lambda h: np.maximum(h, 0)),
        {"0": {"w": (4, 8), "b": (8,)}, "1": {"w": (8, 6), "b": (6,)}, "2": {"w": (6, 3), "b": (3,)}},
    ),
    Case(
        "mlp-tanh",
        L.MLP([4, 5, 2], activation=L.Tanh),
        (3, 4),
        lambda p, x: np_mlp(p, x, np.tanh),
        {"0": {"w": (4, 5), "b": (5,)}, "1": {"w": (5, 2), "b": (2,)}},
    ),
    Case(
        "conv2d",
        L.Conv2d(2, 3, 3),
        (2, 2, 6, 5),
        lambda p, x: np_conv2d(x, p["w"]) + p["b"][None, :, None, None],
        {"w": (3, 2, 3, 3), "b": (3,)},
    ),
    Case(
        "conv2d-stride-padding-dilation",
        L.Conv2d(2, 4, (3, 2), stride=2, padding=(1, 2), dilation=(1, 2)),
        (1, 2, 7, 6),
        lambda p, x: np_conv2d(x, p["w"], (2, 2), (1, 2), (1, 2)) + p["b"][None, :, None, None],
        {"w": (4, 2, 3, 2), "b": (4,)},
    ),
    Case(
        "conv2d-nobias",
        L.Conv2d(1, 2, 2, bias=False),
        (2, 1, 4, 4),
        lambda p, x: np_conv2d(x, p["w"]),
        {"w": (2, 1, 2, 2)},
    ),
    Case("maxpool2d", L.MaxPool2d(2), (2, 3, 6, 4), lambda p, x: np_max_pool2d(x, 2, 2, 0), {}),
    Case(
        "maxpool2d-stride-padding",
        L.MaxPool2d(3, stride=1, padding=1),
        (1, 2, 4, 5),
        lambda p, x: np_max_pool2d(x, 3, 1, 1),
        {},
    ),
    Case("flatten", L.Flatten(), (2, 3, 4, 5), lambda p, x: x.reshape(2, -1), {}),
    Case("flatten-start-2", L.Flatten(start_axis=2), (2, 3, 4, 5), lambda p, x: x.reshape(2, 3, -1), {}),
    Case("relu", L.ReLU(), (4, 5), lambda p, x: np.maximum(x, 0), {}),
    Case("tanh", L.Tanh(), (4, 5), lambda p, x: np.tanh(x), {}),
    Case("gelu", L.GELU(), (4, 5), lambda p, x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))), {}),
    Case("gelu-exact", L.GELU(approximate=False), (4, 5), lambda p, x: 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2))), {}),
    Case("silu", L.SiLU(), (4, 5), lambda p, x: x / (1 + np.exp(-x)), {}),
    Case(
        "layernorm",
        L.LayerNorm(6),
        (4, 6),
        lambda p, x: np_layer_norm(x, p["scale"], p["offset"], (-1,), 1e-5),
        {"scale": (6,), "offset": (6,)},
    ),
    Case(
        "layernorm-2d-shape",
        L.LayerNorm((3, 4), eps=1e-3),
        (2, 5, 3, 4),
        lambda p, x: np_layer_norm(x, p["scale"], p["offset"], (-2, -1), 1e-3),
        {"scale": (3, 4), "offset": (3, 4)},
    ),
    Case(
        "sequential",
        L.Sequential([L.Conv2d(2, 3, 3, padding=1), L.ReLU(), L.MaxPool2d(2), L.Flatten(), L.Linear(3 * 2 * 2, 5), L.Tanh()]),
        (2, 2, 4, 4),
        _seq_oracle,
        {"0": {"w": (3, 2, 3, 3), "b": (3,)}, "1": {}, "2": {}, "3": {}, "4": {"w": (12, 5), "b": (5,)}, "5": {}},
    ),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_forward_matches_numpy(case: Case, dtype) -> None:
    rng = np.random.default_rng(0)
    params = random_params(case.layer.init(0, dtype), rng)
    x = rng.standard_normal(case.x_shape).astype(dtype)
    expected = case.oracle(params, x)
    eager, traced = eager_and_traced(case.layer, params, x, **case.kwargs)
    for out in (eager, traced):
        assert isinstance(out, np.ndarray) and out.dtype == dtype
        np.testing.assert_allclose(out, expected, **TOL[dtype])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradients_match_finite_differences(case: Case) -> None:
    # With respect to the params and the input, reverse and forward mode, in float64.
    rng = np.random.default_rng(0)
    params = random_params(case.layer.init(0, np.float64), rng)
    x = rng.standard_normal(case.x_shape)
    ig.check_grads(lambda p, x: case.layer.apply(p, x, **case.kwargs), (params, x))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_param_tree_names_and_shapes(case: Case) -> None:
    params = case.layer.init(0)
    assert shapes(params) == case.param_shapes
    assert all(p.dtype == np.float32 for p in ig.tree_leaves(params))
    assert all(p.dtype == np.float64 for p in ig.tree_leaves(case.layer.init(0, ig.float64)))


def test_traced_parameters_are_named_after_the_tree() -> None:
    model = L.MLP([3, 4, 2])
    text = str(ig.trace(model.apply, model.init(0), ig.ShapeDtype((5, 3))))
    for name in ("%params_0_w", "%params_0_b", "%params_1_w", "%params_1_b", "%x"):
        assert name in text


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_embedding_looks_up_rows(dtype) -> None:
    layer = L.Embedding(10, 4)
    params = layer.init(0, dtype)
    assert shapes(params) == {"w": (10, 4)}
    ids = np.array([[0, 9, 3], [3, 3, 1]], np.int32)
    eager, traced = eager_and_traced(layer, params, ids)
    for out in (eager, traced):
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, params["w"][ids])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_dropout_with_mask_zeroes_and_rescales(dtype) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6)).astype(dtype)
    keep = rng.random((4, 6)) >= 0.25
    layer = L.Dropout(0.25)
    expected = np.where(keep, x / 0.75, 0)
    for mask in (keep, keep.astype(dtype)):  # bool masks and 0/1 masks mean the same
        eager, traced = eager_and_traced(layer, {}, x, mask=mask)
        for out in (eager, traced):
            assert out.dtype == dtype
            np.testing.assert_allclose(out, expected, **TOL[dtype])


def test_embedding_and_dropout_gradients_match_finite_differences() -> None:
    rng = np.random.default_rng(2)
    emb = L.Embedding(6, 3)
    ids = np.array([[0, 5, 2], [2, 2, 1]], np.int32)  # a repeated id accumulates its rows
    ig.check_grads(emb.apply, (emb.init(0, np.float64), ids))
    keep = rng.random((3, 4)) >= 0.5
    ig.check_grads(lambda x: L.Dropout(0.5).apply({}, x, mask=keep), (rng.standard_normal((3, 4)),))


def test_dropout_is_identity_without_mask_or_at_rate_zero() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert L.Dropout(0.5).apply({}, x) is x
    assert L.Dropout(0.0).apply({}, x, mask=np.zeros((2, 3), bool)) is x
    program = ig.trace(lambda x: L.Dropout(0.5).apply({}, x), x)
    np.testing.assert_array_equal(program(x), x)


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5])
def test_dropout_rejects_rates_outside_0_1(rate) -> None:
    with pytest.raises(ValueError, match="rate must be in"):
        L.Dropout(rate)


def test_sequential_routes_layer_kwargs_by_position() -> None:
    model = L.Sequential([L.Linear(3, 4), L.Dropout(0.5), L.ReLU()])
    params = random_params(model.init(0), np.random.default_rng(0))
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    keep = np.array([[True, False, True, True], [False, True, True, False]])
    h = x @ params["0"]["w"] + params["0"]["b"]
    expected = np.maximum(np.where(keep, h / 0.5, 0), 0)
    for key in (1, "1"):
        eager, traced = eager_and_traced(model, params, x, layer_kwargs={key: {"mask": keep}})
        np.testing.assert_allclose(eager, expected, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(traced, expected, rtol=2e-5, atol=2e-6)
    # Without a mask the dropout layer is the identity (evaluation).
    np.testing.assert_allclose(model.apply(params, x), np.maximum(h, 0), rtol=2e-5, atol=2e-6)
    with pytest.raises(ValueError, match=r"names no layer at \['7'\]"):
        model.apply(params, x, layer_kwargs={7: {"mask": keep}})


def test_layernorm_rejects_an_input_not_ending_in_the_normalized_shape() -> None:
    layer = L.LayerNorm((3, 4))
    with pytest.raises(ig.ShapeError, match=r"LayerNorm\(3, 4\): input of shape \(2, 4, 3\)"):
        ig.trace(layer.apply, layer.init(0), ig.ShapeDtype((2, 4, 3)))


def test_sequential_rejects_non_layers() -> None:
    with pytest.raises(TypeError, match="item 1 is a function, not a Layer"):
        L.Sequential([L.ReLU(), ig.tanh])


# ---------------------------------------------------------------------------------------------
# Initialization
# ---------------------------------------------------------------------------------------------


def test_init_is_deterministic_per_seed_and_accepts_generators() -> None:
    model = L.MLP([5, 7, 3])
    a, b, c = model.init(3), model.init(3), model.init(4)
    for x, y in zip(ig.tree_leaves(a), ig.tree_leaves(b)):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a["0"]["w"], c["0"]["w"])
    from_generator = model.init(np.random.default_rng(3))
    assert shapes(from_generator) == shapes(a)
    # float64 and float32 inits round the same draw.
    np.testing.assert_allclose(model.init(3, ig.float64)["0"]["w"], a["0"]["w"], rtol=1e-6)


@pytest.mark.parametrize("key", [1.5, "0", None, True])
def test_init_rejects_other_keys(key) -> None:
    with pytest.raises(TypeError, match="key must be an integer seed, an ig.random key or a numpy.random.Generator"):
        L.Linear(2, 3).init(key)


def test_children_are_initialized_from_independent_streams() -> None:
    # Changing the first layer's shape does not change the third layer's initial values.
    a = L.Sequential([L.Linear(3, 4), L.ReLU(), L.Linear(4, 2)]).init(0)
    b = L.Sequential([L.Linear(9, 4), L.ReLU(), L.Linear(4, 2)]).init(0)
    np.testing.assert_array_equal(a["2"]["w"], b["2"]["w"])
    assert not np.array_equal(a["0"]["w"][:3], a["2"]["w"][:3, :2])


def test_he_normal_statistics_and_zero_biases() -> None:
    lin = L.Linear(800, 500).init(0)
    assert abs(lin["w"].std() / np.sqrt(2 / 800) - 1) < 0.02
    assert abs(lin["w"].mean()) < 0.01 * np.sqrt(2 / 800)
    np.testing.assert_array_equal(lin["b"], 0)
    conv = L.Conv2d(16, 300, 5).init(0)
    assert abs(conv["w"].std() / np.sqrt(2 / (16 * 25)) - 1) < 0.02
    np.testing.assert_array_equal(conv["b"], 0)
    emb = L.Embedding(1000, 200).init(0)["w"]
    assert abs(emb.std() - 1) < 0.02 and abs(emb.mean()) < 0.02
    ln = L.LayerNorm((2, 3)).init(0)
    np.testing.assert_array_equal(ln["scale"], 1)
    np.testing.assert_array_equal(ln["offset"], 0)


def test_init_accepts_ig_random_keys():
    key = ig.random.key(3)
    a = ig.layers.Linear(4, 2).init(key)
    b = ig.layers.Linear(4, 2).init(ig.random.key(3))
    c = ig.layers.Linear(4, 2).init(ig.random.key(4))
    np.testing.assert_array_equal(a["w"], b["w"])
    assert not np.array_equal(a["w"], c["w"])


def test_dropout_with_key_draws_mask_in_program():
    layer = ig.layers.Dropout(0.25)
    x = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    key = ig.random.key(7)
    eager = layer.apply({}, x, key=key)
    traced = ig.trace(lambda k, v: layer.apply({}, v, key=k), key, x)(key, x)
    np.testing.assert_array_equal(eager, traced)
    kept = eager != 0
    np.testing.assert_allclose(eager[kept], x[kept] / 0.75, rtol=1e-6)
    assert 0.65 < kept.mean() < 0.85
    other = layer.apply({}, x, key=ig.random.key(8))
    assert not np.array_equal(eager, other)


def _np_attention(p, x, heads, allowed):
    b, t, d = x.shape
    hd = d // heads
    q, k, v = ((x @ p[f"w{n}"] + p[f"b{n}"]).reshape(b, t, heads, hd) for n in "qkv")
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(hd)
    s = np.where(allowed, s, np.finfo(s.dtype).min)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", w, v).reshape(b, t, d) @ p["wo"] + p["bo"]


def test_multi_head_attention_matches_numpy_with_causal_and_padding_masks():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 8))
    causal = L.MultiHeadAttention(8, 2, causal=True)
    p = causal.init(0, np.float64)
    tril = np.tril(np.ones((5, 5), np.bool_))
    np.testing.assert_allclose(ig.jit(causal.apply)(p, x), _np_attention(p, x, 2, tril), rtol=1e-12, atol=1e-13)
    keys = np.array([[True] * 5, [True, True, True, False, False]])[:, None, None, :]
    plain = L.MultiHeadAttention(8, 2)
    got = ig.jit(lambda p, x, m: plain(p, x, mask=m))(p, x, keys)
    np.testing.assert_allclose(got, _np_attention(p, x, 2, keys), rtol=1e-12, atol=1e-13)
    # A fully masked row averages uniformly instead of making NaN.
    none = np.zeros((1, 1, 1, 5), np.bool_)
    assert np.all(np.isfinite(ig.jit(lambda p, x, m: plain(p, x, mask=m))(p, x, none)))
    ig.check_grads(lambda p, x: causal(p, x), (p, x), order=1, modes=("rev",))
    assert causal.init(0)["wq"].dtype == np.float32
    with pytest.raises(ig.ShapeError, match=r"MultiHeadAttention\(dim=8\): input must be \(batch, time, 8\)"):
        causal(p, x[0])
    with pytest.raises(ValueError, match="not a multiple"):
        L.MultiHeadAttention(8, 3)
