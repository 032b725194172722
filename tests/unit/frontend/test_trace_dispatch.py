"""`ig.trace` is numpy's matrix trace on arrays and the tracer on callables; numpy integer
scalars are static arguments in eager mode, as Python ints are (`ig.split(x, np.int64(2))`)."""

import numpy as np
import pytest

import irgrad as ig


@pytest.mark.parametrize("offset, axis1, axis2", [(0, 0, 1), (1, 1, 2), (-1, 0, 2), (2, 2, 1)])
def test_trace_of_an_array_is_numpys(offset, axis1, axis2):
    a = np.random.default_rng(0).normal(size=(3, 4, 5))
    np.testing.assert_allclose(ig.trace(a, offset, axis1, axis2), np.trace(a, offset, axis1, axis2), rtol=1e-14)
    np.testing.assert_allclose(
        ig.jit(lambda a: ig.trace(a, offset=offset, axis1=axis1, axis2=axis2))(a), np.trace(a, offset, axis1, axis2), rtol=1e-14
    )
    assert ig.trace(np.eye(3, dtype=np.int32)).dtype == np.int32
    np.testing.assert_array_equal(ig.grad(lambda m: ig.trace(m))(np.ones((3, 3))), np.eye(3))


def test_trace_of_a_callable_is_a_program():
    program = ig.trace(lambda x: x * 2.0, np.ones(3, np.float32))
    assert isinstance(program, ig.Program) and "nn.mul" in str(program)
    assert str(ig.make_program(lambda x: x * 2.0, np.ones(3, np.float32))) == str(program)


def test_numpy_integer_scalars_are_static_in_eager_mode():
    x = np.arange(6.0)
    parts = ig.split(x, np.int64(3))
    assert [p.tolist() for p in parts] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    np.testing.assert_array_equal(ig.repeat(np.arange(3.0), np.int32(2)), np.repeat(np.arange(3.0), 2))
    np.testing.assert_array_equal(ig.sum(np.ones((2, 3)), axis=np.int64(1)), [3.0, 3.0])
    # As data they keep their dtype, exactly.
    got = ig.add(np.arange(2, dtype=np.int64), np.int64(2**40))
    assert got.dtype == np.int64 and got.tolist() == [2**40, 2**40 + 1]
