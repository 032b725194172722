"""`convert-linalg-to-parallel-loops` against the reference interpreter.

Stage-"linalg" programs go through `bufferize,convert-linalg-to-parallel-loops` and must give
exactly the interpreter's results on the original (`_buffer_util.check_text`, which also
checks the "loops" contract and runs with instrumented allocations). The interpreter runs
reductions in loop order, so even float sums must agree bit for bit. Hand-written memref
programs cover what bufferize does not produce: maps with offsets, `mod`, `floordiv` and
negative coefficients, and the named ops of xDSL outside the contract.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import memref, scf
from xdsl.dialects.linalg import ops as linalg

from _buffer_util import check_text, lower_text
from _interpreter_util import parse
from irgrad.backends.interpreter.runner import lookup_function, make_interpreter
from irgrad.diagnostics import PassError
from irgrad.lowering.loops.linalg_to_parallel_loops import ConvertLinalgToParallelLoopsPass
from irgrad.context import make_context
import test_lowering_bufferize as programs

LOOPS = "bufferize,convert-linalg-to-parallel-loops"
RNG = np.random.default_rng(1)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def check(text: str, *args, reorder: bool = True):
    passes = LOOPS if reorder else "bufferize,convert-linalg-to-parallel-loops{reorder_reductions=false}"
    lowered = check_text(text, *args, passes=passes)
    assert not any(op.name.startswith("linalg.") for op in lowered.module.walk())
    return lowered


# ----------------------------------------------------------------------------------------------
# The bufferize test programs, one level further down
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reorder", [True, False])
def test_named_ops(reorder: bool):
    check(programs.NAMED, f32(3, 4), f32(4, 5), f32(5), reorder=reorder)


def test_elementwise_chains_and_in_place():
    check(programs.CHAIN, f32(3, 4), f32(3, 4))
    check(programs.IN_PLACE, f32(3, 4), f32(3, 4))
    check(programs.IN_PLACE_TRAP, f32(3, 4), f32(3, 4))


def test_views_and_element_access():
    check(programs.VIEWS, f32(4, 6), 3)


@pytest.mark.parametrize("trips", [0, 1, 5])
def test_control_flow(trips: int):
    check(programs.FOR, f32(4), f32(4), trips)
    check(programs.FOR_IN_PLACE, f32(4), trips)
    check(programs.WHILE, f32(4), trips)
    check(programs.IF, f32(4), np.bool_(trips % 2 == 1))


def test_calls():
    check(programs.CALLS, f32(8))


@pytest.mark.parametrize("stage", ["linalg", "fused"])
@pytest.mark.parametrize("name", programs.PROGRAMS)
def test_nn_programs_end_to_end(name: str, stage: str):
    from _buffer_util import check_lowered

    for n, program, args in programs._nn_programs():
        if n == name:
            module = programs._linalg_module(program, stage)
            check_lowered(module, args, passes=LOOPS, entry=program.traced.name)


# ----------------------------------------------------------------------------------------------
# Loop structure
# ----------------------------------------------------------------------------------------------

MATMUL = """
func.func @main(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%init : tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %mm : tensor<3x5xf32>
}
"""


def _loop_nest(module) -> list[str]:
    """The loops around the innermost store into the matmul's output, outermost first."""
    stores = [op for op in module.walk() if isinstance(op, memref.StoreOp)]
    store = max(stores, key=lambda s: len(_parents(s)))
    return [f"{p.name}/{len(p.body.block.args)}" for p in reversed(_parents(store))]


def _parents(op) -> list:
    result = []
    parent = op.parent_op()
    while parent is not None and parent.name != "func.func":
        result.append(parent)
        parent = parent.parent_op()
    return result


def test_matmul_runs_i_k_j_with_the_contiguous_loop_innermost():
    lowered = check(MATMUL, f32(3, 4), f32(4, 5))
    assert _loop_nest(lowered.module) == ["scf.parallel/1", "scf.for/1", "scf.parallel/1"]


def test_matmul_in_op_order_accumulates_in_a_register():
    lowered = check(MATMUL, f32(3, 4), f32(4, 5), reorder=False)
    fors = [op for op in lowered.module.walk() if isinstance(op, scf.ForOp)]
    assert len(fors) == 1 and len(fors[0].iter_args) == 1  # the accumulator
    assert isinstance(fors[0].parent_op(), scf.ParallelOp)


def test_a_transposed_rhs_keeps_the_reduction_innermost():
    # B is read as B[j, k]: j is not B's contiguous dimension, so k stays innermost.
    text = """
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (j, k)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @main(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<3x4xf32>, tensor<5x4xf32>) outs(%init : tensor<3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  func.return %mm : tensor<3x5xf32>
}
"""
    lowered = check(text, f32(3, 4), f32(5, 4))
    fors = [op for op in lowered.module.walk() if isinstance(op, scf.ForOp)]
    assert len(fors) == 1 and len(fors[0].iter_args) == 1


