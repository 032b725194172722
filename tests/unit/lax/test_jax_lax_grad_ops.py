"""JAX's derivative tables for lax's elementwise ops, ported from JAX's tests/lax_autodiff_test.py:
`LAX_GRAD_OPS` (run there by testOpGrad) and `LAX_GRAD_SPECIAL_VALUE_TESTS` (testOpGradSpecialValue),
one record a line as in JAX, with its op, arity, order, input generator (jtu.rand_* on a
fixed-seed numpy RandomState), dtypes and tolerance.

Each record's shapes are JAX's (the pairs of `compatible_shapes`); two of them, chosen with a
fixed seed, run, the first in float64 and the second in float32. A case checks
`getattr(ig.lax, op)`'s derivatives up to the record's order, forward (jvp of jvp) and reverse
(vjp of vjp), evaluated eagerly in the case's dtype, against
- central differences in float64 of the derivative one order below (as jax's check_grads, eps
  1e-4: the jvp itself, the vjp through u . (J v); NaN matches NaN, as there), for every order
  in float64 cases and for the first in float32 ones;
- jax.jvp / jax.vjp with x64 enabled on the same inputs and directions, within the record's
  tolerance for the dtype (JAX's default gradient tolerance where it gives none);
and the first order of each record's first case under `ig.jit` too.
The special-value records run the same checks at order 2 on scalars in both dtypes, as
testOpGradSpecialValue (which checks order 2 only; orders 1 and 2 here).

Complex64/complex128 cases run for the ops irgrad takes complex values in (COMPLEX_SUPPORTED),
with complex directions, JAX's cotangent convention and the real pairing Re(sum(u * v)) of the
vjp check; the others are skipped with the reason, and a test checks that each still refuses
complex input (so the set stays exact). JAX's LAX_GRAD_OPS_WITH_OUT_DTYPE (lax.mul
with `out_dtype`) is not ported: irgrad's mul has no out_dtype. Cases where irgrad differs from
JAX are in KNOWN_DIFFERENCES, asserted to still differ.
"""

from __future__ import annotations

import collections
import itertools
import random
import zlib
from functools import partial

import numpy as np
import pytest

import irgrad as ig
from irgrad.numpy.support import api

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

# ---- jtu's input generators (jax/_src/test_util.py), on a numpy RandomState ----------------


def _rand_dtype(rand, shape, dtype, scale=1.0, post=lambda x: x):
    r = lambda: np.asarray(scale * rand(*shape)).astype(dtype)  # noqa: E731
    vals = r() + 1.0j * r() if np.issubdtype(dtype, np.complexfloating) else r()
    return np.asarray(post(vals), dtype)


def rand_default(rng, scale=3):
    return partial(_rand_dtype, rng.randn, scale=scale)


def rand_positive(rng):
    return partial(_rand_dtype, rng.rand, scale=2, post=lambda x: x + 1)


def rand_small(rng):
    return partial(_rand_dtype, rng.randn, scale=1e-3)


def rand_not_small(rng, offset=10.0):
    return partial(_rand_dtype, rng.randn, scale=3.0, post=lambda x: x + np.where(x > 0, offset, -offset))


def rand_uniform(rng, low=0.0, high=1.0):
    assert low < high
    return partial(_rand_dtype, rng.rand, post=lambda x: x * (high - low) + low)


# ---- the tables ------------------------------------------------------------------------------

compatible_shapes = [[(3,)], [(), (3, 4), (3, 1), (1, 4)], [(2, 3, 4), (2, 1, 4)]]
grad_float_dtypes = [np.float32, np.float64]  # jtu.dtypes.floating with x64
grad_complex_dtypes = [np.complex64, np.complex128]
grad_inexact_dtypes = grad_float_dtypes + grad_complex_dtypes
# jax's default_gradient_tolerance (jax/_src/public_test_util.py)
default_gradient_tolerance = {np.float32: 2e-3, np.float64: 1e-5, np.complex64: 1e-3, np.complex128: 1e-5}

