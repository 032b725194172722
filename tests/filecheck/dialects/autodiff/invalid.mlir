// RUN: irgrad-opt %s --split-input-file --verify-diagnostics

// Each case breaks one verifier rule of the autodiff dialect; the expected-error annotation is the diagnostic it must produce.

// The callee must exist in the nearest symbol table.
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.grad' op callee @missing does not reference a symbol in the nearest symbol table}}
  %g = autodiff.grad @missing(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// The callee must be a func.func, not any other symbol.
"memref.global"() <{sym_name = "weights", sym_visibility = "private", type = memref<3xf32>, initial_value}> : () -> ()
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.grad' op callee @weights does not reference a func.func, but a 'memref.global'}}
  %g = autodiff.grad @weights(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// One operand per callee argument.
func.func private @loss(tensor<3xf32>, tensor<3xf32>) -> f32
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.grad' op incorrect number of arguments: expected 2 (inputs of @loss), got 1}}
  %g = autodiff.grad @loss(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// Operand types must match the callee's argument types.
func.func private @loss(tensor<3xf32>, tensor<3xf32>) -> f32
func.func @main(%x: tensor<3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'autodiff.grad' op argument #1 type mismatch: expected tensor<3xf32> (inputs of @loss), got tensor<4xf32>}}
  %g = autodiff.grad @loss(%x, %y) : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>
  func.return
}


// -----

// wrt indices must name an argument of the callee.
func.func private @loss(tensor<3xf32>, tensor<3xf32>) -> f32
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.grad' op wrt index 2 out of range: @loss has 2 arguments}}
  %g = autodiff.grad @loss(%x, %y) wrt [2] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// Negative wrt indices are out of range too.
func.func private @loss(tensor<3xf32>) -> f32
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.grad' op wrt index -1 out of range: @loss has 1 argument}}
  %g = autodiff.grad @loss(%x) wrt [-1] : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// wrt indices must not repeat.
func.func private @loss(tensor<3xf32>, tensor<3xf32>) -> f32
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.grad' op wrt index 0 appears more than once in [0, 0]}}
  %g0, %g1 = autodiff.grad @loss(%x, %y) wrt [0, 0] : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  func.return
}


// -----

// wrt indices must be sorted, so results come in argument order.
func.func private @loss(tensor<3xf32>, tensor<2xf32>) -> f32
func.func @main(%x: tensor<3xf32>, %y: tensor<2xf32>) {
  // expected-error @+1 {{'autodiff.grad' op wrt indices must be sorted in increasing order, got [1, 0]}}
  %g1, %g0 = autodiff.grad @loss(%x, %y) wrt [1, 0] : (tensor<3xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3xf32>)
  func.return
}


// -----

// A derivative with respect to nothing is a mistake, not a no-op.
func.func private @loss(tensor<3xf32>) -> f32
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.grad' op wrt must list at least one argument index}}
  autodiff.grad @loss(%x) wrt [] : (tensor<3xf32>) -> ()
  func.return
}


// -----

// Integer arguments have no gradient.
func.func private @loss(tensor<3xf32>, i32) -> f32
func.func @main(%x: tensor<3xf32>, %n: i32) {
  // expected-error @+1 {{'autodiff.grad' op cannot differentiate with respect to argument #1 of @loss: i32 is not a floating-point type (f16, bf16, f32, f64 or a tensor of them)}}
  %g = autodiff.grad @loss(%x, %n) wrt [1] : (tensor<3xf32>, i32) -> i32
  func.return
}


// -----

// Nor do boolean tensors, in any mode.
func.func private @f(tensor<3xi1>) -> tensor<3xf32>
func.func @main(%m: tensor<3xi1>, %dy: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.vjp' op cannot differentiate with respect to argument #0 of @f: tensor<3xi1> is not a floating-point type (f16, bf16, f32, f64 or a tensor of them)}}
  %y, %dm = autodiff.vjp @f(%m) cotangents(%dy : tensor<3xf32>) : (tensor<3xi1>) -> (tensor<3xf32>, tensor<3xi1>)
  func.return
}


// -----

// grad needs a scalar function: one float scalar or rank-0 float tensor result.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.grad' op callee @f must return exactly one float scalar or rank-0 float tensor, but returns (tensor<3xf32>)}}
  %g = autodiff.grad @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// value_and_grad has the same requirement; two results are not a scalar.
func.func private @f(tensor<3xf32>) -> (f32, f32)
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.value_and_grad' op callee @f must return exactly one float scalar or rank-0 float tensor, but returns (f32, f32)}}
  %v, %g = autodiff.value_and_grad @f(%x) : (tensor<3xf32>) -> (f32, tensor<3xf32>)
  func.return
}


// -----

