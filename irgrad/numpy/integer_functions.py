"""Integer functions with numpy's names: gcd lcm, integers only, with no gradient.

Euclid's algorithm as one fixed-count `fori_loop` (enough steps for any pair of the dtype),
so each traces to one loop of static trip count.
"""

from __future__ import annotations

from typing import Any

from irgrad.dialects import nn
from irgrad.tracing import dtypes, primitives as lax
from irgrad.numpy import basic as np_api
from irgrad.numpy.support import api, operands
from irgrad.tracing.tracer import Tracer
from irgrad.tracing.errors import DTypeError, user_site

__all__ = ["gcd", "lcm"]


def _int_operands(name: str, x1: Any, x2: Any) -> tuple[Tracer, Tracer]:
    (a, b), d = operands(name, x1, x2)
    if not dtypes.is_int(d):
        raise DTypeError(f"{name}: arguments must be integers, got {d}{user_site()}")
    return a, b


# Euclid's algorithm takes the most steps on consecutive Fibonacci numbers: F(47) > 2**31 and
# F(93) > 2**63, so this many steps finish every pair of the dtype.
_EUCLID_STEPS = {4: 47, 8: 93}


def _gcd(a: Tracer, b: Tracer) -> Tracer:
    from irgrad.numpy.control_flow import fori_loop

    def step(_: Tracer, carry: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
        u, v = carry
        nonzero = v != 0
        vs = np_api.where(nonzero, v, 1)
        r = u - lax.binary(nn.DivOp, u, vs) * vs  # u % v for u, v >= 0
        return np_api.where(nonzero, v, u), np_api.where(nonzero, r, v)

    g, _ = fori_loop(0, _EUCLID_STEPS[a.dtype.itemsize], step, (np_api.abs(a), np_api.abs(b)))
    return g


@api
def gcd(x1: Any, x2: Any) -> Tracer:
    """The greatest common divisor of |x1| and |x2| (0 for gcd(0, 0)), integers only: Euclid's
    algorithm as one fixed-count `fori_loop` (enough steps for any pair of the dtype)."""
    a, b = _int_operands("gcd", x1, x2)
    return _gcd(a, b)


@api
def lcm(x1: Any, x2: Any) -> Tracer:
    """The least common multiple |x1 / gcd * x2| (0 if either is 0), integers only; it wraps
    around where it exceeds the dtype, as numpy's."""
    a, b = _int_operands("lcm", x1, x2)
    g = _gcd(a, b)
    zero = g == 0
    gs = np_api.where(zero, 1, g)
    return np_api.where(zero, 0, np_api.abs(lax.binary(nn.DivOp, a, gs) * b))
