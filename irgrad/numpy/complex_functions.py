"""The complex branches of the elementary functions whose real forms are library composites
(basic.py's expm1, log1p and integer powers; hyperbolic.py's sinh, cosh; trigonometric.py's tan):
formulas on the parts that reuse the accurate real functions, so a small part keeps its digits.

log, sqrt, tanh, pow and sign of complex values are nn ops instead, which nn-expand-complex
rewrites (irgrad/transforms/nn/nn_expand_complex.py); derivatives come from the (re, im) pairs,
which is JAX's convention (docs/autodiff.md, "Complex numbers"). This module sits below basic.py
(which calls it), so it emits nn ops itself and takes basic's real expm1 / log1p as arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from irgrad.dialects import nn
from irgrad.tracing import primitives as lax
from irgrad.tracing.tracer import Tracer, full

RealFunction = Callable[[Tracer], Tracer]


def complex_parts(z: Tracer) -> tuple[Tracer, Tracer]:
    """(real, imaginary) parts of a complex tracer, for the complex branches of the composites."""
    return lax.unary(nn.RealOp, z), lax.unary(nn.ImagOp, z)


def from_parts(re: Tracer, im: Tracer) -> Tracer:
    """re + i*im of two float tracers of one dtype (f32 or f64)."""
    return lax.binary(nn.ComplexOp, re, im)


def _const(t: Tracer, value: float) -> Tracer:
    return full(t.shape, value, t.dtype)


def integer_power(z: Tracer, y: int) -> Tracer:
    """z ** y for a Python int y by repeated squaring (of 1 / z for y < 0, whose |.|^2 does not
    underflow where z**|y|'s would in nn.div): JAX's integer_pow on complex values (products,
    where exp(y log z) would round)."""
    if y == 0:
        return _const(z, 1.0)
    acc: Tracer | None = None
    base, e = (lax.binary(nn.DivOp, _const(z, 1.0), z) if y < 0 else z), abs(y)
    while e:
        if e & 1:
            acc = base if acc is None else lax.binary(nn.MulOp, acc, base)
        e >>= 1
        if e:
            base = lax.binary(nn.MulOp, base, base)
    assert acc is not None
    return acc


def expm1(z: Tracer, real_expm1: RealFunction) -> Tracer:
    """expm1(x + iy) = (expm1(x) cos y - 2 sin^2(y/2), e^x sin y): numpy's (and XLA's) formula,
    which keeps a small z's digits (its real part cancels only where the two terms agree)."""
    x, y = complex_parts(z)
    h = lax.unary(nn.SinOp, y * 0.5)
    sin_y = lax.unary(nn.SinOp, y)
    return from_parts(real_expm1(x) * lax.unary(nn.CosOp, y) - 2.0 * h * h, lax.unary(nn.ExpOp, x) * sin_y)


def log1p(z: Tracer, real_log1p: RealFunction) -> Tracer:
    """log(1 + z): the imaginary part is arg(1 + z); the real part log|1 + z| is
    0.5 log1p(x (2 + x) + y^2) while |x|, |y| < 0.5, where forming 1 + z would lose the digits of
    a small z, and the complex log's (itself stable near |1 + z| = 1) beyond. The untaken branch
    reads zeros."""
    x, y = complex_parts(z)
    w_re, w_im = complex_parts(lax.unary(nn.LogOp, z + 1.0))
    small = (lax.unary(nn.AbsOp, x) < 0.5) & (lax.unary(nn.AbsOp, y) < 0.5)
    xs, ys = lax.select(small, x, _const(x, 0.0)), lax.select(small, y, _const(y, 0.0))
    near = real_log1p(xs * (xs + 2.0) + ys * ys) * 0.5
    return from_parts(lax.select(small, near, w_re), w_im)


# ---------------------------------------------------------------------------------------------
# Inverse trigonometric and hyperbolic functions: FreeBSD's catrig.c (Hull, Fairgrieve and Tang,
# "Implementing the complex arcsine and arccosine functions using exception handling", ACM TOMS
# 1997; Kahan's catanh), the algorithms numpy's npymath uses, written as selects between the
# regions. Each region's formula reads a safe argument where it is not taken, so a gradient
# through the select meets no NaN. They call the real composites of basic.py, trigonometric.py
# and float_parts.py (imported when called: those modules sit above this one).
# ---------------------------------------------------------------------------------------------

_A_CROSSOVER = 10.0  # Hull et al.'s crossovers: A - 1 and A - y by their own formulas below them
_B_CROSSOVER = 0.6417


def _real_api():  # type: ignore[no-untyped-def]
    """basic.py (np_api), trigonometric.py and float_parts.py's signbit, imported when called."""
    from irgrad.numpy import basic as np_api
    from irgrad.numpy import trigonometric
    from irgrad.numpy.float_parts import _signbit

    return np_api, trigonometric, _signbit


