"""Differentiation through scf.for / scf.if / scf.while and tensor element access, checked numerically.

Each case is an `@f` in MLIR text, checked like every rule (tests/unit/_autodiff_harness.py) in float64
through the reference interpreter: vjp and jvp against central differences along random directions, u.(J v)
against (J^T u).v, and at second order (jvp of grad, grad of grad, grad of jvp) against finite differences
of gradients. Loops run 0, 1, 2 and many times, with constant bounds (a tape), dynamic bounds and while
loops (recomputation). Then the structure of the generated IR (tape or not, never unrolled, only
differentiable ops), and programs through the Python API: an RNN with `ig.fori_loop` and `xs[i]`, a
`while_loop` with a data-dependent trip count, grad of grad through a loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import IndexType, ModuleOp, TensorType, f64, i1
from xdsl.ir import Operation
from xdsl.parser import Parser

import irgrad as ig
from _autodiff_harness import Case, S, T, check_first_order, check_second_order, fixed, run_pass
from irgrad.backends.interpreter import run_function
from irgrad.dialects import nn
from irgrad.context import make_context


def for_loop(trips: int, lb: int = 0, step: int = 1) -> str:
    """h <- tanh(h * w) + w, `trips` times, with the outer value %w used inside."""
    ub = lb + trips * step
    return f"""
func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {{
  %lb = arith.constant {lb} : index
  %ub = arith.constant {ub} : index
  %st = arith.constant {step} : index
  %r = scf.for %i = %lb to %ub step %st iter_args(%h = %x) -> (tensor<3xf64>) {{
    %a = nn.mul %h, %w : tensor<3xf64>
    %t = nn.tanh %a : tensor<3xf64>
    %s = nn.add %t, %w : tensor<3xf64>
    scf.yield %s : tensor<3xf64>
  }}
  func.return %r : tensor<3xf64>
}}
"""


DYNAMIC_FOR = """
func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>, %n: index) -> tensor<3xf64> {
  %lb = arith.constant 1 : index
  %st = arith.constant 2 : index
  %r = scf.for %i = %lb to %n step %st iter_args(%h = %x) -> (tensor<3xf64>) {
    %a = nn.mul %h, %w : tensor<3xf64>
    %t = nn.sin %a : tensor<3xf64>
    %s = nn.add %t, %h : tensor<3xf64>
    scf.yield %s : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}
"""

# The induction variable is an i32 and feeds the arithmetic; scalar carried values (a tape of scalars).
I32_INDUCTION = """
func.func @f(%x: f64, %w: f64) -> f64 {
  %lb = arith.constant 1 : i32
  %ub = arith.constant 8 : i32
  %st = arith.constant 2 : i32
  %r = scf.for %i = %lb to %ub step %st iter_args(%h = %x) -> (f64) : i32 {
    %fi = arith.sitofp %i : i32 to f64
    %a = arith.mulf %h, %fi : f64
    %b = arith.mulf %a, %w : f64
    %s = math.sin %b : f64
    %y = arith.addf %s, %h : f64
    scf.yield %y : f64
  }
  func.return %r : f64
}
"""

# Two float carried values feeding each other, and an index counter carried beside them.
SEVERAL_CARRIES = """
func.func @f(%x: tensor<3xf64>, %y: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a, %b, %k = scf.for %i = %c0 to %c4 step %c1 iter_args(%p = %x, %q = %y, %j = %c0) -> (tensor<3xf64>, tensor<3xf64>, index) {
    %m = nn.mul %p, %q : tensor<3xf64>
    %c = nn.cos %p : tensor<3xf64>
    %n = nn.add %q, %c : tensor<3xf64>
    %j1 = arith.addi %j, %c1 : index
    scf.yield %m, %n, %j1 : tensor<3xf64>, tensor<3xf64>, index
  }
  func.return %a, %b : tensor<3xf64>, tensor<3xf64>
}
"""

# An index counter carried beside h and used to pick the row xs[j]: the tape holds index values too.
INDEX_CARRY = """
func.func @f(%xs: tensor<4x3xf64>, %h0: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r, %k = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0, %j = %c0) -> (tensor<3xf64>, index) {
    %row = nn.dynamic_slice %xs[%j, %c0] sizes = [1, 3] : tensor<4x3xf64>, index, index -> tensor<1x3xf64>
    %x = nn.reshape %row : tensor<1x3xf64> -> tensor<3xf64>
    %m = nn.mul %h, %x : tensor<3xf64>
    %s = nn.sin %m : tensor<3xf64>
    %j1 = arith.addi %j, %c1 : index
    scf.yield %s, %j1 : tensor<3xf64>, index
  }
  func.return %r : tensor<3xf64>
}
"""

# A carried value that starts as a constant and becomes varied through the outer %w.
BECOMES_VARIED = """
func.func @f(%w: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = nn.full 0.5 : tensor<3xf64>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %zero) -> (tensor<3xf64>) {
    %a = nn.mul %h, %w : tensor<3xf64>
    %s = nn.sin %a : tensor<3xf64>
    %t = nn.add %s, %w : tensor<3xf64>
    scf.yield %t : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}
