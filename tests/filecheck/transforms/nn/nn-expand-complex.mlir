// nn-expand-complex: complex tensors become real tensors with a trailing (re, im) axis of 2,
// before autodiff; complex gradients and cotangents cross autodiff requests conjugated
// (JAX's convention). Programs without complex values are left as they are.
// RUN: irgrad-opt %s -p nn-expand-complex --split-input-file --verify-diagnostics | filecheck %s
// RUN: irgrad-opt %s -p nn-expand-complex,autodiff,inline,symbol-dce,canonicalize,cse,dce --split-input-file --verify-diagnostics | filecheck %s --check-prefix=GRAD
// RUN: not irgrad-opt %s -p nn-expand-complex --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// Signatures and pair-wise ops: add keeps its op, on the pairs; a transpose gains the pair axis last.
// CHECK-LABEL: func.func @add_transpose(%a: tensor<2x3x2xf32>, %b: tensor<2x3x2xf32>) -> tensor<3x2x2xf32>
// CHECK-NEXT:    %s = nn.add %a, %b : tensor<2x3x2xf32>
// CHECK-NEXT:    %t = nn.transpose %s perm = [1, 0, 2] : tensor<2x3x2xf32> -> tensor<3x2x2xf32>
// CHECK-NEXT:    func.return %t : tensor<3x2x2xf32>
func.func @add_transpose(%a: tensor<2x3xcomplex<f32>>, %b: tensor<2x3xcomplex<f32>>) -> tensor<3x2xcomplex<f32>> {
  %s = nn.add %a, %b : tensor<2x3xcomplex<f32>>
  %t = nn.transpose %s perm = [1, 0] : tensor<2x3xcomplex<f32>> -> tensor<3x2xcomplex<f32>>
  func.return %t : tensor<3x2xcomplex<f32>>
}

// -----

// mul: (ar br - ai bi, ar bi + ai br), the parts as slices of the pair axis.
// CHECK-LABEL: func.func @mul(%a: tensor<4x2xf64>, %b: tensor<4x2xf64>) -> tensor<4x2xf64>
// CHECK-NEXT:    %[[AR:.*]] = nn.slice %a start = [0, 0] limit = [4, 1] stride = [1, 1]
// CHECK-NEXT:    %[[AI:.*]] = nn.slice %a start = [0, 1] limit = [4, 2] stride = [1, 1]
// CHECK-NEXT:    %[[BR:.*]] = nn.slice %b start = [0, 0] limit = [4, 1] stride = [1, 1]
// CHECK-NEXT:    %[[BI:.*]] = nn.slice %b start = [0, 1] limit = [4, 2] stride = [1, 1]
// CHECK-NEXT:    %[[RR:.*]] = nn.mul %[[AR]], %[[BR]] : tensor<4x1xf64>
// CHECK-NEXT:    %[[II:.*]] = nn.mul %[[AI]], %[[BI]] : tensor<4x1xf64>
// CHECK-NEXT:    %[[RE:.*]] = nn.sub %[[RR]], %[[II]] : tensor<4x1xf64>
// CHECK-NEXT:    %[[RI:.*]] = nn.mul %[[AR]], %[[BI]] : tensor<4x1xf64>
// CHECK-NEXT:    %[[IR:.*]] = nn.mul %[[AI]], %[[BR]] : tensor<4x1xf64>
// CHECK-NEXT:    %[[IM:.*]] = nn.add %[[RI]], %[[IR]] : tensor<4x1xf64>
// CHECK-NEXT:    %p = nn.concatenate %[[RE]], %[[IM]] dim = 1 : (tensor<4x1xf64>, tensor<4x1xf64>) -> tensor<4x2xf64>
// CHECK-NEXT:    func.return %p : tensor<4x2xf64>
func.func @mul(%a: tensor<4xcomplex<f64>>, %b: tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
  %p = nn.mul %a, %b : tensor<4xcomplex<f64>>
  func.return %p : tensor<4xcomplex<f64>>
}

// -----

// matmul by a constant: one real matmul of the pairs, as rows of 2K reals, by the constant's real
// embedding E[2k + a, 2n + c] = [[re, im], [-im, re]][a][c]: for B = [[1 + 2i]], E = [[1, 2], [-2, 1]].
// CHECK-LABEL: func.func @matmul_by_constant(%a: tensor<3x1x2xf32>) -> tensor<3x1x2xf32>
// CHECK:         %[[R:.*]] = nn.reshape %a : tensor<3x1x2xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %[[E:.*]] = nn.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [-2.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[P:.*]] = nn.matmul %[[R]], %[[E]] : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %p = nn.reshape %[[P]] : tensor<3x2xf32> -> tensor<3x1x2xf32>
func.func @matmul_by_constant(%a: tensor<3x1xcomplex<f32>>) -> tensor<3x1xcomplex<f32>> {
  %b = nn.constant dense<[[(1.0, 2.0)]]> : tensor<1x1xcomplex<f32>>
  %p = nn.matmul %a, %b : (tensor<3x1xcomplex<f32>>, tensor<1x1xcomplex<f32>>) -> tensor<3x1xcomplex<f32>>
  func.return %p : tensor<3x1xcomplex<f32>>
}

