// RUN: python -c "import numpy as np, ml_dtypes; np.save('%t.x.npy', np.array([1.5, -2.0, 3.0], ml_dtypes.bfloat16))"
// RUN: irgrad-run %s --input %t.x.npy | filecheck %s
// RUN: irgrad-run %s --input %t.x.npy --output %t.out.npz
// RUN: python -c "import numpy as np, ml_dtypes; r = np.load('%t.out.npz')['result0']; print(r.dtype, r.view(ml_dtypes.bfloat16))" | filecheck %s --check-prefix=NPZ

// numpy saves bf16 arrays as 2-byte voids; irgrad-run reads them back as bf16 when the
// argument is bf16. bf16 math runs in f32 and rounds once.

func.func @main(%x: tensor<3xbf16>) -> tensor<3xbf16> {
  %y = nn.mul %x, %x : tensor<3xbf16>
  %z = nn.convert %y : tensor<3xbf16> -> tensor<3xf32>
  %w = nn.convert %z : tensor<3xf32> -> tensor<3xbf16>
  func.return %w : tensor<3xbf16>
}

// CHECK: [2.25 4 9]
// NPZ: |V2 [2.25 4 9]
