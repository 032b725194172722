// --verify-each=numeric runs the public functions on the reference interpreter before and after
// every pass, and stops at the first pass that changes a result, naming it.
// RUN: irgrad-opt %s -p autodiff,canonicalize,cse --verify-each=numeric | filecheck %s --check-prefix=OK
// RUN: not irgrad-opt %s -p autodiff,canonicalize,test-miscompile,cse --verify-each=numeric 2>&1 | filecheck %s --check-prefix=BAD

func.func private @f(%x: tensor<3xf32>) -> tensor<f32> {
  %e = nn.exp %x : tensor<3xf32>
  %s = nn.reduce_sum %e axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

func.func @g(%x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  %v, %d = autodiff.value_and_grad @f(%x) wrt [0] : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
  func.return %v, %d : tensor<f32>, tensor<3xf32>
}

// OK: func.func @g
// BAD: error: --verify-each=numeric: pass 'test-miscompile' changed result 0 of @g: flat index 0: expected
// BAD-NOT: Traceback
