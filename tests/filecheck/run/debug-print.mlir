// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.arange(24, dtype=np.float32).reshape(4, 6))"
// RUN: irgrad-run %s --input %t.x.npy | filecheck %s
// RUN: irgrad-run %s --backend cpu --input %t.x.npy | filecheck %s
// RUN: env IRGRAD_GPU_EMULATE=1 irgrad-run %s --backend gpu --input %t.x.npy | filecheck %s

// debug.print prints when it runs, in program order with the program's own output, on the
// interpreter and in compiled code alike (the same text: Python's format of numpy arrays).

// CHECK:      slice {{\[\[}} 0.  2.  4.]
// CHECK-NEXT:  [12. 14. 16.]]
// CHECK-NEXT: doubled [[ 0.  2.  4.  6.  8. 10.]
// CHECK:      loop 0 sum 552.0
// CHECK-NEXT: loop 1 sum 552.0
// CHECK-NEXT: loop 2 sum 552.0
// CHECK-NEXT: done
func.func @main(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %s = nn.slice %x start = [0, 0] limit = [4, 6] stride = [2, 2] : tensor<4x6xf32> -> tensor<2x3xf32>
  debug.print "slice {}"(%s) : tensor<2x3xf32>
  %y = nn.add %x, %x : tensor<4x6xf32>
  debug.print "doubled {}"(%y) : tensor<4x6xf32>
  %z = nn.mul %y, %y : tensor<4x6xf32>
  %sum = nn.reduce_sum %y axes = [0, 1] : tensor<4x6xf32> -> tensor<f32>
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %iv = arith.index_cast %i : index to i32
    %t = tensor.from_elements %iv : tensor<i32>
    debug.print "loop {} sum {}"(%t, %sum) : tensor<i32>, tensor<f32>
  }
  debug.print "done"()
  func.return %z : tensor<4x6xf32>
}
