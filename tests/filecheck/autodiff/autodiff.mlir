// RUN: irgrad-opt %s -p autodiff --split-input-file | filecheck %s

// The autodiff pass: each request becomes a call of a generated @<f>_vjp / @<f>_jvp of ordinary IR.
// Numerical checks of every rule are in tests/unit/autodiff/test_autodiff_rules.py; this file shows the IR.

// exp, in full: the forward sweep is @exp's body, then the reverse sweep. The product with the cotangent is
// a "strong zero" select, so a zero cotangent stays zero even where the factor is inf or NaN; where the factor
// is finite it is the plain product, whose derivative in the cotangent (for grad of grad) is the factor.
func.func @exp(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = nn.exp %x : tensor<3xf32>
  func.return %y : tensor<3xf32>
}
func.func @use_exp(%x: tensor<3xf32>, %dy: tensor<3xf32>) -> tensor<3xf32> {
  %y, %dx = autodiff.vjp @exp(%x) cotangents(%dy : tensor<3xf32>) wrt [0] : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %dx : tensor<3xf32>
}

// CHECK-LABEL: func.func private @exp_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
// CHECK-NEXT:    %[[Y:.*]] = nn.exp %[[X]] : tensor<3xf32>
// CHECK-NEXT:    %[[PRODUCT:.*]] = nn.mul %[[CT]], %[[Y]] : tensor<3xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = nn.full 0.0 : tensor<3xf32>
// CHECK-NEXT:    %[[IS_ZERO:.*]] = nn.compare eq, %[[CT]], %[[ZERO]] : tensor<3xf32>
// CHECK-NEXT:    %[[GUARDED:.*]] = nn.select %[[IS_ZERO]], %[[CT]], %[[PRODUCT]] : tensor<3xi1>, tensor<3xf32>
// CHECK-NEXT:    %[[ABS:.*]] = nn.abs %[[Y]] : tensor<3xf32>
// CHECK-NEXT:    %[[INF:.*]] = nn.full inf : tensor<3xf32>
// CHECK-NEXT:    %[[FINITE:.*]] = nn.compare lt, %[[ABS]], %[[INF]] : tensor<3xf32>
// CHECK-NEXT:    %[[DX:.*]] = nn.select %[[FINITE]], %[[PRODUCT]], %[[GUARDED]] : tensor<3xi1>, tensor<3xf32>
// CHECK-NEXT:    func.return %[[Y]], %[[DX]] : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @use_exp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[DY:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %{{.*}}, %[[DX:.*]] = func.call @exp_vjp(%[[X]], %[[DY]]) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT:    func.return %[[DX]] : tensor<3xf32>
// CHECK-NOT:   autodiff.

// -----

// Fan-out: a = x * x; z = a + a. Both uses of %a send back a cotangent and they are summed (2 ct); both
// operands of x * x are %x, so its adjoint is the sum of two equal terms: dz/dx = 4x.
func.func @fan_out(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = nn.mul %x, %x : tensor<2xf32>
  %z = nn.add %a, %a : tensor<2xf32>
  func.return %z : tensor<2xf32>
}
func.func @use(%x: tensor<2xf32>, %dz: tensor<2xf32>) -> tensor<2xf32> {
  %z, %dx = autodiff.vjp @fan_out(%x) cotangents(%dz : tensor<2xf32>) wrt [0] : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %dx : tensor<2xf32>
}

// CHECK-LABEL: func.func private @fan_out_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<2xf32>, %[[CT:.*]]: tensor<2xf32>)
// CHECK-NEXT:    %[[A:.*]] = nn.mul %[[X]], %[[X]] : tensor<2xf32>
// CHECK-NEXT:    %[[Z:.*]] = nn.add %[[A]], %[[A]] : tensor<2xf32>
// CHECK-NEXT:    %[[A_BAR:.*]] = nn.add %[[CT]], %[[CT]] : tensor<2xf32>
// CHECK-NEXT:    %[[P:.*]] = nn.mul %[[A_BAR]], %[[X]] : tensor<2xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = nn.full 0.0 : tensor<2xf32>
// CHECK-NEXT:    %[[IS_ZERO:.*]] = nn.compare eq, %[[A_BAR]], %[[ZERO]] : tensor<2xf32>
// CHECK-NEXT:    %[[GUARDED:.*]] = nn.select %[[IS_ZERO]], %[[A_BAR]], %[[P]] : tensor<2xi1>, tensor<2xf32>
// CHECK:         %[[TERM:.*]] = nn.select %{{.*}}, %[[P]], %[[GUARDED]] : tensor<2xi1>, tensor<2xf32>
// CHECK-NEXT:    %[[X_BAR:.*]] = nn.add %[[TERM]], %[[TERM]] : tensor<2xf32>
// CHECK-NEXT:    func.return %[[Z]], %[[X_BAR]] : tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT:  }

