// RUN: python -c "import numpy as np; np.save('%t.w.npy', np.array([0.5, -1.0, 2.0], np.float32)); np.save('%t.x.npy', np.array([1.0, 2.0, 3.0], np.float32))"
// RUN: irgrad-run %s --input %t.w.npy --input %t.x.npy --output %t.out.npz
// RUN: python -c "import numpy as np; g = np.load('%t.out.npz')['result0']; w = np.array([0.5, -1.0, 2.0]); x = np.array([1.0, 2.0, 3.0]); print(g.dtype, np.allclose(g, x * (1 - np.tanh(w * x) ** 2), rtol=1e-5, atol=1e-6))" | filecheck %s

// A module that still requests derivatives (autodiff.grad) runs the autodiff pass first.

func.func @loss(%w: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<f32> {
  %p = nn.mul %w, %x : tensor<3xf32>
  %t = nn.tanh %p : tensor<3xf32>
  %s = nn.reduce_sum %t axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

func.func @main(%w: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %g = autodiff.grad @loss(%w, %x) wrt [0] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}

// CHECK: float32 True
