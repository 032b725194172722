"""ig.special (irgrad/scipy/special.py) against mpmath in float64: a few ulp over each
function's domain, tails included (eager, and all functions in one `ig.jit` compile); the
stdlib's math.erfc / math.lgamma where mpmath is missing; special values; float32, float16
and int inputs; gradients against finite differences (first and second order); derivative
values in the tails; the documented derivatives at the special points; logsumexp with weights."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import max_ulp

sp = ig.special
rng = np.random.default_rng(11)

try:
    import mpmath as mp
except ImportError:  # the accuracy tests against mpmath are skipped
    mp = None


def _log_uniform(lo: float, hi: float, n: int, both_signs: bool = False) -> np.ndarray:
    x = np.exp(rng.uniform(math.log(lo), math.log(hi), n))
    return np.concatenate([x, -x]) if both_signs else x


_X0 = 1.4616321449683622  # digamma's positive zero

# name -> (function, mpmath reference, argument, max ulp eagerly). Domains end where the result
# is still a normal float (the compiled CPU exp flushes subnormal results to 0).
DOMAINS = {
    "erfc": (np.concatenate([rng.uniform(-6, 26.5, 400), _log_uniform(1e-20, 1, 60, True), [0.0, 0.5, -0.5]]), 5),
    "ndtr": (np.concatenate([rng.uniform(-37.5, 9, 400), _log_uniform(1e-20, 1, 60, True), [0.0, 0.75, -0.75]]), 5),
    "log_ndtr": (np.concatenate([rng.uniform(-40, 37, 400), -_log_uniform(40, 1e150, 40),
                                 _log_uniform(1e-20, 1, 40, True)]), 5),  # fmt: skip
    "erfinv": (np.concatenate([rng.uniform(-1, 1, 200), 1 - _log_uniform(1.2e-16, 0.5, 80),
                               -(1 - _log_uniform(1.2e-16, 0.5, 80)), _log_uniform(1e-300, 1e-3, 40, True),
                               [0.5, -0.5, 1 - 2.0**-53]]), 3),  # fmt: skip
    "gammaln": (np.concatenate([rng.uniform(0, 15, 400), _log_uniform(1e-300, 1e300, 100),
                                1 + _log_uniform(1e-12, 1e-2, 40, True), 2 + _log_uniform(1e-12, 1e-2, 40, True),
                                [0.5, 1.5, 2.5, 12.5, 3.0, 1e-320]]), 3),  # fmt: skip
    "digamma": (np.concatenate([rng.uniform(0, 15, 400), _log_uniform(1e-300, 1e300, 100),
                                _X0 + _log_uniform(1e-14, 1e-2, 40, True), [1.0, 2.0, 10.0, 0.5]]), 3),  # fmt: skip
    "logit": (np.concatenate([rng.uniform(0, 1, 300), _log_uniform(1e-300, 0.5, 60), 1 - _log_uniform(1e-16, 0.5, 60),
                              0.5 + _log_uniform(1e-16, 1e-2, 40, True), [0.3, 0.65]]), 3),  # fmt: skip
    "entr": (np.concatenate([rng.uniform(0, 3, 200), _log_uniform(1e-300, 1e300, 100)]), 2),
}


def _mp_references() -> dict:
    return {
        "erfc": mp.erfc,
        "ndtr": mp.ncdf,
        "log_ndtr": lambda x: mp.log(mp.ncdf(x)) if x <= 0 else mp.log1p(-mp.ncdf(-x)),
        "erfinv": mp.erfinv,
        "gammaln": lambda x: mp.re(mp.loggamma(x)),
        "digamma": mp.digamma,
        "logit": lambda x: mp.log(x / (1 - x)),
        "entr": lambda x: -x * mp.log(x),
    }


@functools.lru_cache(maxsize=None)
def _reference(name: str) -> np.ndarray:
    mp.mp.dps = 40
    f = _mp_references()[name]
    return np.array([float(f(mp.mpf(float(v)))) for v in DOMAINS[name][0]])


def _fn(name: str):
    return getattr(sp, name)


@pytest.mark.skipif(mp is None, reason="mpmath is the reference")
def test_float64_to_a_few_ulp_eager_and_jit():
    names = list(DOMAINS)
    jitted = ig.jit(lambda *xs: [_fn(n)(x) for n, x in zip(names, xs)])(*[DOMAINS[n][0] for n in names])
    for name, got_jit in zip(names, jitted):
        x, ulps = DOMAINS[name]
        want = _reference(name)
        got = _fn(name)(x)
        assert got.dtype == np.float64 and got_jit.dtype == np.float64, name
        assert max_ulp(got, want) <= ulps, (name, "eager", max_ulp(got, want))
        # The compiled CPU backend's exp and log are a few ulp off libm's (eager runs use libm).
        assert max_ulp(got_jit, want) <= ulps + 3, (name, "jit", max_ulp(got_jit, want))


def test_the_brief_erfc_tail_bound_holds():
    """erfc's float64 relative error stays below 1e-13 up to x = 26 (math.erfc as reference:
    libm's, accurate to an ulp or two), and both tails match math.erfc to a few ulp."""
    x = np.concatenate([np.linspace(-6, 26, 321), _log_uniform(1e-10, 1, 40, True)])
    want = np.array([math.erfc(v) for v in x])
    got = sp.erfc(x)
    assert np.max(np.abs(got - want) / want) < 1e-13
    assert max_ulp(got, want) <= 6


