"""numpy's NaN, infinity, signed-zero and extreme-value semantics, op by op, on the reference
interpreter and the CPU backend: every op on the grid of special values (NaN, +-inf, +-0,
+-1, +-0.5, +-2.5, the largest and the smallest subnormal float64, and every pair of them) gives
numpy's NaNs, infinities and zero signs, and its finite values to a few ulp. The deliberate
differences are listed in KNOWN (and docs/api/python.md, "NaN, infinities and zeros"): each
names where it differs, and the list must match what the code does, so a difference fixed
leaves the list too."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import irgrad as ig

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e308, 5e-324])
A, B = np.repeat(SPECIAL, len(SPECIAL)), np.tile(SPECIAL, len(SPECIAL))
UNARY = [
    "abs", "sign", "floor", "ceil", "round", "trunc", "rint", "sqrt", "cbrt", "exp", "exp2", "expm1",
    "log", "log2", "log10", "log1p", "sin", "cos", "tanh", "sinh", "cosh", "arctan", "arcsin",
    "arccos", "arcsinh", "arccosh", "arctanh", "reciprocal", "square", "negative", "deg2rad",
]  # fmt: skip
BINARY = [
    "maximum", "minimum", "fmax", "fmin", "add", "subtract", "multiply", "divide", "power",
    "arctan2", "hypot", "remainder", "fmod", "floor_divide", "copysign", "logaddexp", "heaviside",
]  # fmt: skip
PREDICATES = ["isnan", "isinf", "isfinite", "signbit", "greater", "less", "equal", "not_equal"]

TINY = 5e-324


def _zeros(a, b, first_negative: bool):
    """Opposite zeros, the first operand negative (or not)."""
    return (a == 0) & (b == 0) & (np.signbit(a) == first_negative) & (np.signbit(b) != first_negative)


def _big_quotient(a, b):
    """A finite nonzero x over a finite nonzero y whose quotient is 2**53 or more and either
    overflows or leaves a nonzero exact remainder (an integral quotient still comes out 0)."""
    with np.errstate(all="ignore"):
        q = np.abs(a / b)
        lost = ~np.isfinite(q) | (np.fmod(a, b) != 0)
    return np.isfinite(a) & (a != 0) & np.isfinite(b) & (b != 0) & ~(q < 2.0**53) & lost


def _absorbed(a, b):
    """x + y == y for a finite nonzero x of the other sign than a finite y."""
    with np.errstate(all="ignore"):
        return np.isfinite(a) & (a != 0) & np.isfinite(b) & (np.signbit(a) != np.signbit(b)) & (a + b == b)


KNOWN = {
    # remainder and fmod are built on x - floor(x / y) * y, not C's exact fmod: a quotient of
    # 2**53 or more loses the result (or overflows to inf).
    "fmod": _big_quotient,
    # ... and where x + y rounds to y, remainder answers 0 (kept in [0, y)), numpy y itself.
    "remainder": lambda a, b: _big_quotient(a, b) | _absorbed(a, b),
    # floor(x / y) of a quotient that underflows to -0 is -0, where numpy's divmod says -1.
    "floor_divide": lambda a, b: (np.abs(a) == TINY) & (np.abs(b) > 1) & np.isfinite(b) & (np.signbit(a) != np.signbit(b)),
    # Opposite zeros: IEEE 754-2019's maximum(+0, -0) = +0 and minimum = -0 (as JAX); numpy
    # answers its second operand there.
    "maximum": lambda a, b: _zeros(a, b, first_negative=False),
    "fmax": lambda a, b: _zeros(a, b, first_negative=False),
    "minimum": lambda a, b: _zeros(a, b, first_negative=True),
    "fmin": lambda a, b: _zeros(a, b, first_negative=True),
}


def _agree(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: both NaN, or equal infinities, or equal zeros of the same sign, or finite
    values within 4 ulp (8 near the float range's edges)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    with np.errstate(all="ignore"):
        nan = np.isnan(got) & np.isnan(want)
        exact = (got == want) & (np.signbit(got) == np.signbit(want))
        close = np.isfinite(got) & np.isfinite(want) & (want != 0) & (np.abs(got - want) <= 8 * np.spacing(np.abs(want)))
    return nan | exact | close


def _program(x, a, b):
    return (
        tuple(getattr(ig, n)(x) for n in UNARY)
        + tuple(getattr(ig, n)(a, b) for n in BINARY)
        + tuple(getattr(ig, n)(a, b) if n in ("greater", "less", "equal", "not_equal") else getattr(ig, n)(x) for n in PREDICATES)
    )


@pytest.fixture(scope="module", params=["interp", "cpu"])
def results(request):
    return dict(zip(UNARY + BINARY + PREDICATES, ig.jit(_program, backend=request.param)(SPECIAL, A, B)))


def _numpy(name: str) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if name in UNARY or name in ("isnan", "isinf", "isfinite", "signbit"):
            return getattr(np, name)(SPECIAL)
        return getattr(np, name)(A, B)


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_float_ops_follow_numpy_at_the_special_values(results, name):
    got, want = np.asarray(results[name]), _numpy(name)
    differ = ~_agree(got, want)
    inputs = (SPECIAL,) if name in UNARY else (A, B)
    expected = KNOWN[name](*inputs) if name in KNOWN else np.zeros_like(differ)
    where = [tuple(float(v[i]) for v in inputs) for i in np.flatnonzero(differ != expected)[:5]]
    assert np.array_equal(differ, expected), (
        f"{name}: differs from numpy at {where} (got {got[differ != expected][:5]}, numpy "
        f"{want[differ != expected][:5]}); a listed difference that no longer occurs leaves KNOWN")


@pytest.mark.parametrize("name", PREDICATES)
def test_predicates_and_comparisons_follow_numpy(results, name):
    np.testing.assert_array_equal(np.asarray(results[name]), _numpy(name))