// -----

// matmul and a broadcast bias: transposed matmuls, and the broadcast undone by one reduce_sum.
func.func @linear(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>) -> tensor<4x2xf32> {
  %m = nn.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %bb = nn.broadcast_in_dim %b dims = [1] : tensor<2xf32> -> tensor<4x2xf32>
  %y = nn.add %m, %bb : tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
func.func @use(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>, %dy: tensor<4x2xf32>) -> (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) {
  %y, %dx, %dw, %db = autodiff.vjp @linear(%x, %w, %b) cotangents(%dy : tensor<4x2xf32>) wrt [0, 1, 2] : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>)
  func.return %dx, %dw, %db : tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func private @linear_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3x2xf32>, %[[B:.*]]: tensor<2xf32>, %[[CT:.*]]: tensor<4x2xf32>)
// CHECK-SAME:      -> (tensor<4x2xf32>, tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>)
// CHECK-NEXT:    %[[M:.*]] = nn.matmul %[[X]], %[[W]]
// CHECK-NEXT:    %[[BB:.*]] = nn.broadcast_in_dim %[[B]] dims = [1]
// CHECK-NEXT:    %[[Y:.*]] = nn.add %[[M]], %[[BB]]
// CHECK-NEXT:    %[[DB:.*]] = nn.reduce_sum %[[CT]] axes = [0] : tensor<4x2xf32> -> tensor<2xf32>
// CHECK-NEXT:    %[[WT:.*]] = nn.transpose %[[W]] perm = [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = nn.matmul %[[CT]], %[[WT]] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[XT:.*]] = nn.transpose %[[X]] perm = [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %[[DW:.*]] = nn.matmul %[[XT]], %[[CT]] : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %[[Y]], %[[DX]], %[[DW]], %[[DB]]
// CHECK-NEXT:  }

// -----