GradTestSpec = collections.namedtuple("GradTestSpec", ["op", "nargs", "order", "rng_factory", "dtypes", "name", "tol"])


def grad_test_spec(op, nargs, order, rng_factory, dtypes, name=None, tol=None):
    return GradTestSpec(op, nargs, order, rng_factory, dtypes, name or op, tol)


LAX_GRAD_OPS = [
    grad_test_spec("neg", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes),
    grad_test_spec("floor", nargs=1, order=2, rng_factory=partial(rand_uniform, low=0.1, high=0.4), dtypes=grad_float_dtypes),
    grad_test_spec("ceil", nargs=1, order=2, rng_factory=partial(rand_uniform, low=0.1, high=0.4), dtypes=grad_float_dtypes),
    grad_test_spec("round", nargs=1, order=2, rng_factory=partial(rand_uniform, low=0.1, high=0.4), dtypes=grad_float_dtypes),
    grad_test_spec("exp", nargs=1, order=2, rng_factory=rand_small, dtypes=grad_inexact_dtypes),
    grad_test_spec("exp2", nargs=1, order=2, rng_factory=rand_small, dtypes=grad_inexact_dtypes),
    grad_test_spec("expm1", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes),
    grad_test_spec("log", nargs=1, order=2, rng_factory=rand_positive, dtypes=grad_inexact_dtypes),
    grad_test_spec("log1p", nargs=1, order=2, rng_factory=rand_positive, dtypes=grad_inexact_dtypes),
    grad_test_spec("sinh", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_float_dtypes + [np.complex64], tol=1e-5),
    grad_test_spec("cosh", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes, tol=1e-5),
    grad_test_spec("tanh", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes, tol=2e-4),
    grad_test_spec("sin", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes, tol={np.float32: 5e-1}),
    grad_test_spec("cos", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes),
    grad_test_spec("tan", nargs=1, order=2, rng_factory=partial(rand_uniform, low=-1.3, high=1.3), dtypes=grad_inexact_dtypes, tol=1e-3),
    grad_test_spec("asin", nargs=1, order=2, rng_factory=partial(rand_uniform, low=-1.3, high=1.3), dtypes=grad_float_dtypes, tol=1e-3),
    grad_test_spec("acos", nargs=1, order=2, rng_factory=partial(rand_uniform, low=-1.3, high=1.3), dtypes=grad_float_dtypes, tol=2e-2),
    grad_test_spec("atan2", nargs=2, order=2, rng_factory=rand_default, dtypes=grad_float_dtypes),
    grad_test_spec("erf", nargs=1, order=2, rng_factory=rand_small, dtypes=grad_float_dtypes),
    grad_test_spec("erfc", nargs=1, order=2, rng_factory=rand_small, dtypes=grad_float_dtypes),
    grad_test_spec("erf_inv", nargs=1, order=2, rng_factory=rand_small, dtypes=grad_float_dtypes),
    # grad_test_spec("lgamma", ...): commented out in JAX too (TODO(mattjj): enable)
    grad_test_spec("bessel_i0e", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_float_dtypes),
    grad_test_spec("bessel_i1e", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_float_dtypes),
    grad_test_spec("real", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_complex_dtypes),
    grad_test_spec("imag", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_complex_dtypes),
    grad_test_spec("complex", nargs=2, order=2, rng_factory=rand_default, dtypes=grad_float_dtypes),
    grad_test_spec("conj", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes),
    grad_test_spec("abs", nargs=1, order=2, rng_factory=rand_positive, dtypes=grad_inexact_dtypes),
    grad_test_spec("pow", nargs=2, order=2, rng_factory=rand_positive, dtypes=grad_inexact_dtypes, tol={np.float32: 3e-1}),
    grad_test_spec("sqrt", nargs=1, order=2, rng_factory=rand_positive, dtypes=grad_float_dtypes),
    grad_test_spec("sqrt", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_complex_dtypes),
    grad_test_spec("rsqrt", nargs=1, order=2, rng_factory=rand_positive, dtypes=grad_float_dtypes),
    grad_test_spec("rsqrt", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_complex_dtypes, tol={np.float64: 2e-3}),
    grad_test_spec("cbrt", nargs=1, order=2, rng_factory=rand_not_small, dtypes=grad_float_dtypes, tol={np.float64: 5e-3}),
    grad_test_spec("logistic", nargs=1, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes),
    grad_test_spec("add", nargs=2, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes),
    grad_test_spec("sub", nargs=2, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes),
    grad_test_spec("mul", nargs=2, order=2, rng_factory=rand_default, dtypes=grad_inexact_dtypes),
    grad_test_spec("div", nargs=2, order=1, rng_factory=rand_not_small, dtypes=grad_inexact_dtypes),
    grad_test_spec("max", nargs=2, order=2, rng_factory=rand_default, dtypes=grad_float_dtypes),
    grad_test_spec("min", nargs=2, order=2, rng_factory=rand_default, dtypes=grad_float_dtypes),
    # JAX's MaxSomeEqual / MinSomeEqual records are commented out there (TODO(mattjj)).
]  # fmt: skip

