"""`ig.trace`: pytrees in and out, argument names from parameter names, abstract arguments,
captured constants, the entry name, and calling a program with mismatched arguments.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import assert_array, check_traced, randint, randn


def _signature(program: ig.Program) -> str:
    return next(line for line in str(program).splitlines() if "func.func @" + program.entry in line)


# ---------------------------------------------------------------------------------------------
# Pytrees in and out
# ---------------------------------------------------------------------------------------------


def test_dict_of_params_in_tuple_out():
    params = {"w": randn(3, 2, seed=1), "b": randn(2, seed=2)}
    x = randn(4, 3, seed=3)

    def predict(params, x):
        y = x @ params["w"] + params["b"]
        return y, {"sum": ig.sum(y), "rows": [y[0], y[-1]]}

    program = ig.trace(predict, params, x)
    y, aux = program(params, x)
    want = x @ params["w"] + params["b"]
    assert_array(y, want, rtol=1e-5)
    assert set(aux) == {"sum", "rows"} and isinstance(aux["rows"], list) and len(aux["rows"]) == 2
    assert_array(aux["sum"], want.sum(), rtol=1e-5)
    assert_array(aux["rows"][1], want[-1], rtol=1e-5)


def test_nested_tuples_and_lists_in():
    a, b, c, d = (randn(2, seed=i) for i in range(4))

    def f(pair, rest):
        (u, v), [w, (z,)] = pair, rest
        return u + v * w - z

    program = ig.trace(f, (a, b), [c, (d,)])
    assert_array(program((a, b), [c, (d,)]), a + b * c - d, rtol=1e-6)


def test_none_leaves_and_scalars_out():
    x = randn(3, seed=5)
    out = ig.trace(lambda x: (None, x.sum(), {"k": None}), x)(x)
    assert out[0] is None and out[2] == {"k": None}
    assert_array(out[1], x.sum(), rtol=1e-6)


def test_dict_keys_are_flattened_sorted():
    leaves, tree = ig.tree_flatten({"b": 1, "a": (2, [3]), "c": None})
    assert leaves == [2, 3, 1]
    assert ig.tree_unflatten(tree, leaves) == {"a": (2, [3]), "b": 1, "c": None}
    assert ig.tree_map(lambda u, v: u + v, {"x": 1, "y": (2,)}, {"x": 10, "y": (20,)}) == {"x": 11, "y": (22,)}


def test_argument_names_come_from_parameter_names():
    params = {"w": randn(3, 2, seed=6), "layers": [{"b": randn(2, seed=7)}]}

    def model(params, inputs, labels):
        return ig.sum(inputs @ params["w"] + params["layers"][0]["b"]) + ig.sum(labels)

    program = ig.trace(model, params, randn(4, 3, seed=8), randint(0, 2, 4, seed=9))
    sig = _signature(program)
    assert "%params_layers_0_b: tensor<2xf32>" in sig
    assert "%params_w: tensor<3x2xf32>" in sig
    assert "%inputs: tensor<4x3xf32>" in sig
    assert "%labels: tensor<4xi32>" in sig
    # The flat order: dict keys sorted ("layers" < "w"), then the next arguments.
    assert sig.index("%params_layers_0_b") < sig.index("%params_w") < sig.index("%inputs")


def test_names_that_are_not_valid_ssa_names_are_dropped():
    """Non-ASCII or spaced names (valid Python, invalid MLIR) leave the value unnamed."""
    x = randn(2, seed=24)
    program = ig.trace(lambda α, p: α * p["layer 1"] + p["layer-2"], x, {"layer 1": x, "layer-2": x})
    sig = _signature(program)
    assert "%0: tensor<2xf32>" in sig and "%p_layer-2: tensor<2xf32>" in sig
    assert "α" not in str(program) and "layer 1" not in str(program)
    assert_array(program(x, {"layer 1": x, "layer-2": x}), x * x + x)


def test_entry_name():
    def my_model(x):
        return x

    x = randn(2, seed=10)
    assert ig.trace(my_model, x).entry == "my_model"
    assert ig.trace(lambda x: x, x).entry == "main"
    assert "func.func @main(" in str(ig.trace(lambda x: x * 2, x))


def test_shape_dtype_arguments():
    program = ig.trace(lambda x, n: x * n.astype(ig.float32), ig.ShapeDtype((2, 3)), ig.ShapeDtype((), ig.int32))
    assert [(a.shape, a.dtype) for a in program.in_avals] == [((2, 3), ig.float32), ((), ig.int32)]
    assert [(a.shape, a.dtype) for a in program.out_avals] == [((2, 3), ig.float32)]
    x = randn(2, 3, seed=11)
    assert_array(program(x, np.array(3, np.int32)), x * 3)
    assert "tensor<2x3xf32>" in _signature(program)


def test_shape_dtype_accepts_names_and_python_types():
    assert ig.ShapeDtype((1,), "float64").dtype == ig.float64
    assert ig.ShapeDtype((1,), float).dtype == ig.float32
    assert ig.ShapeDtype((1,), int).dtype == ig.int32
    assert ig.ShapeDtype((1,), "bfloat16").dtype == ig.bfloat16
    assert ig.ShapeDtype((1,), np.complex64).dtype == ig.complex64
    with pytest.raises(ig.DTypeError, match="not supported"):
        ig.ShapeDtype((1,), np.uint64)


def test_python_scalar_arguments_are_rank_0():
    program = ig.trace(lambda a, b: a * b, 2.0, 3)
    assert [(a.shape, a.dtype) for a in program.in_avals] == [((), ig.float32), ((), ig.int32)]
    assert_array(program(2.0, 3), np.float32(6.0))


def test_narrow_int_arrays_widen_and_unsupported_dtypes_are_rejected():
    x8 = np.array([1, -2, 3], np.int8)
    assert_array(ig.trace(lambda x: x + 1, x8)(x8), np.array([2, -1, 4], np.int32))
    with pytest.raises(ig.DTypeError, match="uint32"):
        ig.trace(lambda x: x, np.zeros(2, np.uint32))


# ---------------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------------


def test_captured_numpy_arrays_and_scalars_become_constants():
    table = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    scale = 0.5

    def f(x):
        return x @ table * scale + np.ones(2, np.float32)

    x = randn(3, 2, seed=12)
    program = ig.trace(f, x)
    text = str(program)
    assert "nn.constant dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>" in text
    assert "nn.full 0.5 : tensor<3x2xf32>" in text
    assert "nn.full 1.0 : tensor<2xf32>" in text  # a splat array is an nn.full, not a dense payload
    assert_array(program(x), x @ table * 0.5 + 1, rtol=1e-6)


def test_numpy_scalars_and_0d_arrays_keep_rank_0():
    """A captured 0-d array (or numpy scalar) is a rank-0 constant, not shape (1,)."""
    s = np.array(1.5, np.float32)
    for const in (np.float64(2.0), np.array(np.nan, np.float32), np.array(-3, np.int32)):
        got = ig.trace(lambda a: a * const, s)(s)
        assert got.shape == ()
        np.testing.assert_allclose(got, 1.5 * float(const))
    assert "nn.full -3 : tensor<i32>" in str(ig.trace(lambda: np.array(-3, np.int32) + 0))


def test_splat_constants_become_full_nan_and_inf_included():
    """Non-finite splats print as `nn.full nan` (a dense payload would print them as hex)."""
    for value, text in [(np.float32(np.inf), "nn.full inf : tensor<f32>"),
                        (np.full(3, np.nan, np.float32), "nn.full nan : tensor<3xf32>"),
                        (np.full((2, 2), -np.inf), "nn.full -inf : tensor<2x2xf64>"),
                        (np.array([7], np.int64), "nn.full 7 : tensor<1xi64>")]:
        program = ig.trace(lambda: value)
        assert text in str(program)
        assert_array(program(), value)


def test_constant_outputs():
    program = ig.trace(lambda: (np.arange(3, dtype=np.int32), 2.5, True))
    a, b, c = program()
    assert_array(a, np.arange(3, dtype=np.int32))
    assert_array(b, np.float32(2.5))
    assert_array(c, np.bool_(True))


def test_broadcasting_is_explicit_in_the_ir():
    text = str(ig.trace(lambda x, b: x + b, randn(3, 4, seed=14), randn(4, seed=15)))
    assert "nn.broadcast_in_dim %b dims = [1] : tensor<4xf32> -> tensor<3x4xf32>" in text
    text = str(ig.trace(lambda x, i: x + i, randn(3, seed=16), randint(0, 3, 3, seed=17)))
    assert "nn.convert %i : tensor<3xi32> -> tensor<3xf32>" in text


# ---------------------------------------------------------------------------------------------
# Calling a program
# ---------------------------------------------------------------------------------------------


def test_calling_with_a_different_structure_is_a_type_error():
    program = ig.trace(lambda p: p["a"] * 2, {"a": randn(2, seed=18)})
    with pytest.raises(TypeError, match="structure"):
        program({"b": randn(2, seed=18)})
    with pytest.raises(TypeError, match="structure"):
        program(randn(2, seed=18))


def test_calling_with_a_wrong_shape_or_dtype_is_a_value_error():
    program = ig.trace(lambda x: x * 2, randn(3, seed=25))
    with pytest.raises(ValueError, match=r"argument #0.*tensor<3xf32>"):
        program(randn(4, seed=25))
    with pytest.raises(ValueError, match="argument #0"):
        program(randint(0, 3, 3, seed=25))


def test_program_can_be_called_repeatedly_with_new_values():
    program = ig.trace(lambda x: ig.exp(x) - 1, randn(4, seed=19))
    for seed in range(3):
        x = randn(4, seed=seed)
        assert_array(program(x), np.exp(x) - 1, rtol=1e-6)


def test_tracing_is_reentrant_inside_a_trace():
    """ig.trace called while tracing builds a separate program that captures nothing."""
    inner_programs = []

    def outer(x):
        inner_programs.append(ig.trace(lambda y: y * 3, np.ones(2, np.float32)))
        return x + 1

    x = randn(2, seed=20)
    assert_array(ig.trace(outer, x)(x), x + 1)
    assert_array(inner_programs[0](x), x * 3)


def test_leaked_tracer_used_later_is_a_clear_error():
    leaked = []

    def f(x):
        leaked.append(x)
        return x

    x = randn(2, seed=21)
    ig.trace(f, x)
    with pytest.raises(Exception, match="outside the trace|escaped"):
        ig.add(leaked[0], 1.0)
    with pytest.raises(Exception, match="escaped|outside the trace"):
        ig.trace(lambda y: y + leaked[0], x)


def test_source_locations_in_the_ir():
    x = randn(2, seed=22)
    program = ig.trace(lambda a: ig.exp(a) * 2, x)
    text = program.as_text(debuginfo=True)
    line = test_source_locations_in_the_ir.__code__.co_firstlineno + 2
    assert re.search(rf'nn\.exp .* loc\("{re.escape(__file__)}":{line}:\d+\)', text), text
    assert "loc(" not in str(program)


def test_check_traced_helper_compares_dtype():
    with pytest.raises(AssertionError, match="dtype"):
        check_traced(lambda a: a, randn(2, seed=23).astype(np.float64), randn(2, seed=23))