def test_gammaln_against_math_lgamma():
    """CPython's math.lgamma (a Lanczos sum) is only absolutely accurate near the zeros at 1
    and 2, so the comparison is relative to max(|lgamma|, 1)."""
    x = np.concatenate([rng.uniform(0, 30, 300), _log_uniform(1e-300, 1e300, 60)])
    want = np.array([math.lgamma(v) for v in x])
    assert np.all(np.abs(sp.gammaln(x) - want) <= 6 * np.spacing(np.maximum(np.abs(want), 1.0)))


@pytest.mark.skipif(mp is None, reason="mpmath is the reference")
def test_negative_arguments_use_the_reflection_formulas():
    """For x < 0 (poles excluded) gammaln and digamma are accurate to a few ulp of the larger
    of the two reflected terms: an absolute error, not a relative one near their zeros."""
    x = np.concatenate([-rng.uniform(0, 30, 200), -_log_uniform(1e-300, 1e-3, 30),
                        -(np.arange(1, 15) + 1e-9), -np.arange(1, 15) + 1e-7])  # fmt: skip
    mp.mp.dps = 40
    for name, f in (("gammaln", lambda v: mp.log(abs(mp.gamma(v)))), ("digamma", mp.digamma)):
        want = np.array([float(f(mp.mpf(float(v)))) for v in x])
        got = _fn(name)(x)
        assert np.all(np.abs(got - want) <= 1e-14 * np.maximum(np.abs(want), 1.0)), name


@pytest.mark.skipif(mp is None, reason="mpmath is the reference")
def test_xlogy_xlog1py_float64():
    x = np.concatenate([rng.standard_normal(200) * 10, np.zeros(20), _log_uniform(1e-300, 1e300, 40, True)])
    y = np.concatenate([_log_uniform(1e-300, 1e300, 160), rng.uniform(-1, 3, 100), np.full(40, 0.7)])
    rng.shuffle(y)
    mp.mp.dps = 40
    pairs = list(zip(x.tolist(), y.tolist()))
    want_y = np.array([float(a * mp.log(b)) if a != 0 and b > 0 else 0.0 for a, b in pairs])
    want_1p = np.array([float(a * mp.log1p(b)) if a != 0 else 0.0 for a, b in pairs])
    pos = y > 0
    assert max_ulp(sp.xlogy(x[pos], y[pos]), want_y[pos]) <= 2
    assert max_ulp(sp.xlog1py(x, y), want_1p) <= 2


