// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.arange(12, dtype=np.float64).reshape(4, 3))"
// RUN: irgrad-run %s --input %t.x.npy | filecheck %s

// The only function is the entry when there is no @main. An scf.for carries a tensor and
// slices row %i with nn.dynamic_slice; scf.if picks a branch on a computed i1.

func.func @row_sum(%x: tensor<4x3xf64>) -> (tensor<1x3xf64>, tensor<1x3xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = nn.full 0.0 : tensor<1x3xf64>
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (tensor<1x3xf64>) {
    %row = nn.dynamic_slice %x[%i, %c0] sizes = [1, 3] : tensor<4x3xf64>, index, index -> tensor<1x3xf64>
    %next = nn.add %acc, %row : tensor<1x3xf64>
    scf.yield %next : tensor<1x3xf64>
  }
  %first = tensor.extract %sum[%c0, %c0] : tensor<1x3xf64>
  %limit = arith.constant 10.0 : f64
  %big = arith.cmpf ogt, %first, %limit : f64
  %r = scf.if %big -> (tensor<1x3xf64>) {
    %n = nn.neg %sum : tensor<1x3xf64>
    scf.yield %n : tensor<1x3xf64>
  } else {
    scf.yield %sum : tensor<1x3xf64>
  }
  func.return %sum, %r : tensor<1x3xf64>, tensor<1x3xf64>
}

// CHECK:      {{^\[\[}}18. 22. 26.]]
// CHECK-NEXT: {{^\[\[}}-18. -22. -26.]]
