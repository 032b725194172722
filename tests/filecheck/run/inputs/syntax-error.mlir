func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.frobnicate %x : tensor<2xf32>
  func.return %y : tensor<2xf32>
}
