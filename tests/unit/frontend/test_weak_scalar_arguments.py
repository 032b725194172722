"""Python scalars passed to `ig.jit` are weakly typed at full width (JAX's weak_type with x64):
they reach the arrays they meet at full precision and take those arrays' dtype; a result made
of weak values alone leaves at the default dtype (float32, int32), as eager mode gives it."""

import numpy as np
import pytest

import irgrad as ig

C = 3.14159265358979  # not a float32 value: through float32 it is off by 8.7e-8

BINARY = {
    "add": (lambda c, x: c + x, np.add),
    "subtract": (lambda c, x: c - x, np.subtract),
    "multiply": (lambda c, x: c * x, np.multiply),
    "divide": (lambda c, x: c / x, np.divide),
    "power": (lambda c, x: c**x, np.power),
    "remainder": (lambda c, x: c % x, np.remainder),
    "minimum": (ig.minimum, np.minimum),
    "fmax": (ig.fmax, np.fmax),
    "arctan2": (ig.arctan2, np.arctan2),
    "hypot": (ig.hypot, np.hypot),
    "copysign": (ig.copysign, np.copysign),
    "outer": (ig.outer, np.outer),
    "kron": (ig.kron, np.kron),
    "logaddexp2": (ig.logaddexp2, np.logaddexp2),
    "float_power": (ig.float_power, np.float_power),
    "floor_divide": (lambda c, x: ig.divmod(c, x)[0], lambda c, x: np.divmod(c, x)[0]),
    "scaled_then_added": (lambda c, x: (c * 2.0 - 1.0) + x, lambda c, x: (c * 2.0 - 1.0) + x),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_a_python_float_reaches_a_float64_array_exactly(name):
    fn, reference = BINARY[name]
    x = np.random.default_rng(0).uniform(0.5, 2.0, size=4)
    got = ig.jit(fn)(C, x)
    want = reference(C, x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_a_python_float_next_to_a_0d_float64_array_is_float64(name):
    """No broadcast or conversion is needed there (copysign once left the weak value weak, and
    so float32); JAX's lax_numpy_operators_test records meet this case with x64."""
    fn, reference = BINARY[name]
    x = np.asarray(1.25)
    got = ig.jit(fn)(C, x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, reference(C, x), rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", [np.float16, ig.bfloat16, np.float32, np.float64])
def test_a_python_float_takes_the_arrays_float_dtype(dtype):
    x = np.ones(3, dtype=dtype)
    assert ig.jit(lambda c, x: c + x)(C, x).dtype == np.dtype(dtype)
    assert ig.jit(lambda c, x: c * 2.0 + x)(C, x).dtype == np.dtype(dtype)
    # Rounded once, from the exact value, to the array's dtype.
    assert ig.jit(lambda c, x: c + x)(C, np.zeros(1, dtype))[0] == np.asarray(C, dtype)


def test_python_ints_are_exact_at_int64_and_take_narrower_int_dtypes():
    big = 2**40 + 1
    got = ig.jit(lambda c, x: c + x)(big, np.arange(3, dtype=np.int64))
    assert got.dtype == np.int64 and got.tolist() == [big, big + 1, big + 2]
    assert ig.jit(lambda c, x: c | x)(big, np.zeros(1, np.int64)).tolist() == [big]
    assert ig.jit(lambda c, x: c + x)(3, np.arange(3, dtype=np.int32)).dtype == np.int32
    assert ig.jit(lambda c, x: c * x)(3, np.ones(2, np.float32)).dtype == np.float32


def test_weak_values_alone_leave_at_the_default_dtype_as_in_eager_mode():
    for fn in (lambda c: c, lambda c: c * 2.0, lambda c: ig.sin(c) + 1.0):
        assert ig.jit(fn)(C).dtype == ig.asarray(fn(C)).dtype == np.float32
    assert ig.jit(lambda n: n + 1)(5).dtype == np.int32
    # Computed at full width, rounded once at the end.
    assert ig.jit(lambda c: c * 3.0 - 2.0 * c)(C) == np.float32(C)


def test_the_gradient_of_a_weak_argument_is_weak():
    x32 = np.linspace(0.0, 1.0, 3, dtype=np.float32)
    f = lambda c, x: ig.sum(c * x)
    assert ig.jit(ig.grad(f))(C, x32).dtype == ig.grad(f)(C, x32).dtype == np.float32
    g64 = ig.jit(ig.grad(lambda c, x: ig.sum(ig.sin(c * x))))(C, np.linspace(0.0, 1.0, 3))
    np.testing.assert_allclose(g64, np.sum(np.linspace(0.0, 1.0, 3) * np.cos(C * np.linspace(0.0, 1.0, 3))), rtol=1e-14)
    assert g64.dtype == np.float32  # weak, alone at the output: the default dtype


def test_scalar_values_share_one_compile_and_kinds_do_not():
    f = ig.jit(lambda c, x: c + x)
    x = np.zeros(2)
    f(1.5, x)
    f(-2.25, x)
    assert len(f._programs) == 1
    f(3, x)  # an int is another signature (int64 weak)
    f(True, x)  # a bool is strong
    assert len(f._programs) == 3
    np.testing.assert_array_equal(f(True, x), [1.0, 1.0])
