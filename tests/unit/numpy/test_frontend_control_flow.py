"""`ig.cond`, `ig.fori_loop`, `ig.while_loop`: traced to scf, run against plain Python loops;
closures over outer traced values; and the errors for Python control flow on traced values,
mismatched carries and values leaked out of bodies.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import assert_array, check, check_traced, randint, randn

X = randn(3, seed=1)

# ---------------------------------------------------------------------------------------------
# cond
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("x", [X, -np.abs(X) - 1], ids=["true", "false"])
def test_cond_traced_predicate(x):
    def f(x):
        return ig.cond(ig.sum(x) > 0, lambda a: ig.exp(a), lambda a: a * 2.0, x)

    want = np.exp(x) if x.sum() > 0 else x * 2
    check_traced(f, want, x, rtol=1e-6)
    assert "scf.if" in str(ig.trace(f, x))


def test_cond_with_pytree_operands_and_results():
    def f(p, flag):
        return ig.cond(flag, lambda q: {"a": q[0] + 1, "b": (q[1],)}, lambda q: {"a": q[0] - 1, "b": (-q[1],)}, p)

    p = (randn(2, seed=2), randint(0, 5, 3, seed=3))
    for flag in (True, False):
        out = ig.trace(f, p, np.array(flag))(p, np.array(flag))
        sign = 1 if flag else -1
        assert_array(out["a"], p[0] + sign)
        assert_array(out["b"][0], sign * p[1])


def test_cond_integer_predicate_means_nonzero():
    def f(x, n):
        return ig.cond(n, lambda: x + 1.0, lambda: x - 1.0)

    for n in (0, 3, -2):
        assert_array(ig.trace(f, X, np.array(n, np.int32))(X, np.array(n, np.int32)), X + (1 if n else -1))


def test_cond_python_bool_predicate_picks_a_branch_at_trace_time():
    def f(x):
        return ig.cond(True, lambda a: a + 1, lambda a: a.astype(ig.int32), x)  # branches may differ

    program = ig.trace(f, X)
    assert "scf.if" not in str(program)
    assert_array(program(X), X + 1)


def test_cond_eager():
    out = ig.cond(np.array(True), lambda a: a * 3.0, lambda a: a, X)
    assert_array(out, X * 3)


def test_cond_closes_over_outer_traced_values():
    def f(x, y):
        scale = ig.sum(y)
        return ig.cond(scale > 0, lambda: x * scale, lambda: x - y)

    y = randn(3, seed=4)
    want = X * y.sum() if y.sum() > 0 else X - y
    check_traced(f, want, X, y, rtol=1e-6)


def test_cond_weak_scalar_results_follow_the_true_branch():
    def f(x):
        return ig.cond(ig.sum(x) > 0, lambda: ig.sum(x), lambda: ig.zeros(()))

    check_traced(f, np.float32(X.sum()) if X.sum() > 0 else np.float32(0), X)


def test_cond_weak_scalar_branch_takes_the_other_branchs_dtype():
    """JAX's weak typing: a Python scalar result joins the other branch's dtype where it fits."""
    x64 = X.astype(np.float64)
    for flag, want in [(True, np.float64(x64.sum())), (False, np.float64(0.0))]:
        p = np.array(flag)
        assert_array(ig.trace(lambda x, p: ig.cond(p, lambda: ig.sum(x), lambda: 0.0), x64, p)(x64, p), want)
        assert_array(ig.trace(lambda x, p: ig.cond(p, lambda: 0, lambda: ig.sum(x)), x64, p)(x64, p),
                     np.float64(0.0) if flag else np.float64(x64.sum()))
    p = np.array(False)
    assert_array(ig.trace(lambda p: ig.cond(p, lambda: 1, lambda: 2.5), p)(p), np.float32(2.5))
    assert_array(ig.trace(lambda p: ig.cond(p, lambda: 1, lambda: 2), p)(p), np.int32(2))
    i = randint(0, 3, 3, seed=9)
    with pytest.raises(ig.DTypeError, match="float32, expected int32"):
        ig.trace(lambda i: ig.cond(i[0] > 0, lambda: ig.sum(i), lambda: 2.5), i)  # a float does not fit


def test_loop_bodies_returning_weak_scalars_keep_the_carry_dtype():
    s64 = np.array(-3.0)
    assert_array(ig.trace(lambda s: ig.fori_loop(0, 2, lambda i, c: 0.5, s), s64)(s64), np.float64(0.5))
    assert_array(ig.trace(lambda s: ig.while_loop(lambda c: c < 2.0, lambda c: 5.0, s), s64)(s64), np.float64(5.0))
    with pytest.raises(ig.DTypeError, match="float32, expected int32"):
        ig.trace(lambda i: ig.fori_loop(0, 2, lambda k, c: 0.5, i), np.array(1, np.int32))


def test_cond_nested():
    def f(x):
        return ig.cond(x[0] > 0, lambda: ig.cond(x[1] > 0, lambda: x * 1.0, lambda: x * 2.0),
                       lambda: x * 3.0)

    for seed in range(4):
        x = randn(2, seed=seed)
        factor = (1 if x[1] > 0 else 2) if x[0] > 0 else 3
        check_traced(f, x * factor, x)


def test_cond_branch_mismatch_errors():
    with pytest.raises(ig.ShapeError, match=r"cond: false_fn output 0 has shape \(2,\), expected \(3,\)"):
        ig.trace(lambda x: ig.cond(x[0] > 0, lambda: x, lambda: x[:2]), X)
    with pytest.raises(ig.DTypeError, match="cond: false_fn output 0 has dtype int32, expected float32"):
        ig.trace(lambda x: ig.cond(x[0] > 0, lambda: x, lambda: x.astype(ig.int32)), X)
    with pytest.raises(ig.ShapeError, match="structure"):
        ig.trace(lambda x: ig.cond(x[0] > 0, lambda: (x, x), lambda: x), X)


def test_cond_predicate_must_be_a_scalar():
    with pytest.raises(ig.ShapeError, match="scalar"):
        ig.trace(lambda x: ig.cond(x > 0, lambda: x, lambda: -x), X)


# ---------------------------------------------------------------------------------------------
# fori_loop
# ---------------------------------------------------------------------------------------------


def _poly(x, n):
    """sum_{i < n} x * i + 1, in Python: the loops' oracle."""
    acc = np.zeros_like(x)
    for i in range(n):
        acc = acc * 0.5 + x * np.float32(i) + 1
    return acc