"""

NESTED = """
func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %inner = scf.for %j = %c0 to %c2 step %c1 iter_args(%g = %h) -> (tensor<3xf64>) {
      %a = nn.mul %g, %w : tensor<3xf64>
      %t = nn.tanh %a : tensor<3xf64>
      %s = nn.add %t, %h : tensor<3xf64>
      scf.yield %s : tensor<3xf64>
    }
    %m = nn.mul %inner, %h : tensor<3xf64>
    scf.yield %m : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}
"""

# The branch taken changes between iterations: sum(h) > 0 picks sin(2h) * w, else h * h - w.
IF_IN_FOR = """
func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = nn.full 0.0 : tensor<f64>
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %s = nn.reduce_sum %h axes = [0] : tensor<3xf64> -> tensor<f64>
    %p = nn.compare gt, %s, %zero : tensor<f64>
    %c = tensor.extract %p[] : tensor<i1>
    %y = scf.if %c -> (tensor<3xf64>) {
      %d = nn.add %h, %h : tensor<3xf64>
      %e = nn.sin %d : tensor<3xf64>
      %m = nn.mul %e, %w : tensor<3xf64>
      scf.yield %m : tensor<3xf64>
    } else {
      %q = nn.mul %h, %h : tensor<3xf64>
      %m = nn.sub %q, %w : tensor<3xf64>
      scf.yield %m : tensor<3xf64>
    }
    scf.yield %y : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}
"""

IF_ALONE = """
func.func @f(%x: tensor<3xf64>, %y: tensor<3xf64>, %p: i1) -> (tensor<3xf64>, tensor<3xf64>) {
  %a, %b = scf.if %p -> (tensor<3xf64>, tensor<3xf64>) {
    %e = nn.exp %x : tensor<3xf64>
    %m = nn.mul %e, %y : tensor<3xf64>
    scf.yield %m, %y : tensor<3xf64>, tensor<3xf64>
  } else {
    %s = nn.sin %y : tensor<3xf64>
    scf.yield %x, %s : tensor<3xf64>, tensor<3xf64>
  }
  func.return %a, %b : tensor<3xf64>, tensor<3xf64>
}
"""

# Data-dependent trip count: grow h until sum(h * h) >= 40 (a handful of iterations for these inputs).
WHILE = """
func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %r = scf.while (%h = %x) : (tensor<3xf64>) -> tensor<3xf64> {
    %sq = nn.mul %h, %h : tensor<3xf64>
    %s = nn.reduce_sum %sq axes = [0] : tensor<3xf64> -> tensor<f64>
    %lim = nn.full 40.0 : tensor<f64>
    %p = nn.compare lt, %s, %lim : tensor<f64>
    %c = tensor.extract %p[] : tensor<i1>
    scf.condition(%c) %h : tensor<3xf64>
  } do {
  ^bb0(%g: tensor<3xf64>):
    %a = nn.mul %g, %w : tensor<3xf64>
    %t = nn.sin %g : tensor<3xf64>
    %n = nn.add %a, %t : tensor<3xf64>
    scf.yield %n : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}
