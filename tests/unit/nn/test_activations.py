"""Activations (gelu, silu, softplus, log_sigmoid, leaky_relu, elu, celu, selu, relu6, soft_sign,
hard_tanh, hard_sigmoid, hard_silu, mish, expm1), glu, standardize, dot_product_attention and ig.erf:
values against numpy/math in float64 on random inputs and at large |x|, float32 kept, derivatives
against central finite differences away from the kinks (first and second order), the decided
derivative at each kink, and no NaN or inf in any derivative at |x| = 1000."""

from __future__ import annotations

import math

import numpy as np
import pytest

import irgrad as ig

erf_np = np.vectorize(math.erf)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _expm1(x):
    return np.expm1(x)


REFERENCE = {
    "erf": (ig.erf, erf_np),
    "expm1": (ig.expm1, np.expm1),
    "gelu": (ig.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
    "gelu_exact": (lambda x: ig.gelu(x, approximate=False), lambda x: 0.5 * x * (1 + erf_np(x / np.sqrt(2)))),
    "silu": (ig.silu, lambda x: x / (1 + np.exp(-x))),
    "softplus": (ig.softplus, lambda x: np.logaddexp(x, 0.0)),
    "log_sigmoid": (ig.log_sigmoid, lambda x: -np.logaddexp(-x, 0.0)),
    "leaky_relu": (ig.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "elu": (lambda x: ig.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(np.minimum(x, 0)))),
    "selu": (ig.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0)))),
    "relu6": (ig.relu6, lambda x: np.clip(x, 0, 6)),
    "celu": (lambda x: ig.celu(x, 0.8), lambda x: np.where(x > 0, x, 0.8 * np.expm1(np.minimum(x, 0) / 0.8))),
    "soft_sign": (ig.nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    "hard_tanh": (ig.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "hard_sigmoid": (ig.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_silu": (ig.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "mish": (ig.mish, lambda x: x * np.tanh(np.logaddexp(x, 0.0))),
}


# gelu's tanh form computes 1 + tanh(u), which cancels for u << 0: there a tanh within one ulp
# (numpy's own SIMD tanh and irgrad's differ by an ulp on some CPUs, AVX-512 among them) moves
# the result by up to ulp(1) * |x| / 2, far more than rtol allows when the result is tiny.
ABSOLUTE_ERROR = {"gelu": lambda x: 4 * np.finfo(np.float64).eps * np.abs(0.5 * x)}


def _inputs(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.normal(0, 3, 40), rng.uniform(-1e-3, 1e-3, 8), [-700.0, -40.0, 40.0, 700.0]])
    return x


@pytest.mark.parametrize("name", list(REFERENCE))
def test_values_match_the_reference(name: str) -> None:
    fn, ref = REFERENCE[name]
    x = _inputs(1)
    with np.errstate(over="ignore"):
        want = ref(x)
    got = ig.jit(fn)(x)
    if name in ABSOLUTE_ERROR:
        bound = 4e-15 * np.abs(want) + ABSOLUTE_ERROR[name](x)
        assert np.all(np.abs(got - want) <= bound), np.max(np.abs(got - want) / bound)
    else:
        np.testing.assert_allclose(got, want, rtol=4e-15, atol=1e-300)
    x32 = x[:48].astype(np.float32)
    got32 = ig.jit(fn)(x32)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, ref(x32.astype(np.float64)), rtol=2e-6, atol=1e-6)


def test_expm1_and_log_sigmoid_keep_precision_near_zero_and_far_out() -> None:
    tiny = np.array([1e-12, -3e-9, 2.5e-5])
    np.testing.assert_allclose(ig.expm1(tiny), np.expm1(tiny), rtol=1e-15)
    assert np.all(np.isfinite(ig.log_sigmoid(np.array([-1000.0, 1000.0]))))
    np.testing.assert_allclose(ig.log_sigmoid(np.array([-1000.0])), [-1000.0], rtol=1e-15)


@pytest.mark.parametrize("name", list(REFERENCE))
def test_derivatives_match_finite_differences(name: str) -> None:
    fn, ref = REFERENCE[name]
    rng = np.random.default_rng(2)
    x = rng.normal(0, 2, 12)
    x = x[np.abs(x) > 0.05]  # away from the kinks at 0
    x = x[np.abs(x - 6) > 0.05]
    x = x[(np.abs(np.abs(x) - 1) > 0.05) & (np.abs(np.abs(x) - 3) > 0.05)]
    ig.check_grads(fn, (x,), order=2, modes=("fwd", "rev"))
    grad = ig.grad(lambda v: ig.sum(fn(v)))(x)
    eps = 1e-6
    numeric = (ref(x + eps) - ref(x - eps)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-9)


def test_derivative_at_each_kink_is_the_documented_one() -> None:
    def d(fn, at):
        return float(ig.grad(lambda v: ig.sum(fn(v)))(np.array([at]))[0])

    assert d(ig.leaky_relu, 0.0) == 1.0
    assert d(lambda v: ig.elu(v, 0.7), 0.0) == pytest.approx(0.7, rel=1e-15)
    assert d(ig.relu6, 0.0) == 0.0 and d(ig.relu6, 6.0) == 0.0 and d(ig.relu6, 3.0) == 1.0
    assert d(ig.softplus, 0.0) == 0.5
    assert d(ig.log_sigmoid, 0.0) == 0.5
    assert d(ig.erf, 0.0) == pytest.approx(2 / math.sqrt(math.pi), rel=1e-15)
    assert d(ig.celu, 0.0) == 1.0
    assert d(ig.hard_tanh, 1.0) == 1.0 and d(ig.hard_tanh, -1.0) == 1.0 and d(ig.hard_tanh, 1.5) == 0.0
    assert d(ig.hard_sigmoid, 3.0) == 0.0 and d(ig.hard_sigmoid, -3.0) == 0.0
    assert d(ig.hard_sigmoid, 0.0) == pytest.approx(1 / 6, rel=1e-15)