def test_batched_matmul_generic():
    text = """
#a = affine_map<(b, i, j, k) -> (b, i, k)>
#b = affine_map<(b, i, j, k) -> (b, k, j)>
#c = affine_map<(b, i, j, k) -> (b, i, j)>
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%init : tensor<2x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x3x5xf32>
  func.return %mm : tensor<2x3x5xf32>
}
"""
    lowered = check(text, f32(2, 3, 4), f32(2, 4, 5))
    assert _loop_nest(lowered.module) == ["scf.parallel/2", "scf.for/1", "scf.parallel/1"]


def test_reductions_over_several_dimensions_and_index():
    text = """
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d1)>
func.func @main(%a: tensor<2x3x4xf32>) -> (tensor<3xf32>, tensor<3xi64>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %ei = tensor.empty() : tensor<3xi64>
  %zi = arith.constant 0 : i64
  %initi = linalg.fill ins(%zi : i64) outs(%ei : tensor<3xi64>) -> tensor<3xi64>
  %s:2 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["reduction", "parallel", "reduction"]} ins(%a : tensor<2x3x4xf32>) outs(%init, %initi : tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%x: f32, %acc: f32, %cnt: i64):
    %i0 = linalg.index 0 : index
    %i2 = linalg.index 2 : index
    %w = arith.muli %i0, %i2 : index
    %wi = arith.index_cast %w : index to i64
    %c = arith.addi %cnt, %wi : i64
    %t = arith.addf %acc, %x : f32
    linalg.yield %t, %c : f32, i64
  } -> tensor<3xf32>, tensor<3xi64>
  func.return %s#0, %s#1 : tensor<3xf32>, tensor<3xi64>
}
"""
    check(text, f32(2, 3, 4))


def test_rank_zero_ops():
    text = """
#s = affine_map<() -> ()>
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %x = linalg.generic {indexing_maps = [#s, #s], iterator_types = []} ins(%a : tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%p: f32, %o: f32):
    %q = math.exp %p : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  func.return %x : tensor<f32>
}
"""
    lowered = check(text, np.array(0.5, np.float32))
    assert not any(isinstance(op, scf.ParallelOp | scf.ForOp) for op in lowered.module.walk())


def test_maps_with_offsets_negative_strides_mod_and_floordiv():
    text = """
#rev = affine_map<(d0, d1) -> (-d0 + 3, d1 * 2 + 1)>
#md = affine_map<(d0, d1) -> (d0 mod 2, d1 floordiv 2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<4x8xf32>, %b: tensor<2x2xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#rev, #md, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32>, tensor<2x2xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
"""
    check(text, f32(4, 8), f32(2, 2))


def test_convolution_as_a_generic():
    text = """
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @main(%x: tensor<1x2x5x5xf32>, %k: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %y = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %k : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x3x3x3xf32>
  func.return %y : tensor<1x3x3x3xf32>
}
"""
    check(text, f32(1, 2, 5, 5), f32(3, 2, 3, 3))


def test_named_ops_outside_the_contract_on_memrefs():
    # xDSL's named elementwise ops, copy and pooling lower through the same path.
    text = """
func.func @main(%a: memref<1x1x4x4xf32>, %w: memref<2x2xf32>, %o: memref<1x1x3x3xf32>, %s: memref<4x4xf32>, %t: memref<4x4xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%o : memref<1x1x3x3xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%a, %w : memref<1x1x4x4xf32>, memref<2x2xf32>) outs(%o : memref<1x1x3x3xf32>)
  %v = memref.collapse_shape %a [[0, 1, 2], [3]] : memref<1x1x4x4xf32> into memref<4x4xf32>
  linalg.add ins(%v, %v : memref<4x4xf32>, memref<4x4xf32>) outs(%s : memref<4x4xf32>)
  linalg.copy ins(%s : memref<4x4xf32>) outs(%t : memref<4x4xf32>)
  func.return
}
"""
    module = parse(text)
    reference = module.clone()
    ConvertLinalgToParallelLoopsPass().apply(make_context(), module)
    assert not any(op.name.startswith("linalg.") for op in module.walk())
    a = f32(1, 1, 4, 4)
    results = []
    for m in (reference, module):
        out = [np.zeros((1, 1, 3, 3), np.float32), np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32)]
        make_interpreter(m).call_op(lookup_function(m, "main"), (a, np.zeros((2, 2), np.float32), *out))
        results.append(out)
    for got, expected in zip(*results):
        np.testing.assert_array_equal(got, expected)


def test_tensor_operands_are_an_error():
    module = parse(programs.NAMED)
    with pytest.raises(PassError, match="run bufferize first"):
        ConvertLinalgToParallelLoopsPass().apply(make_context(), module)


def test_index_constants_are_shared_at_the_top_of_the_function():
    module = lower_text(programs.CHAIN, LOOPS)
    constants = [op for op in module.walk() if op.name == "arith.constant" and str(op.results[0].type) == "index"]
    values = [op.value.value.data for op in constants]
    assert len(values) == len(set(values))
    assert not any(isinstance(op, linalg.GenericOp) for op in module.walk())
