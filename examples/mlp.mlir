// A two-layer perceptron in the nn dialect. Try:
//   irgrad-opt examples/mlp.mlir
//   irgrad-run examples/mlp.mlir --entry mlp --input x.npy --input w1.npy ... (see examples/demo.py)
func.func @mlp(%x: tensor<4x3xf32>, %w1: tensor<3x8xf32>, %b1: tensor<8xf32>,
               %w2: tensor<8x2xf32>, %b2: tensor<2xf32>) -> tensor<4x2xf32> {
  %h0 = nn.matmul %x, %w1 : (tensor<4x3xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  %bb1 = nn.broadcast_in_dim %b1 dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %h1 = nn.add %h0, %bb1 : tensor<4x8xf32>
  %h = nn.relu %h1 : tensor<4x8xf32>
  %y0 = nn.matmul %h, %w2 : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %bb2 = nn.broadcast_in_dim %b2 dims = [1] : tensor<2xf32> -> tensor<4x2xf32>
  %y = nn.add %y0, %bb2 : tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