GradSpecialValuesTestSpec = collections.namedtuple("GradSpecialValuesTestSpec", ["op", "values", "tol"])


def grad_special_values_test_spec(op, values, tol=None):
    return GradSpecialValuesTestSpec(op, values, tol)


LAX_GRAD_SPECIAL_VALUE_TESTS = [
    grad_special_values_test_spec("sinh", [0.]),
    grad_special_values_test_spec("cosh", [0.]),
    grad_special_values_test_spec("tanh", [0., 1000.], tol=5e-3),
    grad_special_values_test_spec("sin", [0., np.pi, np.pi/2., np.pi/4.]),
    grad_special_values_test_spec("cos", [0., np.pi, np.pi/2., np.pi/4.]),
    grad_special_values_test_spec("tan", [0.]),
    grad_special_values_test_spec("asin", [0.]),
    grad_special_values_test_spec("acos", [0.]),
    grad_special_values_test_spec("atan", [0., 1000.]),
    grad_special_values_test_spec("erf", [0., 10.]),
    grad_special_values_test_spec("erfc", [0., 10.]),
]  # fmt: skip

# Ops whose complex cases run; the complex cases of the others are skipped (not supported yet).
COMPLEX_SUPPORTED = {
    "neg", "exp", "sin", "cos", "real", "imag", "conj", "abs", "add", "sub", "mul", "div", "exp2", "expm1", "log",
    "log1p", "sinh", "cosh", "tanh", "tan", "pow", "sqrt", "rsqrt", "logistic",
}
COMPLEX = "irgrad does not take complex values in this op yet (docs/dialects/nn.md, 'Complex numbers')"
# lax names irgrad does not provide, with why.
MISSING: dict[str, str] = {}
# (op, dtype name) -> why irgrad's derivatives differ from JAX's; each is asserted to still differ.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}

# ---- the derivatives, written once for both libraries ----------------------------------------

FD_EPS = 1e-4  # jax's check_grads EPS
CASES_PER_RECORD = 2  # shapes per record: the first in float64 (and jitted), the second in float32
# Composites of 100 and more ops whose first derivatives take LLVM 1.5-4 s each to compile
# cold (the CPU backend); jitted on the interpreter backend to keep the file within its time.
SLOW_TO_COMPILE = {"asin", "acos", "atan", "atan2", "erfc", "erf_inv", "bessel_i0e", "bessel_i1e"}


def _tol(tol, dtype) -> float:
    """The record's tolerance for `dtype` (a number applies to every dtype), else JAX's default."""
    if isinstance(tol, dict):
        return tol.get(dtype, default_gradient_tolerance[dtype])
    return default_gradient_tolerance[dtype] if tol is None else tol