// A gradient has the type of its argument.
func.func private @loss(tensor<3xf32>) -> tensor<f32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.grad' op result #0 type mismatch: expected tensor<3xf32> (one gradient per wrt index of @loss), got tensor<3xf64>}}
  %g = autodiff.grad @loss(%x) : (tensor<3xf32>) -> tensor<3xf64>
  func.return
}


// -----

// One gradient per wrt index.
func.func private @loss(tensor<3xf32>, tensor<3xf32>) -> f32
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.grad' op incorrect number of results: expected 2 (one gradient per wrt index of @loss), got 1}}
  %g = autodiff.grad @loss(%x, %y) wrt [0, 1] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// value_and_grad returns the value first.
func.func private @loss(tensor<3xf32>) -> f32
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.value_and_grad' op result #0 type mismatch: expected f32 (the result of @loss, then one gradient per wrt index), got tensor<3xf32>}}
  %g, %v = autodiff.value_and_grad @loss(%x) : (tensor<3xf32>) -> (tensor<3xf32>, f32)
  func.return
}


// -----

// vjp takes one cotangent per callee result, of that result's type.
func.func private @f(tensor<3xf32>) -> tensor<2xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.vjp' op cotangent #0 type mismatch: expected tensor<2xf32> (one per result of @f), got tensor<3xf32>}}
  %y, %dx = autodiff.vjp @f(%x) cotangents(%x : tensor<3xf32>) : (tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>)
  func.return
}


// -----

// A vjp without cotangents cannot seed the reverse sweep.
func.func private @f(tensor<3xf32>) -> tensor<2xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.vjp' op incorrect number of cotangents: expected 1 (one per result of @f), got 0}}
  %y, %dx = autodiff.vjp @f(%x) cotangents() : (tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>)
  func.return
}


// -----