def _finfo(t: Tracer) -> np.finfo:
    """The float limits of a complex function's parts (float32 or float64)."""
    return np.finfo(t.dtype)


def _select_abs(t: Tracer) -> tuple[Tracer, Tracer]:
    """(|t|, signbit(t)) with |t| a select on the sign bit, so its derivative is +-1 at +-0.0 too
    (an abs would give 0 there and drop the derivative across an axis)."""
    np_api, _, signbit = _real_api()
    neg = signbit(t)
    return np_api.where(neg, -t, t), neg


def _copysign(r: Tracer, neg: Tracer) -> Tracer:
    """r (>= 0) with the sign recorded by `_select_abs`."""
    np_api, _, _ = _real_api()
    return np_api.where(neg, -r, r)


def _half_hypot_sum(a: Tracer, b: Tracer, h: Tracer) -> Tracer:
    """catrig's f(a, b, hypot(a, b)) = (hypot(a, b) - b) / 2 without cancellation: a**2 / (h + b) / 2
    for b > 0, (h - b) / 2 for b < 0, a / 2 at b == 0 (each on a safe argument elsewhere)."""
    np_api, _, _ = _real_api()
    pos = b > 0
    den = np_api.where(pos, h + b, 1.0)
    return np_api.where(pos, a * a / den * 0.5, np_api.where(b < 0, (h - b) * 0.5, a * 0.5))


def _log_large(x: Tracer, y: Tracer) -> tuple[Tracer, Tracer]:
    """(log|x + iy|, atan2(y, x)) for a large |z| without overflow: log(m) + log1p((n/m)**2) / 2
    with m, n the larger and smaller of |x|, |y| (catrig's clog_for_large_values). m > 0."""
    np_api, trig, _ = _real_api()
    ax, ay = np_api.abs(x), np_api.abs(y)
    m, n = np_api.maximum(ax, ay), np_api.minimum(ax, ay)
    q = n / np_api.where(m == float("inf"), 1.0, m)
    q = np_api.where(m == float("inf"), 0.0, q)
    return np_api.log(m) + 0.5 * np_api.log1p(q * q), trig.arctan2(y, x)