def test_special_values():
    inf, nan = np.inf, np.nan
    cases = [
        (sp.erfc, [inf, -inf, 0.0, 30.0, -30.0, nan], [0.0, 2.0, 1.0, 0.0, 2.0, nan]),
        (sp.ndtr, [inf, -inf, 0.0, -40.0, nan], [1.0, 0.0, 0.5, 0.0, nan]),
        (sp.log_ndtr, [inf, -inf, 0.0, nan], [0.0, -inf, math.log(0.5), nan]),
        (sp.erfinv, [1.0, -1.0, 0.0, 1.5, -2.0, nan], [inf, -inf, 0.0, nan, nan, nan]),
        (sp.gammaln, [0.0, -1.0, -2.0, -inf, inf, 1.0, 2.0, nan], [inf, inf, inf, inf, inf, 0.0, 0.0, nan]),
        (sp.digamma, [0.0, -1.0, -3.0, -inf, inf, nan], [nan, nan, nan, nan, inf, nan]),
        (sp.logit, [0.0, 1.0, 0.5, 2.0, -0.1, nan], [-inf, inf, 0.0, nan, nan, nan]),
        (sp.entr, [0.0, -1.0, inf, nan, 1.0], [0.0, -inf, -inf, nan, 0.0]),
        (sp.expit, [inf, -inf, 0.0], [1.0, 0.0, 0.5]),
    ]
    with np.errstate(all="ignore"):
        for fn, x, want in cases:
            np.testing.assert_array_equal(fn(np.array(x)), np.array(want), err_msg=fn.__name__)
    assert sp.digamma(np.array([1.0]))[0] == pytest.approx(-0.5772156649015329, rel=1e-16)
    np.testing.assert_array_equal(sp.xlogy(np.array([0.0, 0.0, 0.0, 2.0]), np.array([0.0, nan, inf, 0.0])),
                                  [0.0, 0.0, 0.0, -inf])  # fmt: skip
    np.testing.assert_array_equal(sp.xlog1py(np.array([0.0, 0.0, 3.0]), np.array([-1.0, nan, -1.0])), [0.0, 0.0, -inf])
    assert not np.signbit(sp.xlogy(np.array([0.0]), np.array([0.5]))[0])
    np.testing.assert_array_equal(np.signbit(sp.erfinv(np.array([0.0, -0.0]))), [False, True])


def test_float32_float16_and_int_inputs():
    x = (rng.standard_normal(64) * 3).astype(np.float32)
    u = np.tanh(x).astype(np.float32)
    p = ig.sigmoid(x)
    pos = (np.abs(x) + 0.05).astype(np.float32)
    f = ig.jit(lambda x, u, p, pos: (sp.erfc(x), sp.ndtr(x), sp.log_ndtr(x), sp.erfinv(u), sp.gammaln(pos),
                                     sp.digamma(pos), sp.logit(p), sp.entr(pos), sp.xlogy(x, pos), sp.xlog1py(x, pos)))  # fmt: skip
    got = f(x, u, p, pos)
    want = [sp.erfc(x.astype(np.float64)), sp.ndtr(x.astype(np.float64)), sp.log_ndtr(x.astype(np.float64)),
            sp.erfinv(u.astype(np.float64)), sp.gammaln(pos.astype(np.float64)), sp.digamma(pos.astype(np.float64)),
            sp.logit(p.astype(np.float64)), sp.entr(pos.astype(np.float64)),
            sp.xlogy(x.astype(np.float64), pos.astype(np.float64)), sp.xlog1py(x.astype(np.float64), pos.astype(np.float64))]  # fmt: skip
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == np.float32, i
        # A few float32 ulp (erfinv's float32 form: Giles' approximation alone).
        np.testing.assert_allclose(g, w, rtol=8e-7, atol=1e-37, err_msg=str(i))
    h = x.astype(np.float16)
    for name in ("erfc", "ndtr", "gammaln", "digamma"):
        arg = np.abs(h) + np.float16(0.1) if name in ("gammaln", "digamma") else h
        g = _fn(name)(arg)
        assert g.dtype == np.float16, name
        np.testing.assert_allclose(g.astype(np.float64), _fn(name)(arg.astype(np.float64)), rtol=1e-3, atol=1e-4)
    ints = np.array([1, 2, 3], np.int32)
    for name in ("erfc", "ndtr", "gammaln", "digamma", "entr", "expit", "erf"):
        g = _fn(name)(ints)
        assert g.dtype == np.float32, name
        np.testing.assert_allclose(g, _fn(name)(ints.astype(np.float64)), rtol=1e-6, err_msg=name)
    assert sp.xlogy(ints, 2.0).dtype == np.float32
    assert sp.xlogy(ints, np.float64(2.0)).dtype == np.float64
    assert sp.gammaln(2.5).dtype == np.float32  # a Python float is weakly typed float32


