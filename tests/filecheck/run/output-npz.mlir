// RUN: python -c "import numpy as np; np.save('%t.a.npy', np.arange(6, dtype=np.int32).reshape(2, 3)); np.save('%t.b.npy', np.array([[2], [0], [-3]], np.int32))"
// RUN: irgrad-run %s --input %t.a.npy --input %t.b.npy --output %t.out.npz | filecheck %s --allow-empty --check-prefix=QUIET
// RUN: python -c "import numpy as np; d = np.load('%t.out.npz'); print(sorted(d.files)); print(d['result0'].dtype, d['result0'].tolist()); print(d['result1'].dtype, d['result1'].tolist())" | filecheck %s

// With --output the results are saved as result0, result1, ... in an .npz and nothing is
// printed; integer division truncates toward zero and x / 0 is 0.

func.func @main(%a: tensor<2x3xi32>, %b: tensor<3x1xi32>) -> (tensor<2x1xi32>, tensor<2x3xi32>) {
  %p = nn.matmul %a, %b : (tensor<2x3xi32>, tensor<3x1xi32>) -> tensor<2x1xi32>
  %bb = nn.broadcast_in_dim %p dims = [0, 1] : tensor<2x1xi32> -> tensor<2x3xi32>
  %q = nn.div %a, %bb : tensor<2x3xi32>
  func.return %p, %q : tensor<2x1xi32>, tensor<2x3xi32>
}

// QUIET-NOT: {{.}}

// CHECK:      ['result0', 'result1']
// CHECK-NEXT: int32 {{\[}}[-6], [-9]]
// CHECK-NEXT: int32 {{\[}}[0, 0, 0], [0, 0, 0]]
