"""`ig.special`: jax.scipy.special's functions, as composites of `nn` ops.

`erf erfc erfinv ndtr log_ndtr gammaln digamma xlogy xlog1py logit expit entr logsumexp
softmax`. Like the rest of the frontend they are built from other frontend functions, so
autodiff, `vmap`, `jit` and every backend cover them with no rules of their own. Integer and
bool inputs become float32 (Python floats are weakly typed float32), as in JAX; float16 and
bfloat16 are computed in float32 and rounded once.

Accuracy (float64, checked against mpmath in tests/unit/scipy/test_special.py): a few ulp over the
whole domain for erfc, ndtr, log_ndtr, erfinv, gammaln and digamma for x > 0, xlogy, xlog1py,
logit, entr; for x < 0 gammaln and digamma use the reflection formulas (absolute accuracy).
Under `ig.jit` on the CPU, results that would be subnormal come out as 0 (that backend's exp
flushes subnormal results).

The approximations are polynomials fitted once with mpmath by Chebyshev interpolation (erfcx
in Shepherd and Laframboise's variable, Giles' erfinv, gammaln and digamma moved to a base
interval by their recurrences), and each composite's special points (xlogy at x == 0, entr at
0, the poles of gammaln and digamma) have tested derivatives.
Details: docs/api/python.md, "irgrad/scipy/special.py".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from irgrad.tracing import dtypes, primitives as lax

from irgrad.numpy import basic as np_api
from irgrad.numpy.support import (
    api,
    lift,
    normalize_axes,
    operands,
    require_float,
    result_dtype,
)
from irgrad.tracing.tracer import Tracer, full
from irgrad.nn.functions import logsumexp as _logsumexp, softmax
from irgrad.numpy.numerics import isnan
from irgrad.numpy.basic import erf
from irgrad.numpy.elementwise_support import _stop
from irgrad.numpy.trigonometric import _sin_cos_pi

__all__ = [
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "gammaln",
    "log_ndtr",
    "logit",
    "logsumexp",
    "ndtr",
    "softmax",
    "xlog1py",
    "xlogy",
]

_INF = float("inf")
_SQRT_HALF = math.sqrt(0.5)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# ---------------------------------------------------------------------------------------------
# Coefficients (tables fitted with mpmath; highest degree last)
# ---------------------------------------------------------------------------------------------

# (1 + 2x) erfcx(x) as a polynomial in t = 1 - 2K / (x + K), K = 3.75, on x in [0, inf].
_ERFCX_K = 3.75
_ERFCX64 = (
    1.2375126308378275, -0.14024059858554702, 0.00358541548546369, 0.08227673849015112,
    -0.10880393014170746, 0.09230432116019517, -0.05869339859054762, 0.02836227742156851,
    -0.009746579547619623, 0.0017556258319220233, 0.00029371359480570737,
    -0.0002901539763460068, 5.164940777546399e-05, 2.2383900563041527e-05,
    -1.1445049125831309e-05, -9.728189861867202e-07, 1.7534434251106334e-06,
    -5.831950342145813e-08, -2.6114702359900956e-07, 2.4362700816477473e-08,
    4.0971223152703005e-08, -4.453191645424103e-09, -6.545560212480267e-09,
    5.820899514310995e-10, 9.02214970034059e-10, -4.9656323099806433e-11,
    -7.33950500852954e-11, 1.79625782521633e-12,
)
_ERFCX32 = (
    1.2375126308081394, -0.14024059858819563, 0.003585419320941043, 0.08227673860880448,
    -0.10880401165954678, 0.0923043196562569, -0.058692735833347574, 0.02836228550792988,
    -0.009749243355606896, 0.0017556055634317877, 0.0002995965088889839,
    -0.00029013582596605923, 4.4280135184455274e-05, 2.240378086339088e-05,
    -6.352404651074643e-06, -1.0351555937708743e-06,
)

# lgamma(2 + z) / (z (z + 1)) on -1 <= z <= 1/2, in powers of z + 1/4.
_LGAMMA64 = (
    0.4501393121092563, -0.11948158662524275, 0.0445204471985097, -0.019053957830247617,
    0.008776370425248122, -0.004226194125909346, 0.002095533880406549, -0.0010605660756641275,
    0.0005448969786704462, -0.00028319061522935645, 0.00014851693095432154,
    -7.846184717574044e-05, 4.170399126994095e-05, -2.2280571608871e-05,
    1.1957739808486086e-05, -6.441767976834155e-06, 3.4744985315242963e-06,
    -1.882033725033314e-06, 1.0450884603927675e-06, -5.728895231214137e-07,
    2.6527417896066973e-07, -1.3975491547715595e-07, 1.4687209570587104e-07,
    -8.609449733006566e-08, -2.0546347419067515e-08, 1.4547836967207454e-08,
    3.059907951322745e-08, -1.7745372137076984e-08,
)
_LGAMMA32 = (
    0.4501393121596302, -0.11948158251888204, 0.04452043853751733, -0.01905415890750674,
    0.008776612518007092, -0.004223398666592537, 0.0020930132555140434, -0.001077040077405619,
    0.0005572493636300181, -0.00023701838006030736, 0.00011815720467565696,
    -0.0001372186702795329, 7.657830412328393e-05,
)

# digamma(1.5 + t) / (t - (x0 - 1.5)) on |t| <= 1/2, x0 = 1.46163214496836234126... its zero;
# x0 - 1.5 as a sum of two float64s.
_DIGAMMA64 = (
    0.9510558760318328, -0.42362742128146047, 0.2405424842407869, -0.14840492305391728,
    0.09498872445291817, -0.06192213327172098, 0.04076083393802232, -0.026975796839578212,
    0.017907248451446506, -0.01190821535232056, 0.007927018239564994, -0.005280013748990233,
    0.0035181643354796027, -0.0023447086636423616, 0.0015627663530553948,
    -0.001041706228718078, 0.000695057895230654, -0.00046347627338223356,
    0.0003054969030525749, -0.00020317818462269532, 0.00014834456823461422,
    -0.00010011139425934509, 3.592996803689913e-05, -2.2185248024837063e-05,
    5.7657294642229025e-05, -3.9569694472171413e-05,
)
_DIGAMMA32 = (
    0.9510558754198685, -0.42362741856424435, 0.24054265867531402, -0.14840522406207005,
    0.09498070029449082, -0.0619126468295663, 0.040894880515418085, -0.027102974854724293,
    0.016909167297265583, -0.011091655135248906, 0.011232875287601203, -0.007703459882210802,
)
_DIGAMMA_ROOT_OFFSET = (-0.03836785503163766, -1.6445603550442201e-18)

# erfinv(x) / x in Giles' variables: w - 2.5 for w = -log(1 - x**2) < 5, else sqrt(w) - center
# (the fit reaches sqrt(w) = 6.05, past float64's largest x below 1).
_ERFINV_W = (
    1.5014093517282388, 0.24664028938940982, -0.004177324921932883, -0.0012527484164558688,
    0.00021826392314411755, -4.959743495185408e-06, -3.426175951749159e-06,
    4.6542873048510424e-07, 1.6487176840838708e-08, -8.739830973051999e-09,
    4.3511473069028143e-10,
)
_ERFINV_S = (
    3.98419900423494, 1.0098031073252351, 0.000923258882200647, -0.000700712952086165,
    0.00025044720215045224, -9.506851969118346e-05, 3.3260632399042994e-05,
    -3.1735814978452467e-06, 7.911718308993452e-06, -1.1734361725433679e-05,
    3.3780635139499305e-06, 8.992070906787168e-07, -3.8803472198798594e-07,
)
_ERFINV_S_CENTER = 4.143033988749895

# Stirling's series: lgamma(x) = (x - 1/2) log x - x + log(2 pi)/2 + (1/x) S(1/x**2), and the
# asymptotic digamma(x) = log x - 1/(2x) - v D(v), v = 1/x**2 (Bernoulli numbers B2k / (2k (2k-1))
# and B2k / (2k)).
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400)
_DIGAMMA_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12, -3617 / 8160)
_LGAMMA_FAR = 12.5
_DIGAMMA_FAR = 10.0

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _compute(name: str, x: Any) -> tuple[Tracer, np.dtype]:
    """x as a float tracer to compute with (float16 and bfloat16 go through float32), and the
    dtype of the result."""
    t = require_float(name, lift(x))
    if t.dtype in (dtypes.float16, dtypes.bfloat16):
        return lax.convert(t, dtypes.float32), t.dtype
    return t, t.dtype


def _result(r: Tracer, d: np.dtype) -> Tracer:
    return r if r.dtype == d else lax.convert(r, d)


def _float_pair(name: str, x1: Any, x2: Any) -> tuple[Tracer, Tracer, np.dtype]:
    d = result_dtype(x1, x2)
    if not dtypes.is_float(d):
        d = dtypes.float32
    c = dtypes.float32 if d in (dtypes.float16, dtypes.bfloat16) else d
    (a, b), _ = operands(name, x1, x2, dtype=d)
    if c != d:
        a, b = lax.convert(a, c), lax.convert(b, c)
    return a, b, d


def _wide(t: Tracer) -> bool:
    return t.dtype == dtypes.float64


def _horner(coefficients: Sequence[float], z: Tracer) -> Tracer:
    p = z * coefficients[-1] + coefficients[-2]
    for c in reversed(coefficients[:-2]):
        p = p * z + c
    return p


def _magnitude(t: Tracer) -> Tracer:
    """|x| as a select, whose derivative at 0 is 1 (abs's is 0): the functions below are
    smooth at 0 and only use |x| to share one approximation between both signs."""
    return np_api.where(t < 0, -t, t)


def _exp_minus_square(x: Tracer, half: bool) -> Tracer:
    """exp(-x**2) (or exp(-x**2 / 2)) for 0 <= x <= 40 to within a few ulp: x = h + l with h a
    multiple of 1/16 (so h**2 is exact) and exp(-h**2) exp(-(2h + l) l). The naive exp(-x*x)
    would carry x*x's rounding error times x**2 (7e-14 relative at x = 26)."""
    h = _stop(lax.convert(lax.convert(x * 16.0, dtypes.int32), x.dtype) * (1.0 / 16.0))
    low = x - h
    if half:
        return np_api.exp(-(h * h) * 0.5) * np_api.exp(-((h + 0.5 * low) * low))
    return np_api.exp(-(h * h)) * np_api.exp(-((2.0 * h + low) * low))


def _erfcx(x: Tracer) -> Tracer:
    """exp(x**2) erfc(x) for x >= 0 (0 at inf)."""
    coefficients = _ERFCX64 if _wide(x) else _ERFCX32
    t = 1.0 - (2.0 * _ERFCX_K) / (x + _ERFCX_K)
    return _horner(coefficients, t) / (1.0 + 2.0 * x)


# Below this |x|, ndtr and log_ndtr use erf(x / sqrt 2): erfcx is least accurate near 0.
_NDTR_CENTRAL = 0.75


def _upper_tail(a: Tracer) -> Tracer:
    """ndtr(-a) = erfc(a / sqrt 2) / 2 for a >= 0, relative to a few ulp."""
    return 0.5 * _exp_minus_square(np_api.minimum(a, 40.0), half=True) * _erfcx(a * _SQRT_HALF)


# ---------------------------------------------------------------------------------------------
# Error function family
# ---------------------------------------------------------------------------------------------


@api
def erfc(x: Any) -> Tracer:
    """1 - erf(x) without the cancellation: exp(-x**2) erfcx(x) for x >= 1/2 (relative accuracy
    up to the underflow at 27.2), 2 - erfc(-x) for x <= -1/2, 1 - erf(x) between."""
    t, d = _compute("erfc", x)
    a = _magnitude(t)
    upper = _exp_minus_square(np_api.minimum(a, 40.0), half=False) * _erfcx(a)
    near = a < 0.5
    r = np_api.where(near, 1.0 - erf(np_api.where(near, t, 0.0)), np_api.where(t < 0, 2.0 - upper, upper))
    return _result(r, d)


@api
def ndtr(x: Any) -> Tracer:
    """The standard normal CDF: erfc(-x / sqrt 2) / 2, with exp(-x**2 / 2) computed from x
    itself (not from the rounded x / sqrt 2), so the lower tail is relative to a few ulp down
    to the underflow at -38.5; (1 + erf(x / sqrt 2)) / 2 for |x| < 3/4."""
    t, d = _compute("ndtr", x)
    q = _upper_tail(_magnitude(t))
    near = np_api.abs(t) < _NDTR_CENTRAL
    central = 0.5 + 0.5 * erf(np_api.where(near, t, 0.0) * _SQRT_HALF)
    return _result(np_api.where(near, central, np_api.where(t < 0, q, 1.0 - q)), d)


@api
def log_ndtr(x: Any) -> Tracer:
    """log(ndtr(x)), finite for every finite x: -x**2/2 + log(erfcx(-x / sqrt 2) / 2) for
    x <= -3/4 (no underflow however far out), log1p(-ndtr(-x)) from 3/4 on, log(ndtr(x))
    between."""
    t, d = _compute("log_ndtr", x)
    near = np_api.abs(t) < _NDTR_CENTRAL
    r_near = np_api.log(0.5 + 0.5 * erf(np_api.where(near, t, 0.0) * _SQRT_HALF))
    lower = t <= 0
    xn = np_api.where(lower, t, 0.0)
    r_lower = -(xn * xn) * 0.5 + np_api.log(0.5 * _erfcx(-xn * _SQRT_HALF))
    xp = np_api.where(lower, 0.0, t)
    r_upper = np_api.log1p(-_upper_tail(xp))
    return _result(np_api.where(near, r_near, np_api.where(lower, r_lower, r_upper)), d)


@api
def erfinv(x: Any) -> Tracer:
    """The inverse of erf on [-1, 1]: +-inf at +-1, NaN outside. Giles' form of approximation
    (relative error 4e-8, refitted over float64's whole range); in float64 one Halley step on
    erf(y) = |x| (on erfc(y) = 1 - |x|, exact, where y > 1/2) brings it to a few ulp."""
    t, d = _compute("erfinv", x)
    a = _magnitude(t)
    inside = a < 1.0
    ai = np_api.where(inside, a, 0.5)
    w = -np_api.log((1.0 - ai) * (1.0 + ai))
    low = w < 5.0
    p_low = _horner(_ERFINV_W, np_api.where(low, w, 2.5) - 2.5)
    p_high = _horner(_ERFINV_S, np_api.sqrt(np_api.where(low, 5.0, w)) - _ERFINV_S_CENTER)
    y = np_api.where(low, p_low, p_high) * ai
    if _wide(t):
        # Halley: y -= u / (1 + y u), u = f / f', f'' = -2 y f'.
        central = y < 0.5  # erfcx is most accurate from 1/2 on
        yc = np_api.where(central, y, 0.0)
        fc = erf(yc) - np_api.where(central, ai, 0.0)
        uc = fc / (_TWO_OVER_SQRT_PI * np_api.exp(-(yc * yc)))
        yt = np_api.where(central, 1.0, y)
        at = np_api.where(central, 0.75, ai)
        e = _exp_minus_square(yt, half=False)
        ut = ((1.0 - at) - e * _erfcx(yt)) / (_TWO_OVER_SQRT_PI * e)
        u = np_api.where(central, uc, ut)
        y = y - u / (1.0 + y * u)
    r = np_api.where(t < 0, -y, y)
    r = np_api.where(inside, r, np_api.where(a == 1.0, t * _INF, float("nan")))
    return _result(r, d)


# ---------------------------------------------------------------------------------------------
# Gamma function family
# ---------------------------------------------------------------------------------------------


def _lgamma_positive(x: Tracer) -> Tracer:
    """lgamma(x) for x > 0 (or inf, NaN)."""
    near = x < _LGAMMA_FAR
    xn = np_api.where(near, x, 2.0)
    # x = 2 + z + n with -1 <= z <= 1/2 for n = 0 (x in [1, 2.5)), |z| <= 1/2 otherwise:
    # n = -2 below 1/2, -1 on [1/2, 1), floor(x - 1.5) from 2.5 on. Every subtraction is exact,
    # and so is z + 1 except for n = -2 (where -log(x) dominates).
    below_one = np_api.where(xn < 0.5, full(xn.shape, -2.0, xn.dtype), full(xn.shape, -1.0, xn.dtype))
    n = np_api.where(xn < 1.0, below_one, np_api.floor(xn - 1.5))
    n = _stop(np_api.where((xn >= 1.0) & (xn < 2.5), 0.0, n))
    z = xn - (n + 2.0)
    core = z * (z + 1.0) * _horner(_LGAMMA64 if _wide(x) else _LGAMMA32, z + 0.25)
    product = None
    for k in range(1, 11):
        factor = np_api.where(n >= k, xn - float(k), 1.0)
        product = factor if product is None else product * factor
    below = n < 0
    # n = -2: lgamma(x) = lgamma(x + 2) - log(x (x + 1)); n = -1: lgamma(x + 1) - log(x);
    # n >= 1: lgamma(x - n) + log((x - 1) ... (x - n)).
    log_shift = np_api.log(np_api.where(below, xn * np_api.where(n < -1, xn + 1.0, 1.0), product))
    r_near = core + np_api.where(below, -log_shift, log_shift)
    xf = np_api.where(near, _LGAMMA_FAR, x)
    lx = np_api.log(xf)
    series = _horner(_STIRLING, 1.0 / (xf * xf)) / xf
    r_far = xf * (lx - 1.0) - 0.5 * lx + (0.5 * math.log(2.0 * math.pi) + series)
    r_far = np_api.where(xf == _INF, xf, r_far)
    return np_api.where(near, r_near, r_far)


@api
def gammaln(x: Any) -> Tracer:
    """log|Gamma(x)| (jax.scipy.special.gammaln, C's lgamma) for every real x: relative to a
    few ulp for x > 0; for x < 0 the reflection log(pi / |sin(pi x)|) - lgamma(1 - x),
    accurate to an absolute ~1e-15 * |value|. +inf at the non-positive integers and -inf."""
    t, d = _compute("gammaln", x)
    positive = t > 0
    lp = _lgamma_positive(np_api.where(positive, t, 1.0 - t))
    s, _ = _sin_cos_pi(np_api.where(positive, -0.5, t))
    # |s| as a select (+ 0.0 for sin = -0.0), and log(pi) - log|s|: at the poles the gradient
    # is then infinite, not 0.
    reflected = (math.log(math.pi) - np_api.log(_magnitude(s) + 0.0)) - lp
    r = np_api.where(positive, lp, reflected)
    return _result(np_api.where(t == -_INF, -t, r), d)


def _digamma_positive(x: Tracer) -> Tracer:
    """digamma(x) for x > 0 (or inf, NaN)."""
    wide = _wide(x)
    near = x < _DIGAMMA_FAR
    xn = np_api.where(near, x, 1.5)
    # n in -1..8 moves xn to 1.5 + t, |t| <= 1/2; every subtraction below is exact.
    n = _stop(np_api.floor(xn - 1.0))
    t = xn - (n + 1.5)
    hi, lo = _DIGAMMA_ROOT_OFFSET
    if not wide:
        hi32 = float(np.float32(hi))
        hi, lo = hi32, (hi - hi32) + lo
    core = ((t - hi) - lo) * _horner(_DIGAMMA64 if wide else _DIGAMMA32, t)
    total = None
    for k in range(1, 9):  # psi(x) = psi(x - n) + sum 1/(x - k): the smallest terms first
        take = n >= k
        term = np_api.where(take, 1.0 / np_api.where(take, xn - float(k), 1.0), 0.0)
        total = term if total is None else total + term
    r_near = core + np_api.where(n < 0, -1.0 / xn, total)
    xf = np_api.where(near, _DIGAMMA_FAR, x)
    v = 1.0 / (xf * xf)
    r_far = np_api.log(xf) - 0.5 / xf - v * _horner(_DIGAMMA_ASYMPTOTIC, v)
    return np_api.where(near, r_near, r_far)


@api
def digamma(x: Any) -> Tracer:
    """psi(x) = Gamma'(x) / Gamma(x): relative to a few ulp for x > 0 (its zero at 1.4616...
    included); for x < 0 the reflection psi(1 - x) - pi / tan(pi x), accurate to an absolute
    ~1e-15 * |value|. NaN at the poles (the non-positive integers) and at -inf."""
    t, d = _compute("digamma", x)
    positive = t > 0
    dp = _digamma_positive(np_api.where(positive, t, 1.0 - t))
    s, c = _sin_cos_pi(np_api.where(positive, 0.5, t))
    reflected = dp - math.pi * c / np_api.where(s == 0, 1.0, s)
    # t * NaN at the poles: NaN with a NaN gradient.
    r = np_api.where(positive, dp, np_api.where(s == 0, t * float("nan"), reflected))
    return _result(r, d)


# ---------------------------------------------------------------------------------------------
# Logarithms with a zero factor, logit, entropy
# ---------------------------------------------------------------------------------------------


def _x_log(name: str, x: Any, y: Any, log_fn: Any, neutral: float, lowest: float) -> Tracer:
    """x * log_fn(y), with 0 where x == 0: there d/dy is 0 and d/dx is log_fn(y) where it is
    finite (y in (lowest, inf)), else 0; the other branch reads y = neutral (log_fn = 0)."""
    a, b, d = _float_pair(name, x, y)
    zero = a == 0
    r_nonzero = a * log_fn(np_api.where(zero, neutral, b))
    finite = (b > lowest) & (b < _INF)
    at_zero = a * _stop(log_fn(np_api.where(zero & finite, b, neutral))) + 0.0
    return _result(np_api.where(zero, at_zero, r_nonzero), d)


@api
def xlogy(x: Any, y: Any) -> Tracer:
    """x * log(y), 0 where x == 0 (even for y = 0): see the module docstring for its gradient."""
    return _x_log("xlogy", x, y, np_api.log, 1.0, 0.0)


@api
def xlog1py(x: Any, y: Any) -> Tracer:
    """x * log1p(y), 0 where x == 0 (even for y = -1): gradients as xlogy."""
    return _x_log("xlog1py", x, y, np_api.log1p, 0.0, -1.0)


@api
def logit(x: Any) -> Tracer:
    """log(x / (1 - x)): log1p(2 (x - 1/2) / (1 - x)) on (0.3, 0.65), relative near its zero at
    1/2 (scipy's formula), log(x) - log(1 - x) elsewhere, so that the gradient 1 / (x (1 - x))
    is +inf at 0 and 1 (where logit is -inf and inf). NaN outside [0, 1]."""
    t, d = _compute("logit", x)
    mid = (t > 0.3) & (t < 0.65)
    tm = np_api.where(mid, t, 0.5)
    r_mid = np_api.log1p(2.0 * (tm - 0.5) / (1.0 - tm))
    to = np_api.where(mid, 0.25, t)
    r = np_api.where(mid, r_mid, np_api.log(to) - np_api.log(1.0 - to))
    return _result(r, d)


@api
def expit(x: Any) -> Tracer:
    """The logistic sigmoid 1 / (1 + exp(-x)) (`nn.sigmoid`)."""
    return np_api.sigmoid(x)


@api
def entr(x: Any) -> Tracer:
    """-x log(x) for x > 0, 0 at 0, -inf below, NaN for NaN. At 0 the derivative is +inf (the
    one-sided limit of -log(x) - 1, as JAX's): the zero branch is sqrt(x) there."""
    t, d = _compute("entr", x)
    positive = t > 0
    tp = np_api.where(positive, t, 1.0)
    zero = t == 0
    at_zero = np_api.sqrt(np_api.where(zero, t, 0.0)) + 0.0
    r = np_api.where(positive, -(tp * np_api.log(tp)), np_api.where(zero, at_zero, -_INF))
    return _result(np_api.where(isnan(t), t, r), d)


# ---------------------------------------------------------------------------------------------
# logsumexp with weights
# ---------------------------------------------------------------------------------------------


@api
def logsumexp(a: Any, axis: int | Sequence[int] | None = None, b: Any = None, keepdims: bool = False,
               return_sign: bool = False) -> Any:  # fmt: skip
    """log(sum(b * exp(a))) over `axis` (jax.scipy.special.logsumexp). Without `b` and
    `return_sign` it is `ig.logsumexp`. With weights `b` (broadcast against `a`) the sum may be
    negative: NaN then, unless return_sign=True, which returns (log|sum|, sign(sum)). The
    maximum of `a` is subtracted first (and carries no gradient), so nothing overflows."""
    if b is None and not return_sign:
        return _logsumexp(a, axis=axis, keepdims=keepdims)
    t = require_float("logsumexp", lift(a))
    if b is None:
        w = None
    else:
        d = result_dtype(t, b)
        (t, w), _ = operands("logsumexp", t, b, dtype=d if dtypes.is_float(d) else t.dtype)
    axes = normalize_axes("logsumexp", axis, t.ndim)
    m = np_api.max(t, axis=tuple(axes), keepdims=True) if axes else t
    m = _stop(np_api.where(np_api.abs(m) < _INF, m, 0.0))
    e = np_api.exp(t - m)
    if w is not None:
        e = e * w
    s = np_api.sum(e, axis=tuple(axes), keepdims=True) if axes else e
    sign = np_api.sign(s)
    out = np_api.log(np_api.abs(s)) + m
    if not return_sign:
        out = np_api.where(s < 0, float("nan"), out)
    if not keepdims and axes:
        shape = [dim for i, dim in enumerate(out.shape) if i not in axes]
        out, sign = lax.reshape(out, shape), lax.reshape(sign, shape)
    return (out, sign) if return_sign else out
