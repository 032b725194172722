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

// The whole CPU pipeline, code generation included: once @g is in the llvm dialect the
// checker compiles the module and calls @g's packed entry on the same inputs.
// RUN: irgrad-opt %s -p irgrad-cpu --verify-each=numeric | filecheck %s --check-prefix=CPU
// RUN: not irgrad-opt %s -p irgrad-cpu,test-miscompile --verify-each=numeric 2>&1 | filecheck %s --check-prefix=CPU-BAD
// RUN: irgrad-opt %s -p autodiff,convert-nn-to-linalg,bufferize,convert-linalg-to-loops,convert-scf-to-cf,convert-arith-to-llvm --verify-each=numeric 2>&1 | filecheck %s --check-prefix=MIXED

// CPU: llvm.func @g(
// CPU-BAD: error: --verify-each=numeric: pass 'test-miscompile' changed result {{[01]}} of @g: flat index
// CPU-BAD-NOT: Traceback
// MIXED: --verify-each=numeric: pass 'convert-arith-to-llvm' not checked: @g is part in the llvm dialect
