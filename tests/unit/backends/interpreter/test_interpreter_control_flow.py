"""The reference interpreter on control flow: scf.for/if/while/index_switch, func.call, cf.

Loop-carried tensors, nn.dynamic_slice/dynamic_update_slice indexed by the loop counter,
loops with integer (not index) counters, zero-trip loops, recursion through func.call.
"""

from __future__ import annotations

import numpy as np
import pytest

from _interpreter_util import assert_same, run_text
from irgrad.backends.interpreter import UndefinedBehaviorError

ROW_SUM = """
func.func @main(%x: tensor<4x3xf32>, %n: index) -> (tensor<1x3xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = nn.full 0.0 : tensor<1x3xf32>
  %sum, %count = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %c0) -> (tensor<1x3xf32>, index) {
    %row = nn.dynamic_slice %x[%i, %c0] sizes = [1, 3] : tensor<4x3xf32>, index, index -> tensor<1x3xf32>
    %next = nn.add %acc, %row : tensor<1x3xf32>
    %k1 = arith.addi %k, %c1 : index
    scf.yield %next, %k1 : tensor<1x3xf32>, index
  }
  func.return %sum, %count : tensor<1x3xf32>, index
}
"""


@pytest.mark.parametrize("n", [0, 1, 4, 6])
def test_for_carries_tensors_and_slices_by_counter(n):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    total, count = run_text(ROW_SUM, x, n)
    # Rows past the end clamp to the last row, as dynamic_slice defines.
    rows = [x[min(i, 3)] for i in range(n)]
    expected = np.sum(rows, axis=0, keepdims=True) if rows else np.zeros((1, 3))
    assert_same(total, expected.astype(np.float32))
    assert count == n and type(count) is int


def test_for_writes_rows_with_dynamic_update_slice():
    text = """
    func.func @main(%x: tensor<3x2xf64>) -> tensor<3x2xf64> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %out0 = nn.full 0.0 : tensor<3x2xf64>
      %out = scf.for %i = %c0 to %c3 step %c1 iter_args(%o = %out0) -> (tensor<3x2xf64>) {
        %c2 = arith.constant 2 : index
        %j = arith.subi %c2, %i : index
        %row = nn.dynamic_slice %x[%j, %c0] sizes = [1, 2] : tensor<3x2xf64>, index, index -> tensor<1x2xf64>
        %sq = nn.mul %row, %row : tensor<1x2xf64>
        %o2 = nn.dynamic_update_slice %o, %sq[%i, %c0] : tensor<3x2xf64>, tensor<1x2xf64>, index, index
        scf.yield %o2 : tensor<3x2xf64>
      }
      func.return %out : tensor<3x2xf64>
    }
    """
    x = np.arange(6, dtype=np.float64).reshape(3, 2)
    (y,) = run_text(text, x)
    assert_same(y, (x * x)[::-1])


def test_for_with_integer_counter_and_step():
    text = """
    func.func @main(%lb: i32, %ub: i32) -> i32 {
      %c3 = arith.constant 3 : i32
      %z = arith.constant 0 : i32
      %s = scf.for %i = %lb to %ub step %c3 iter_args(%acc = %z) -> (i32) : i32 {
        %a = arith.addi %acc, %i : i32
        scf.yield %a : i32
      }
      func.return %s : i32
    }
    """
    (s,) = run_text(text, np.int32(-4), np.int32(9))
    assert s == sum(range(-4, 9, 3)) and s.dtype == np.int32


def test_for_with_zero_step_is_undefined():
    text = """
    func.func @main(%step: index) -> index {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      scf.for %i = %c0 to %c4 step %step {
      }
      func.return %c0 : index
    }
    """
    with pytest.raises(UndefinedBehaviorError, match="'scf.for' op step 0 is not positive"):
        run_text(text, 0)


IF_ELSE = """
func.func @main(%x: tensor<2x2xf32>, %flag: i1) -> tensor<2x2xf32> {
  %r = scf.if %flag -> (tensor<2x2xf32>) {
    %e = nn.exp %x : tensor<2x2xf32>
    scf.yield %e : tensor<2x2xf32>
  } else {
    %n = nn.neg %x : tensor<2x2xf32>
    scf.yield %n : tensor<2x2xf32>
  }
  func.return %r : tensor<2x2xf32>
}
"""


@pytest.mark.parametrize("flag", [True, False, np.bool_(True), np.array(False)])
def test_if_picks_a_branch(flag):
    x = np.array([[0.0, 1.0], [-2.0, 3.0]], np.float32)
    (y,) = run_text(IF_ELSE, x, flag)
    assert_same(y, np.exp(x) if bool(flag) else -x)


def test_if_on_a_computed_condition_without_results():
    text = """
    func.func @main(%a: f32, %b: f32) -> f32 {
      %lt = arith.cmpf olt, %a, %b : f32
      %m = scf.if %lt -> (f32) {
        scf.yield %a : f32
      } else {
        scf.yield %b : f32
      }
      scf.if %lt {
      }
      func.return %m : f32
    }
    """
    assert run_text(text, 2.0, 1.5)[0] == np.float32(1.5)
    assert run_text(text, np.float32(-1), np.float32(1))[0] == np.float32(-1)


