"""The real-valued building blocks of nn-expand-complex's rules: an emitter of nn ops on (re, im)
parts (`PairBuilder`), and the functions of parts that log, sqrt, pow and sign are made of (the sign
bit, a hypot-style modulus, log|z| with no cancellation near |z| = 1, atan2), written once here so
every rule and target shares them.

Parts are `S x 1` slices of a pair tensor, of f32 or f64. Each function reads only nn ops (a pass may
not import the library, whose composites these mirror: irgrad/numpy/trigonometric.py's Cephes atan),
and each branch reads safe values where it is not taken, so no NaN reaches the derivatives.
"""

from __future__ import annotations

import math
from typing import cast

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from irgrad.dialects import nn


class PairBuilder:
    """Emits real nn ops at an insertion point, in order."""

    def __init__(self, point: InsertPoint):
        self.point = point

    def emit(self, op: Operation) -> SSAValue:
        Rewriter.insert_op(op, self.point)
        return op.results[0]

    @staticmethod
    def shape(v: SSAValue) -> list[int]:
        return list(cast(TensorType, v.type).get_shape())

    def part(self, pairs: SSAValue, k: int) -> SSAValue:
        """The real (k=0) or imaginary (k=1) part as S x 1."""
        s = self.shape(pairs)
        return self.emit(nn.SliceOp(pairs, [0] * (len(s) - 1) + [k], s[:-1] + [k + 1], [1] * len(s)))

    def parts(self, pairs: SSAValue) -> tuple[SSAValue, SSAValue]:
        return self.part(pairs, 0), self.part(pairs, 1)

    def join(self, re: SSAValue, im: SSAValue) -> SSAValue:
        """S x 1 parts as S x 2 pairs."""
        return self.emit(nn.ConcatenateOp([re, im], len(self.shape(re)) - 1))

    def squeeze(self, part: SSAValue) -> SSAValue:
        return self.emit(nn.ReshapeOp(part, self.shape(part)[:-1]))

    def unsqueeze(self, x: SSAValue) -> SSAValue:
        return self.emit(nn.ReshapeOp(x, [*self.shape(x), 1]))

    def binary(self, cls: type[nn.ElementwiseBinaryOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(cls(a, b))

    def unary(self, cls: type[nn.ElementwiseUnaryOp], a: SSAValue) -> SSAValue:
        return self.emit(cls(a))

    def full(self, like: SSAValue, value: float) -> SSAValue:
        return self.emit(nn.FullOp(value, like.type))

    def conj(self, pairs: SSAValue) -> SSAValue:
        re, im = self.parts(pairs)
        return self.join(re, self.unary(nn.NegOp, im))

    def const(self, like: SSAValue, value: float) -> SSAValue:
        return self.full(like, value)

    def cmp(self, direction: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(nn.CompareOp(direction, a, b))

    def select(self, pred: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(nn.SelectOp(pred, a, b))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(nn.AddOp, a, b)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(nn.SubOp, a, b)

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(nn.MulOp, a, b)

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(nn.DivOp, a, b)

    def scaled(self, a: SSAValue, k: float) -> SSAValue:
        return self.mul(a, self.const(a, k))

    def cosh_sinh(self, x: SSAValue) -> tuple[SSAValue, SSAValue]:
        ep, em = self.unary(nn.ExpOp, x), self.unary(nn.ExpOp, self.unary(nn.NegOp, x))
        half = self.full(x, 0.5)
        cosh = self.binary(nn.MulOp, self.binary(nn.AddOp, ep, em), half)
        sinh = self.binary(nn.MulOp, self.binary(nn.SubOp, ep, em), half)
        return cosh, sinh




def signbit(b: PairBuilder, x: SSAValue) -> SSAValue:
    """x < 0 or x is -0.0 (1 / -0.0 = -inf): numpy's copysign and atan2 read the sign of zeros."""
    zero = b.const(x, 0.0)
    return b.binary(nn.OrOp, b.cmp("lt", x, zero), b.cmp("lt", b.div(b.const(x, 1.0), x), zero))


def hi_lo(b: PairBuilder, re: SSAValue, im: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(max(|re|, |im|), min(|re|, |im|), |im| > |re|) with selects, whose derivatives stay
    right at ties (maximum's would split the gradient there)."""
    ar, ai = b.unary(nn.AbsOp, re), b.unary(nn.AbsOp, im)
    swap = b.cmp("gt", ai, ar)
    return b.select(swap, ai, ar), b.select(swap, ar, ai), swap


def modulus(b: PairBuilder, re: SSAValue, im: SSAValue) -> SSAValue:
    """|z| = hi sqrt(1 + (lo/hi)^2): no overflow or underflow; 0 at 0, inf where a part is inf."""
    hi, lo, _ = hi_lo(b, re, im)
    zero = b.cmp("eq", hi, b.const(hi, 0.0))
    q = b.div(lo, b.select(zero, b.const(hi, 1.0), hi))
    m = b.mul(hi, b.unary(nn.SqrtOp, b.add(b.const(q, 1.0), b.mul(q, q))))
    inf = b.const(hi, float("inf"))
    return b.select(b.cmp("eq", hi, inf), inf, b.select(zero, b.const(hi, 0.0), m))


def log1p(b: PairBuilder, s: SSAValue) -> SSAValue:
    """log(1 + s) for finite s > -1, accurate near 0 (Goldberg: log(u) s / (u - 1), u = 1 + s)."""
    u = b.add(b.const(s, 1.0), s)
    um1 = b.sub(u, b.const(s, 1.0))
    is_one = b.cmp("eq", um1, b.const(s, 0.0))
    ratio = b.div(s, b.select(is_one, b.const(s, 1.0), um1))
    return b.select(is_one, s, b.mul(b.unary(nn.LogOp, u), ratio))


def _two_square(b: PairBuilder, a: SSAValue) -> tuple[SSAValue, SSAValue]:
    """a^2 as p + e exactly (Dekker's product of Veltkamp's halves of a)."""
    bits = cast(TensorType, a.type).get_element_type().bitwidth  # complex parts: f32 or f64
    c = b.scaled(a, 4097.0 if bits == 32 else 134217729.0)  # 2^12 + 1, 2^27 + 1
    a_hi = b.sub(c, b.sub(c, a))
    a_lo = b.sub(a, a_hi)
    p = b.mul(a, a)
    e = b.add(b.add(b.sub(b.mul(a_hi, a_hi), p), b.scaled(b.mul(a_hi, a_lo), 2.0)), b.mul(a_lo, a_lo))
    return p, e


def _hi2_plus_lo2_minus_1(b: PairBuilder, hi: SSAValue, lo: SSAValue) -> SSAValue:
    """hi^2 + lo^2 - 1 for 0.5 < hi < 2 to double working precision (its digits are all lost to
    cancellation near |z| = 1 otherwise): exact squares, hi^2 - 1 exact (Sterbenz), Knuth's
    two-sum for the rest."""
    p1, e1 = _two_square(b, hi)
    p2, e2 = _two_square(b, lo)
    x = b.sub(p1, b.const(p1, 1.0))
    s = b.add(x, p2)
    bb = b.sub(s, x)
    err = b.add(b.sub(x, b.sub(s, bb)), b.sub(p2, bb))
    return b.add(s, b.add(err, b.add(e1, e2)))


def log_modulus(b: PairBuilder, re: SSAValue, im: SSAValue) -> SSAValue:
    """log|z|: 0.5 log1p(hi^2 + lo^2 - 1) for 0.5 < hi < 2, the argument in double working
    precision (no cancellation near |z| = 1, as numpy's and XLA's), log(hi) + 0.5 log1p((lo/hi)^2)
    elsewhere; -inf at 0, inf where a part is inf. Each branch reads safe values where it is not
    taken, so no NaN reaches the derivatives."""
    hi, lo, _ = hi_lo(b, re, im)
    one, zero_c = b.const(hi, 1.0), b.const(hi, 0.0)
    near = b.binary(nn.AndOp, b.cmp("gt", hi, b.const(hi, 0.5)), b.cmp("lt", hi, b.const(hi, 2.0)))
    hn, ln = b.select(near, hi, one), b.select(near, lo, zero_c)
    r_near = b.scaled(log1p(b, _hi2_plus_lo2_minus_1(b, hn, ln)), 0.5)
    zero = b.cmp("eq", hi, zero_c)
    inf = b.cmp("eq", hi, b.const(hi, float("inf")))
    off = b.binary(nn.OrOp, near, b.binary(nn.OrOp, zero, inf))
    hf, lf = b.select(off, one, hi), b.select(off, zero_c, lo)
    q = b.div(lf, hf)
    r_far = b.add(b.unary(nn.LogOp, hf), b.scaled(log1p(b, b.mul(q, q)), 0.5))
    r = b.select(near, r_near, r_far)
    return b.select(inf, b.const(hi, float("inf")), b.select(zero, b.const(hi, float("-inf")), r))


# Cephes' atan (S. L. Moshier, atan.c), as irgrad/numpy/trigonometric.py (a pass may not import
# the library): a rational approximation for |u| <= 0.66, within 2e-16 relative error.
_ATAN_P = (-8.750608600031904122785e-01, -1.615753718733365076637e01, -7.500855792314704667340e01,
           -1.228866684490136173410e02, -6.485021904942025371773e01)  # fmt: skip
_ATAN_Q = (2.485846490142306297962e01, 1.650270098316988542046e02, 4.328810604912902668951e02,
           4.853903996359136964868e02, 1.945506571482613964425e02)  # fmt: skip
_MOREBITS = 6.123233995736765886130e-17  # pi/2 - float64(pi/2)


def _atan_kernel(b: PairBuilder, u: SSAValue) -> SSAValue:
    w = b.mul(u, u)
    p = b.add(b.scaled(w, _ATAN_P[0]), b.const(w, _ATAN_P[1]))
    for c in _ATAN_P[2:]:
        p = b.add(b.mul(p, w), b.const(w, c))
    q = b.add(w, b.const(w, _ATAN_Q[0]))
    for c in _ATAN_Q[1:]:
        q = b.add(b.mul(q, w), b.const(w, c))
    return b.add(b.mul(u, b.div(b.mul(w, p), q)), u)


def atan2(b: PairBuilder, y: SSAValue, x: SSAValue) -> SSAValue:
    """atan2(y, x) of nn ops: atan of r = min/max of |x|, |y| in [0, 1] (pi/4 + atan((r-1)/(r+1))
    past 0.66), then pi/2 - t where |y| > |x|, pi - t where x's sign bit is set, and y's sign
    (signed zeros as C's atan2: atan2(+-0, -0) = +-pi). NaN in, NaN out."""
    hi, lo, swap = hi_lo(b, x, y)
    one = b.const(hi, 1.0)
    inf = b.const(hi, float("inf"))
    both_inf = b.binary(nn.AndOp, b.cmp("eq", hi, inf), b.cmp("eq", lo, inf))
    r = b.div(lo, b.select(b.cmp("eq", hi, b.const(hi, 0.0)), one, hi))
    r = b.select(both_inf, one, r)
    mid = b.cmp("gt", r, b.const(r, 0.66))
    u = b.select(mid, b.div(b.sub(r, one), b.add(r, one)), r)
    t = b.add(b.select(mid, b.const(r, math.pi / 4 + 0.5 * _MOREBITS), b.const(r, 0.0)), _atan_kernel(b, u))
    t = b.select(swap, b.sub(b.const(t, math.pi / 2 + _MOREBITS), t), t)
    t = b.select(signbit(b, x), b.sub(b.const(t, math.pi + 2 * _MOREBITS), t), t)
    return b.select(signbit(b, y), b.unary(nn.NegOp, t), t)