def _directions(rng: np.random.RandomState, shapes, out_shape, order: int, in_complex: bool, out_complex: bool) -> dict:
    """One random direction per derivative: jvp tangents (args' shapes) for each forward order, an
    output cotangent for the first reverse order and arguments' cotangents for the second
    (complex where the arguments or the result are)."""
    draw = lambda s, c: rng.randn(*s) + 1j * rng.randn(*s) if c else rng.randn(*s)  # noqa: E731
    args = lambda: tuple(draw(s, in_complex) for s in shapes)  # noqa: E731
    return {"fwd": [args() for _ in range(order)], "rev": [draw(out_shape, out_complex)] + [args() for _ in range(order - 1)]}


def _wide(x):
    """float64, or complex128 for a complex value: the reference precision."""
    x = np.asarray(x)
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def derivatives(lib, op, order: int, dirs: dict, cast) -> dict:
    """{(mode, k): function of the arguments giving the order-k derivative along `dirs`} for k <= order,
    built with `lib`'s jvp and vjp (lib is irgrad or jax): jvp of jvp of op, and vjp of vjp of op."""
    out = {}
    f = op
    for k, v in enumerate(dirs["fwd"], 1):
        f = partial(lambda g, v, *xs: lib.jvp(g, xs, tuple(cast(t) for t in v))[1], f, v)
        out["fwd", k] = f
    g = op
    for k, u in enumerate(dirs["rev"], 1):
        g = partial(lambda h, u, *xs: lib.vjp(h, *xs)[1](jax.tree.map(cast, u)), g, u)
        out["rev", k] = g
    return out


def _assert_close(actual, expected, tol: float, what: str) -> None:
    """Leaf by leaf within rtol = atol = tol, NaN matching NaN (np.testing's, and so jax's, check)."""
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(_wide(a), _wide(e), rtol=tol, atol=tol, err_msg=what)


def _vdot(xs, ys) -> float:
    """Re(sum(x * y)) over the leaves: the real pairing of a JAX cotangent with a tangent (for
    complex values, the cotangent c stands for the pair (Re c, -Im c)); the dot product on reals."""
    return sum(float(np.real(np.sum(_wide(x) * _wide(y)))) for x, y in zip(jax.tree.leaves(xs), jax.tree.leaves(ys)))


def _central_differences(functions, args: tuple, directions) -> list:
    """(f(x + eps v) - f(x - eps v)) / (2 eps) for each f and v, staged into one float64 program
    (a reference, not under test: one run instead of one per function and shift)."""

    def shifted(*xs):
        return [(f(*(x + FD_EPS * t for x, t in zip(xs, v))), f(*(x - FD_EPS * t for x, t in zip(xs, v)))) for f, v in zip(functions, directions)]

    pairs = api(shifted)(*args)
    return [jax.tree.map(lambda p, m: (_wide(p) - _wide(m)) / (2 * FD_EPS), p, m) for p, m in pairs]