// -----

// Parts, construction and constants: real is a slice and a reshape; complex a concatenation;
// a complex constant becomes its pairs.
// CHECK-LABEL: func.func @parts(%x: tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %c = nn.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, -4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[X:.*]] = nn.reshape %x : tensor<2xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.reshape %x : tensor<2xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %z = nn.concatenate %[[X]], %[[Y]] dim = 1
// CHECK-NEXT:    %w = nn.add %z, %c : tensor<2x2xf32>
// CHECK-NEXT:    %[[IM:.*]] = nn.slice %w start = [0, 1] limit = [2, 2] stride = [1, 1] : tensor<2x2xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %im = nn.reshape %[[IM]] : tensor<2x1xf32> -> tensor<2xf32>
// CHECK-NEXT:    func.return %im : tensor<2xf32>
func.func @parts(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = nn.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>
  %z = nn.complex %x, %x : tensor<2xf32> -> tensor<2xcomplex<f32>>
  %w = nn.add %z, %c : tensor<2xcomplex<f32>>
  %im = nn.imag %w : tensor<2xcomplex<f32>> -> tensor<2xf32>
  func.return %im : tensor<2xf32>
}

// -----

// No complex value: nothing changes.
// CHECK-LABEL: func.func @real_only(%x: tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %y = nn.exp %x : tensor<3xf32>
// CHECK-NEXT:    func.return %y : tensor<3xf32>
func.func @real_only(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = nn.exp %x : tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// -----

// The gradient of a real loss w.r.t. a complex z is dL/dx - i dL/dy: the pairs' gradient,
// conjugated. |z|^2 = re^2 + im^2 gives 2 conj(z): (2 re, -2 im).
// CHECK-LABEL: func.func @grad_of_norm
// CHECK:         %[[G:.*]] = autodiff.grad @norm(%z) wrt [0] : (tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %[[GR:.*]] = nn.slice %[[G]] start = [0, 0]
// CHECK-NEXT:    %[[GI:.*]] = nn.slice %[[G]] start = [0, 1]
// CHECK-NEXT:    %[[NEG:.*]] = nn.neg %[[GI]]
// CHECK-NEXT:    %[[C:.*]] = nn.concatenate %[[GR]], %[[NEG]] dim = 1
// CHECK-NEXT:    func.return %[[C]] : tensor<3x2xf32>
// GRAD-LABEL: func.func @grad_of_norm(%z: tensor<3x2xf32>) -> tensor<3x2xf32>
// GRAD-NOT:   autodiff.
// GRAD-NOT:   complex
// GRAD:       nn.neg
// GRAD:       func.return
func.func private @norm(%z: tensor<3xcomplex<f32>>) -> tensor<f32> {
  %re = nn.real %z : tensor<3xcomplex<f32>> -> tensor<3xf32>
  %im = nn.imag %z : tensor<3xcomplex<f32>> -> tensor<3xf32>
  %rr = nn.mul %re, %re : tensor<3xf32>
  %ii = nn.mul %im, %im : tensor<3xf32>
  %s = nn.add %rr, %ii : tensor<3xf32>
  %l = nn.reduce_sum %s axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
func.func @grad_of_norm(%z: tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {
  %g = autodiff.grad @norm(%z) wrt [0] : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  func.return %g : tensor<3xcomplex<f32>>
}

// -----

// Negative: custom derivative rules would see pairs, not complex numbers.
// ERR: error: 'autodiff.custom_vjp' op with complex values is not supported by nn-expand-complex
func.func private @prim(%z: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  func.return %z : tensor<2xcomplex<f32>>
}
func.func private @fwd(%z: tensor<2xcomplex<f32>>) -> (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) {
  func.return %z, %z : tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>
}
func.func private @bwd(%r: tensor<2xcomplex<f32>>, %g: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  func.return %g : tensor<2xcomplex<f32>>
}
func.func @custom(%z: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  // expected-error @+1 {{'autodiff.custom_vjp' op with complex values is not supported by nn-expand-complex}}
  %y = autodiff.custom_vjp @prim(%z) fwd @fwd bwd @bwd : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  func.return %y : tensor<2xcomplex<f32>>
}

// -----

// Negative: an op of another dialect on a complex tensor has no rule.
// ERR: error: 'tensor.extract' op on complex values has no rule in nn-expand-complex
func.func @extract(%z: tensor<2xcomplex<f32>>) -> complex<f32> {
  %i = arith.constant 0 : index
  // expected-error @+1 {{'tensor.extract' op on complex values has no rule in nn-expand-complex}}
  %e = tensor.extract %z[%i] : tensor<2xcomplex<f32>>
  func.return %e : complex<f32>
}

// -----

// Comparisons: eq is both parts equal (ne: either differs); the ordered directions are
// lexicographic, real parts first (numpy's and jnp's order).
// CHECK-LABEL: func.func @compare(%a: tensor<3x2xf64>, %b: tensor<3x2xf64>) -> (tensor<3xi1>, tensor<3xi1>)
// CHECK-NEXT:    %[[AR:.*]] = nn.slice %a start = [0, 0] limit = [3, 1] stride = [1, 1]
// CHECK-NEXT:    %[[AI:.*]] = nn.slice %a start = [0, 1] limit = [3, 2] stride = [1, 1]
// CHECK-NEXT:    %[[BR:.*]] = nn.slice %b start = [0, 0] limit = [3, 1] stride = [1, 1]
// CHECK-NEXT:    %[[BI:.*]] = nn.slice %b start = [0, 1] limit = [3, 2] stride = [1, 1]
// CHECK-NEXT:    %[[RE:.*]] = nn.compare eq, %[[AR]], %[[BR]] : tensor<3x1xf64>
// CHECK-NEXT:    %[[IM:.*]] = nn.compare eq, %[[AI]], %[[BI]] : tensor<3x1xf64>
// CHECK-NEXT:    %[[BOTH:.*]] = nn.and %[[RE]], %[[IM]] : tensor<3x1xi1>
// CHECK-NEXT:    %eq = nn.reshape %[[BOTH]] : tensor<3x1xi1> -> tensor<3xi1>
// CHECK:         %[[TIE:.*]] = nn.compare eq, %[[AR2:.*]], %[[BR2:.*]] : tensor<3x1xf64>
// CHECK-NEXT:    %[[ILT:.*]] = nn.compare lt, %{{.*}}, %{{.*}} : tensor<3x1xf64>
// CHECK-NEXT:    %[[RLT:.*]] = nn.compare lt, %[[AR2]], %[[BR2]] : tensor<3x1xf64>
// CHECK-NEXT:    %[[LEX:.*]] = nn.select %[[TIE]], %[[ILT]], %[[RLT]] : tensor<3x1xi1>, tensor<3x1xi1>
// CHECK-NEXT:    %lt = nn.reshape %[[LEX]] : tensor<3x1xi1> -> tensor<3xi1>
// CHECK-NEXT:    func.return %eq, %lt : tensor<3xi1>, tensor<3xi1>
func.func @compare(%a: tensor<3xcomplex<f64>>, %b: tensor<3xcomplex<f64>>) -> (tensor<3xi1>, tensor<3xi1>) {
  %eq = nn.compare eq, %a, %b : tensor<3xcomplex<f64>>
  %lt = nn.compare lt, %a, %b : tensor<3xcomplex<f64>>
  func.return %eq, %lt : tensor<3xi1>, tensor<3xi1>
}

// -----

// log, sqrt, tanh, pow, sign become real ops on the parts (log: log|z| and an atan2 of nn ops;
// sign: z / |z| under a stop_gradient, lax.sign's zero derivative); no complex type is left.
// CHECK-LABEL: func.func @functions(%z: tensor<3x2xf32>, %w: tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NOT:     complex
// CHECK:         nn.log %{{.*}} : tensor<3x1xf32>
// CHECK:         nn.sqrt %{{.*}} : tensor<3x1xf32>
// CHECK:         nn.tanh %{{.*}} : tensor<3x1xf32>
// CHECK:         nn.exp %{{.*}} : tensor<3x1xf32>
// CHECK:         %[[S:.*]] = autodiff.stop_gradient %{{.*}} : tensor<3x2xf32>
// CHECK-NOT:     complex
// CHECK:         func.return %{{.*}} : tensor<3x2xf32>
func.func @functions(%z: tensor<3xcomplex<f32>>, %w: tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {
  %l = nn.log %z : tensor<3xcomplex<f32>>
  %r = nn.sqrt %l : tensor<3xcomplex<f32>>
  %t = nn.tanh %r : tensor<3xcomplex<f32>>
  %p = nn.pow %t, %w : tensor<3xcomplex<f32>>
  %s = nn.sign %p : tensor<3xcomplex<f32>>
  %y = nn.add %s, %p : tensor<3xcomplex<f32>>
  func.return %y : tensor<3xcomplex<f32>>
}
