"""`bufferize` against the reference interpreter: results before and after are identical.

Every construct of the stage-"linalg" contract, run through `_buffer_util.check_text`, which
also checks the output against the "bufferized" contract (`assert_stage_bufferized`, whose
static ownership check proves every buffer is freed exactly once on every path) and runs it
with instrumented allocations (no leak, no double free, no write into an argument or a
global, no use after free, every out-parameter element written). The value-semantics traps
(an in-place write into a tensor that is read later) each have a test.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import memref

from _buffer_util import check_lowered, check_text, functions, lower_text
from _interpreter_util import index, parse
from irgrad.diagnostics import PassError
from irgrad.lowering.bufferization.bufferize import bufferize_module
from irgrad.lowering.contracts import ContractError, assert_stage_bufferized, check_buffer_ownership

RNG = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


ID2 = "#id = affine_map<(d0, d1) -> (d0, d1)>"


def ew(name: str, ins: str, types: str, body: str, t: str = "tensor<3x4xf32>", out: str | None = None) -> str:
    """An elementwise linalg.generic on 2-D tensors of type `t`; `body` computes %r."""
    n = len(ins.split(","))
    maps = ", ".join(["#id"] * (n + 1))
    out = out or f"%e_{name}"
    args = ", ".join(f"%{name}_a{i}: f32" for i in range(n))
    return f"""
  %e_{name} = tensor.empty() : {t}
  %{name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel", "parallel"]}} ins({ins} : {types}) outs({out} : {t}) {{
  ^bb0({args}, %{name}_o: f32):
    {body.replace("$", f"%{name}_a")}
    linalg.yield %{name}_r : f32
  }} -> {t}"""


# ----------------------------------------------------------------------------------------------
# Elementwise chains and in-place reuse
# ----------------------------------------------------------------------------------------------

T = "tensor<3x4xf32>"
TT = f"{T}, {T}"

CHAIN = f"""
{ID2}
func.func @main(%a: {T}, %b: {T}) -> {T} {{
  {ew("x", "%a, %b", TT, "%x_r = arith.addf $0, $1 : f32")}
  {ew("y", "%x", T, "%y_r = math.exp $0 : f32")}
  %c = arith.constant dense<2.0> : {T}
  {ew("z", "%y, %c", TT, "%z_r = arith.mulf $0, $1 : f32")}
  func.return %z : {T}
}}
"""


def test_elementwise_chain_writes_the_out_parameter_without_allocating():
    lowered = check_text(CHAIN, f32(3, 4), f32(3, 4))
    assert lowered.count(memref.AllocOp) == 0
    assert lowered.tracker.allocs == 0


def _reduce_sum(name: str, source: str) -> str:
    return f"""
  %zero_{name} = arith.constant 0.0 : f32
  %ei_{name} = tensor.empty() : tensor<3xf32>
  %init_{name} = linalg.fill ins(%zero_{name} : f32) outs(%ei_{name} : tensor<3xf32>) -> tensor<3xf32>
  %{name} = linalg.reduce ins({source} : {T}) outs(%init_{name} : tensor<3xf32>) dimensions = [1]
    (%in_{name}: f32, %acc_{name}: f32) {{
      %s_{name} = arith.addf %in_{name}, %acc_{name} : f32
      linalg.yield %s_{name} : f32
    }}"""


IN_PLACE = f"""
{ID2}
func.func @main(%a: {T}, %b: {T}) -> tensor<3xf32> {{
  {ew("x", "%a, %b", TT, "%x_r = arith.addf $0, $1 : f32")}
  {ew("y", "%x", T, "%y_r = math.exp $0 : f32")}
  {ew("z", "%y", T, "%z_r = arith.negf $0 : f32")}
  {_reduce_sum("s", "%z")}
  func.return %s : tensor<3xf32>
}}
"""

# The same chain, but %x and %y are read again after the ops that could overwrite them.
IN_PLACE_TRAP = f"""
{ID2}
func.func @main(%a: {T}, %b: {T}) -> (tensor<3xf32>, {T}) {{
  {ew("x", "%a, %b", TT, "%x_r = arith.addf $0, $1 : f32")}
  {ew("y", "%x", T, "%y_r = math.exp $0 : f32")}
  {ew("z", "%y", T, "%z_r = arith.negf $0 : f32")}
  {_reduce_sum("s", "%z")}
  {ew("late", "%x, %y", TT, "%late_r = arith.subf $0, $1 : f32")}
  func.return %s, %late : tensor<3xf32>, {T}
}}
"""


def test_in_place_elementwise_reuses_the_dead_input():
    lowered = check_text(IN_PLACE, f32(3, 4), f32(3, 4))
    # One buffer for %x; %y and %z overwrite it; the reduction writes the out-parameter.
    assert lowered.count(memref.AllocOp) == 1
    assert lowered.tracker.allocs == 2  # two runs


def test_in_place_is_refused_when_the_input_is_read_later():
    lowered = check_text(IN_PLACE_TRAP, f32(3, 4), f32(3, 4))
    # %x and %y stay alive until %late: %y and %z need buffers of their own (%x is computed
    # in the out-parameter, since %late, returned, overwrites it in place when it dies).
    assert lowered.count(memref.AllocOp) == 2


def test_function_arguments_are_never_written():
    text = f"""
{ID2}
func.func @main(%a: {T}) -> {T} {{
  {ew("x", "%a", T, "%x_r = math.exp $0 : f32")}
  {ew("y", "%x", T, "%y_r = math.exp $0 : f32")}
  func.return %y : {T}
}}
"""
    lowered = check_text(text, f32(3, 4))
    # %x goes into the out-parameter (the caller's, not %a), and %y over it.
    assert lowered.count(memref.AllocOp) == 0


def test_in_place_needs_the_same_indexing_map():
    # A transpose-like read of %x while writing %x in place would read overwritten elements.
    text = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %q = math.exp %p : f32
    linalg.yield %q : f32
  } -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %y = linalg.generic {indexing_maps = [#tr, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%p: f32, %p2: f32, %o: f32):
    %q = arith.subf %p, %p2 : f32
    linalg.yield %q : f32
  } -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}
"""
    lowered = check_text(text, f32(4, 4))
    assert lowered.count(memref.AllocOp) == 1  # %x has a buffer; %y goes to the out-parameter


