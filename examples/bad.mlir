// A verifier error, as the README shows it: irgrad-opt examples/bad.mlir
func.func @bad(%x: tensor<4x3xf32>, %w: tensor<5x2xf32>) -> tensor<4x2xf32> {
  %y = nn.matmul %x, %w : (tensor<4x3xf32>, tensor<5x2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
