"""The reference interpreter on linalg (tensors and memrefs), memref and bufferization.

The named ops and linalg.generic (parallel and reduction loops, linalg.index) against numpy,
conv and pooling against nn's implementation, memref views that alias, and in-place
linalg on memrefs.
"""

from __future__ import annotations

import numpy as np
import pytest

from _interpreter_util import assert_same, run_text
from irgrad.backends.interpreter import UndefinedBehaviorError
from irgrad.backends.interpreter.nn_linear import conv2d

NAMED = """
func.func @main(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>, %c: tensor<3x4xi1>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<4x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %e = tensor.empty() : tensor<3x4xf32>
  %add = linalg.add ins(%a, %b : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %sub = linalg.sub ins(%a, %b : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %mul = linalg.mul ins(%a, %b : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %max = linalg.max ins(%a, %b : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %min = linalg.min ins(%a, %b : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %exp = linalg.exp ins(%a : tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %sel = linalg.select ins(%c, %a, %b : tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %et = tensor.empty() : tensor<4x3xf32>
  %tr = linalg.transpose ins(%a : tensor<3x4xf32>) outs(%et : tensor<4x3xf32>) permutation = [1, 0]
  %cp = linalg.copy ins(%a : tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %half = arith.constant 0.5 : f32
  %fill = linalg.fill ins(%half : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %add, %sub, %mul, %max, %min, %exp, %sel, %tr, %cp, %fill : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<4x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
"""


def test_named_elementwise_ops():
    g = np.random.default_rng(0)
    a = g.standard_normal((3, 4)).astype(np.float32)
    b = g.standard_normal((3, 4)).astype(np.float32)
    a[0, 0] = np.nan
    c = a > b
    results = run_text(NAMED, a, b, c)
    expected = [a + b, a - b, a * b, np.maximum(a, b), np.minimum(a, b), np.exp(a), np.where(c, a, b), a.T, a, np.full((3, 4), 0.5, np.float32)]
    for r, e in zip(results, expected):
        assert_same(r, e)