"""

# A counted while: (k, h) <- (k + 1, h * cos(w) + w) while k < 4; the counter is an i32 carried value.
WHILE_COUNTED = """
func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %four = arith.constant 4 : i32
  %k, %r = scf.while (%i = %zero, %h = %x) : (i32, tensor<3xf64>) -> (i32, tensor<3xf64>) {
    %c = arith.cmpi slt, %i, %four : i32
    scf.condition(%c) %i, %h : i32, tensor<3xf64>
  } do {
  ^bb0(%j: i32, %g: tensor<3xf64>):
    %cw = nn.cos %w : tensor<3xf64>
    %m = nn.mul %g, %cw : tensor<3xf64>
    %n = nn.add %m, %w : tensor<3xf64>
    %j1 = arith.addi %j, %one : i32
    scf.yield %j1, %n : i32, tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}
"""

# Element access: extract two elements, combine them as scalars, write one back, rebuild a tensor.
ELEMENTS = """
func.func @f(%x: tensor<2x2xf64>, %y: f64) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.extract %x[%c0, %c1] : tensor<2x2xf64>
  %b = tensor.extract %x[%c1, %c1] : tensor<2x2xf64>
  %p = arith.mulf %a, %b : f64
  %q = math.sin %y : f64
  %s = arith.addf %p, %q : f64
  %z = tensor.insert %s into %x[%c1, %c0] : tensor<2x2xf64>
  %e = tensor.extract %z[%c1, %c0] : tensor<2x2xf64>
  %f = tensor.extract %z[%c0, %c1] : tensor<2x2xf64>
  %r = tensor.from_elements %e, %f, %y : tensor<3xf64>
  return %r : tensor<3xf64>
}
"""


# tensor.splat of a scalar computed from the input.
SPLAT = """
func.func @f(%x: tensor<2xf64>) -> tensor<2x3xf64> {
  %c1 = arith.constant 1 : index
  %a = tensor.extract %x[%c1] : tensor<2xf64>
  %s = math.sin %a : f64
  %t = tensor.splat %s : tensor<2x3xf64>
  return %t : tensor<2x3xf64>
}
"""

# The same with tensor arguments only (the second-order harness contracts arguments of one kind).
ELEMENTS_OF_TENSORS = """
func.func @f(%x: tensor<2x2xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.extract %x[%c0, %c1] : tensor<2x2xf64>
  %b = tensor.extract %x[%c1, %c1] : tensor<2x2xf64>
  %p = arith.mulf %a, %b : f64
  %q = math.sin %b : f64
  %z = tensor.insert %p into %x[%c1, %c0] : tensor<2x2xf64>
  %e = tensor.extract %z[%c1, %c0] : tensor<2x2xf64>
  %r = tensor.from_elements %e, %q, %a : tensor<3xf64>
  return %r : tensor<3xf64>
}
"""


def _index(n: int) -> Any:
    return fixed(n, IndexType())


def _while_inputs(rng: np.random.Generator) -> list[Any]:
    """Start well inside the condition and grow by about 1.5x per iteration: 4 to 6 iterations."""
    return [rng.uniform(0.5, 1.0, 3), rng.uniform(1.3, 1.5, 3)]


CASES = [
    *(Case(f"for_{n}_iterations", [T(3), T(3)], source=for_loop(n)) for n in (0, 1, 2, 7)),
    Case("for_from_2_by_3", [T(3), T(3)], source=for_loop(3, lb=2, step=3)),
    *(Case(f"for_dynamic_bounds_{n}", [T(3), T(3), _index(n)], source=DYNAMIC_FOR) for n in (0, 1, 2, 6)),
    Case("for_dynamic_bounds_empty_range", [T(3), T(3), _index(-4)], source=DYNAMIC_FOR),
    Case("for_i32_induction", [S(), S()], source=I32_INDUCTION),
    Case("for_several_carries", [T(3), T(3)], source=SEVERAL_CARRIES),
    Case("for_carry_becomes_varied", [T(3)], source=BECOMES_VARIED),
    Case("for_index_carry_used_as_index", [T(4, 3), T(3)], source=INDEX_CARRY),
    Case("for_nested", [T(3), T(3)], source=NESTED),
    Case("for_with_if_inside", [T(3), T(3)], source=IF_IN_FOR),
    Case("if_then", [T(3), T(3), fixed(np.bool_(True), i1)], source=IF_ALONE),
    Case("if_else", [T(3), T(3), fixed(np.bool_(False), i1)], source=IF_ALONE),
    Case("while_data_dependent", [T(3), T(3)], source=WHILE, inputs=_while_inputs),
    Case("while_zero_iterations", [T(3), T(3)], source=WHILE, inputs=lambda rng: [np.full(3, 4.0), rng.random(3)]),
    Case("while_counted", [T(3), T(3)], source=WHILE_COUNTED),
    Case("tensor_element_access", [T(2, 2), S()], source=ELEMENTS, order2=False),
    Case("tensor_element_access_second_order", [T(2, 2)], source=ELEMENTS_OF_TENSORS),
    Case("tensor_splat", [T(2)], source=SPLAT),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_first_order(case: Case) -> None:
    check_first_order(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.order2], ids=str)
def test_second_order(case: Case) -> None:
    check_second_order(case)


def test_while_trip_count_really_depends_on_the_data() -> None:
    """The while case runs a different number of times for different inputs (else it tests little)."""
    module = _module(WHILE)
    counts = set()
    w = np.full(3, 1.4)
    for scale in (0.3, 1.0, 3.0):
        x = np.full(3, scale)
        (y,) = run_function(module, "f", [x, w])
        expected, iterations = _grow(x, w)
        np.testing.assert_array_equal(y, expected)
        counts.add(iterations)
    assert len(counts) == 3


def _grow(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, int]:
    """The WHILE case in numpy: its result and its number of iterations."""
    n = 0
    while np.sum(x * x) < 40:
        x, n = x * w + np.sin(x), n + 1
    return x, n


# ---------------------------------------------------------------------------------------------------------------
# The structure of the generated IR
# ---------------------------------------------------------------------------------------------------------------

_GRAD_OF_F = """
func.func @loss(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<f64> {
  %y = func.call @f(%x, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %s = nn.reduce_sum %y axes = [0] : tensor<3xf64> -> tensor<f64>
  func.return %s : tensor<f64>
}
func.func @main(%x: tensor<3xf64>, %w: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %gx, %gw = autodiff.grad @loss(%x, %w) wrt [0, 1] : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  func.return %gx, %gw : tensor<3xf64>, tensor<3xf64>
}
"""


def _module(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def _differentiated(text: str) -> ModuleOp:
    return run_pass(_module(text))


def _function(module: ModuleOp, name: str) -> func.FuncOp:
    found = [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name]
    assert found, f"no @{name} in {[op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]}"
    return found[0]


def _ops(module: ModuleOp, kind: type[Operation]) -> list[Operation]:
    return [op for op in module.walk() if isinstance(op, kind)]


def test_constant_bounds_use_a_tape_with_one_row_per_iteration() -> None:
    module = _differentiated(for_loop(7) + _GRAD_OF_F)
    vjp = _function(module, "f_vjp")
    writes = [op for op in vjp.walk() if isinstance(op, nn.DynamicUpdateSliceOp)]
    reads = [op for op in vjp.walk() if isinstance(op, nn.DynamicSliceOp)]
    assert len(writes) == 1 and len(reads) == 1
    assert writes[0].results[0].type == TensorType(f64, [7, 3])
    assert isinstance(writes[0].parent_op(), scf.ForOp)  # written inside the forward loop
    loops = [op for op in vjp.body.block.ops if isinstance(op, scf.ForOp)]
    assert len(loops) == 2  # the forward loop and the reverse loop, nothing unrolled


def test_dynamic_bounds_recompute_without_a_tape() -> None:
    module = _differentiated(
        DYNAMIC_FOR
        + """
func.func @main(%x: tensor<3xf64>, %w: tensor<3xf64>, %n: index, %ct: tensor<3xf64>) -> tensor<3xf64> {
  %y, %gx = autodiff.vjp @f(%x, %w, %n) cotangents(%ct : tensor<3xf64>) wrt [0] : (tensor<3xf64>, tensor<3xf64>, index) -> (tensor<3xf64>, tensor<3xf64>)
  func.return %gx : tensor<3xf64>
}
"""
    )
    vjp = _function(module, "f_vjp")
    assert not [op for op in vjp.walk() if isinstance(op, nn.DynamicUpdateSliceOp | nn.DynamicSliceOp)]
    reverse = [op for op in vjp.body.block.ops if isinstance(op, scf.ForOp)][-1]
    recompute = [op for op in reverse.body.block.ops if isinstance(op, scf.ForOp)]
    assert len(recompute) == 1  # carried values of iteration k: k steps from the initial ones
    callees = [op.callee.root_reference.data for op in recompute[0].walk() if isinstance(op, func.CallOp)]
    assert callees == ["f_for_body"]


def test_no_tape_when_the_body_vjp_reads_no_carried_value() -> None:
    """acc <- acc + x * w: the VJP of the body never reads acc, so nothing is taped."""
    text = """
func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %r = scf.for %i = %c0 to %c9 step %c1 iter_args(%acc = %x) -> (tensor<3xf64>) {
    %m = nn.mul %x, %w : tensor<3xf64>
    %s = nn.add %acc, %m : tensor<3xf64>
    scf.yield %s : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}
"""
    module = _differentiated(text + _GRAD_OF_F)
    assert not _ops(module, nn.DynamicUpdateSliceOp) and not _ops(module, nn.DynamicSliceOp)
    gx, gw = run_function(module, "main", [np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])])
    np.testing.assert_allclose(gx, 1 + 9 * np.array([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(gw, 9 * np.array([1.0, 2.0, 3.0]))


def test_ir_size_does_not_grow_with_the_trip_count() -> None:
    """Loops are never unrolled: 2 and 500 iterations give derivative IR of the same size."""
    sizes = [sum(1 for _ in _differentiated(for_loop(n) + _GRAD_OF_F).walk()) for n in (2, 500)]
    assert sizes[0] == sizes[1]


def test_derivative_ir_stays_in_the_differentiable_subset() -> None:
    """Only nn, arith, math, scf, tensor and func ops: grad of grad works by construction."""
    for text in (for_loop(3), DYNAMIC_FOR, NESTED, IF_IN_FOR, WHILE, WHILE_COUNTED):
        request = _GRAD_OF_F if "%n: index" not in text else ""
        module = _differentiated(text + request) if request else _differentiated_dynamic(text)
        dialects = {op.name.split(".")[0] for op in module.walk()}
        assert dialects <= {"builtin", "func", "nn", "arith", "math", "scf", "tensor"}, dialects


def _differentiated_dynamic(text: str) -> ModuleOp:
    return _differentiated(
        text
        + """
func.func @main(%x: tensor<3xf64>, %w: tensor<3xf64>, %n: index) -> tensor<3xf64> {
  %v = nn.full 1.0 : tensor<3xf64>
  %y, %t = autodiff.jvp @f(%x, %w, %n) tangents(%v : tensor<3xf64>) wrt [0] : (tensor<3xf64>, tensor<3xf64>, index) -> (tensor<3xf64>, tensor<3xf64>)
  func.return %t : tensor<3xf64>
}
"""
    )


def test_second_order_does_not_tape_a_tape() -> None:
    """grad of grad: the first-order tape rides in the forward loop as a carried value, but the VJP of the
    body never reads it (dynamic_update_slice's VJP needs no operand values), so no tape has two loop
    dimensions."""
    case = Case("tape", [T(3), T(3)], source=for_loop(5))
    from _autodiff_harness import second_order_module

    module = second_order_module(case)
    for op in module.walk():
        for result in op.results:
            if isinstance(result.type, TensorType):
                assert result.type.get_shape().count(5) <= 1, f"{op.name} makes {result.type}"


# ---------------------------------------------------------------------------------------------------------------
# Programs through the Python API
# ---------------------------------------------------------------------------------------------------------------


def _rnn(w: Any, u: Any, xs: Any, h0: Any) -> Any:
    """h_t = tanh(W h + U x_t) over the rows of xs (xs[i] indexed by the traced loop counter)."""
    h = ig.fori_loop(0, xs.shape[0], lambda i, h: ig.tanh(w @ h + u @ xs[i]), h0)
    return ig.sum(h * h)


def _rnn_numpy_gradients(w, u, xs, h0) -> tuple[np.ndarray, ...]:
    """Backpropagation through time by hand, as the oracle."""
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(w @ hs[-1] + u @ x))
    dh = 2 * hs[-1]
    dw, du, dxs = np.zeros_like(w), np.zeros_like(u), np.zeros_like(xs)
    for t in reversed(range(len(xs))):
        da = dh * (1 - hs[t + 1] ** 2)
        dw += np.outer(da, hs[t])
        du += np.outer(da, xs[t])
        dxs[t] = u.T @ da
        dh = w.T @ da
    return dw, du, dxs, dh


def _rnn_args(seed: int = 0, steps: int = 5) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal((3, 3)) * 0.6,
        rng.standard_normal((3, 2)),
        rng.standard_normal((steps, 2)),
        rng.standard_normal(3),
    ]


def test_rnn_gradients_match_backpropagation_through_time() -> None:
    args = _rnn_args()
    got = ig.grad(_rnn, argnums=(0, 1, 2, 3))(*args)
    for g, expected in zip(got, _rnn_numpy_gradients(*args)):
        np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-12)


def test_rnn_check_grads_to_second_order() -> None:
    ig.check_grads(_rnn, _rnn_args(1, steps=4), order=2, modes=("fwd", "rev"))
    ig.check_grads(_rnn, _rnn_args(2, steps=3), order=2, modes=("rev",))


@pytest.mark.parametrize("trips", [0, 1, 2, 7])
def test_fori_loop_trip_counts(trips: int) -> None:
    def fn(x: Any, y: Any) -> Any:
        return ig.sum(ig.fori_loop(0, trips, lambda i, c: ig.sin(c) * y + 0.1, x))

    rng = np.random.default_rng(trips)
    ig.check_grads(fn, [rng.standard_normal(3), rng.standard_normal(3)], order=2, modes=("fwd", "rev"))
    ig.check_grads(fn, [rng.standard_normal(3), rng.standard_normal(3)], order=2, modes=("rev",))


def test_fori_loop_with_a_traced_trip_count() -> None:
    def fn(x: Any, n: Any) -> Any:
        return ig.sum(ig.fori_loop(0, n, lambda i, c: ig.sin(c) * 1.1 + 0.1, x))

    x = np.random.default_rng(3).standard_normal(3)
    for n in (0, 1, 4):
        ig.check_grads(fn, [x, np.int32(n)], order=2, modes=("fwd", "rev"))


def test_while_loop_with_a_data_dependent_trip_count() -> None:
    def fn(x: Any) -> Any:
        return ig.sum(ig.while_loop(lambda v: ig.sum(v * v) < 50.0, lambda v: v * 1.5 + ig.sin(v), x))

    ig.check_grads(fn, [np.array([0.3, -0.2, 0.5])], order=2, modes=("fwd", "rev"))
    ig.check_grads(fn, [np.array([1.3, -0.2, 0.5])], order=2, modes=("rev",))


def test_cond_inside_a_loop() -> None:
    def fn(x: Any) -> Any:
        step = lambda i, c: ig.cond(ig.sum(c) > 0, lambda z: ig.sin(z) * 2.0, lambda z: z * z - 0.5, c)  # noqa: E731
        return ig.sum(ig.fori_loop(0, 4, step, x))

    ig.check_grads(fn, [np.array([0.3, -0.9, 0.2])], order=2, modes=("fwd", "rev"))


def test_grad_of_grad_through_a_loop() -> None:
    """d/dx of sum(grad f (x)^2), against central differences of the first-order gradient."""

    def f(x: Any) -> Any:
        return ig.sum(ig.fori_loop(0, 3, lambda i, c: ig.sin(c) * x, x))

    def g(x: Any) -> Any:
        return ig.sum(ig.grad(f)(x) ** 2)

    x = np.array([0.4, -0.7, 1.1])
    hessian_term = ig.grad(g)(x)
    eps = 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = eps
        fd = (float(ig.jit(g)(x + e)) - float(ig.jit(g)(x - e))) / (2 * eps)
        np.testing.assert_allclose(hessian_term[k], fd, rtol=1e-6, atol=1e-8)