def test_a_gather_body_reading_the_input_blocks_in_place():
    # The body reads %x at other indices (tensor.extract): writing %x in place is wrong.
    text = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<5xf32>) -> tensor<5xf32> {
  %e = tensor.empty() : tensor<5xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<5xf32>) outs(%e : tensor<5xf32>) {
  ^bb0(%p: f32, %o: f32):
    %q = math.exp %p : f32
    linalg.yield %q : f32
  } -> tensor<5xf32>
  %e2 = tensor.empty() : tensor<5xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<5xf32>) outs(%e2 : tensor<5xf32>) {
  ^bb0(%p: f32, %o: f32):
    %i = linalg.index 0 : index
    %c4 = arith.constant 4 : index
    %j = arith.subi %c4, %i : index
    %other = tensor.extract %x[%j] : tensor<5xf32>
    %q = arith.addf %p, %other : f32
    linalg.yield %q : f32
  } -> tensor<5xf32>
  %e3 = tensor.empty() : tensor<5xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<5xf32>) outs(%e3 : tensor<5xf32>) {
  ^bb0(%p: f32, %o: f32):
    %q = math.sin %p : f32
    linalg.yield %q : f32
  } -> tensor<5xf32>
  func.return %z : tensor<5xf32>
}
"""
    lowered = check_text(text, f32(5))
    assert lowered.count(memref.AllocOp) == 1  # %x; %y to the out-parameter; %z over it


# ----------------------------------------------------------------------------------------------
# Named linalg ops, constants, views, element access
# ----------------------------------------------------------------------------------------------

NAMED = """
func.func @main(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %v: tensor<5xf32>) -> (tensor<3x5xf32>, tensor<5x3xf32>, tensor<3x5xf32>, tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%init : tensor<3x5xf32>) -> tensor<3x5xf32>
  %et = tensor.empty() : tensor<5x3xf32>
  %tr = linalg.transpose ins(%mm : tensor<3x5xf32>) outs(%et : tensor<5x3xf32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<3x5xf32>
  %bc = linalg.broadcast ins(%v : tensor<5xf32>) outs(%eb : tensor<3x5xf32>) dimensions = [0]
  %er = tensor.empty() : tensor<3xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %ir = linalg.fill ins(%ninf : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
  %red = linalg.reduce ins(%mm : tensor<3x5xf32>) outs(%ir : tensor<3xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  func.return %mm, %tr, %bc, %red : tensor<3x5xf32>, tensor<5x3xf32>, tensor<3x5xf32>, tensor<3xf32>
}
"""


def test_named_ops():
    check_text(NAMED, f32(3, 4), f32(4, 5), f32(5))


def test_accumulating_into_a_live_fill_copies_it():
    # Two matmuls accumulate into the same filled init: the first must not destroy it.
    text = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m2 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %m1, %m2 : tensor<2x2xf32>, tensor<2x2xf32>
}
"""
    check_text(text, f32(2, 3), f32(3, 2))


VIEWS = """
func.func @main(%a: tensor<4x6xf32>, %i: index) -> (tensor<2x3xf32>, tensor<6xf32>, tensor<24xf32>, tensor<2x2x6xf32>, tensor<3x8xf32>, f32, tensor<4x6xf32>, tensor<2x2xf32>) {
  %s = tensor.extract_slice %a[1, 2] [2, 3] [2, 1] : tensor<4x6xf32> to tensor<2x3xf32>
  %row = tensor.extract_slice %a[%i, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<6xf32>
  %flat = tensor.collapse_shape %a [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %ex = tensor.expand_shape %a [[0, 1], [2]] output_shape [2, 2, 6] : tensor<4x6xf32> into tensor<2x2x6xf32>
  %shape = arith.constant dense<[3, 8]> : tensor<2xi64>
  %rs = tensor.reshape %a(%shape) : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<3x8xf32>
  %c1 = arith.constant 1 : index
  %x = tensor.extract %a[%c1, %i] : tensor<4x6xf32>
  %y = arith.addf %x, %x : f32
  %ins = tensor.insert %y into %a[%i, %c1] : tensor<4x6xf32>
  %fe = tensor.from_elements %x, %y, %y, %x : tensor<2x2xf32>
  func.return %s, %row, %flat, %ex, %rs, %x, %ins, %fe : tensor<2x3xf32>, tensor<6xf32>, tensor<24xf32>, tensor<2x2x6xf32>, tensor<3x8xf32>, f32, tensor<4x6xf32>, tensor<2x2xf32>
}
"""


def test_views_and_element_access():
    lowered = check_text(VIEWS, f32(4, 6), index(2).value)
    # The insert on argument %a copies it; from_elements allocates; the views are free.
    assert lowered.count(memref.SubviewOp) == 2


def test_views_of_a_strided_slice_are_copied_to_be_contiguous():
    text = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4x6xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %s = tensor.extract_slice %a[0, 1] [2, 3] [2, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  %flat = tensor.collapse_shape %s [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %shape = arith.constant dense<[3, 2]> : tensor<2xindex>
  %rs = tensor.reshape %s(%shape) : (tensor<2x3xf32>, tensor<2xindex>) -> tensor<3x2xf32>
  func.return %flat, %rs : tensor<6xf32>, tensor<3x2xf32>
}
"""
    check_text(text, f32(4, 6))


def test_rank_zero_and_unit_reshapes():
    text = """
func.func @main(%a: tensor<f32>, %b: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<f32>, tensor<1xf32>) {
  %s1 = arith.constant dense<[1, 1]> : tensor<2xi64>
  %x = tensor.reshape %a(%s1) : (tensor<f32>, tensor<2xi64>) -> tensor<1x1xf32>
  %s0 = arith.constant dense<> : tensor<0xi64>
  %y = tensor.reshape %b(%s0) : (tensor<1x1xf32>, tensor<0xi64>) -> tensor<f32>
  %z = tensor.collapse_shape %b [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  func.return %x, %y, %z : tensor<1x1xf32>, tensor<f32>, tensor<1xf32>
}
"""
    check_text(text, np.array(3.0, np.float32), f32(1, 1))


def test_insert_slice_into_a_live_destination_copies_it():
    text = f"""
{ID2}
func.func @main(%a: tensor<4x6xf32>, %b: tensor<2x3xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {{
  {ew("d", "%a", "tensor<4x6xf32>", "%d_r = math.exp $0 : f32", t="tensor<4x6xf32>")}
  %r = tensor.insert_slice %b into %d[1, 2] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x6xf32>
  %r2 = tensor.insert_slice %b into %a[0, 0] [2, 3] [2, 2] : tensor<2x3xf32> into tensor<4x6xf32>
  func.return %r, %d, %r2 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}}
"""
    check_text(text, f32(4, 6), f32(2, 3))


def test_insert_slice_into_a_dead_destination_is_in_place():
    text = f"""
{ID2}
func.func @main(%a: tensor<4x6xf32>, %b: tensor<2x3xf32>) -> tensor<4x6xf32> {{
  {ew("d", "%a", "tensor<4x6xf32>", "%d_r = math.exp $0 : f32", t="tensor<4x6xf32>")}
  %r = tensor.insert_slice %b into %d[1, 2] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x6xf32>
  %row = tensor.extract_slice %r[3, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<6xf32>
  %r3 = tensor.insert_slice %row into %r[0, 0] [1, 6] [1, 1] : tensor<6xf32> into tensor<4x6xf32>
  func.return %r3 : tensor<4x6xf32>
}}
"""
    lowered = check_text(text, f32(4, 6), f32(2, 3))
    # %d lives in the out-parameter; %r3 copies a row of itself into a fresh buffer first.
    assert lowered.count(memref.AllocOp) == 1


def test_constants_become_globals_that_are_never_written():
    sum3 = "%t = arith.addf $0, $1 : f32\n    %y_r = arith.addf %t, $2 : f32"
    text = f"""
{ID2}
func.func private @g(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {{
  %c = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  {ew("x", "%c", "tensor<2x2xf32>", "%x_r = math.exp $0 : f32", t="tensor<2x2xf32>")}
  %v = arith.constant 9.0 : f32
  %c0 = arith.constant 0 : index
  %ins = tensor.insert %v into %c[%c0, %c0] : tensor<2x2xf32>
  {ew("y", "%x, %ins, %a", "tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>", sum3, t="tensor<2x2xf32>")}
  func.return %y : tensor<2x2xf32>
}}
func.func @main(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {{
  %1 = func.call @g(%a) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = func.call @g(%1) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>
}}
"""
    lowered = check_text(text, f32(2, 2))
    assert lowered.count(memref.GlobalOp) == 1


def test_identical_constants_share_one_global():
    text = """
func.func @main() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xi32>) {
  %a = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = arith.constant dense<[1, 2]> : tensor<2xi32>
  func.return %a, %b, %c : tensor<2xf32>, tensor<2xf32>, tensor<2xi32>
}
"""
    lowered = check_text(text)
    assert lowered.count(memref.GlobalOp) == 2


# ----------------------------------------------------------------------------------------------
# Control flow
# ----------------------------------------------------------------------------------------------

FOR = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e0 = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %q = math.exp %p : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x, %other = %b) -> (tensor<4xf32>, tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%acc, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %h = arith.constant 0.5 : f32
      %s = arith.mulf %p, %h : f32
      %t = arith.addf %s, %q : f32
      linalg.yield %t : f32
    } -> tensor<4xf32>
    %e2 = tensor.empty() : tensor<4xf32>
    %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%other : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.sin %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %z, %y : tensor<4xf32>, tensor<4xf32>
  }
  func.return %r#0, %r#1, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
"""


@pytest.mark.parametrize("trips", [0, 1, 5])
def test_for_with_tensor_iter_args(trips: int):
    # Swapped yields, an init that is a function argument, a captured tensor (%x) read in the
    # loop and after it.
    lowered = check_text(FOR, f32(4), f32(4), trips)
    assert lowered.tracker.allocs > 0


FOR_IN_PLACE = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%acc : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.cos %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
"""


@pytest.mark.parametrize("trips", [0, 1, 5])
def test_for_updates_its_iter_arg_in_place(trips: int):
    lowered = check_text(FOR_IN_PLACE, f32(4), trips)
    # One copy of %a goes into the loop; each iteration updates it in place: one alloc a run.
    assert lowered.tracker.allocs == 2
    body_allocs = [op for op in lowered.module.walk() if isinstance(op, memref.AllocOp) and op.parent_op().name == "scf.for"]
    assert not body_allocs


def test_in_place_write_of_a_value_from_outside_the_loop_is_refused():
    # %x is defined before the loop; writing it in place in iteration 1 would change what
    # iteration 2 reads.
    text = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e0 = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %q = math.exp %p : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.cos %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %e2 = tensor.empty() : tensor<4xf32>
    %z = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%y, %acc : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %z : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
"""
    for trips in (0, 1, 3):
        check_text(text, f32(4), trips)


def test_scatter_style_loop_of_slices():
    # nn.scatter_add's lowering shape: a loop inserting updated rows into its iter_arg.
    text = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%dest: tensor<5x3xf32>, %upd: tensor<4x3xf32>, %idx: tensor<4xindex>) -> tensor<5x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %dest) -> (tensor<5x3xf32>) {
    %row = tensor.extract %idx[%k] : tensor<4xindex>
    %old = tensor.extract_slice %acc[%row, 0] [1, 3] [1, 1] : tensor<5x3xf32> to tensor<3xf32>
    %u = tensor.extract_slice %upd[%k, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
    %e = tensor.empty() : tensor<3xf32>
    %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%old, %u : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<3xf32>
    %new = tensor.insert_slice %sum into %acc[%row, 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<5x3xf32>
    scf.yield %new : tensor<5x3xf32>
  }
  func.return %r : tensor<5x3xf32>
}
"""
    lowered = check_text(text, f32(5, 3), f32(4, 3), np.array([1, 3, 1, 0]))
    # The loop updates one copy of %dest in place: one temporary row per iteration.
    assert lowered.count(memref.AllocOp) == 2


IF = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf32>, %p: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %e0 = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %q = math.exp %v : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %r:2 = scf.if %p -> (tensor<4xf32>, tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = math.sin %v : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %y, %a : tensor<4xf32>, tensor<4xf32>
  } else {
    scf.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
"""


@pytest.mark.parametrize("p", [True, False])
def test_if_with_tensor_results(p: bool):
    check_text(IF, f32(4), np.bool_(p))


def test_if_branch_may_write_a_value_dead_after_the_if():
    # The then-branch overwrites %x in place (dead on that path); the else-branch reads it.
    text = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf32>, %p: i1) -> tensor<f32> {
  %e0 = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %q = math.exp %v : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %r = scf.if %p -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = math.sin %v : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  } else {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = math.cos %v : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  %zero = arith.constant 0.0 : f32
  %ei = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%ei : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%r : tensor<4xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  func.return %s : tensor<f32>
}
"""
    for p in (True, False):
        check_text(text, f32(4), np.bool_(p))


WHILE = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf32>, %n: index) -> (tensor<4xf32>, index) {
  %c0 = arith.constant 0 : index
  %r:2 = scf.while (%x = %a, %i = %c0) : (tensor<4xf32>, index) -> (tensor<4xf32>, index) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %x, %i : tensor<4xf32>, index
  } do {
  ^bb0(%x: tensor<4xf32>, %i: index):
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %h = arith.constant 1.5 : f32
      %s = arith.mulf %p, %h : f32
      %t = arith.subf %s, %q : f32
      linalg.yield %t : f32
    } -> tensor<4xf32>
    %c1 = arith.constant 1 : index
    %j = arith.addi %i, %c1 : index
    scf.yield %y, %j : tensor<4xf32>, index
  }
  func.return %r#0, %r#1 : tensor<4xf32>, index
}
"""


@pytest.mark.parametrize("trips", [0, 1, 4])
def test_while_with_tensor_arguments(trips: int):
    check_text(WHILE, f32(4), trips)


# ----------------------------------------------------------------------------------------------
# Calls
# ----------------------------------------------------------------------------------------------

CALLS = """
#id = affine_map<(d0) -> (d0)>
func.func private @f(%x: tensor<4xf32>) -> (tensor<4xf32>, f32, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.exp %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %c0 = arith.constant 0 : index
  %s = tensor.extract %y[%c0] : tensor<4xf32>
  func.return %y, %s, %x : tensor<4xf32>, f32, tensor<4xf32>
}
func.func @main(%a: tensor<8xf32>) -> (tensor<4xf32>, f32, tensor<4xf32>, tensor<4xf32>) {
  %half = tensor.extract_slice %a[1] [4] [2] : tensor<8xf32> to tensor<4xf32>
  %y1, %s1, %same = func.call @f(%half) : (tensor<4xf32>) -> (tensor<4xf32>, f32, tensor<4xf32>)
  %y2, %s2, %y1again = func.call @f(%y1) : (tensor<4xf32>) -> (tensor<4xf32>, f32, tensor<4xf32>)
  func.return %y2, %s2, %y1again, %same : tensor<4xf32>, f32, tensor<4xf32>, tensor<4xf32>
}
"""


def test_calls_use_caller_allocated_out_parameters():
    lowered = check_text(CALLS, f32(8))
    f = functions(lowered.module)["f"]
    # @f(%x, %out0, %out2) -> f32: its tensor results became trailing out-parameters.
    assert [str(t) for t in f.function_type.inputs] == ["memref<4xf32>"] * 3
    assert [str(t) for t in f.function_type.outputs] == ["f32"]


def test_a_result_returned_twice_gets_a_copy():
    text = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.exp %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  func.return %y, %y, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
"""
    lowered = check_text(text, f32(4))
    assert lowered.count(memref.AllocOp) == 0
    assert lowered.count(memref.CopyOp) == 2


def test_calls_in_a_loop_free_their_results():
    text = """
#id = affine_map<(d0) -> (d0)>
func.func private @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.sin %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    %y = func.call @step(%acc) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
"""
    lowered = check_text(text, f32(4), 50)
    # A bounded number of buffers live at once however many iterations run.
    assert lowered.tracker.peak <= 3


# ----------------------------------------------------------------------------------------------
# End to end from nn programs (convert-nn-to-linalg, then bufferize)
# ----------------------------------------------------------------------------------------------


def _nn_programs():
    """(name, traced program, arguments) of nn programs covering the frontend's op families."""
    import irgrad as ig

    def mlp(x, w1, w2):
        h = ig.tanh(x @ w1)
        return ((h @ w2) ** 2).mean()

    x, w1, w2 = f32(5, 4), f32(4, 6), f32(6, 3)
    yield "mlp_value_and_grad", ig.trace(ig.value_and_grad(mlp, argnums=(1, 2)), x, w1, w2), (x, w1, w2)

    def softmax_rows(z):
        return ig.exp(z - z.max(axis=1, keepdims=True)) / ig.exp(z - z.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)

    z = f32(3, 5)
    yield "softmax", ig.trace(softmax_rows, z), (z,)

    def cnn(img, k):
        y = ig.relu(ig.conv2d(img, k, padding=1))
        return ig.max_pool2d(y, 2).sum()

    img, k = f32(1, 2, 6, 6), f32(3, 2, 3, 3)
    yield "cnn_grad", ig.trace(ig.grad(cnn, argnums=1), img, k), (img, k)

    def gather(table, idx, labels):
        rows = ig.take(table, idx, axis=0)
        picked = ig.take_along_axis(ig.log_softmax(rows, axis=1), labels, axis=1)
        return -picked.mean()

    table, idx, labels = f32(6, 4), np.array([0, 3, 3, 5], np.int32), np.array([[1], [0], [3], [2]], np.int32)
    yield "gather_grad", ig.trace(ig.grad(gather), table, idx, labels), (table, idx, labels)

    def movement(a, b):
        c = ig.concatenate([a, b], axis=0)
        p = ig.pad(c[1:5, ::2], ((1, 0), (0, 2)))
        t = ig.transpose(ig.reshape(p, (5, 5)))
        return ig.stack([t, t * 2.0]).sum(axis=0), ig.where(a > 0, a, b)

    a, b = f32(3, 6), f32(3, 6)
    yield "data_movement", ig.trace(movement, a, b), (a, b)

    def loops(x, w):
        h = ig.fori_loop(0, 3, lambda i, h: ig.tanh(h @ w), x)
        g = ig.cond(h.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, h)
        return ig.while_loop(lambda v: v.sum() < 50.0, lambda v: v + 1.0, g)

    x, w = f32(2, 3), f32(3, 3)
    yield "control_flow", ig.trace(loops, x, w), (x, w)

    def integers(n, m):
        q = ig.floor_divide(n, m)
        return ig.bitwise_xor(q, n), ig.astype(q, ig.float32) * 0.5

    n, m = np.array([7, -7, 9, 0], np.int32), np.array([2, 2, 0, 3], np.int32)
    yield "integers", ig.trace(integers, n, m), (n, m)


PROGRAMS = ["mlp_value_and_grad", "softmax", "cnn_grad", "gather_grad", "data_movement", "control_flow", "integers"]


FRONT_END = "autodiff,canonicalize,cse,dce,convert-nn-to-linalg"
STAGES = {"linalg": FRONT_END, "fused": FRONT_END + ",linalg-fuse-elementwise,canonicalize,cse"}


def _linalg_module(program, stage: str = "linalg"):
    """`program` lowered to stage "linalg" (or "fused", elementwise fusion applied)."""
    from irgrad.registry import irgrad_passes
    from irgrad.registry import run_pipeline

    if "convert-nn-to-linalg" not in irgrad_passes():
        pytest.skip("convert-nn-to-linalg is not registered")
    if stage == "fused" and "linalg-fuse-elementwise" not in irgrad_passes():
        pytest.skip("linalg-fuse-elementwise is not registered")
    module = program.module.clone()
    run_pipeline(module, STAGES[stage])
    return module


@pytest.mark.parametrize("stage", ["linalg", "fused"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_nn_programs_end_to_end(name: str, stage: str):
    programs = {n: (p, a) for n, p, a in _nn_programs()}
    program, args = programs[name]
    module = _linalg_module(program, stage)
    check_lowered(module, args, entry=program.traced.name)


# ----------------------------------------------------------------------------------------------
# Errors and the contract checkers
# ----------------------------------------------------------------------------------------------


def test_a_tensor_op_outside_the_contract_is_a_located_error():
    text = """
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<4xf32> {
  %c = tensor.concat dim(0) %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}
"""
    module = parse(text)
    with pytest.raises(PassError) as info:
        bufferize_module(module)
    assert "'tensor.concat' op is outside the \"linalg\" stage contract" in str(info.value)
    assert info.value.location is not None and info.value.location.line == 3


def test_linalg_stage_output_satisfies_the_bufferized_contract():
    module = lower_text(NAMED, "bufferize")
    assert_stage_bufferized(module)


@pytest.mark.parametrize(
    "body, message",
    [
        (
            """%m = memref.alloc() : memref<4xf32>
  func.return""",
            "never freed",
        ),
        (
            """%m = memref.alloc() : memref<4xf32>
  memref.dealloc %m : memref<4xf32>
  memref.dealloc %m : memref<4xf32>
  func.return""",
            "a second time",
        ),
        (
            """%m = memref.alloc() : memref<4xf32>
  memref.dealloc %m : memref<4xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4xf32>
  func.return""",
            "after it is freed",
        ),
        (
            """memref.dealloc %a : memref<4xf32>
  func.return""",
            "does not own",
        ),
        (
            """%m = memref.alloc() : memref<4xf32>
  scf.if %p {
    memref.dealloc %m : memref<4xf32>
  }
  func.return""",
            "enclosing block owns",
        ),
    ],
)
def test_the_ownership_checker_finds_leaks_and_double_frees(body: str, message: str):
    module = parse(f"func.func @main(%a: memref<4xf32>, %p: i1) {{\n  {body}\n}}\n")
    with pytest.raises(ContractError, match=message):
        check_buffer_ownership(module)


def test_a_value_overwritten_in_one_branch_stays_intact_in_the_other():
    text = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf32>, %p: i1) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %q = math.exp %v : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %r = scf.if %p -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = math.sin %v : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  } else {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = math.cos %v : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %z = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%y, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %s = arith.subf %v, %w : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %z : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
"""
    for p in (True, False):
        check_text(text, f32(4), np.bool_(p))


NESTED = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf32>, %n: index, %p: i1) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e0 = tensor.empty() : tensor<4xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%outer = %a, %ignored = %e0) -> (tensor<4xf32>, tensor<4xf32>) {
    %inner = scf.for %j = %c0 to %c2 step %c1 iter_args(%acc = %outer) -> (tensor<4xf32>) {
      %e = tensor.empty() : tensor<4xf32>
      %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%acc, %outer : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%u: f32, %v: f32, %o: f32):
        %h = arith.constant 0.25 : f32
        %s = arith.mulf %u, %h : f32
        %t = arith.addf %s, %v : f32
        linalg.yield %t : f32
      } -> tensor<4xf32>
      scf.yield %y : tensor<4xf32>
    }
    %unused = scf.if %p -> (tensor<4xf32>) {
      scf.yield %inner : tensor<4xf32>
    } else {
      scf.yield %outer : tensor<4xf32>
    }
    scf.yield %inner, %outer : tensor<4xf32>, tensor<4xf32>
  }
  func.return %r#0 : tensor<4xf32>
}
"""


@pytest.mark.parametrize("trips", [0, 1, 3])
def test_nested_loops_an_ignored_iter_arg_and_an_unused_result(trips: int):
    check_text(NESTED, f32(4), trips, np.bool_(trips % 2 == 0))


def test_the_stage_checkers_reject_the_previous_stage():
    from irgrad.lowering.contracts import assert_stage_loops

    with pytest.raises(ContractError, match='"bufferized" stage contract'):
        assert_stage_bufferized(parse(NAMED))
    bufferized = lower_text(NAMED, "bufferize")
    with pytest.raises(ContractError, match="'linalg.fill' op breaks the \"loops\" stage contract: is not allowed"):
        assert_stage_loops(bufferized)
    assert_stage_loops(lower_text(NAMED, "bufferize,convert-linalg-to-parallel-loops"))