def _hull_kernel(x: Tracer, y: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """catrig's do_hard_work for x, y >= 0 of moderate size: (Re asinh(x + iy), num, den) with
    Im asinh(x + iy) = atan2(num, den) = asin(y / A), A = (|z + i| + |z - i|) / 2 >= 1.

    The real part is log(A + sqrt(A**2 - 1)), as log1p(Am1 + sqrt(Am1 (A + 1))) below A = 10 with
    A - 1 from Hull et al.'s cancellation-free sums; the imaginary part is asin(B), B = y / A, as
    atan2(y, A sqrt(1 - B**2)) up to B = 0.6417 and atan2(y, sqrt(A**2 - y**2)) beyond, with
    A - y again from the cancellation-free sums (catrig's scalings where y is tiny or x is tiny)."""
    np_api, trig, _ = _real_api()
    fi = _finfo(x)
    eps, four_sqrt_min = float(fi.eps), 4.0 * float(fi.tiny) ** 0.5
    where, sqrt, log1p = np_api.where, np_api.sqrt, np_api.log1p
    r, s = trig.hypot(x, y + 1.0), trig.hypot(x, y - 1.0)
    a = np_api.maximum((r + s) * 0.5, 1.0)
    ym1 = y - 1.0
    x_moderate = x >= eps * np_api.abs(ym1)

    # --- the real part ---------------------------------------------------------------------
    am1 = _half_hypot_sum(x, 1.0 + y, r) + _half_hypot_sum(x, 1.0 - y, s)
    at_one = (y == 1.0) & (x < eps * eps / 128.0)
    near_moderate = x_moderate & ~at_one
    am1_s = where(near_moderate, am1, 1.0)
    re_moderate = log1p(am1_s + sqrt(am1_s * (a + 1.0)))
    below = ~at_one & ~x_moderate & (y < 1.0)
    yb = where(below, y, 0.0)
    re_below = x / sqrt((1.0 - yb) * (1.0 + yb))
    above = ~at_one & ~x_moderate & (y > 1.0)
    ya = where(above, y, 2.0)
    re_above = log1p((ya - 1.0) + sqrt((ya - 1.0) * (ya + 1.0)))
    re_at_one = sqrt(where(at_one, x, 1.0))
    re_near = where(at_one, re_at_one, where(near_moderate, re_moderate, where(below, re_below, re_above)))
    far = a >= _A_CROSSOVER
    af = where(far, a, 2.0)
    re = where(far, np_api.log(af + sqrt(af * af - 1.0)), re_near)

    # --- the imaginary part: atan2(num, den) --------------------------------------------------
    b = y / a
    tiny_y = y < four_sqrt_min
    usable = ~tiny_y & (b <= _B_CROSSOVER)
    bu = where(usable, b, 0.0)
    den_usable = a * sqrt((1.0 - bu) * (1.0 + bu))
    amy = _half_hypot_sum(x, y + 1.0, r) + _half_hypot_sum(x, ym1, s)
    big_b = ~tiny_y & ~usable
    at_one_b = big_b & (y == 1.0) & (x < eps / 128.0)
    moderate_b = big_b & ~at_one_b & x_moderate
    above_b = big_b & ~at_one_b & ~x_moderate & (y > 1.0)
    below_b = big_b & ~at_one_b & ~x_moderate & (y <= 1.0)
    amy_s = where(moderate_b, amy, 1.0)
    den_moderate = sqrt(amy_s * (a + y))
    den_at_one = sqrt(where(at_one_b, x, 1.0)) * sqrt((a + y) * 0.5)
    scale = 4.0 / eps / eps
    yab = where(above_b, y, 2.0)
    den_above = x * scale * y / sqrt((yab + 1.0) * (yab - 1.0))
    ybb = where(below_b, y, 0.0)
    den_below = sqrt((1.0 - ybb) * (1.0 + ybb))
    den = where(usable, den_usable, where(moderate_b, den_moderate, where(at_one_b, den_at_one,
                where(above_b, den_above, den_below))))  # fmt: skip
    num = where(above_b, y * scale, y)
    num = where(tiny_y, y * (2.0 / eps), num)
    den = where(tiny_y, a * (2.0 / eps), den)
    return re, num, den


def _regions(ax: Tracer, ay: Tracer, small: float) -> tuple[Tracer, Tracer, Tracer, Tracer, Tracer]:
    """(large, tiny, mid, x, y): |z| past 1/eps in a part, both parts below `small`, neither;
    and the parts for the mid region's kernel (1 and 0 elsewhere)."""
    np_api, _, _ = _real_api()
    recip_eps = 1.0 / float(_finfo(ax).eps)
    large = (ax > recip_eps) | (ay > recip_eps)
    tiny = ~large & (ax < small) & (ay < small)
    mid = ~large & ~tiny
    return large, tiny, mid, np_api.where(mid, ax, 1.0), np_api.where(mid, ay, 0.0)


def _asinh_first_quadrant(ax: Tracer, ay: Tracer) -> tuple[Tracer, Tracer]:
    """asinh(ax + i ay) for ax, ay >= 0 (catrig's casinh): log(2z) past 1/eps, z itself below
    sqrt(6 eps) / 4, Hull's kernel between."""
    np_api, trig, _ = _real_api()
    large, tiny, mid, xm, ym = _regions(ax, ay, float(6.0 * _finfo(ax).eps) ** 0.5 / 4.0)
    re, num, den = _hull_kernel(xm, ym)
    im = trig.arctan2(num, den)
    l_re, l_im = _log_large(np_api.where(large, ax, 1.0), np_api.where(large, ay, 0.0))
    re = np_api.where(large, l_re + math.log(2.0), np_api.where(tiny, ax, re))
    im = np_api.where(large, l_im, np_api.where(tiny, ay, im))
    return re, im


def asinh(z: Tracer) -> Tracer:
    """asinh(z), numpy's principal branch (cuts on the imaginary axis past +-i, the real part
    taking x's sign there): odd and conjugate-symmetric, so the first quadrant's value with the
    signs of x and y."""
    x, y = complex_parts(z)
    (ax, nx), (ay, ny) = _select_abs(x), _select_abs(y)
    re, im = _asinh_first_quadrant(ax, ay)
    return from_parts(_copysign(re, nx), _copysign(im, ny))


def asin(z: Tracer) -> Tracer:
    """asin(z) = swap(asinh(swap(z))) with swap(x + iy) = y + ix (catrig's casin)."""
    x, y = complex_parts(z)
    w_re, w_im = complex_parts(asinh(from_parts(y, x)))
    return from_parts(w_im, w_re)


def _acos_parts(z: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """(Re acos z, |Im acos z|, signbit(Im z)) (catrig's cacos): Im acos z has the sign opposite
    to Im z. Past 1/eps: (|arg z|, log|z| + log 2); below sqrt(6 eps)/4: (pi/2 - x, |y|); between,
    Hull's kernel on (|y|, |x|), whose atan2 is taken on -x's side for a negative x."""
    np_api, trig, _ = _real_api()
    x, y = complex_parts(z)
    (ax, nx), (ay, ny) = _select_abs(x), _select_abs(y)
    large, tiny, mid, ym, xm = _regions(ay, ax, float(6.0 * _finfo(ax).eps) ** 0.5 / 4.0)
    im, num, den = _hull_kernel(ym, xm)
    re = _atan2_of_nonnegative(den, _copysign(num, nx))
    l_im, l_re = _log_large(np_api.where(large, x, 1.0), np_api.where(large, y, 0.0))
    re = np_api.where(large, np_api.abs(l_re), np_api.where(tiny, math.pi / 2 - x, re))
    im = np_api.where(large, l_im + math.log(2.0), np_api.where(tiny, ay, im))
    return re, im, ny


def _atan2_of_nonnegative(a: Tracer, b: Tracer) -> Tracer:
    """atan2(a, b) for a >= 0 as pi/2 - atan2(b, a) where |b| <= a (no cancellation: the angle is
    within pi/4 of pi/2 there) and atan2 itself elsewhere, each on a safe argument: the
    derivative stays right at b = 0, where atan2's own quotient b / a is infinite."""
    np_api, trig, _ = _real_api()
    upright = np_api.abs(b) <= a
    steep = (math.pi / 2) - trig.arctan2(np_api.where(upright, b, 0.0), np_api.where(upright, a, 1.0))
    flat = trig.arctan2(np_api.where(upright, 0.0, a), np_api.where(upright, 1.0, b))
    return np_api.where(upright, steep, flat)


def acos(z: Tracer) -> Tracer:
    """acos(z), numpy's principal branch (cuts on the real axis past +-1; Re in [0, pi])."""
    re, im, ny = _acos_parts(z)
    np_api, _, _ = _real_api()
    return from_parts(re, np_api.where(ny, im, -im))


def acosh(z: Tracer) -> Tracer:
    """acosh(z) = |Im acos z| + i copysign(Re acos z, Im z) (catrig's cacosh; the cut is the real
    axis below 1, Re acosh >= 0)."""
    re, im, ny = _acos_parts(z)
    return from_parts(im, _copysign(re, ny))


def atanh(z: Tracer) -> Tracer:
    """atanh(z) (catrig's catanh, Kahan's formulas), numpy's principal branch (cuts on the real
    axis past +-1): on the first quadrant's |x|, |y|, Re = log1p(4x / ((x - 1)**2 + y**2)) / 4
    and Im = atan2(2y, (1 - x)(1 + x) - y**2) / 2; past 1/eps, (Re(1/z), pi/2) without overflow;
    below sqrt(3 eps)/2, z; at x = 1, Re = (log 2 - log y) / 2 for y < eps (the squares would
    underflow) and Im = 0 at z = +-1. Then the signs of x and y."""
    np_api, trig, _ = _real_api()
    where = np_api.where
    x, y = complex_parts(z)
    (ax, nx), (ay, ny) = _select_abs(x), _select_abs(y)
    eps = float(_finfo(ax).eps)
    large, tiny, mid, xm, ym = _regions(ax, ay, (3.0 * eps) ** 0.5 / 2.0)
    xm1 = xm - 1.0
    at_one = (xm == 1.0) & (ym < eps)
    sq = where(at_one, 1.0, xm1 * xm1 + ym * ym)
    re = np_api.log1p(4.0 * xm / sq) * 0.25
    re = where(at_one, (math.log(2.0) - np_api.log(where(at_one, ym, 1.0))) * 0.5, re)
    im = trig.arctan2(2.0 * ym, (1.0 - xm) * (1.0 + xm) - ym * ym) * 0.5
    im = where((xm == 1.0) & (ym == 0.0), 0.0, im)
    # Re(1/z) = x / (x**2 + y**2), scaled by the larger part (0 where it is inf).
    m = where(large, np_api.maximum(ax, ay), 1.0)
    inf = m == float("inf")
    ms = where(inf, 1.0, m)
    u, v = ax / ms, ay / ms
    recip = where(inf, 0.0, u / where(large, u * u + v * v, 1.0) / ms)
    re = where(large, recip, where(tiny, ax, re))
    im = where(large, math.pi / 2, where(tiny, ay, im))
    return from_parts(_copysign(re, nx), _copysign(im, ny))


def atan(z: Tracer) -> Tracer:
    """atan(z) = swap(atanh(swap(z))) (catrig's catan)."""
    x, y = complex_parts(z)
    w_re, w_im = complex_parts(atanh(from_parts(y, x)))
    return from_parts(w_im, w_re)


def logistic(z: Tracer) -> Tracer:
    """1 / (1 + exp(-z)): JAX's lax.logistic of a complex value (its formula, so its values and
    poles at i pi (2k + 1)); nn.sigmoid takes no complex values."""
    one = _const(z, 1.0)
    return lax.binary(nn.DivOp, one, lax.binary(nn.AddOp, one, lax.unary(nn.ExpOp, lax.unary(nn.NegOp, z))))
