// nn-expand-fft: each nn.fft becomes the matmul-based algorithm of irgrad/tracing/fft_algorithm.py,
// inline: one matmul by the DFT matrix up to 64 points, Cooley-Tukey stages (a DFT matmul, a
// twiddle multiply, transposes) above, Bluestein's chirp-z for a prime length above 64. Programs
// without nn.fft are left as they are.
// RUN: irgrad-opt %s -p nn-expand-fft --split-input-file | filecheck %s
// RUN: irgrad-opt %s -p nn-expand-fft,nn-expand-complex,canonicalize --split-input-file | filecheck %s --check-prefix=PAIRS
// The order matters: nn-expand-complex has no rule for nn.fft, so it must come after this pass.
// RUN: not irgrad-opt %s -p nn-expand-complex --split-input-file 2>&1 | filecheck %s --check-prefix=ORDER
// ORDER: nn-expand-fft.mlir:{{[0-9]+}}:3: error: 'nn.fft' op on complex values has no rule in nn-expand-complex: run nn-expand-fft before it

// A short transform: one matmul by the 8 x 8 DFT matrix, whose row 1 is exp(-2 pi i k / 8).
// CHECK-LABEL: func.func @direct(%x: tensor<4x8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>>
// CHECK-NEXT:    %[[W:.*]] = nn.constant dense<{{\[\[}}(1.000000e+00,0.000000e+00), {{.*}}], [(1.000000e+00,0.000000e+00), (0.707106769,-0.707106769), {{.*}} : tensor<8x8xcomplex<f32>>
// CHECK-NEXT:    %y = nn.matmul %x, %[[W]] : (tensor<4x8xcomplex<f32>>, tensor<8x8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>>
// CHECK-NEXT:    func.return %y
// CHECK-NOT:     nn.fft
// After nn-expand-complex, one real matmul of the (re, im) pairs by the matrix's real embedding:
// no complex type, slice or concatenation is left.
// PAIRS-LABEL: func.func @direct(%x: tensor<4x8x2xf32>) -> tensor<4x8x2xf32>
// PAIRS-NEXT:    %[[R:.*]] = nn.reshape %x : tensor<4x8x2xf32> -> tensor<4x16xf32>
// PAIRS-NEXT:    %[[E:.*]] = nn.constant {{.*}} : tensor<16x16xf32>
// PAIRS-NEXT:    %[[P:.*]] = nn.matmul %[[R]], %[[E]] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
// PAIRS-NEXT:    %y = nn.reshape %[[P]] : tensor<4x16xf32> -> tensor<4x8x2xf32>
// PAIRS-NEXT:    func.return %y
// PAIRS-NOT:     complex
func.func @direct(%x: tensor<4x8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>> {
  %y = nn.fft %x type = "FFT" length = [8] : tensor<4x8xcomplex<f32>> -> tensor<4x8xcomplex<f32>>
  func.return %y : tensor<4x8xcomplex<f32>>
}

// -----

// 128 = 64 x 2: the 64-point DFT down the columns, twiddles, the 2-point DFT of each row, and
// the transpose to the output order.
// CHECK-LABEL: func.func @cooley_tukey(%x: tensor<128xcomplex<f64>>) -> tensor<128xcomplex<f64>>
// CHECK-NEXT:    %[[V:.*]] = nn.reshape %x : tensor<128xcomplex<f64>> -> tensor<64x2xcomplex<f64>>
// CHECK-NEXT:    %[[C:.*]] = nn.transpose %[[V]] perm = [1, 0] : tensor<64x2xcomplex<f64>> -> tensor<2x64xcomplex<f64>>
// CHECK-NEXT:    %[[W64:.*]] = nn.constant {{.*}} : tensor<64x64xcomplex<f64>>
// CHECK-NEXT:    %[[A:.*]] = nn.matmul %[[C]], %[[W64]] : (tensor<2x64xcomplex<f64>>, tensor<64x64xcomplex<f64>>) -> tensor<2x64xcomplex<f64>>
// CHECK-NEXT:    %[[T:.*]] = nn.constant {{.*}} : tensor<2x64xcomplex<f64>>
// CHECK-NEXT:    %[[AT:.*]] = nn.mul %[[A]], %[[T]] : tensor<2x64xcomplex<f64>>
// CHECK-NEXT:    %[[R:.*]] = nn.transpose %[[AT]] perm = [1, 0] : tensor<2x64xcomplex<f64>> -> tensor<64x2xcomplex<f64>>
// CHECK-NEXT:    %[[W2:.*]] = nn.constant dense<{{\[\[}}(1.000000e+00,0.000000e+00), (1.000000e+00,0.000000e+00)], [(1.000000e+00,0.000000e+00), (-1.000000e+00,{{.*}})]]> : tensor<2x2xcomplex<f64>>
// CHECK-NEXT:    %[[B:.*]] = nn.matmul %[[R]], %[[W2]] : (tensor<64x2xcomplex<f64>>, tensor<2x2xcomplex<f64>>) -> tensor<64x2xcomplex<f64>>
// CHECK-NEXT:    %[[O:.*]] = nn.transpose %[[B]] perm = [1, 0] : tensor<64x2xcomplex<f64>> -> tensor<2x64xcomplex<f64>>
// CHECK-NEXT:    %y = nn.reshape %[[O]] : tensor<2x64xcomplex<f64>> -> tensor<128xcomplex<f64>>
// CHECK-NEXT:    func.return %y
func.func @cooley_tukey(%x: tensor<128xcomplex<f64>>) -> tensor<128xcomplex<f64>> {
  %y = nn.fft %x type = "FFT" length = [128] : tensor<128xcomplex<f64>> -> tensor<128xcomplex<f64>>
  func.return %y : tensor<128xcomplex<f64>>
}

// -----

// RFFT of an even length: the even and odd samples as one complex signal of half the length,
// its 4-point DFT, then the untangling X = (Z + R) / 2 + w^k (Z - R) / 2i with R the mirrored,
// conjugated spectrum (a stride -1 slice).
// CHECK-LABEL: func.func @rfft(%x: tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>>
// CHECK-NEXT:    %[[P:.*]] = nn.reshape %x : tensor<3x8xf32> -> tensor<3x4x2xf32>
// CHECK:         %[[Z:.*]] = nn.complex %{{.*}}, %{{.*}} : tensor<3x4xf32> -> tensor<3x4xcomplex<f32>>
// CHECK:         %[[F:.*]] = nn.matmul %[[Z]], %{{.*}} : (tensor<3x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
// CHECK:         %[[E:.*]] = nn.concatenate %[[F]], %{{.*}} dim = 1 : (tensor<3x4xcomplex<f32>>, tensor<3x1xcomplex<f32>>) -> tensor<3x5xcomplex<f32>>
// CHECK-NEXT:    %[[REV:.*]] = nn.slice %[[E]] start = [0, 4] limit = [3, -1] stride = [1, -1]
// CHECK-NEXT:    %[[R:.*]] = nn.conj %[[REV]] : tensor<3x5xcomplex<f32>>
// CHECK:         %y = nn.add {{.*}} : tensor<3x5xcomplex<f32>>
// CHECK-NOT:     tensor<3x8xcomplex<f32>>
func.func @rfft(%x: tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>> {
  %y = nn.fft %x type = "RFFT" length = [8] : tensor<3x8xf32> -> tensor<3x5xcomplex<f32>>
  func.return %y : tensor<3x5xcomplex<f32>>
}

// -----

// RFFT of an odd length: the complex transform of the real input, the non-negative half kept.
// CHECK-LABEL: func.func @rfft_odd(%x: tensor<3x7xf32>) -> tensor<3x4xcomplex<f32>>
// CHECK-NEXT:    %[[Z:.*]] = nn.convert %x : tensor<3x7xf32> -> tensor<3x7xcomplex<f32>>
// CHECK-NEXT:    %[[W:.*]] = nn.constant {{.*}} : tensor<7x7xcomplex<f32>>
// CHECK-NEXT:    %[[F:.*]] = nn.matmul %[[Z]], %[[W]]
// CHECK-NEXT:    %y = nn.slice %[[F]] start = [0, 0] limit = [3, 4] stride = [1, 1] : tensor<3x7xcomplex<f32>> -> tensor<3x4xcomplex<f32>>
func.func @rfft_odd(%x: tensor<3x7xf32>) -> tensor<3x4xcomplex<f32>> {
  %y = nn.fft %x type = "RFFT" length = [7] : tensor<3x7xf32> -> tensor<3x4xcomplex<f32>>
  func.return %y : tensor<3x4xcomplex<f32>>
}

// -----

// IRFFT of an even length, the inverse of the above: the zero and Nyquist coefficients' imaginary
// parts dropped (nn.real, then back to complex), the half-length spectrum tangled, its 4-point
// inverse, real and imaginary parts interleaved into 8 reals, the 1/8 scale.
// CHECK-LABEL: func.func @irfft(%x: tensor<5xcomplex<f32>>) -> tensor<8xf32>
// CHECK:         nn.real %{{.*}} : tensor<1xcomplex<f32>> -> tensor<1xf32>
// CHECK:         %[[C:.*]] = nn.concatenate %{{.*}}, %{{.*}}, %{{.*}} dim = 0 : (tensor<1xcomplex<f32>>, tensor<3xcomplex<f32>>, tensor<1xcomplex<f32>>) -> tensor<5xcomplex<f32>>
// CHECK-NEXT:    nn.slice %[[C]] start = [4] limit = [-1] stride = [-1]
// CHECK:         nn.matmul {{.*}} : (tensor<1x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) -> tensor<1x4xcomplex<f32>>
// CHECK:         %[[I:.*]] = nn.concatenate %{{.*}}, %{{.*}} dim = 1 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.reshape %[[I]] : tensor<4x2xf32> -> tensor<8xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.full 0.125 : tensor<8xf32>
// CHECK-NEXT:    %y = nn.mul %[[R]], %[[S]] : tensor<8xf32>
func.func @irfft(%x: tensor<5xcomplex<f32>>) -> tensor<8xf32> {
  %y = nn.fft %x type = "IRFFT" length = [8] : tensor<5xcomplex<f32>> -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// -----

// IRFFT of an odd length: the coefficients weighted (1, 2, 2, 2: a coefficient and its mirror
// image), zero-padded to 7, the inverse DFT's real part, the 1/7 scale.
// CHECK-LABEL: func.func @irfft_odd(%x: tensor<4xcomplex<f32>>) -> tensor<7xf32>
// CHECK-NEXT:    %[[C:.*]] = nn.constant dense<[(1.000000e+00,0.000000e+00), (2.000000e+00,0.000000e+00), (2.000000e+00,0.000000e+00), (2.000000e+00,0.000000e+00)]> : tensor<4xcomplex<f32>>
// CHECK-NEXT:    %[[H:.*]] = nn.mul %x, %[[C]] : tensor<4xcomplex<f32>>
// CHECK:         nn.concatenate %[[H]], %{{.*}} dim = 0 : (tensor<4xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<7xcomplex<f32>>
// CHECK:         nn.matmul {{.*}} : (tensor<1x7xcomplex<f32>>, tensor<7x7xcomplex<f32>>) -> tensor<1x7xcomplex<f32>>
// CHECK:         %[[RE:.*]] = nn.real %{{.*}} : tensor<7xcomplex<f32>> -> tensor<7xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.full 0.142857{{[0-9]*}} : tensor<7xf32>
// CHECK-NEXT:    %y = nn.mul %[[RE]], %[[S]] : tensor<7xf32>
func.func @irfft_odd(%x: tensor<4xcomplex<f32>>) -> tensor<7xf32> {
  %y = nn.fft %x type = "IRFFT" length = [7] : tensor<4xcomplex<f32>> -> tensor<7xf32>
  func.return %y : tensor<7xf32>
}

// -----

// A prime length above 64: Bluestein. The chirped input zero-padded to 256 >= 2 * 67 - 1,
// transformed, multiplied by the chirp's spectrum, transformed back, cut to 67, chirped.
// CHECK-LABEL: func.func @bluestein(%x: tensor<67xcomplex<f32>>) -> tensor<67xcomplex<f32>>
// CHECK-NEXT:    %[[CH:.*]] = nn.constant {{.*}} : tensor<67xcomplex<f32>>
// CHECK-NEXT:    %{{.*}} = nn.mul %x, %[[CH]] : tensor<67xcomplex<f32>>
// CHECK:         nn.concatenate {{.*}} : (tensor<67xcomplex<f32>>, tensor<189xcomplex<f32>>) -> tensor<256xcomplex<f32>>
// CHECK:         nn.constant {{.*}} : tensor<256xcomplex<f32>>
// CHECK-NEXT:    nn.mul {{.*}} : tensor<256xcomplex<f32>>
// CHECK:         nn.slice {{.*}} start = [0] limit = [67] stride = [1] : tensor<256xcomplex<f32>> -> tensor<67xcomplex<f32>>
// CHECK-NOT:     nn.fft
func.func @bluestein(%x: tensor<67xcomplex<f32>>) -> tensor<67xcomplex<f32>> {
  %y = nn.fft %x type = "IFFT" length = [67] : tensor<67xcomplex<f32>> -> tensor<67xcomplex<f32>>
  func.return %y : tensor<67xcomplex<f32>>
}

// -----

// A 2-D transform: each axis in turn, the first moved last and back.
// CHECK-LABEL: func.func @two_axes(%x: tensor<2x4x8xcomplex<f32>>) -> tensor<2x4x8xcomplex<f32>>
// CHECK:         nn.transpose %x perm = [0, 2, 1] : tensor<2x4x8xcomplex<f32>> -> tensor<2x8x4xcomplex<f32>>
// CHECK:         nn.matmul {{.*}} : (tensor<16x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) -> tensor<16x4xcomplex<f32>>
// CHECK:         nn.transpose {{.*}} perm = [0, 2, 1] : tensor<2x8x4xcomplex<f32>> -> tensor<2x4x8xcomplex<f32>>
// CHECK:         nn.matmul {{.*}} : (tensor<8x8xcomplex<f32>>, tensor<8x8xcomplex<f32>>) -> tensor<8x8xcomplex<f32>>
func.func @two_axes(%x: tensor<2x4x8xcomplex<f32>>) -> tensor<2x4x8xcomplex<f32>> {
  %y = nn.fft %x type = "FFT" length = [4, 8] : tensor<2x4x8xcomplex<f32>> -> tensor<2x4x8xcomplex<f32>>
  func.return %y : tensor<2x4x8xcomplex<f32>>
}

// -----

// Nothing to do: the program is unchanged.
// CHECK-LABEL: func.func @no_fft(%x: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %y = nn.exp %x : tensor<4xf32>
// CHECK-NEXT:    func.return %y : tensor<4xf32>
func.func @no_fft(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.exp %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
