"""The complex branches of the elementary functions whose real forms are library composites
(basic.py's expm1, log1p and integer powers; hyperbolic.py's sinh, cosh; trigonometric.py's tan):
formulas on the parts that reuse the accurate real functions, so a small part keeps its digits.

log, sqrt, tanh, pow and sign of complex values are nn ops instead, which nn-expand-complex
rewrites (irgrad/transforms/nn/nn_expand_complex.py); derivatives come from the (re, im) pairs,
which is JAX's convention (docs/autodiff.md, "Complex numbers"). This module sits below basic.py
(which calls it), so it emits nn ops itself and takes basic's real expm1 / log1p as arguments;
the inverse functions' complex branches, which need basic's real composites, are complex_inverse.py.
"""

from __future__ import annotations

from collections.abc import Callable

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


def logistic(z: Tracer) -> Tracer:
    """1 / (1 + exp(-z)): JAX's lax.logistic of a complex value (its formula, so its values and
    poles at i pi (2k + 1)); nn.sigmoid takes no complex values."""
    one = _const(z, 1.0)
    return lax.binary(nn.DivOp, one, lax.binary(nn.AddOp, one, lax.unary(nn.ExpOp, lax.unary(nn.NegOp, z))))