GENERIC = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @main(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x4xi64>, tensor<2x3x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%init : tensor<3x5xf32>) -> tensor<3x5xf32>
  %g = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%init : tensor<3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  %e2 = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<3x4xf32>) outs(%e2 : tensor<3x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.cmpf ogt, %x, %zero : f32
    %m = arith.select %c, %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<3x4xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %i3 = linalg.fill ins(%ninf : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %red = linalg.reduce ins(%a : tensor<3x4xf32>) outs(%i3 : tensor<3xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %mx = arith.maximumf %in, %acc : f32
      linalg.yield %mx : f32
    }
  %e4 = tensor.empty() : tensor<3x4xi64>
  %ix = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e4 : tensor<3x4xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c10 = arith.constant 10 : index
    %t = arith.muli %i, %c10 : index
    %u = arith.addi %t, %j : index
    %v = arith.index_cast %u : index to i64
    linalg.yield %v : i64
  } -> tensor<3x4xi64>
  %e5 = tensor.empty() : tensor<2x3x4xf32>
  %bc = linalg.broadcast ins(%a : tensor<3x4xf32>) outs(%e5 : tensor<2x3x4xf32>) dimensions = [0]
  func.return %mm, %g, %r, %red, %ix, %bc : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x4xi64>, tensor<2x3x4xf32>
}
"""


def test_generic_reduce_index_broadcast():
    g = np.random.default_rng(1)
    a = g.standard_normal((3, 4)).astype(np.float32)
    b = g.standard_normal((4, 5)).astype(np.float32)
    mm, gen, relu, red, ix, bc = run_text(GENERIC, a, b)
    np.testing.assert_allclose(mm, a @ b, rtol=1e-5, atol=1e-6)
    # The reduction runs in loop order: k = 0, 1, 2, 3, as a lowering to loops computes it.
    sequential = np.zeros((3, 5), np.float32)
    for k in range(4):
        sequential = sequential + a[:, k : k + 1] * b[k : k + 1, :]
    assert_same(gen, sequential)
    assert_same(mm, sequential)
    assert_same(relu, np.where(a > 0, a, np.float32(0)))
    assert_same(red, a.max(axis=1))
    assert_same(ix, np.arange(3)[:, None] * 10 + np.arange(4)[None, :])
    assert_same(bc, np.broadcast_to(a, (2, 3, 4)))


CONV_POOL = """
func.func @main(%x: tensor<1x2x7x7xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x2x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %pe = tensor.empty() : tensor<1x2x3x3xf32>
  %pinit = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x2x7x7xf32>, tensor<3x3xf32>) outs(%pinit : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %conv, %pool : tensor<1x3x2x2xf32>, tensor<1x2x3x3xf32>
}
"""


def test_conv_and_pooling_match_nn():
    g = np.random.default_rng(2)
    x = g.standard_normal((1, 2, 7, 7)).astype(np.float32)
    w = g.standard_normal((3, 2, 3, 3)).astype(np.float32)
    conv, pool = run_text(CONV_POOL, x, w)
    np.testing.assert_allclose(conv, conv2d(x, w, (2, 2), (2, 2), (0, 0, 0, 0), (2, 2)), rtol=1e-5, atol=1e-5)
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    assert_same(pool, windows.max(axis=(4, 5)))


MEMREF = """
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<3xi32>, initial_value = dense<[5, 6, 7]> : tensor<3xi32>, constant}> : () -> ()
func.func @main(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<2x2xf32>, tensor<16xf32>, i32) {
  %m = bufferization.to_buffer %a : tensor<4x4xf32> to memref<4x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %out = memref.alloc() : memref<4x4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %m[%j, %i] : memref<4x4xf32>
      memref.store %v, %out[%i, %j] : memref<4x4xf32>
    }
  }
  %sub = memref.subview %out[1, 1] [2, 2] [1, 2] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 2], offset: 5>>
  %two = arith.constant 2.0 : f32
  linalg.fill ins(%two : f32) outs(%sub : memref<2x2xf32, strided<[4, 2], offset: 5>>)
  %t = bufferization.to_tensor %out : memref<4x4xf32> to tensor<4x4xf32>
  %s2 = memref.alloca() : memref<2x2xf32>
  "memref.copy"(%sub, %s2) : (memref<2x2xf32, strided<[4, 2], offset: 5>>, memref<2x2xf32>) -> ()
  %ts = bufferization.to_tensor %s2 : memref<2x2xf32> to tensor<2x2xf32>
  %flat = memref.collapse_shape %out [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  %nine = arith.constant 9.0 : f32
  memref.store %nine, %flat[%c0] : memref<16xf32>
  %tf = bufferization.to_tensor %flat : memref<16xf32> to tensor<16xf32>
  %g = memref.get_global @table : memref<3xi32>
  %g2 = memref.load %g[%c2] : memref<3xi32>
  memref.dealloc %out : memref<4x4xf32>
  func.return %t, %ts, %tf, %g2 : tensor<4x4xf32>, tensor<2x2xf32>, tensor<16xf32>, i32
}
"""


def test_memref_views_alias_and_linalg_writes_in_place():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    t, ts, tf, g2 = run_text(MEMREF, a)
    expected = a.T.copy()
    expected[1:3, 1:4:2] = 2.0
    assert_same(t, expected)
    assert_same(ts, np.full((2, 2), 2.0, np.float32))
    flat = expected.reshape(16).copy()
    flat[0] = 9.0
    assert_same(tf, flat)
    assert g2 == 7 and g2.dtype == np.int32
    assert a[0, 1] == 1.0  # to_buffer copied the argument


def test_memref_out_of_bounds_store_is_undefined():
    text = """
    func.func @main(%i: index) -> index {
      %m = memref.alloc() : memref<4xf32>
      %v = arith.constant 1.0 : f32
      memref.store %v, %m[%i] : memref<4xf32>
      func.return %i : index
    }
    """
    assert run_text(text, 3) == (3,)
    with pytest.raises(UndefinedBehaviorError, match=r"'memref.store' op index \[4\] is out of bounds for shape \[4\]"):
        run_text(text, 4)