def check_case(name: str, args: tuple, order: int, tol, jit: bool) -> None:
    """`ig.lax.<name>`'s derivatives up to `order`, forward and reverse, in the arguments' dtype:
    (a) against central differences of the derivative one order below, computed by irgrad in
    float64 (as jax's check_grads: the jvp itself, the vjp through u . (J v)); (b) against JAX's
    derivatives in float64 along the same directions; (c) with `jit`, the first order under
    ig.jit too (on the interpreter backend for the ops in SLOW_TO_COMPILE)."""
    dtype = args[0].dtype.type
    ig_op, jax_op = getattr(ig.lax, name), getattr(jax.lax, name)
    shapes = [a.shape for a in args]
    in_complex = np.iscomplexobj(args[0])
    out_complex = np.iscomplexobj(jax_op(*args))
    dirs = _directions(np.random.RandomState(zlib.crc32(name.encode())), shapes, np.broadcast_shapes(*shapes), order,
                       in_complex, out_complex)  # fmt: skip
    to64 = _wide
    part = np.float32 if dtype in (np.float32, np.complex64) else np.float64
    whole = np.complex64 if part is np.float32 else np.complex128
    narrow = lambda t: np.asarray(t).astype(whole if np.iscomplexobj(t) else part)  # noqa: E731
    mine = derivatives(ig, ig_op, order, dirs, narrow)
    mine64 = derivatives(ig, ig_op, order, dirs, to64)  # the finite differences' derivatives
    theirs = derivatives(jax, jax_op, order, dirs, to64)
    args64 = tuple(map(to64, args))
    keys = list(mine)
    got = {key: mine[key](*args) for key in keys}  # eagerly, each derivative on its own
    expected = dict(zip(keys, jax.jit(lambda *xs: [theirs[key](*xs) for key in keys])(*args64)))
    # Finite differences of the order below; for float32 arguments, of the first order only (the
    # higher ones are checked in float64 cases and against JAX: the file's time allows no more).
    fd_keys = [key for key in keys if key[1] > 1 and dtype in (np.float64, np.complex128)]
    below = [ig_op] + [mine64[mode, k - 1] for mode, k in fd_keys]
    fds = _central_differences(below, args64, [dirs["fwd"][0]] + [dirs["fwd"][k - 1] for _, k in fd_keys])
    fd = {**dict.fromkeys([("fwd", 1), ("rev", 1)], fds[0]), **dict(zip(fd_keys, fds[1:]))}
    fd_tol, tol = _tol(tol, np.complex128 if in_complex else np.float64), _tol(tol, dtype)
    for (mode, k), value in got.items():
        v, difference = dirs["fwd"][k - 1], fd.get((mode, k))
        if difference is None:
            pass
        elif mode == "fwd":
            _assert_close(value, difference, fd_tol, f"{name} jvp order {k} against finite differences")
        else:
            cotangent = dirs["rev"][k - 1]
            _assert_close(_vdot(value, v), _vdot(cotangent, difference), fd_tol, f"{name} vjp order {k} against finite differences")
        _assert_close(value, expected[mode, k], tol, f"{name} {mode} order {k} against jax")
    if jit:
        jit_backend = "interp" if name in SLOW_TO_COMPILE else None
        first = ig.jit(lambda *xs: (mine["fwd", 1](*xs), mine["rev", 1](*xs)), backend=jit_backend)
        _assert_close(first(*args), (expected["fwd", 1], expected["rev", 1]), tol, f"{name} first order under ig.jit(backend={jit_backend!r})")


def _run(name: str, dtype, check) -> None:
    """A case, or where irgrad is known to differ from JAX, the assertion that it still does."""
    reason = KNOWN_DIFFERENCES.get((name, np.dtype(dtype).name))
    if reason is None:
        check()
    else:
        with pytest.raises(AssertionError):
            check()


# ---- the cases ---------------------------------------------------------------------------------


def _grad_op_cases():
    for i, rec in enumerate(LAX_GRAD_OPS):
        shapes = [s for group in compatible_shapes for s in itertools.combinations_with_replacement(group, rec.nargs)]
        chosen = random.Random(zlib.crc32(f"{rec.name}{i}".encode())).sample(shapes, CASES_PER_RECORD)
        floats = [d for d in (np.float64, np.float32) if d in rec.dtypes]
        complexes = [d for d in rec.dtypes if np.issubdtype(d, np.complexfloating)]
        for j, (shape, dtype) in enumerate([*zip(chosen, floats), *((chosen[0], d) for d in complexes)]):
            sid = "-".join("x".join(map(str, s)) or "scalar" for s in shape)
            marks = ()
            if rec.name in MISSING:
                marks = pytest.mark.skip(reason=MISSING[rec.name])
            elif dtype in complexes and rec.name not in COMPLEX_SUPPORTED:
                marks = pytest.mark.skip(reason=COMPLEX)
            yield pytest.param(rec, shape, dtype, j == 0, id=f"{rec.name}{i}-{sid}-{np.dtype(dtype).name}", marks=marks)


