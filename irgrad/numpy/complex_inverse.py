"""The complex branches of the inverse trigonometric and hyperbolic functions (arcsin, arccos,
arctan, arcsinh, arccosh, arctanh), which trigonometric.py and hyperbolic.py call for complex
inputs: FreeBSD's catrig, as numpy's npymath, each region a select whose untaken branches read
safe arguments, so derivatives (those of the (re, im) pairs, JAX's convention) meet no NaN.

Above basic.py, angles.py (atan2, hypot) and float_parts.py (the sign bit), whose accurate real
composites the formulas use on the parts; below trigonometric.py and hyperbolic.py. Tests:
tests/unit/numpy/test_complex_inverse_functions.py (numpy's values to 1e-13 across the cuts).
"""

from __future__ import annotations

import math

import numpy as np

from irgrad.numpy import angles as trig, basic as np_api
from irgrad.numpy.complex_functions import complex_parts, from_parts
from irgrad.numpy.float_parts import _signbit
from irgrad.tracing.tracer import Tracer


# ---------------------------------------------------------------------------------------------
# Inverse trigonometric and hyperbolic functions: FreeBSD's catrig.c (Hull, Fairgrieve and Tang,
# "Implementing the complex arcsine and arccosine functions using exception handling", ACM TOMS
# 1997; Kahan's catanh), the algorithms numpy's npymath uses, written as selects between the
# regions. Each region's formula reads a safe argument where it is not taken, so a gradient
# through the select meets no NaN. They call the real composites of basic.py, angles.py and
# float_parts.py, which sit below this module.
# ---------------------------------------------------------------------------------------------

_A_CROSSOVER = 10.0  # Hull et al.'s crossovers: A - 1 and A - y by their own formulas below them
_B_CROSSOVER = 0.6417


def _finfo(t: Tracer) -> np.finfo:
    """The float limits of a complex function's parts (float32 or float64)."""
    return np.finfo(t.dtype)


def _select_abs(t: Tracer) -> tuple[Tracer, Tracer]:
    """(|t|, _signbit(t)) with |t| a select on the sign bit, so its derivative is +-1 at +-0.0 too
    (an abs would give 0 there and drop the derivative across an axis)."""
    neg = _signbit(t)
    return np_api.where(neg, -t, t), neg


def _copysign(r: Tracer, neg: Tracer) -> Tracer:
    """r (>= 0) with the sign recorded by `_select_abs`."""
    return np_api.where(neg, -r, r)


def _half_hypot_sum(a: Tracer, b: Tracer, h: Tracer) -> Tracer:
    """catrig's f(a, b, hypot(a, b)) = (hypot(a, b) - b) / 2 without cancellation: a**2 / (h + b) / 2
    for b > 0, (h - b) / 2 for b < 0, a / 2 at b == 0 (each on a safe argument elsewhere)."""
    pos = b > 0
    den = np_api.where(pos, h + b, 1.0)
    return np_api.where(pos, a * a / den * 0.5, np_api.where(b < 0, (h - b) * 0.5, a * 0.5))


def _log_large(x: Tracer, y: Tracer) -> tuple[Tracer, Tracer]:
    """(log|x + iy|, atan2(y, x)) for a large |z| without overflow: log(m) + log1p((n/m)**2) / 2
    with m, n the larger and smaller of |x|, |y| (catrig's clog_for_large_values). m > 0."""
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
    recip_eps = 1.0 / float(_finfo(ax).eps)
    large = (ax > recip_eps) | (ay > recip_eps)
    tiny = ~large & (ax < small) & (ay < small)
    mid = ~large & ~tiny
    return large, tiny, mid, np_api.where(mid, ax, 1.0), np_api.where(mid, ay, 0.0)


def _asinh_first_quadrant(ax: Tracer, ay: Tracer) -> tuple[Tracer, Tracer]:
    """asinh(ax + i ay) for ax, ay >= 0 (catrig's casinh): log(2z) past 1/eps, z itself below
    sqrt(6 eps) / 4, Hull's kernel between."""
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
    """(Re acos z, |Im acos z|, _signbit(Im z)) (catrig's cacos): Im acos z has the sign opposite
    to Im z. Past 1/eps: (|arg z|, log|z| + log 2); below sqrt(6 eps)/4: (pi/2 - x, |y|); between,
    Hull's kernel on (|y|, |x|), whose atan2 is taken on -x's side for a negative x."""
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
    upright = np_api.abs(b) <= a
    steep = (math.pi / 2) - trig.arctan2(np_api.where(upright, b, 0.0), np_api.where(upright, a, 1.0))
    flat = trig.arctan2(np_api.where(upright, 0.0, a), np_api.where(upright, 1.0, b))
    return np_api.where(upright, steep, flat)


def acos(z: Tracer) -> Tracer:
    """acos(z), numpy's principal branch (cuts on the real axis past +-1; Re in [0, pi])."""
    re, im, ny = _acos_parts(z)
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