def test_gradients_against_finite_differences():
    x = rng.uniform(-2.5, 2.5, (2, 3))
    p = rng.uniform(0.05, 0.95, (2, 3))
    pos = rng.uniform(0.1, 20, (2, 3))
    u = rng.uniform(-0.95, 0.95, (2, 3))
    neg = -rng.integers(0, 5, (2, 3)) - rng.uniform(0.1, 0.9, (2, 3))

    def f(x, p, pos, u, neg):
        return (sp.erfc(x), sp.ndtr(3 * x), sp.log_ndtr(4 * x), sp.erfinv(u), sp.gammaln(pos), sp.gammaln(neg),
                sp.digamma(pos), sp.digamma(neg), sp.xlogy(x, pos), sp.xlog1py(x, p), sp.logit(p), sp.expit(x),
                sp.entr(pos), sp.logsumexp(x, axis=1, b=pos), sp.erf(x))  # fmt: skip

    ig.check_grads(f, (x, p, pos, u, neg), order=1, modes=("fwd", "rev"))
    ig.check_grads(lambda x, pos, u: (sp.erfc(x), sp.gammaln(pos), sp.digamma(pos), sp.erfinv(u), sp.log_ndtr(3 * x)),
                   (x, pos, u), order=2, modes=("rev",))  # fmt: skip


