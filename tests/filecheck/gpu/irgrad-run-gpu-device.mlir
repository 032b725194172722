// REQUIRES: cuda
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.array([[1, -2, 3], [-4, 5, np.nan]], np.float32)); np.save('%t.n.npy', np.array(7))"
// RUN: irgrad-run %s --backend gpu --input %t.x.npy --input %t.n.npy | filecheck %s

// On a machine with an NVIDIA GPU and pycuda: the program runs on the device.

func.func @main(%x: tensor<2x3xf32>, %n: index) -> (tensor<2x3xf32>, index, tensor<f32>) {
  %y = nn.relu %x : tensor<2x3xf32>
  %c1 = arith.constant 1 : index
  %m = arith.addi %n, %c1 : index
  %s = nn.reduce_max %y axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  func.return %y, %m, %s : tensor<2x3xf32>, index, tensor<f32>
}

// CHECK:      {{^\[\[}} 1. 0. 3.]
// CHECK-NEXT: {{^}} [ 0. 5. nan]]
// CHECK-NEXT: {{^}}8{{$}}
// CHECK-NEXT: {{^}}nan{{$}}