def test_while_computes_a_factorial():
    text = """
    func.func @main(%n: i64) -> (i64, i64) {
      %one = arith.constant 1 : i64
      %zero = arith.constant 0 : i64
      %r:2 = scf.while (%k = %zero, %p = %one) : (i64, i64) -> (i64, i64) {
        %go = arith.cmpi slt, %k, %n : i64
        scf.condition(%go) %k, %p : i64, i64
      } do {
      ^bb0(%k2: i64, %p2: i64):
        %k3 = arith.addi %k2, %one : i64
        %p3 = arith.muli %p2, %k3 : i64
        scf.yield %k3, %p3 : i64, i64
      }
      func.return %r#0, %r#1 : i64, i64
    }
    """
    k, p = run_text(text, 10)
    assert k == 10 and p == 3628800 and p.dtype == np.int64


def test_while_carries_a_tensor():
    text = """
    func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %limit = nn.full 100.0 : tensor<f32>
      %r = scf.while (%v = %x) : (tensor<3xf32>) -> (tensor<3xf32>) {
        %s = nn.reduce_sum %v axes = [0] : tensor<3xf32> -> tensor<f32>
        %lt = nn.compare lt, %s, %limit : tensor<f32>
        %go = tensor.extract %lt[] : tensor<i1>
        scf.condition(%go) %v : tensor<3xf32>
      } do {
      ^bb0(%w: tensor<3xf32>):
        %d = nn.add %w, %w : tensor<3xf32>
        scf.yield %d : tensor<3xf32>
      }
      func.return %r : tensor<3xf32>
    }
    """
    (y,) = run_text(text, np.array([1.0, 2.0, 3.0], np.float32))
    assert_same(y, np.array([32.0, 64.0, 96.0], np.float32))  # sum 192 is the first >= 100


def test_func_call_and_recursion():
    text = """
    func.func @main(%x: tensor<2xf32>, %n: index) -> (tensor<2xf32>, index) {
      %y = func.call @square(%x) : (tensor<2xf32>) -> tensor<2xf32>
      %f = func.call @fib(%n) : (index) -> index
      func.return %y, %f : tensor<2xf32>, index
    }
    func.func @square(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = nn.mul %x, %x : tensor<2xf32>
      func.return %y : tensor<2xf32>
    }
    func.func @fib(%n: index) -> index {
      %c2 = arith.constant 2 : index
      %small = arith.cmpi ult, %n, %c2 : index
      %r = scf.if %small -> (index) {
        scf.yield %n : index
      } else {
        %c1 = arith.constant 1 : index
        %a = arith.subi %n, %c1 : index
        %b = arith.subi %n, %c2 : index
        %fa = func.call @fib(%a) : (index) -> index
        %fb = func.call @fib(%b) : (index) -> index
        %s = arith.addi %fa, %fb : index
        scf.yield %s : index
      }
      func.return %r : index
    }
    """
    y, f = run_text(text, np.array([3.0, -2.0], np.float32), 12)
    assert_same(y, np.array([9.0, 4.0], np.float32))
    assert f == 144


def test_index_switch():
    text = """
    func.func @main(%i: index) -> i32 {
      %r = scf.index_switch %i -> i32
      case 2 {
        %a = arith.constant 20 : i32
        scf.yield %a : i32
      }
      case 5 {
        %b = arith.constant 50 : i32
        scf.yield %b : i32
      }
      default {
        %c = arith.constant -1 : i32
        scf.yield %c : i32
      }
      func.return %r : i32
    }
    """
    assert [int(run_text(text, i)[0]) for i in (2, 5, 0)] == [20, 50, -1]


def test_cf_branches():
    text = """
    func.func @main(%n: index) -> index {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      cf.br ^loop(%c0, %c0 : index, index)
    ^loop(%i: index, %acc: index):
      %go = arith.cmpi slt, %i, %n : index
      cf.cond_br %go, ^body, ^exit
    ^body:
      %acc2 = arith.addi %acc, %i : index
      %i2 = arith.addi %i, %c1 : index
      cf.br ^loop(%i2, %acc2 : index, index)
    ^exit:
      func.return %acc : index
    }
    """
    assert run_text(text, 10) == (45,)


def test_parallel_with_reduction_and_memref_stores():
    text = """
    func.func @main(%x: tensor<3x4xf32>) -> (f32, tensor<3x4xf32>) {
      %m = bufferization.to_buffer %x : tensor<3x4xf32> to memref<3x4xf32>
      %out = memref.alloc() : memref<3x4xf32>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant 0.0 : f32
      %sum = "scf.parallel"(%c0, %c0, %c3, %c4, %c1, %c1, %zero) <{operandSegmentSizes = array<i32: 2, 2, 2, 1>}> ({
      ^bb0(%i: index, %j: index):
        %v = memref.load %m[%i, %j] : memref<3x4xf32>
        %d = arith.addf %v, %v : f32
        memref.store %d, %out[%i, %j] : memref<3x4xf32>
        "scf.reduce"(%v) ({
        ^bb1(%a: f32, %b: f32):
          %s = arith.addf %a, %b : f32
          "scf.reduce.return"(%s) : (f32) -> ()
        }) : (f32) -> ()
      }) : (index, index, index, index, index, index, f32) -> f32
      %t = bufferization.to_tensor %out : memref<3x4xf32> to tensor<3x4xf32>
      func.return %sum, %t : f32, tensor<3x4xf32>
    }
    """
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    total, doubled = run_text(text, x)
    assert total == np.float32(66.0) and total.dtype == np.float32
    assert_same(doubled, 2 * x)
