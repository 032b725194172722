// irgrad-run --debug-nans stops at the first op that makes a NaN from operands without one,
// with its location, exit 1; --debug-infs also at infinities; without either, NaN is a value.
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.array([1.0, -2.0, 3.0], np.float32))"
// RUN: irgrad-run %s --input %t.x.npy | filecheck %s --check-prefix=PLAIN
// RUN: not irgrad-run %s --input %t.x.npy --debug-nans 2>&1 | filecheck %s --check-prefix=NANS
// RUN: sh -c 'irgrad-run %s --input %t.x.npy --debug-nans >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// RUN: not irgrad-run %s --input %t.x.npy --debug-nans --backend cpu 2>&1 | filecheck %s --check-prefix=BACKEND

// PLAIN: nan
// NANS: debug-nans.mlir:[[# @LINE + 8]]:3: error: 'nn.log' made a NaN (1 of 3 elements) from operands without one, in @loss: operand #0: shape (3,), finite values in [-4, 6], 1 negative
// NANS-NOT: Traceback
// EXIT: exit=1
// BACKEND: error: --debug-nans and --debug-infs run on the reference interpreter (--backend interp), not cpu

func.func @loss(%x: tensor<3xf32>) -> tensor<f32> {
  %two = nn.full 2.0 : tensor<3xf32>
  %y = nn.mul %x, %two : tensor<3xf32>
  %l = nn.log %y : tensor<3xf32>
  %s = nn.reduce_sum %l axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
