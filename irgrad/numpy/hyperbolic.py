"""Hyperbolic functions and their inverses with numpy's names: sinh cosh arcsinh arccosh
arctanh (fdlibm's formulas: no cancellation near 0, no overflow far out).

Composites of `nn` ops, so autodiff, batching and every backend cover them; integer and bool
inputs become float32. Accurate to a few ulp in float64 over the whole domain
(tests/unit/numpy/test_numpy_math.py measures it against numpy). Derivatives decided here
(docs/autodiff.md, Contracts): arcsinh'(0) = arctanh'(0) = 1; arccosh'(1) is infinite.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irgrad.numpy import basic as np_api
from irgrad.numpy.basic import expm1
from irgrad.numpy import complex_inverse
from irgrad.numpy.complex_functions import complex_parts, from_parts
from irgrad.numpy.support import api, lift, require_float
from irgrad.numpy.elementwise_support import dtypes_finfo
from irgrad.tracing import dtypes
from irgrad.tracing.tracer import Tracer

__all__ = ["arccosh", "arcsinh", "arctanh", "cosh", "sinh"]


# Beyond this |x|, e**-|x| is below an ulp of e**|x| and the hyperbolic functions are e**|x| / 2.
_HYPERBOLIC_FAR = 20.0


@api
def sinh(x: Any) -> Tracer:
    """(expm1(x) - expm1(-x)) / 2 for |x| < 20 (no cancellation near 0: the two terms have
    opposite signs); beyond, e**(|x|/2) * (e**(|x|/2) / 2) with x's sign, which stays finite up
    to numpy's overflow point (710.47 in float64), past exp's. Complex: (sinh x cos y, cosh x sin y)
    from the real functions, so a small part keeps its digits."""
    t = require_float("sinh", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        re, im = complex_parts(t)
        return from_parts(sinh(re) * np_api.cos(im), cosh(re) * np_api.sin(im))
    near = np_api.abs(t) < _HYPERBOLIC_FAR
    tn = np_api.where(near, t, 0.0)
    close = (expm1(tn) - expm1(-tn)) * 0.5
    h = np_api.exp(np_api.maximum(np_api.abs(t), _HYPERBOLIC_FAR) * 0.5)
    far = (h * 0.5) * h
    return np_api.where(near, close, np_api.where(t < 0, -far, far))


@api
def cosh(x: Any) -> Tracer:
    """1 + m**2 / (2 (1 + m)) with m = expm1(|x|) for |x| < 20 (that is (e**x + e**-x) / 2,
    with cosh(x) - 1 computed without cancellation); beyond, e**(|x|/2) * (e**(|x|/2) / 2).
    |x| is a select taking x itself at 0, where the formula is cosh(x) exactly, so the
    second derivative there is 1 (an abs would give sign(0)**2 = 0). Complex: (cosh x cos y,
    sinh x sin y) from the real functions."""
    t = require_float("cosh", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        re, im = complex_parts(t)
        return from_parts(cosh(re) * np_api.cos(im), sinh(re) * np_api.sin(im))
    a = np_api.where(t >= 0, t, -t)
    near = a < _HYPERBOLIC_FAR
    m = expm1(np_api.where(near, a, 0.0))
    close = 1.0 + m * m / (2.0 * (1.0 + m))
    h = np_api.exp(np_api.maximum(a, _HYPERBOLIC_FAR) * 0.5)
    return np_api.where(near, close, (h * 0.5) * h)


def _far_threshold(d: np.dtype) -> float:
    """Past this |x|, asinh(x) = log(2|x|) and acosh(x) = log(2x) to the dtype's precision
    (the next term, 1/(4x**2), is below an ulp), and x**2 does not overflow below it:
    2**28 for float64, 2**13 for float32, 2**7 for float16, 2**5 for bfloat16."""
    nmant = int(dtypes_finfo(d).nmant)
    return float(2.0 ** math.ceil((nmant + 3) / 2))


@api
def arcsinh(x: Any) -> Tracer:
    """Inverse hyperbolic sine: log1p(|x| + x**2 / (1 + sqrt(1 + x**2))) for |x| <= 2,
    log(2|x| + 1 / (|x| + sqrt(x**2 + 1))) up to 2**28 (float64), log(|x|) + log(2) beyond;
    odd, with -0.0 kept. Complex: Hull, Fairgrieve and Tang's algorithm as FreeBSD's catrig
    (numpy's) writes it (complex_inverse.asinh), numpy's principal branch (cuts on the
    imaginary axis past +-i)."""
    t = require_float("arcsinh", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_inverse.asinh(t)
    a = np_api.abs(t)
    far = a > _far_threshold(t.dtype)
    mid = (a > 2.0) & ~far
    r_far = np_api.log(np_api.where(far, a, 1.0)) + math.log(2.0)
    am = np_api.where(mid, a, 2.0)
    r_mid = np_api.log(2.0 * am + 1.0 / (np_api.sqrt(am * am + 1.0) + am))
    an = np_api.where(far | mid, 0.0, a)
    a2 = an * an
    r_near = np_api.log1p(an + a2 / (1.0 + np_api.sqrt(1.0 + a2)))
    r = np_api.where(far, r_far, np_api.where(mid, r_mid, r_near))
    r = np_api.where(t < 0, -r, r)
    return np_api.where(t == 0, t, r)  # keeps -0.0; asinh'(0) = 1 through the select


@api
def arccosh(x: Any) -> Tracer:
    """Inverse hyperbolic cosine, for x >= 1 (NaN below): log1p(u + sqrt(2u + u**2)) with
    u = x - 1 (exact) up to 2, log(2x - 1 / (x + sqrt(x**2 - 1))) up to 2**28 (float64),
    log(x) + log(2) beyond. The derivative at 1 is infinite. Complex: catrig's cacosh from the
    complex arccos (complex_inverse.acosh), numpy's principal branch (Re >= 0, the cut on
    the real axis below 1)."""
    t = require_float("arccosh", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_inverse.acosh(t)
    far = t > _far_threshold(t.dtype)
    mid = (t > 2.0) & ~far
    r_far = np_api.log(np_api.where(far, t, 1.0)) + math.log(2.0)
    tm = np_api.where(mid, t, 2.0)
    r_mid = np_api.log(2.0 * tm - 1.0 / (tm + np_api.sqrt(tm * tm - 1.0)))
    u = np_api.where(far | mid, 2.0, t) - 1.0
    r_near = np_api.log1p(u + np_api.sqrt(2.0 * u + u * u))
    return np_api.where(far, r_far, np_api.where(mid, r_mid, r_near))


@api
def arctanh(x: Any) -> Tracer:
    """Inverse hyperbolic tangent: log1p(2a + 2a**2 / (1 - a)) / 2 for a = |x| < 1/2,
    log1p(2a / (1 - a)) / 2 from 1/2 on (1 - a is exact there); +-inf at +-1, NaN beyond; odd,
    with -0.0 kept. Complex: catrig's catanh, Kahan's formulas (complex_inverse.atanh),
    numpy's principal branch (cuts on the real axis past +-1)."""
    t = require_float("arctanh", lift(x), complex_ok=True)
    if dtypes.is_complex(t.dtype):
        return complex_inverse.atanh(t)
    a = np_api.abs(t)
    near = a < 0.5
    an = np_api.where(near, a, 0.0)
    r_near = 0.5 * np_api.log1p(2.0 * an + 2.0 * an * an / (1.0 - an))
    af = np_api.where(near, 0.5, a)
    r_far = 0.5 * np_api.log1p(2.0 * af / (1.0 - af))
    r = np_api.where(near, r_near, r_far)
    r = np_api.where(t < 0, -r, r)
    return np_api.where(t == 0, t, r)