@pytest.mark.parametrize("rec, shapes, dtype, jit", list(_grad_op_cases()))
def test_op_grad(rec, shapes, dtype, jit):
    seed = zlib.crc32(f"{rec.name}{shapes}{np.dtype(dtype).name}".encode())
    rng = rec.rng_factory(np.random.RandomState(seed))
    args = tuple(rng(shape, dtype) for shape in shapes)
    _run(rec.name, dtype, lambda: check_case(rec.name, args, rec.order, rec.tol, jit))


def _special_value_cases():
    for rec in LAX_GRAD_SPECIAL_VALUE_TESTS:
        for j, value in enumerate(rec.values):
            for dtype in grad_float_dtypes:
                jit = j == 0 and dtype is np.float64
                yield pytest.param(rec, value, dtype, jit, id=f"{rec.op}-{value:g}-{np.dtype(dtype).name}")


@pytest.mark.parametrize("rec, value, dtype, jit", list(_special_value_cases()))
def test_op_grad_special_value(rec, value, dtype, jit):
    """testOpGradSpecialValue: order 2, forward and reverse, at the value (the first value of each
    record jitted too, in float64)."""
    args = (np.asarray(value, dtype),)
    _run(rec.op, dtype, lambda: check_case(rec.op, args, 2, rec.tol, jit))


def test_tables_are_jax_s():
    """The port covers JAX's tables: every op name is a jax.lax function, and every one irgrad lacks
    is in MISSING (so the list stays exact)."""
    names = {r.name for r in LAX_GRAD_OPS} | {r.op for r in LAX_GRAD_SPECIAL_VALUE_TESTS}
    assert len(LAX_GRAD_OPS) == 41 and len(LAX_GRAD_SPECIAL_VALUE_TESTS) == 11
    assert all(callable(getattr(jax.lax, n)) for n in names)
    assert {n for n in names if not hasattr(ig.lax, n)} == set(MISSING)
    assert all(name in names for name, _ in KNOWN_DIFFERENCES)


def test_lax_round_and_div_values():
    """lax.round rounds halves away from zero (or to even, method 1); lax.div truncates integers."""
    x = np.array([-2.5, -1.5, -0.5, -0.3, 0.0, 0.5, 1.5, 2.5, 0.49999999999999994, np.inf, -np.inf, 2.0**53 + 2])
    for method in (0, 1):
        for d in (np.float32, np.float64):
            expected = np.asarray(jax.lax.round(x.astype(d), method))
            for f in (ig.lax.round, ig.jit(ig.lax.round, static_argnums=1)):
                got = np.asarray(f(x.astype(d), method))
                np.testing.assert_array_equal(got, expected)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
    a = np.array([7, -7, 7, -7, 6, -6, 0], np.int32)
    b = np.array([2, 2, -2, -2, 3, -3, 5], np.int32)
    for d in (np.int32, np.int64, np.float64):
        expected = np.asarray(jax.lax.div(a.astype(d), b.astype(d)))
        got = ig.lax.div(a.astype(d), b.astype(d))
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize("name", sorted({r.name for r in LAX_GRAD_OPS if any(np.issubdtype(d, np.complexfloating) for d in r.dtypes)} - COMPLEX_SUPPORTED))
def test_complex_cases_skipped_here_are_still_unsupported(name):
    """An op outside COMPLEX_SUPPORTED still refuses complex input; once it takes it, its complex
    cases belong in the table's run."""
    rec = next(r for r in LAX_GRAD_OPS if r.name == name)
    z = np.array([0.5 + 0.25j], np.complex128)
    with pytest.raises(ig.DTypeError, match="complex"):
        getattr(ig.lax, name)(*([z] * rec.nargs))
