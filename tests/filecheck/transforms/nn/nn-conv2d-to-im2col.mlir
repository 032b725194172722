// nn-conv2d-to-im2col: a large f32/f64 conv2d becomes im2col + matmul at the nn level, so that
// autodiff differentiates a matmul whose window matrix the gradient reuses; small, half
// precision and kernel-wider-than-output convolutions stay.
// RUN: irgrad-opt %s -p nn-conv2d-to-im2col --split-input-file | filecheck %s
// RUN: irgrad-opt %s -p 'nn-conv2d-to-im2col,autodiff,symbol-dce,canonicalize,cse,dce' --split-input-file | filecheck %s --check-prefix=GRAD

// 2 * 16 * 72 * 2048 flops >= 2^20: decomposed. The weight is the O x C*KH*KW matrix.
// CHECK-LABEL: func.func @large
// CHECK-NEXT:    %y_cols = nn.im2col %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<8x8x16x16xf32> -> tensor<72x2048xf32>
// CHECK-NEXT:    %y_kernel = nn.reshape %w : tensor<16x8x3x3xf32> -> tensor<16x72xf32>
// CHECK-NEXT:    %y_product = nn.matmul %y_kernel, %y_cols : (tensor<16x72xf32>, tensor<72x2048xf32>) -> tensor<16x2048xf32>
// CHECK-NEXT:    %y_by_channel = nn.reshape %y_product : tensor<16x2048xf32> -> tensor<16x8x16x16xf32>
// CHECK-NEXT:    %y = nn.transpose %y_by_channel perm = [1, 0, 2, 3] : tensor<16x8x16x16xf32> -> tensor<8x16x16x16xf32>
// CHECK-NEXT:    func.return %y
func.func @large(%x: tensor<8x8x16x16xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<8x16x16x16xf32> {
  %y = nn.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<8x8x16x16xf32>, tensor<16x8x3x3xf32>) -> tensor<8x16x16x16xf32>
  func.return %y : tensor<8x16x16x16xf32>
}

// Strides, dilation and uneven padding carry over to im2col; f64 too.
// CHECK-LABEL: func.func @strided_f64
// CHECK-NEXT:    nn.im2col %x kernel = [3, 2] stride = [2, 1] padding = [1, 0, 2, 1] dilation = [2, 2] : tensor<8x8x33x29xf64> -> tensor<48x3600xf64>
// CHECK:         nn.matmul
func.func @strided_f64(%x: tensor<8x8x33x29xf64>, %w: tensor<16x8x3x2xf64>) -> tensor<8x16x15x30xf64> {
  %y = nn.conv2d %x, %w stride = [2, 1] padding = [1, 0, 2, 1] dilation = [2, 2] : (tensor<8x8x33x29xf64>, tensor<16x8x3x2xf64>) -> tensor<8x16x15x30xf64>
  func.return %y : tensor<8x16x15x30xf64>
}

// Negative cases: each stays a conv2d.
// CHECK-LABEL: func.func @small
// CHECK-NEXT:    nn.conv2d
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @half
// CHECK-NEXT:    nn.conv2d
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @kernel_wider_than_output
// CHECK-NEXT:    nn.conv2d
// CHECK-NEXT:    func.return
func.func @small(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = nn.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
func.func @half(%x: tensor<8x8x16x16xf16>, %w: tensor<16x8x3x3xf16>) -> tensor<8x16x16x16xf16> {
  %y = nn.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<8x8x16x16xf16>, tensor<16x8x3x3xf16>) -> tensor<8x16x16x16xf16>
  func.return %y : tensor<8x16x16x16xf16>
}
func.func @kernel_wider_than_output(%x: tensor<8x8x16x16xf32>, %w: tensor<16x8x12x12xf32>) -> tensor<8x16x5x5xf32> {
  %y = nn.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<8x8x16x16xf32>, tensor<16x8x12x12xf32>) -> tensor<8x16x5x5xf32>
  func.return %y : tensor<8x16x5x5xf32>
}

// -----

// The gradient of a decomposed conv2d: one im2col (the forward's, reused by the weight
// gradient through a transpose), and the input gradient as W^T @ dY put back by col2im.
// GRAD-LABEL: func.func private @loss_vjp
// GRAD:         %[[COLS:.*]] = nn.im2col %x
// GRAD-NOT:     nn.im2col
// GRAD-NOT:     nn.conv2d
// GRAD-DAG:     nn.transpose %[[COLS]] perm = [1, 0] : tensor<72x2048xf32> -> tensor<2048x72xf32>
// GRAD-DAG:     nn.col2im %{{.*}} kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<72x2048xf32> -> tensor<8x8x16x16xf32>
func.func private @loss(%x: tensor<8x8x16x16xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<f32> {
  %y = nn.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<8x8x16x16xf32>, tensor<16x8x3x3xf32>) -> tensor<8x16x16x16xf32>
  %s = nn.mul %y, %y : tensor<8x16x16x16xf32>
  %l = nn.reduce_sum %s axes = [0, 1, 2, 3] : tensor<8x16x16x16xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
func.func @main(%x: tensor<8x8x16x16xf32>, %w: tensor<16x8x3x3xf32>) -> (tensor<8x8x16x16xf32>, tensor<16x8x3x3xf32>) {
  %dx, %dw = autodiff.grad @loss(%x, %w) wrt [0, 1] : (tensor<8x8x16x16xf32>, tensor<16x8x3x3xf32>) -> (tensor<8x8x16x16xf32>, tensor<16x8x3x3xf32>)
  func.return %dx, %dw : tensor<8x8x16x16xf32>, tensor<16x8x3x3xf32>
}