@pytest.mark.skipif(mp is None, reason="mpmath is the reference")
def test_derivative_values_and_tails():
    g = lambda f, x: ig.grad(lambda t: ig.sum(f(t)))(np.asarray(x, np.float64))  # noqa: E731
    x = np.array([1e-300, 1e-5, 0.7, 1.0, 1.5, 2.0, 7.3, 12.4, 12.6, 1e5, 1e300])
    mp.mp.dps = 30
    np.testing.assert_allclose(g(sp.gammaln, x), [float(mp.digamma(v)) for v in x], rtol=1e-14)
    np.testing.assert_allclose(g(sp.digamma, x[1:-1]), [float(mp.psi(1, v)) for v in x[1:-1]], rtol=1e-12)
    y = np.array([0.0, 0.3, -0.7, 0.999, 1 - 2.0**-52])
    np.testing.assert_allclose(g(sp.erfinv, y), math.sqrt(math.pi) / 2 * np.exp(sp.erfinv(y) ** 2), rtol=1e-13)
    # Deep in the tails the derivatives stay finite (and right).
    t = np.array([-40.0, -1e5])
    np.testing.assert_allclose(g(sp.log_ndtr, t), [float(mp.npdf(v) / mp.ncdf(v)) for v in t], rtol=1e-13)
    np.testing.assert_allclose(g(sp.log_ndtr, [-1e150]), [1e150], rtol=1e-15)
    np.testing.assert_array_equal(g(sp.erfc, [30.0, 1e10, -30.0]), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(g(sp.ndtr, [-40.0, 40.0]), [0.0, 0.0])
    np.testing.assert_allclose(g(sp.erfc, [5.0, -0.3]), [float(-2 / mp.sqrt(mp.pi) * mp.exp(-v * v)) for v in (5.0, -0.3)],
                               rtol=1e-14)  # fmt: skip


def test_documented_special_point_derivatives():
    g = lambda f, x: ig.grad(lambda t: ig.sum(f(t)))(np.asarray(x, np.float64))  # noqa: E731
    zeros = [0.0, -0.0]
    # |x| is a select: x = 0 is no kink for the smooth functions.
    np.testing.assert_allclose(g(sp.erfc, zeros), -2 / math.sqrt(math.pi), rtol=1e-15)
    np.testing.assert_allclose(g(sp.ndtr, zeros), 1 / math.sqrt(2 * math.pi), rtol=1e-15)
    np.testing.assert_allclose(g(sp.log_ndtr, zeros), 2 / math.sqrt(2 * math.pi), rtol=1e-15)
    np.testing.assert_allclose(g(sp.erfinv, zeros), math.sqrt(math.pi) / 2, rtol=1e-15)
    np.testing.assert_array_equal(g(sp.erfinv, [1.0, -1.0]), [np.inf, np.inf])
    # xlogy / xlog1py at x == 0: d/dy = 0, d/dx = log(y) where finite, else 0.
    gx, gy = ig.grad(lambda a, b: ig.sum(sp.xlogy(a, b)), argnums=(0, 1))(
        np.array([0.0, 0.0, 0.0, 0.0, 2.0]), np.array([0.0, 2.0, np.inf, np.nan, 3.0]))
    np.testing.assert_array_equal(gx, [0.0, math.log(2.0), 0.0, 0.0, math.log(3.0)])
    np.testing.assert_array_equal(gy, [0.0, 0.0, 0.0, 0.0, 2.0 / 3.0])
    gx, gy = ig.grad(lambda a, b: ig.sum(sp.xlog1py(a, b)), argnums=(0, 1))(
        np.array([0.0, 0.0, 0.0, 2.0]), np.array([-1.0, 2.0, np.nan, 3.0]))
    np.testing.assert_allclose(gx, [0.0, math.log1p(2.0), 0.0, math.log1p(3.0)], rtol=1e-15, atol=0)
    np.testing.assert_array_equal(gy, [0.0, 0.0, 0.0, 0.5])
    # Forward mode too: no NaN from 0 * (1 / y) at a tiny y.
    _, tangent = ig.jvp(sp.xlogy, (np.array([0.0, 0.0]), np.array([1e-320, 0.0])), (np.ones(2), np.ones(2)))
    np.testing.assert_allclose(tangent, [math.log(1e-320), 0.0])
    # entr: +inf at 0 (one-sided), 0 below.
    np.testing.assert_array_equal(g(sp.entr, [0.0, 1.0, -1.0]), [np.inf, -1.0, 0.0])
    # logit: +inf at both ends; gammaln infinite at its poles, digamma NaN.
    np.testing.assert_array_equal(g(sp.logit, [0.0, 1.0]), [np.inf, np.inf])
    assert np.all(np.isinf(g(sp.gammaln, [0.0, -1.0, -4.0])))
    assert np.all(np.isnan(g(sp.digamma, [0.0, -1.0, -4.0])))


def test_logsumexp_with_weights_and_softmax():
    a = rng.standard_normal((3, 5)) * 50
    b = rng.uniform(0.1, 2.0, (3, 5))

    def ref(a, b, axis):
        m = np.max(a, axis=axis, keepdims=True)
        s = np.sum(b * np.exp(a - m), axis=axis, keepdims=True)
        return np.squeeze(np.log(np.abs(s)) + m, axis=axis), np.squeeze(np.sign(s), axis=axis)

    np.testing.assert_allclose(sp.logsumexp(a, axis=1, b=b), ref(a, b, 1)[0], rtol=1e-14)
    np.testing.assert_allclose(sp.logsumexp(a, axis=0, b=b[0]), ref(a, b[0], 0)[0], rtol=1e-14)
    np.testing.assert_allclose(sp.logsumexp(a), ig.logsumexp(a), rtol=1e-15)
    signed = b * np.where(rng.random((3, 5)) < 0.5, -1, 1)
    out, sign = sp.logsumexp(a, axis=1, b=signed, return_sign=True)
    want_out, want_sign = ref(a, signed, 1)
    np.testing.assert_allclose(out, want_out, rtol=1e-13)
    np.testing.assert_array_equal(sign, want_sign)
    plain = sp.logsumexp(np.array([0.0, 0.0]), b=np.array([1.0, -2.0]))
    assert np.isnan(plain)
    kept = sp.logsumexp(a, axis=1, b=b, keepdims=True)
    assert kept.shape == (3, 1)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(sp.logsumexp(np.full(3, -np.inf), b=np.ones(3)), -np.inf)
    np.testing.assert_allclose(sp.softmax(a, axis=0), ig.softmax(a, axis=0))
    np.testing.assert_array_equal(sp.erf(np.array([0.5])), ig.erf(np.array([0.5])))


def test_vmap_and_grad_compose():
    x = rng.uniform(0.5, 5.0, (4, 3))
    np.testing.assert_allclose(ig.vmap(sp.gammaln)(x), sp.gammaln(x), rtol=1e-15)
    per_row = ig.vmap(ig.grad(lambda r: ig.sum(sp.gammaln(r))))(x)
    np.testing.assert_allclose(per_row, sp.digamma(x), rtol=1e-13)
