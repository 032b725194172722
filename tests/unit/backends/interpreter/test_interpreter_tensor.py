"""The reference interpreter on the tensor dialect: element access, slices, reshapes, pad.

Out-of-bounds accesses are undefined behaviour in MLIR and are reported, not wrapped.
"""

from __future__ import annotations

import numpy as np
import pytest

from _interpreter_util import assert_same, run_text
from irgrad.backends.interpreter import UndefinedBehaviorError, UnsupportedOpError

TENSOR_OPS = """
func.func @main(%x: tensor<4x6xf32>, %i: index) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<4x6xf32>, f32, tensor<4x6xf32>, tensor<24xf32>, tensor<2x2x6xf32>, tensor<2x3xi32>, tensor<3x2xf64>, tensor<6x8xf32>, tensor<8x6xf32>, index) {
  %a = tensor.extract_slice %x[1, %i] [2, 3] [1, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  %b = tensor.extract_slice %x[2, 1] [1, 3] [1, 1] : tensor<4x6xf32> to tensor<3xf32>
  %c = tensor.insert_slice %a into %x[0, 0] [2, 3] [2, 1] : tensor<2x3xf32> into tensor<4x6xf32>
  %c0 = arith.constant 0 : index
  %e = tensor.extract %x[%i, %c0] : tensor<4x6xf32>
  %v = arith.constant 9.0 : f32
  %f = tensor.insert %v into %x[%c0, %i] : tensor<4x6xf32>
  %g = tensor.collapse_shape %x [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %h = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 2, 6] : tensor<4x6xf32> into tensor<2x2x6xf32>
  %one = arith.constant 1 : i32
  %two = arith.constant 2 : i32
  %k = tensor.from_elements %one, %two, %one, %two, %two, %two : tensor<2x3xi32>
  %d = arith.constant 2.5 : f64
  %s = tensor.splat %d : tensor<3x2xf64>
  %p = tensor.pad %x low[1, 0] high[1, 2] {
  ^bb0(%p0: index, %p1: index):
    %z = arith.constant -1.0 : f32
    tensor.yield %z : f32
  } : tensor<4x6xf32> to tensor<6x8xf32>
  %cc = tensor.concat dim(0) %x, %x : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %dd = tensor.dim %x, %c0 : tensor<4x6xf32>
  func.return %a, %b, %c, %e, %f, %g, %h, %k, %s, %p, %cc, %dd : tensor<2x3xf32>, tensor<3xf32>, tensor<4x6xf32>, f32, tensor<4x6xf32>, tensor<24xf32>, tensor<2x2x6xf32>, tensor<2x3xi32>, tensor<3x2xf64>, tensor<6x8xf32>, tensor<8x6xf32>, index
}
"""


def test_tensor_ops():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    a, b, c, e, f, g, h, k, s, p, cc, dd = run_text(TENSOR_OPS, x, 1)
    assert_same(a, x[1:3, 1:7:2])
    assert_same(b, x[2, 1:4])
    expected_c = x.copy()
    expected_c[0:4:2, 0:3] = x[1:3, 1:7:2]
    assert_same(c, expected_c)
    assert e == np.float32(6.0) and e.dtype == np.float32
    expected_f = x.copy()
    expected_f[0, 1] = 9.0
    assert_same(f, expected_f)
    assert_same(g, x.reshape(24))
    assert_same(h, x.reshape(2, 2, 6))
    assert_same(k, np.array([[1, 2, 1], [2, 2, 2]], np.int32))
    assert_same(s, np.full((3, 2), 2.5))
    assert_same(p, np.pad(x, ((1, 1), (0, 2)), constant_values=-1.0))
    assert_same(cc, np.concatenate([x, x]))
    assert dd == 4 and type(dd) is int


@pytest.mark.parametrize("i", [-1, 4])
def test_extract_out_of_bounds_is_undefined(i):
    text = """
    func.func @main(%x: tensor<4xf32>, %i: index) -> f32 {
      %e = tensor.extract %x[%i] : tensor<4xf32>
      func.return %e : f32
    }
    """
    with pytest.raises(UndefinedBehaviorError, match=r"test.mlir:3:\d+: error: 'tensor.extract' op index \[-?\d\] is out of bounds"):
        run_text(text, np.zeros(4, np.float32), i)


def test_extract_slice_out_of_bounds_is_undefined():
    text = """
    func.func @main(%x: tensor<4xf32>, %i: index) -> tensor<2xf32> {
      %s = tensor.extract_slice %x[%i] [2] [1] : tensor<4xf32> to tensor<2xf32>
      func.return %s : tensor<2xf32>
    }
    """
    assert_same(run_text(text, np.arange(4, dtype=np.float32), 2)[0], np.array([2, 3], np.float32))
    with pytest.raises(UndefinedBehaviorError, match="out of bounds"):
        run_text(text, np.arange(4, dtype=np.float32), 3)


def test_dynamic_shapes():
    text = """
    func.func @main(%x: tensor<?x3xf32>, %n: index) -> (tensor<?x3xf32>, index, tensor<?xi64>) {
      %c0 = arith.constant 0 : index
      %d = tensor.dim %x, %c0 : tensor<?x3xf32>
      %y = tensor.extract_slice %x[1, 0] [%n, 3] [1, 1] : tensor<?x3xf32> to tensor<?x3xf32>
      %e = tensor.empty(%n) : tensor<?xi64>
      func.return %y, %d, %e : tensor<?x3xf32>, index, tensor<?xi64>
    }
    """
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    y, d, e = run_text(text, x, 2)
    assert_same(y, x[1:3])
    assert d == 5
    assert_same(e, np.zeros(2, np.int64))


def test_pad_with_index_dependent_value_is_unsupported():
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<4xf32> {
      %p = tensor.pad %x low[1] high[1] {
      ^bb0(%i: index):
        %v = arith.index_cast %i : index to i32
        %f = arith.sitofp %v : i32 to f32
        tensor.yield %f : f32
      } : tensor<2xf32> to tensor<4xf32>
      func.return %p : tensor<4xf32>
    }
    """
    with pytest.raises(UnsupportedOpError, match="'tensor.pad' op with a padding value that depends on the indices"):
        run_text(text, np.zeros(2, np.float32))