// Activity: with wrt [0], %y's exp is a constant factor and sin(%y) reaches no result, so neither gets
// derivative code. Requests with the same (callee, mode, wrt) share one function; another wrt gets its own.
func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<f32> {
  %a = nn.exp %y : tensor<3xf32>
  %b = nn.mul %x, %a : tensor<3xf32>
  %unused = nn.sin %y : tensor<3xf32>
  %s = nn.reduce_sum %b axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
  %g = autodiff.grad @f(%x, %y) wrt [0] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %v, %g2 = autodiff.value_and_grad @f(%x, %y) wrt [0] : (tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
  %gy = autodiff.grad @f(%x, %y) wrt [1] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %g, %v, %g2, %gy : tensor<3xf32>, tensor<f32>, tensor<3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<f32>) -> (tensor<f32>, tensor<3xf32>)
// CHECK:         %[[A:.*]] = nn.exp %[[Y]]
// CHECK:         %[[S:.*]] = nn.reduce_sum
// CHECK-NEXT:    %[[B_BAR:.*]] = nn.broadcast_in_dim %[[CT]] dims = [] : tensor<f32> -> tensor<3xf32>
// CHECK-NOT:     nn.cos
// CHECK-NOT:     %[[X]]
// CHECK:         nn.mul %[[B_BAR]], %[[A]]
// CHECK-NOT:     nn.cos
// CHECK:         func.return %[[S]], %{{.*}} : tensor<f32>, tensor<3xf32>
// CHECK-LABEL: func.func private @f_vjp_wrt_1(
// CHECK:         nn.mul %{{.*}}, %{{.*}}
// CHECK-NOT:     nn.cos
// CHECK:         func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[ONE:.*]] = nn.full 1.0 : tensor<f32>
// CHECK-NEXT:    %{{.*}}, %[[G:.*]] = func.call @f_vjp(%{{.*}}, %{{.*}}, %[[ONE]])
// CHECK-NEXT:    %[[ONE2:.*]] = nn.full 1.0 : tensor<f32>
// CHECK-NEXT:    %[[V:.*]], %[[G2:.*]] = func.call @f_vjp(%{{.*}}, %{{.*}}, %[[ONE2]])
// CHECK-NEXT:    %[[ONE3:.*]] = nn.full 1.0 : tensor<f32>
// CHECK-NEXT:    %{{.*}}, %[[GY:.*]] = func.call @f_vjp_wrt_1(%{{.*}}, %{{.*}}, %[[ONE3]])
// CHECK-NEXT:    func.return %[[G]], %[[V]], %[[G2]], %[[GY]]

// -----

// stop_gradient blocks: d/dx [x * stop_gradient(x)] = x, so only the first operand of the product gets a
// cotangent. Afterwards stop_gradient is the identity everywhere.
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %s = autodiff.stop_gradient %x : tensor<3xf32>
  %m = nn.mul %x, %s : tensor<3xf32>
  %r = nn.reduce_sum %m axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %r : tensor<f32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %g = autodiff.grad @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK:         %[[M_BAR:.*]] = nn.broadcast_in_dim %[[CT]]
// CHECK:         %[[P:.*]] = nn.mul %[[M_BAR]], %[[X]]
// CHECK:         %[[GUARDED:.*]] = nn.select %{{.*}}, %[[M_BAR]], %[[P]]
// CHECK:         %[[X_BAR:.*]] = nn.select %{{.*}}, %[[P]], %[[GUARDED]]
// CHECK-NEXT:    func.return %{{.*}}, %[[X_BAR]]
// CHECK-NOT:   autodiff.stop_gradient

// -----

// Grad of grad on scalars (arith/math): @df's derivative differentiates @f_vjp, which holds only
// arith/math/func ops. Only the gradient result of the inner call is seeded: its value result's
// cotangent is ignored.
func.func @f(%x: f32) -> f32 {
  %y = math.sin %x : f32
  func.return %y : f32
}
func.func @df(%x: f32) -> f32 {
  %g = autodiff.grad @f(%x) : (f32) -> f32
  func.return %g : f32
}
func.func @ddf(%x: f32) -> f32 {
  %g = autodiff.grad @df(%x) : (f32) -> f32
  func.return %g : f32
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: f32, %[[CT:.*]]: f32) -> (f32, f32) {
// CHECK-NEXT:    %[[Y:.*]] = math.sin %[[X]] : f32
// CHECK-NEXT:    %[[COS:.*]] = math.cos %[[X]] : f32
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[CT]], %[[COS]] : f32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[IS_ZERO:.*]] = arith.cmpf oeq, %[[CT]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[GUARDED:.*]] = arith.select %[[IS_ZERO]], %[[CT]], %[[P]] : f32
// CHECK-NEXT:    %[[ABS:.*]] = math.absf %[[COS]] : f32
// CHECK-NEXT:    %[[INF:.*]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT:    %[[FINITE:.*]] = arith.cmpf olt, %[[ABS]], %[[INF]] : f32
// CHECK-NEXT:    %[[DX:.*]] = arith.select %[[FINITE]], %[[P]], %[[GUARDED]] : f32
// CHECK-NEXT:    func.return %[[Y]], %[[DX]] : f32, f32
// CHECK-NEXT:  }
// CHECK-LABEL: func.func private @f_vjp_vjp(
// CHECK:         math.sin
// CHECK:         arith.negf
// CHECK:         func.return
// CHECK-LABEL: func.func @df(
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %{{.*}}, %[[G:.*]] = func.call @f_vjp(%{{.*}}, %[[ONE]]) : (f32, f32) -> (f32, f32)
// CHECK-NEXT:    func.return %[[G]] : f32
// CHECK-LABEL: func.func private @df_vjp(
// CHECK-SAME:      %[[X:.*]]: f32, %[[CT:.*]]: f32) -> (f32, f32) {
// CHECK:         %[[NO_CT:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %{{.*}}, %{{.*}}, %[[DDX:.*]] = func.call @f_vjp_vjp(%[[X]], %{{.*}}, %[[NO_CT]], %[[CT]]) : (f32, f32, f32, f32) -> (f32, f32, f32)
// CHECK-NEXT:    func.return %{{.*}}, %[[DDX]] : f32, f32
// CHECK-LABEL: func.func @ddf(
// CHECK:         func.call @df_vjp(
// CHECK-NOT:   autodiff.