// vjp returns the primal results, then one cotangent per wrt argument.
func.func private @f(tensor<3xf32>) -> tensor<2xf32>
func.func @main(%x: tensor<3xf32>, %dy: tensor<2xf32>) {
  // expected-error @+1 {{'autodiff.vjp' op result #1 type mismatch: expected tensor<3xf32> (the results of @f, then one cotangent per wrt index), got tensor<2xf32>}}
  %y, %dx = autodiff.vjp @f(%x) cotangents(%dy : tensor<2xf32>) : (tensor<3xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return
}


// -----

// jvp takes one tangent per wrt argument, of that argument's type.
func.func private @f(tensor<3xf32>, tensor<2xf32>) -> tensor<2xf32>
func.func @main(%x: tensor<3xf32>, %w: tensor<2xf32>) {
  // expected-error @+1 {{'autodiff.jvp' op tangent #0 type mismatch: expected tensor<2xf32> (one per wrt argument of @f), got tensor<3xf32>}}
  %y, %dy = autodiff.jvp @f(%x, %w) tangents(%x : tensor<3xf32>) wrt [1] : (tensor<3xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return
}


// -----

// jvp returns the primal results, then one tangent per result.
func.func private @f(tensor<3xf32>) -> tensor<2xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.jvp' op incorrect number of results: expected 2 (the results of @f, then one tangent per result), got 1}}
  %y = autodiff.jvp @f(%x) tangents(%x : tensor<3xf32>) : (tensor<3xf32>) -> tensor<2xf32>
  func.return
}


// -----

// custom_vjp's fwd must take the callee's arguments.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func private @f_fwd(tensor<4xf32>) -> (tensor<3xf32>, tensor<3xf32>)
func.func private @f_bwd(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.custom_vjp' op fwd @f_fwd must take the arguments of @f (tensor<3xf32>), but takes (tensor<4xf32>)}}
  %y = autodiff.custom_vjp @f(%x) fwd @f_fwd bwd @f_bwd : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// custom_vjp's fwd must return the callee's results before its residuals.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func private @f_fwd(tensor<3xf32>) -> (f32, tensor<3xf32>)
func.func private @f_bwd(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.custom_vjp' op fwd @f_fwd must return the results of @f (tensor<3xf32>) followed by residuals, but returns (f32, tensor<3xf32>)}}
  %y = autodiff.custom_vjp @f(%x) fwd @f_fwd bwd @f_bwd : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// custom_vjp's bwd must take fwd's residuals, then one cotangent per callee result.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func private @f_fwd(tensor<3xf32>) -> (tensor<3xf32>, f32)
func.func private @f_bwd(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.custom_vjp' op bwd @f_bwd must take the residuals of @f_fwd (f32) followed by one cotangent per result of @f (tensor<3xf32>), but takes (tensor<3xf32>, tensor<3xf32>)}}
  %y = autodiff.custom_vjp @f(%x) fwd @f_fwd bwd @f_bwd : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// custom_vjp's bwd must return one cotangent per callee argument.
func.func private @f(tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
func.func private @f_fwd(tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
func.func private @f_bwd(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>, %w: tensor<2xf32>) {
  // expected-error @+1 {{'autodiff.custom_vjp' op bwd @f_bwd must return one cotangent per argument of @f (tensor<3xf32>, tensor<2xf32>), but returns (tensor<3xf32>)}}
  %y = autodiff.custom_vjp @f(%x, %w) fwd @f_fwd bwd @f_bwd : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return
}


// -----

// custom_vjp's fwd and bwd are symbols too, resolved like the callee.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func private @f_fwd(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.custom_vjp' op bwd @f_bwd does not reference a symbol in the nearest symbol table}}
  %y = autodiff.custom_vjp @f(%x) fwd @f_fwd bwd @f_bwd : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// checkpoint returns exactly the callee's results.
func.func private @block(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.checkpoint' op result #0 type mismatch: expected tensor<3xf32> (results of @block), got tensor<3xf64>}}
  %y = autodiff.checkpoint @block(%x) : (tensor<3xf32>) -> tensor<3xf64>
  func.return
}


// -----

// stop_gradient is an identity: its result has its operand's type.
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{attribute tensor<3xf32> expected from variable 'T', but got tensor<3xf64>}}
  %y = "autodiff.stop_gradient"(%x) : (tensor<3xf32>) -> tensor<3xf64>
  func.return
}


// -----

// batch: one in_axes entry per argument.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'autodiff.batch' op in_axes has 2 entries for 1 argument}}
  %y = autodiff.batch @f(%x) in_axes = [0, 0] out_axes = [0] : (tensor<8x3xf32>) -> tensor<8x3xf32>
  func.return
}


// -----

// batch: something must be mapped.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.batch' op in_axes maps no argument (all -1); there is nothing to batch over}}
  %y = autodiff.batch @f(%x) in_axes = [-1] out_axes = [-1] : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// batch: every mapped argument has the same batch size.
func.func private @f(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<8x3xf32>, %y: tensor<3x4xf32>) {
  // expected-error @+1 {{'autodiff.batch' op argument #1 has batch size 4 at axis 1, another argument 8}}
  %z = autodiff.batch @f(%x, %y) in_axes = [0, 1] out_axes = [0] : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x3xf32>
  func.return
}


// -----

// batch: a mapped argument is the callee's input with the batch axis inserted.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'autodiff.batch' op argument #0 type mismatch: expected tensor<8x3xf32> (inputs of @f with the batch axis), got tensor<8x4xf32>}}
  %y = autodiff.batch @f(%x) in_axes = [0] out_axes = [0] : (tensor<8x4xf32>) -> tensor<8x3xf32>
  func.return
}


// -----

// batch: the results carry the batch at out_axes.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'autodiff.batch' op result #0 type mismatch: expected tensor<3x8xf32> (the results of @f with the batch axis), got tensor<8x3xf32>}}
  %y = autodiff.batch @f(%x) in_axes = [0] out_axes = [1] : (tensor<8x3xf32>) -> tensor<8x3xf32>
  func.return
}


// -----

// batch: a mapped input must be a ranked tensor.
func.func private @g(f32) -> f32
func.func @main(%x: tensor<8xf32>) {
  // expected-error @+1 {{'autodiff.batch' op in_axes[0] = 0 does not fit input #0 of @g (f32): a mapped input must be a ranked tensor and the axis at most its rank}}
  %y = autodiff.batch @g(%x) in_axes = [0] out_axes = [0] : (tensor<8xf32>) -> tensor<8xf32>
  func.return
}


// -----

// custom_jvp's rule must take the callee's arguments, then one tangent per argument.
func.func private @f(tensor<3xf32>, i32) -> tensor<3xf32>
func.func private @f_rule(tensor<3xf32>, i32, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
func.func @main(%x: tensor<3xf32>, %n: i32) {
  // expected-error @+1 {{'autodiff.custom_jvp' op jvp @f_rule must take the arguments of @f (tensor<3xf32>, i32) followed by one tangent per argument, but takes (tensor<3xf32>, i32, tensor<3xf32>)}}
  %y = autodiff.custom_jvp @f(%x, %n) jvp @f_rule : (tensor<3xf32>, i32) -> tensor<3xf32>
  func.return
}


// -----

// custom_jvp's rule must return the callee's results, then one tangent per result.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func private @f_rule(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.custom_jvp' op jvp @f_rule must return the results of @f (tensor<3xf32>) followed by one tangent per result, but returns (tensor<3xf32>)}}
  %y = autodiff.custom_jvp @f(%x) jvp @f_rule : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}


// -----

// custom_jvp's rule is a symbol too.
func.func private @f(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) {
  // expected-error @+1 {{'autodiff.custom_jvp' op jvp @missing does not reference a symbol in the nearest symbol table}}
  %y = autodiff.custom_jvp @f(%x) jvp @missing : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}