def _poly_body(x):
    return lambda i, acc: acc * 0.5 + x * i.astype(ig.float32) + 1.0


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_fori_loop_static_bounds(n):
    check_traced(lambda x: ig.fori_loop(0, n, _poly_body(x), ig.zeros_like(x)), _poly(X, n), X, rtol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_fori_loop_traced_upper_bound(n):
    program = ig.trace(lambda x, n: ig.fori_loop(0, n, _poly_body(x), ig.zeros_like(x)), X, np.array(0, np.int32))
    assert_array(program(X, np.array(n, np.int32)), _poly(X, n), rtol=1e-6)


def test_fori_loop_traced_lower_bound_and_counter_values():
    def f(lo, hi):
        return ig.fori_loop(lo, hi, lambda i, acc: acc * 10 + i, ig.zeros((), ig.int32))

    program = ig.trace(f, np.array(0, np.int32), np.array(0, np.int32))
    assert_array(program(np.array(2, np.int32), np.array(5, np.int32)), np.int32(234))
    assert_array(program(np.array(5, np.int32), np.array(2, np.int32)), np.int32(0))  # empty range


def test_fori_loop_counter_is_int32_scalar():
    seen = []
    ig.trace(lambda x: ig.fori_loop(0, 3, lambda i, c: (seen.append((i.shape, i.dtype)), c)[1], x), X)
    assert seen == [((), ig.int32)]


def test_fori_loop_pytree_carry():
    def f(x):
        def body(i, carry):
            total, hist = carry["total"], carry["hist"]
            return {"total": total + x[i], "hist": (hist[0] * 2,)}

        return ig.fori_loop(0, 3, body, {"total": ig.zeros(()), "hist": (ig.ones((2,), ig.int32),)})

    out = ig.trace(f, X)(X)
    assert_array(out["total"], np.float32(X.sum()), rtol=1e-6)
    assert_array(out["hist"][0], np.array([8, 8], np.int32))


def test_fori_loop_closes_over_outer_traced_values():
    w = randn(3, 3, seed=5)

    def f(x, w):
        b = ig.tanh(x)  # an outer value computed before the loop
        return ig.fori_loop(0, 3, lambda i, h: ig.tanh(h @ w + b), x)

    h = X
    for _ in range(3):
        h = np.tanh(h @ w + np.tanh(X))
    check_traced(f, h, X, w, rtol=1e-5)


def test_fori_loop_weak_scalar_init_is_rank_0():
    check_traced(lambda x: ig.fori_loop(0, 4, lambda i, c: c + ig.sum(x), 0.0), np.float32(4 * X.sum()), X,
                 rtol=1e-6)


def test_nested_loops():
    def f(x):
        def outer(i, acc):
            return ig.fori_loop(0, i + 1, lambda j, a: a + x[j], acc)

        return ig.fori_loop(0, 3, outer, ig.zeros(()))

    want = sum(X[: i + 1].sum() for i in range(3))
    check_traced(f, np.float32(want), X, rtol=1e-6)


def test_fori_loop_eager():
    out = ig.fori_loop(0, 3, lambda i, c: c * 2.0, X)
    assert_array(out, X * 8)


def test_fori_loop_body_mismatch_errors():
    with pytest.raises(ig.ShapeError, match=r"fori_loop: body_fn output 0 has shape \(1, 3\), expected \(3,\)"):
        ig.trace(lambda x: ig.fori_loop(0, 2, lambda i, c: c[None], x), X)
    with pytest.raises(ig.DTypeError, match="fori_loop: body_fn output 0 has dtype float64, expected float32"):
        ig.trace(lambda x: ig.fori_loop(0, 2, lambda i, c: c.astype(ig.float64), x), X)
    with pytest.raises(ig.ShapeError, match="structure"):
        ig.trace(lambda x: ig.fori_loop(0, 2, lambda i, c: (c, c), x), X)


def test_fori_loop_body_error_names_the_users_line():
    with pytest.raises(ig.DTypeError) as info:
        ig.trace(lambda x: ig.fori_loop(0, 2, lambda i, c: c.astype(ig.int32), x), X)
    line = test_fori_loop_body_error_names_the_users_line.__code__.co_firstlineno + 2
    assert f"(at {__file__}:{line})" in str(info.value)


# ---------------------------------------------------------------------------------------------
# while_loop
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("start", [0.5, 3.0, 200.0])
def test_while_loop_data_dependent_trip_count(start):
    def f(x0):
        return ig.while_loop(lambda c: c[0] < 100.0, lambda c: (c[0] * 3.0, c[1] + 1), (x0, 0))

    v, k = start, 0
    while v < 100:
        v, k = v * 3, k + 1
    x0 = np.array(start, np.float32)
    program = ig.trace(f, x0)
    assert "scf.while" in str(program)
    got_v, got_k = program(x0)
    assert_array(got_v, np.float32(v), rtol=1e-6)
    assert_array(got_k, np.int32(k))


def test_while_loop_collatz():
    def steps(n):
        def body(c):
            n, k = c
            return ig.where((n // 2) * 2 == n, n // 2, 3 * n + 1), k + 1  # no `%` on tracers

        return ig.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]

    program = ig.trace(steps, np.array(1, np.int32))
    for n, want in [(1, 0), (6, 8), (27, 111)]:
        assert_array(program(np.array(n, np.int32)), np.int32(want))


def test_while_loop_closes_over_outer_traced_values():
    def f(x, limit):
        return ig.while_loop(lambda c: ig.sum(c) < limit, lambda c: c + x, x)

    x, limit = np.abs(X) + 0.1, np.array(5.0, np.float32)
    c = x.copy()
    while c.sum() < limit:
        c = c + x
    check_traced(f, c, x, limit, rtol=1e-6)


def test_while_loop_eager():
    assert_array(ig.while_loop(lambda c: c < 10, lambda c: c + 3, np.array(1, np.int32)), np.int32(10))


def test_while_loop_errors():
    with pytest.raises(ig.DTypeError, match="cond_fn must return a bool scalar"):
        ig.trace(lambda x: ig.while_loop(lambda c: c, lambda c: c, x), X)
    with pytest.raises(ig.ShapeError, match=r"while_loop: body_fn output 0 has shape \(\), expected \(3,\)"):
        ig.trace(lambda x: ig.while_loop(lambda c: ig.sum(c) < 1, lambda c: ig.sum(c), x), X)
    with pytest.raises(ig.DTypeError, match="while_loop: body_fn output 0 has dtype int32, expected float32"):
        ig.trace(lambda x: ig.while_loop(lambda c: ig.sum(c) < 1, lambda c: c.astype(ig.int32), x), X)


# ---------------------------------------------------------------------------------------------
# Python control flow on traced values; leaked tracers
# ---------------------------------------------------------------------------------------------


def test_python_if_on_a_traced_value_raises_concretization_error():
    def f(x):
        if ig.sum(x) > 0:
            return x
        return -x

    with pytest.raises(ig.ConcretizationError, match="ig.cond") as info:
        ig.trace(f, X)
    assert isinstance(info.value, TypeError)
    assert "ig.fori_loop" in str(info.value) and "ig.while_loop" in str(info.value)


@pytest.mark.parametrize(
    "use",
    [lambda t: bool(t), lambda t: int(t), lambda t: float(t), lambda t: [0, 1, 2][t], lambda t: range(t),
     lambda t: np.asarray(t)],
    ids=["bool", "int", "float", "index", "range", "asarray"],
)
def test_concrete_uses_of_traced_values(use):
    with pytest.raises(ig.ConcretizationError):
        ig.trace(lambda n: use(n), np.array(1, np.int32))


def test_python_while_on_a_traced_value():
    def f(x):
        while ig.sum(x) < 10:
            x = x * 2
        return x

    with pytest.raises(ig.ConcretizationError, match="while"):
        ig.trace(f, X)


def test_tracer_leaked_out_of_a_loop_body_is_a_clear_error():
    def f(x):
        leaked = []

        def body(i, c):
            leaked.append(c * 2)
            return c

        ig.fori_loop(0, 2, body, x)
        return leaked[0] + 1

    with pytest.raises(ig.ConcretizationError, match="control-flow body") as info:
        ig.trace(f, X)
    assert "return it from the body" in str(info.value)


def test_tracer_leaked_out_of_a_cond_branch_is_a_clear_error():
    def f(x):
        leaked = []
        ig.cond(x[0] > 0, lambda: leaked.append(x * 2) or x, lambda: x)
        return leaked[0]

    with pytest.raises(ig.ConcretizationError, match="control-flow body"):
        ig.trace(f, X)


def test_tracer_leaked_out_of_a_while_cond_is_a_clear_error():
    def f(x):
        leaked = []

        def cond_fn(c):
            s = ig.sum(c)
            leaked.append(s)
            return s < 1

        ig.while_loop(cond_fn, lambda c: c + 1, x)
        return leaked[0] * 2

    with pytest.raises(ig.ConcretizationError, match="control-flow body"):
        ig.trace(f, X)