// -----

// Forward mode: tangents beside the primal values, nothing saved. The integer result gets a zero tangent.
func.func @f(%x: tensor<2xf32>, %w: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi32>) {
  %y = nn.mul %x, %w : tensor<2xf32>
  %t = nn.tanh %y : tensor<2xf32>
  %i = nn.convert %x : tensor<2xf32> -> tensor<2xi32>
  func.return %t, %i : tensor<2xf32>, tensor<2xi32>
}
func.func @main(%x: tensor<2xf32>, %w: tensor<2xf32>, %dx: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi32>) {
  %y, %i, %dy, %di = autodiff.jvp @f(%x, %w) tangents(%dx : tensor<2xf32>) wrt [0] : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi32>)
  func.return %dy, %di : tensor<2xf32>, tensor<2xi32>
}

// CHECK-LABEL: func.func private @f_jvp(
// CHECK-SAME:      %[[X:.*]]: tensor<2xf32>, %[[W:.*]]: tensor<2xf32>, %[[X_DOT:.*]]: tensor<2xf32>)
// CHECK-SAME:      -> (tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) {
// CHECK-NEXT:    %[[Y:.*]] = nn.mul %[[X]], %[[W]] : tensor<2xf32>
// CHECK-NEXT:    %[[Y_DOT:.*]] = nn.mul %[[X_DOT]], %[[W]] : tensor<2xf32>
// CHECK-NEXT:    %[[T:.*]] = nn.tanh %[[Y]] : tensor<2xf32>
// CHECK-NEXT:    %[[ONE:.*]] = nn.full 1.0 : tensor<2xf32>
// CHECK-NEXT:    %[[T2:.*]] = nn.mul %[[T]], %[[T]] : tensor<2xf32>
// CHECK-NEXT:    %[[DTANH:.*]] = nn.sub %[[ONE]], %[[T2]] : tensor<2xf32>
// CHECK-NEXT:    %[[T_DOT:.*]] = nn.mul %[[Y_DOT]], %[[DTANH]] : tensor<2xf32>
// CHECK-NEXT:    %[[I:.*]] = nn.convert %[[X]] : tensor<2xf32> -> tensor<2xi32>
// CHECK-NEXT:    %[[I_DOT:.*]] = nn.full 0 : tensor<2xi32>
// CHECK-NEXT:    func.return %[[T]], %[[I]], %[[T_DOT]], %[[I_DOT]] : tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi32>
// CHECK-NEXT:  }

// -----

// Jvp of grad (a Hessian-vector product): the forward-mode derivative of the generated @f_vjp.
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %e = nn.sin %x : tensor<3xf32>
  %s = nn.reduce_sum %e axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
func.func @df(%x: tensor<3xf32>) -> tensor<3xf32> {
  %g = autodiff.grad @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}