@pytest.mark.parametrize("name", list(REFERENCE))
def test_no_nan_or_inf_in_derivatives_far_out(name: str) -> None:
    fn, _ = REFERENCE[name]
    x = np.array([-1000.0, -50.0, 50.0, 1000.0])
    if name == "expm1":
        x = x[:2]  # expm1(1000) itself is inf
    g = ig.grad(lambda v: ig.sum(fn(v)))(x)
    assert np.all(np.isfinite(g)), g
    h = ig.grad(lambda v: ig.sum(ig.grad(lambda w: ig.sum(fn(w)))(v)))(x)
    assert np.all(np.isfinite(h)), h


def test_integers_become_float32_as_in_jax() -> None:
    for fn, ref in (REFERENCE["gelu"], REFERENCE["erf"], REFERENCE["softplus"]):
        got = fn(np.arange(-2, 3))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref(np.arange(-2.0, 3.0)), rtol=2e-7, atol=1e-7)


def test_erf_on_the_interpreter_matches_libm() -> None:
    x = _inputs(3)
    np.testing.assert_array_equal(ig.jit(ig.erf, backend="interp")(x), erf_np(x))
    np.testing.assert_allclose(ig.jit(ig.erf, backend="cpu")(x), erf_np(x), rtol=1e-15)


def test_glu_and_standardize_match_numpy() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 8))
    a, b = x[:, :4], x[:, 4:]
    np.testing.assert_allclose(ig.nn.glu(x), a / (1 + np.exp(-b)), rtol=1e-15)
    np.testing.assert_allclose(ig.nn.glu(x.T, axis=0), (a / (1 + np.exp(-b))).T, rtol=1e-15)
    mean, var = x.mean(-1, keepdims=True), (x * x).mean(-1, keepdims=True) - x.mean(-1, keepdims=True) ** 2
    np.testing.assert_allclose(ig.nn.standardize(x), (x - mean) / np.sqrt(var + 1e-5), rtol=1e-13)
    where = rng.random((3, 8)) > 0.3
    m = np.array([x[i][where[i]].mean() for i in range(3)])[:, None]
    v = np.array([(x[i][where[i]] ** 2).mean() for i in range(3)])[:, None] - m**2
    np.testing.assert_allclose(ig.nn.standardize(x, where=where), (x - m) / np.sqrt(v + 1e-5), rtol=1e-13)
    ig.check_grads(lambda t: (ig.nn.glu(t), ig.nn.standardize(t, axis=0)), (x,), order=2, modes=("fwd", "rev"))
    with pytest.raises(ig.ShapeError, match="glu: axis -1 must have an even size"):
        ig.nn.glu(x[:, :3])


def _attention_reference(q, k, v, bias, mask, causal):
    g = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, g, axis=2), np.repeat(v, g, axis=2)
    logits = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1]) + bias
    keep = np.broadcast_to(mask, logits.shape)
    if causal:
        keep = keep & np.tril(np.ones(logits.shape[-2:], bool))
    logits = np.where(keep, logits, np.finfo(logits.dtype).min)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    return np.einsum("bhqk,bkhd->bqhd", w / w.sum(-1, keepdims=True), v)


@pytest.mark.parametrize("kv_heads,causal", [(4, False), (2, True), (1, False)])
def test_dot_product_attention(kv_heads: int, causal: bool) -> None:
    """jax.nn.dot_product_attention's contract: (batch, time, heads, head_dim) layout,
    grouped-query key/value heads, bias, boolean mask and causal mask, in float64."""
    rng = np.random.default_rng(5)
    source = 5 if causal else 7
    q = rng.standard_normal((2, 5, 4, 8))
    k, v = rng.standard_normal((2, 2, source, kv_heads, 8))
    bias = rng.standard_normal((1, 4, 5, source))
    mask = rng.random((2, 1, 5, source)) > 0.3
    mask[0, 0, 1] = False  # a fully masked row: uniform weights, not NaN
    fn = lambda q, k, v: ig.nn.dot_product_attention(q, k, v, bias=bias, mask=mask, is_causal=causal)  # noqa: E731
    want = _attention_reference(q, k, v, bias, mask, causal)
    np.testing.assert_allclose(ig.jit(fn)(q, k, v), want, rtol=1e-12, atol=1e-14)
    if kv_heads == 2:
        ig.check_grads(fn, (q, k, v), order=1, modes=("fwd", "rev"))


def test_dot_product_attention_errors() -> None:
    q = np.zeros((2, 5, 4, 8))
    with pytest.raises(ig.ShapeError, match="kv_heads dividing heads"):
        ig.nn.dot_product_attention(q, np.zeros((2, 5, 3, 8)), np.zeros((2, 5, 3, 8)))
    with pytest.raises(ig.ShapeError, match="query must be"):
        ig.nn.dot_product_attention(q[0], q, q)


def test_relu6_and_hard_sigmoid_keep_nan() -> None:
    """NaN propagates, as in JAX (a select on `inside` alone once made it 0)."""
    x = np.array([np.nan, 1.0, -1.0, 7.0])
    got = ig.relu6(x)
    assert np.isnan(got[0]) and np.array_equal(got[1:], [1.0, 0.0, 6.0])
    assert np.isnan(ig.hard_sigmoid(x)[0])
