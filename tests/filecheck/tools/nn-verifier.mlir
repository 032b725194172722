// RUN: not irgrad-opt %s 2>&1 | filecheck --strict-whitespace %s
// RUN: irgrad-opt --verify-diagnostics %s

// irgrad's own dialects are registered, and their verifier errors are located like xDSL's.

func.func @bad_matmul(%a: tensor<4x3xf32>, %b: tensor<5x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'nn.matmul' op contracting dimensions differ: lhs 4x3, rhs 5x2}}
  %0 = nn.matmul %a, %b : (tensor<4x3xf32>, tensor<5x2xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

// The message is the verifier's, with the op named once.
// CHECK-NOT: Traceback
// CHECK: {{.*}}nn-verifier.mlir:8:3: error: 'nn.matmul' op contracting dimensions differ: lhs 4x3, rhs 5x2
// CHECK-NEXT:   %0 = nn.matmul %a, %b : (tensor<4x3xf32>, tensor<5x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:   ^
// CHECK-NOT: Traceback
