// UNSUPPORTED: cuda
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.ones(4, np.float32))"
// RUN: not irgrad-run %s --backend gpu --input %t.x.npy 2>&1 | filecheck %s

// Without pycuda, a CUDA driver or a GPU, `irgrad-run --backend gpu` compiles the program
// (to PTX), then says what is missing: exit code 1, no traceback.

// CHECK: irgrad-run: error: cannot run on the GPU: {{.*(pycuda|CUDA driver|no GPU|no usable).*}}
// CHECK-NOT: Traceback

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.exp %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