func.func @hvp(%x: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  %g, %hv = autodiff.jvp @df(%x) tangents(%v : tensor<3xf32>) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %hv : tensor<3xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-LABEL: func.func private @f_vjp_jvp(
// CHECK-SAME:      %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<f32>, %[[X_DOT:.*]]: tensor<3xf32>)
// CHECK:         nn.mul %[[X_DOT]], %{{.*}} : tensor<3xf32>
// CHECK:         func.return
// CHECK-LABEL: func.func private @df_jvp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[X_DOT:.*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
// CHECK-NEXT:    %[[ONE:.*]] = nn.full 1.0 : tensor<f32>
// CHECK-NEXT:    %{{.*}}, %[[G:.*]], %{{.*}}, %[[G_DOT:.*]] = func.call @f_vjp_jvp(%[[X]], %[[ONE]], %[[X_DOT]])
// CHECK-NEXT:    func.return %[[G]], %[[G_DOT]]
// CHECK-LABEL: func.func @hvp(
// CHECK:         func.call @df_jvp(

// -----

// A call inside a differentiated function: @g is differentiated once and @g_vjp called per call site, in
// reverse order; it recomputes @g's forward values (calls behave as checkpoints).
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.exp %x : tensor<2xf32>
  func.return %y : tensor<2xf32>
}
func.func @f(%x: tensor<2xf32>) -> tensor<f32> {
  %a = func.call @g(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %b = func.call @g(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %s = nn.reduce_sum %b axes = [0] : tensor<2xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %g = autodiff.grad @f(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %g : tensor<2xf32>
}

// CHECK-LABEL: func.func private @g_vjp(
// CHECK-NOT:   func.func private @g_vjp
// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<2xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[A:.*]] = func.call @g(%[[X]])
// CHECK-NEXT:    %[[B:.*]] = func.call @g(%[[A]])
// CHECK-NEXT:    %[[S:.*]] = nn.reduce_sum %[[B]]
// CHECK-NEXT:    %[[B_BAR:.*]] = nn.broadcast_in_dim %[[CT]]
// CHECK-NEXT:    %{{.*}}, %[[A_BAR:.*]] = func.call @g_vjp(%[[A]], %[[B_BAR]])
// CHECK-NEXT:    %{{.*}}, %[[X_BAR:.*]] = func.call @g_vjp(%[[X]], %[[A_BAR]])
// CHECK-NEXT:    func.return %[[S]], %[[X_BAR]]

// -----

// Outside differentiated code, checkpoint and custom_vjp are plain calls of their callee.
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.exp %x : tensor<2xf32>
  func.return %y : tensor<2xf32>
}
func.func @g_fwd(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %y = nn.exp %x : tensor<2xf32>
  func.return %y, %y : tensor<2xf32>, tensor<2xf32>
}
func.func @g_bwd(%y: tensor<2xf32>, %ct: tensor<2xf32>) -> tensor<2xf32> {
  %d = nn.mul %y, %ct : tensor<2xf32>
  func.return %d : tensor<2xf32>
}
func.func @plain_calls(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %a = autodiff.checkpoint @g(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %b = autodiff.custom_vjp @g(%x) fwd @g_fwd bwd @g_bwd : (tensor<2xf32>) -> tensor<2xf32>
  func.return %a, %b : tensor<2xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @plain_calls(
// CHECK-NEXT:    %[[A:.*]] = func.call @g(%{{.*}}) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[B:.*]] = func.call @g(%{{.*}}) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]]

// -----

// Inactive control flow is copied as it is (active control flow: autodiff-scf.mlir). The index result's
// cotangent is ignored.
func.func @f(%x: tensor<2xf32>, %n: index) -> (tensor<2xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %count = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    %next = arith.addi %acc, %c1 : index
    scf.yield %next : index
  }
  %y = nn.exp %x : tensor<2xf32>
  func.return %y, %count : tensor<2xf32>, index
}
func.func @main(%x: tensor<2xf32>, %n: index, %dy: tensor<2xf32>) -> tensor<2xf32> {
  %y, %count, %dx = autodiff.vjp @f(%x, %n) cotangents(%dy, %n : tensor<2xf32>, index) wrt [0] : (tensor<2xf32>, index) -> (tensor<2xf32>, index, tensor<2xf32>)
  func.return %dx : tensor<2xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %{{.*}}: tensor<2xf32>, %{{.*}}: index, %[[CT:.*]]: tensor<2xf32>, %[[CT_COUNT:.*]]: index)
// CHECK:         %[[COUNT:.*]] = scf.for
// CHECK:           arith.addi
// CHECK:         %[[Y:.*]] = nn.exp
// CHECK-NOT:     %[[CT_COUNT]]
// CHECK:         nn.select %{{.*}}, %[[CT]], %{{.*}}
// CHECK:         %[[DX:.*]] = nn.select
// CHECK-NEXT:    func.return %[[Y]], %[[COUNT]], %[[DX]] : tensor<2xf32>, index, tensor<2xf32>
