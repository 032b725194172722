// RUN: irgrad-opt %s --split-input-file --verify-diagnostics

// One case per nn verifier rule (and per parse error of nn's custom syntax). Each
// `expected-error @+1 {{...}}` names the rule that must fire on the next line (MLIR's
// --verify-diagnostics), so a case that fails for another reason, on another line, or not at
// all, fails the test. The generic form spells IR that the custom syntax cannot express.

// ===============================================================================================
// Types every nn op checks
// ===============================================================================================

// An element type outside f16, bf16, f32, f64, i1, i32, i64: i8.
func.func @element_type_i8(%a: tensor<4xi8>) {
  // expected-error @+1 {{'nn.neg' op operand #0 has element type i8; nn tensors hold f16, bf16, f32, f64, i1, i32, i64, complex<f32> or complex<f64>}}
  %0 = nn.neg %a : tensor<4xi8>
  func.return
}

// -----

// An element type outside the supported set: f80.
func.func @element_type_f80(%a: tensor<4xf80>) {
  // expected-error @+1 {{'nn.exp' op operand #0 has element type f80; nn tensors hold f16, bf16, f32, f64, i1, i32, i64, complex<f32> or complex<f64>}}
  %0 = nn.exp %a : tensor<4xf80>
  func.return
}

// -----

// Integers are signless: si32 is not an nn element type.
func.func @element_type_si32(%a: tensor<4xsi32>) {
  // expected-error @+1 {{'nn.abs' op operand #0 has element type si32; nn tensors hold f16, bf16, f32, f64, i1, i32, i64, complex<f32> or complex<f64>}}
  %0 = nn.abs %a : tensor<4xsi32>
  func.return
}

// -----

// The result's element type is checked too: converting to i16.
func.func @result_element_type_i16(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.convert' op result #0 has element type i16; nn tensors hold f16, bf16, f32, f64, i1, i32, i64, complex<f32> or complex<f64>}}
  %0 = nn.convert %a : tensor<4xf32> -> tensor<4xi16>
  func.return
}

// -----

// Shapes are static: a dynamic operand dimension.
func.func @dynamic_operand(%a: tensor<?xf32>) {
  // expected-error @+1 {{'nn.exp' op operand #0 has a dynamic shape tensor<?xf32>; nn shapes are static}}
  %0 = nn.exp %a : tensor<?xf32>
  func.return
}

// -----

// Shapes are static: a dynamic result dimension.
func.func @dynamic_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.reshape' op result #0 has a dynamic shape tensor<2x?xf32>; nn shapes are static}}
  %0 = nn.reshape %a : tensor<4xf32> -> tensor<2x?xf32>
  func.return
}

// -----

// The result type is checked against the inferred one (reported at the op's line:col).
func.func @result_not_inferred(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.reduce_sum' op result type tensor<3xf32> does not match the inferred type tensor<2xf32>}}
  %0 = nn.reduce_sum %a axes = [1] : tensor<2x3xf32> -> tensor<3xf32>
  func.return
}

// -----

// ===============================================================================================
// Creation
// ===============================================================================================

// nn.constant's result type is the dense attribute's type.
func.func @constant_result_type() {
  // expected-error @+1 {{'nn.constant' op result type tensor<3xf32> does not match the inferred type tensor<2xf32>}}
  %0 = "nn.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

// nn.constant of an unsupported element type.
func.func @constant_i8() {
  // expected-error @+1 {{'nn.constant' op result #0 has element type i8; nn tensors hold f16, bf16, f32, f64, i1, i32, i64, complex<f32> or complex<f64>}}
  %0 = nn.constant dense<[1, 2]> : tensor<2xi8>
  func.return
}

// -----

// nn.constant's custom syntax takes a dense elements attribute (a parse error).
func.func @constant_not_dense() {
  // expected-error @+1 {{'nn.constant' expects a dense elements attribute, got 1.000000e+00 : f32}}
  %0 = nn.constant 1.0 : f32
  func.return
}

// -----

// nn.full's value has the result's element type.
func.func @full_value_type() {
  // expected-error @+1 {{'nn.full' op value type f64 does not match the element type of tensor<2xf32>}}
  %0 = "nn.full"() <{value = 1.0 : f64}> : () -> tensor<2xf32>
  func.return
}

// -----

// nn.full's value must fit the element type: true is not a float (a parse error, at the literal).
func.func @full_true_f32() {
  // expected-error @+1 {{'nn.full' value true does not fit f32}}
  %0 = nn.full true : tensor<2xf32>
  func.return
}

// -----

// nn.full's value must fit the element type: 1.5 is not an integer.
func.func @full_float_i32() {
  // expected-error @+1 {{'nn.full' value 1.5 does not fit i32}}
  %0 = nn.full 1.5 : tensor<2xi32>
  func.return
}

// -----

// nn.full's value must fit the element type: inf is not an integer.
func.func @full_inf_i64() {
  // expected-error @+1 {{'nn.full' value -inf does not fit i64}}
  %0 = nn.full -inf : tensor<2xi64>
  func.return
}

// -----

// nn.full's value must fit the element type: 2 is not a boolean.
func.func @full_2_i1() {
  // expected-error @+1 {{'nn.full' value 2 does not fit i1}}
  %0 = nn.full 2 : tensor<2xi1>
  func.return
}

// -----

// nn.full's value must fit the element type: true is not an i32.
func.func @full_true_i32() {
  // expected-error @+1 {{'nn.full' value true does not fit i32}}
  %0 = nn.full true : tensor<2xi32>
  func.return
}

// -----

// nn.full's value must fit the element type: out of the i32 range.
func.func @full_int_range() {
  // expected-error @+1 {{'nn.full' value 5000000000 does not fit i32}}
  %0 = nn.full 5000000000 : tensor<2xi32>
  func.return
}

// -----

// nn.full fills tensors only.
func.func @full_not_tensor() {
  // expected-error @+1 {{'nn.full' expects a tensor type, got f32}}
  %0 = nn.full 1.0 : f32
  func.return
}

// -----

// nn.full cannot fill an unsupported element type.
func.func @full_i8() {
  // expected-error @+1 {{'nn.full' cannot fill element type i8}}
  %0 = nn.full 1 : tensor<2xi8>
  func.return
}

// -----

// nn.iota's dimension must be a dimension of the result.
func.func @iota_dim_range() {
  // expected-error @+1 {{'nn.iota' op dimension 2 is out of range for result of rank 2}}
  %0 = nn.iota dim = 2 : tensor<2x3xi32>
  func.return
}

// -----

// nn.iota has no dimension to count along in a rank-0 result.
func.func @iota_rank0() {
  // expected-error @+1 {{'nn.iota' op dimension 0 is out of range for result of rank 0}}
  %0 = nn.iota dim = 0 : tensor<i32>
  func.return
}

// -----

// nn.iota counts, so its result is numeric.
func.func @iota_i1() {
  // expected-error @+1 {{'nn.iota' op result must be numeric (not i1), got tensor<4xi1>}}
  %0 = nn.iota dim = 0 : tensor<4xi1>
  func.return
}

// -----

// ===============================================================================================
// Elementwise
// ===============================================================================================

// Transcendental ops take floats only.
func.func @exp_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{'nn.exp' op operand must have a floating-point or complex element type, got tensor<4xi32>}}
  %0 = nn.exp %a : tensor<4xi32>
  func.return
}

// -----

// Arithmetic unary ops reject i1.
func.func @neg_i1(%a: tensor<4xi1>) {
  // expected-error @+1 {{'nn.neg' op operand must be numeric (not i1), got tensor<4xi1>}}
  %0 = nn.neg %a : tensor<4xi1>
  func.return
}

// -----

// Unary result and operand types are one type.
func.func @unary_result_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.tanh' op result 'result' at position 0 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<4xf64>}}
  %0 = "nn.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf64>
  func.return
}

// -----

// nn.pow takes floats only.
func.func @pow_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{'nn.pow' op operand must have a floating-point or complex element type, got tensor<4xi32>}}
  %0 = nn.pow %a, %a : tensor<4xi32>
  func.return
}

// -----

// Arithmetic binary ops reject i1.
func.func @add_i1(%a: tensor<4xi1>) {
  // expected-error @+1 {{'nn.add' op operand must be numeric (not i1), got tensor<4xi1>}}
  %0 = nn.add %a, %a : tensor<4xi1>
  func.return
}

// -----

// Elementwise operands have one type: shapes differ (no implicit broadcasting).
func.func @add_shape(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'nn.add' op operand 'rhs' at position 1 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<3xf32>}}
  %0 = "nn.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Elementwise operands have one type: ranks differ.
func.func @mul_rank(%a: tensor<4xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'nn.mul' op operand 'rhs' at position 1 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<1x4xf32>}}
  %0 = "nn.mul"(%a, %b) : (tensor<4xf32>, tensor<1x4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Elementwise operands have one type: element types differ (no implicit promotion).
func.func @sub_dtype(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'nn.sub' op operand 'rhs' at position 1 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<4xf16>}}
  %0 = "nn.sub"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

// The binary result has the operands' type.
func.func @maximum_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.maximum' op result 'result' at position 0 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<4xi1>}}
  %0 = "nn.maximum"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

// Bitwise ops take integers only.
func.func @and_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.and' op operand must have an integer element type (i1, i32 or i64), got tensor<4xf32>}}
  %0 = nn.and %a, %a : tensor<4xf32>
  func.return
}

// -----

// xor rejects floats of every width, bf16 included.
func.func @xor_bf16(%a: tensor<2xbf16>) {
  // expected-error @+1 {{'nn.xor' op operand must have an integer element type (i1, i32 or i64), got tensor<2xbf16>}}
  %0 = nn.xor %a, %a : tensor<2xbf16>
  func.return
}

// -----

// Shifts take i32 and i64, not i1.
func.func @shift_left_i1(%a: tensor<4xi1>) {
  // expected-error @+1 {{'nn.shift_left' op operand must have element type i32 or i64, got tensor<4xi1>}}
  %0 = nn.shift_left %a, %a : tensor<4xi1>
  func.return
}

// -----

// Shifts take integers only.
func.func @shift_right_logical_float(%a: tensor<4xf64>) {
  // expected-error @+1 {{'nn.shift_right_logical' op operand must have element type i32 or i64, got tensor<4xf64>}}
  %0 = nn.shift_right_logical %a, %a : tensor<4xf64>
  func.return
}

// -----

// The shift amount has the shifted value's type (no implicit conversion of the amount).
func.func @shift_amount_type(%a: tensor<4xi32>, %n: tensor<4xi64>) {
  // expected-error @+1 {{'nn.shift_left' op operand 'rhs' at position 1 does not verify: attribute tensor<4xi32> expected from variable 'T', but got tensor<4xi64>}}
  %0 = "nn.shift_left"(%a, %n) : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>
  func.return
}

// -----

// nn.compare operands have one type.
func.func @compare_operands(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'nn.compare' op operand 'rhs' at position 1 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<4xi32>}}
  %0 = "nn.compare"(%a, %b) <{direction = 0 : i64}> : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  func.return
}

// -----

// nn.compare gives i1 of the operand shape.
func.func @compare_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.compare' op result type tensor<4xf32> does not match the inferred type tensor<4xi1>}}
  %0 = "nn.compare"(%a, %a) <{direction = 0 : i64}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// nn.compare's direction property indexes eq, ne, lt, le, gt, ge.
func.func @compare_direction_property(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.compare' op unknown comparison direction 6}}
  %0 = "nn.compare"(%a, %a) <{direction = 6 : i64}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

// nn.compare's custom syntax names the direction (a parse error, at the keyword).
func.func @compare_direction_keyword(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.compare' direction must be one of eq, ne, lt, le, gt, ge, got 'lq'}}
  %0 = nn.compare lq, %a, %a : tensor<4xf32>
  func.return
}

// -----

// nn.select's predicate is i1.
func.func @select_pred_type(%p: tensor<4xi32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.select' op predicate must have element type i1, got tensor<4xi32>}}
  %0 = nn.select %p, %a, %a : tensor<4xi32>, tensor<4xf32>
  func.return
}

// -----

// nn.select's predicate has the operands' shape (no broadcasting of a scalar predicate).
func.func @select_pred_shape(%p: tensor<i1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.select' op predicate shape scalar differs from operand shape 4}}
  %0 = nn.select %p, %a, %a : tensor<i1>, tensor<4xf32>
  func.return
}

// -----

// nn.select's two value operands have one type.
func.func @select_values(%p: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error @+1 {{'nn.select' op operand 'on_false' at position 2 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<4xf64>}}
  %0 = "nn.select"(%p, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}

// -----

// nn.convert keeps the shape.
func.func @convert_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.convert' op result type tensor<2x2xf16> does not match the inferred type tensor<4xf16>}}
  %0 = nn.convert %a : tensor<4xf32> -> tensor<2x2xf16>
  func.return
}

// -----

// ===============================================================================================
// Reductions
// ===============================================================================================

// Reduction axes are in range.
func.func @reduce_axis_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.reduce_sum' op axes [2] out of range for operand of rank 2}}
  %0 = nn.reduce_sum %a axes = [2] : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

// Reduction axes are not negative in the IR (builders normalize them).
func.func @reduce_axis_negative(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.reduce_max' op axes [-1] out of range for operand of rank 2}}
  %0 = nn.reduce_max %a axes = [-1] : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

// Reduction axes are not duplicated.
func.func @reduce_axis_duplicate(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.reduce_min' op axes [1, 1] contain duplicates}}
  %0 = nn.reduce_min %a axes = [1, 1] : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

// A rank-0 operand has no axes to reduce.
func.func @reduce_rank0(%a: tensor<f32>) {
  // expected-error @+1 {{'nn.reduce_sum' op axes [0] out of range for operand of rank 0}}
  %0 = nn.reduce_sum %a axes = [0] : tensor<f32> -> tensor<f32>
  func.return
}

// -----

// nn.reduce_sum rejects i1.
func.func @reduce_sum_i1(%a: tensor<4xi1>) {
  // expected-error @+1 {{'nn.reduce_sum' op operand must be numeric (not i1), got tensor<4xi1>}}
  %0 = nn.reduce_sum %a axes = [0] : tensor<4xi1> -> tensor<i1>
  func.return
}

// -----

// keepdims keeps reduced axes as size 1; without it they go.
func.func @reduce_keepdims(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.reduce_sum' op result type tensor<2xf32> does not match the inferred type tensor<2x1xf32>}}
  %0 = nn.reduce_sum %a axes = [1] keepdims : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

// ===============================================================================================
// Shape manipulation
// ===============================================================================================

// nn.broadcast_in_dim keeps the element type.
func.func @broadcast_dtype(%a: tensor<3xf32>) {
  // expected-error @+1 {{'nn.broadcast_in_dim' op element types differ: operand tensor<3xf32>, result tensor<2x3xf64>}}
  %0 = nn.broadcast_in_dim %a dims = [1] : tensor<3xf32> -> tensor<2x3xf64>
  func.return
}

// -----

// nn.broadcast_in_dim maps every operand dimension.
func.func @broadcast_dims_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.broadcast_in_dim' op dims [1] has 1 entries, operand 2x3 has rank 2}}
  %0 = nn.broadcast_in_dim %a dims = [1] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// nn.broadcast_in_dim maps to result dimensions.
func.func @broadcast_dims_range(%a: tensor<3xf32>) {
  // expected-error @+1 {{'nn.broadcast_in_dim' op dims [2] out of range for result of rank 2}}
  %0 = nn.broadcast_in_dim %a dims = [2] : tensor<3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// nn.broadcast_in_dim maps two operand dimensions to different result dimensions.
func.func @broadcast_dims_duplicate(%a: tensor<3x3xf32>) {
  // expected-error @+1 {{'nn.broadcast_in_dim' op dims [1, 1] contain duplicates}}
  %0 = nn.broadcast_in_dim %a dims = [1, 1] : tensor<3x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// A mapped operand dimension is 1 or equals its result dimension.
func.func @broadcast_incompatible(%a: tensor<3xf32>) {
  // expected-error @+1 {{'nn.broadcast_in_dim' op operand dimension 0 (size 3) cannot broadcast to result dimension 1 (size 4): operand 3, result 2x4}}
  %0 = nn.broadcast_in_dim %a dims = [1] : tensor<3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

// nn.reshape keeps the element type.
func.func @reshape_dtype(%a: tensor<6xf32>) {
  // expected-error @+1 {{'nn.reshape' op element types differ: operand tensor<6xf32>, result tensor<2x3xi32>}}
  %0 = nn.reshape %a : tensor<6xf32> -> tensor<2x3xi32>
  func.return
}

// -----

// nn.reshape keeps the element count.
func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.reshape' op element counts differ: operand 2x3 (6), result 5 (5)}}
  %0 = nn.reshape %a : tensor<2x3xf32> -> tensor<5xf32>
  func.return
}

// -----

// nn.reshape keeps the element count, also from rank 0.
func.func @reshape_count_scalar(%a: tensor<f32>) {
  // expected-error @+1 {{'nn.reshape' op element counts differ: operand scalar (1), result 2 (2)}}
  %0 = nn.reshape %a : tensor<f32> -> tensor<2xf32>
  func.return
}

// -----

// nn.transpose's perm has no duplicates.
func.func @transpose_duplicate(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.transpose' op perm [0, 0] is not a permutation of 0..1}}
  %0 = nn.transpose %a perm = [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  func.return
}

// -----

// nn.transpose's perm covers every dimension.
func.func @transpose_short(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.transpose' op perm [1] is not a permutation of 0..1}}
  %0 = nn.transpose %a perm = [1] : tensor<2x3xf32> -> tensor<3xf32>
  func.return
}

// -----

// nn.transpose's perm stays in range.
func.func @transpose_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.transpose' op perm [0, 2] is not a permutation of 0..1}}
  %0 = nn.transpose %a perm = [0, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// nn.transpose's result is the permuted operand.
func.func @transpose_result(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.transpose' op result type tensor<2x3xf32> does not match the inferred type tensor<3x2xf32>}}
  %0 = nn.transpose %a perm = [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// nn.slice needs start, limit and stride for every dimension.
func.func @slice_entries(%a: tensor<4x6xf32>) {
  // expected-error @+1 {{'nn.slice' op start, limit and stride need 2 entries (operand 4x6), got 2, 2 and 1}}
  %0 = nn.slice %a start = [0, 0] limit = [4, 6] stride = [1] : tensor<4x6xf32> -> tensor<4x6xf32>
  func.return
}

// -----

// nn.slice's stride is never 0.
func.func @slice_zero_stride(%a: tensor<4x6xf32>) {
  // expected-error @+1 {{'nn.slice' op stride of dimension 1 is 0}}
  %0 = nn.slice %a start = [0, 0] limit = [4, 6] stride = [1, 0] : tensor<4x6xf32> -> tensor<4x6xf32>
  func.return
}

// -----

// nn.slice reads inside the operand: the limit is past the end.
func.func @slice_past_end(%a: tensor<4x6xf32>) {
  // expected-error @+1 {{'nn.slice' op dimension 0: slice start 0, limit 5, stride 1 reads outside 0..3 of operand 4x6}}
  %0 = nn.slice %a start = [0, 0] limit = [5, 6] stride = [1, 1] : tensor<4x6xf32> -> tensor<5x6xf32>
  func.return
}

// -----

// nn.slice indices are never wrapped: a negative start is out of bounds.
func.func @slice_negative_start(%a: tensor<4x6xf32>) {
  // expected-error @+1 {{'nn.slice' op dimension 1: slice start -2, limit 6, stride 1 reads outside 0..5 of operand 4x6}}
  %0 = nn.slice %a start = [0, -2] limit = [4, 6] stride = [1, 1] : tensor<4x6xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// A negative stride walks down from start, which must be in bounds.
func.func @slice_negative_stride(%a: tensor<4x6xf32>) {
  // expected-error @+1 {{'nn.slice' op dimension 0: slice start 4, limit -1, stride -1 reads outside 0..3 of operand 4x6}}
  %0 = nn.slice %a start = [4, 0] limit = [-1, 6] stride = [-1, 1] : tensor<4x6xf32> -> tensor<5x6xf32>
  func.return
}

// -----

// A negative stride must not walk below index 0.
func.func @slice_negative_stride_below(%a: tensor<4x6xf32>) {
  // expected-error @+1 {{'nn.slice' op dimension 0: slice start 3, limit -3, stride -2 reads outside 0..3 of operand 4x6}}
  %0 = nn.slice %a start = [3, 0] limit = [-3, 6] stride = [-2, 1] : tensor<4x6xf32> -> tensor<3x6xf32>
  func.return
}

// -----

// nn.slice's result has the slice's length in every dimension.
func.func @slice_result(%a: tensor<4x6xf32>) {
  // expected-error @+1 {{'nn.slice' op result type tensor<4x6xf32> does not match the inferred type tensor<2x6xf32>}}
  %0 = nn.slice %a start = [0, 0] limit = [4, 6] stride = [2, 1] : tensor<4x6xf32> -> tensor<4x6xf32>
  func.return
}

// -----

// nn.dynamic_slice needs an operand with dimensions.
func.func @dynamic_slice_rank0(%a: tensor<f32>) {
  // expected-error @+1 {{'nn.dynamic_slice' op operand must have rank >= 1}}
  %0 = "nn.dynamic_slice"(%a) <{sizes = array<i64>}> : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// nn.dynamic_slice needs one start index per dimension.
func.func @dynamic_slice_index_count(%a: tensor<4x3xf32>, %i: index) {
  // expected-error @+1 {{'nn.dynamic_slice' op needs 2 start indices (one per operand dimension), got 1}}
  %0 = nn.dynamic_slice %a[%i] sizes = [1, 3] : tensor<4x3xf32>, index -> tensor<1x3xf32>
  func.return
}

// -----

// nn.dynamic_slice's start indices are index, i32 or i64.
func.func @dynamic_slice_index_type(%a: tensor<4x3xf32>, %i: index, %j: i16) {
  // expected-error @+1 {{'nn.dynamic_slice' op start index #1 must be index, i32 or i64, got i16}}
  %0 = nn.dynamic_slice %a[%i, %j] sizes = [1, 3] : tensor<4x3xf32>, index, i16 -> tensor<1x3xf32>
  func.return
}

// -----

// nn.dynamic_slice's start indices are integers (an operand constraint).
func.func @dynamic_slice_index_float(%a: tensor<4xf32>, %i: f32) {
  // expected-error @+1 {{'nn.dynamic_slice' op operand 'start_indices' at position 1 does not verify: Unexpected attribute f32}}
  %0 = "nn.dynamic_slice"(%a, %i) <{sizes = array<i64: 1>}> : (tensor<4xf32>, f32) -> tensor<1xf32>
  func.return
}

// -----

// nn.dynamic_slice needs one size per dimension.
func.func @dynamic_slice_sizes_count(%a: tensor<4x3xf32>, %i: index) {
  // expected-error @+1 {{'nn.dynamic_slice' op sizes [1] need 2 entries (operand 4x3)}}
  %0 = nn.dynamic_slice %a[%i, %i] sizes = [1] : tensor<4x3xf32>, index, index -> tensor<1xf32>
  func.return
}

// -----

// nn.dynamic_slice's sizes fit in the operand (so clamping can keep the slice in bounds).
func.func @dynamic_slice_size_large(%a: tensor<4x3xf32>, %i: index) {
  // expected-error @+1 {{'nn.dynamic_slice' op size 4 of dimension 1 exceeds operand 4x3}}
  %0 = nn.dynamic_slice %a[%i, %i] sizes = [1, 4] : tensor<4x3xf32>, index, index -> tensor<1x4xf32>
  func.return
}

// -----

// nn.dynamic_slice's sizes are not negative.
func.func @dynamic_slice_size_negative(%a: tensor<4x3xf32>, %i: index) {
  // expected-error @+1 {{'nn.dynamic_slice' op size -1 of dimension 0 exceeds operand 4x3}}
  %0 = "nn.dynamic_slice"(%a, %i, %i) <{sizes = array<i64: -1, 3>}> : (tensor<4x3xf32>, index, index) -> tensor<0x3xf32>
  func.return
}

// -----

// nn.dynamic_update_slice writes an update of the operand's element type.
func.func @dynamic_update_slice_dtype(%a: tensor<4x3xf32>, %u: tensor<1x3xf64>, %i: index) {
  // expected-error @+1 {{'nn.dynamic_update_slice' op element types differ: operand tensor<4x3xf32>, update tensor<1x3xf64>}}
  %0 = nn.dynamic_update_slice %a, %u[%i, %i] : tensor<4x3xf32>, tensor<1x3xf64>, index, index
  func.return
}

// -----

// nn.dynamic_update_slice's update fits in the operand.
func.func @dynamic_update_slice_large(%a: tensor<4x3xf32>, %u: tensor<5x3xf32>, %i: index) {
  // expected-error @+1 {{'nn.dynamic_update_slice' op update 5x3 does not fit in operand 4x3}}
  %0 = nn.dynamic_update_slice %a, %u[%i, %i] : tensor<4x3xf32>, tensor<5x3xf32>, index, index
  func.return
}

// -----

// nn.dynamic_update_slice's update has the operand's rank.
func.func @dynamic_update_slice_rank(%a: tensor<4x3xf32>, %u: tensor<3xf32>, %i: index) {
  // expected-error @+1 {{'nn.dynamic_update_slice' op update 3 does not fit in operand 4x3}}
  %0 = nn.dynamic_update_slice %a, %u[%i, %i] : tensor<4x3xf32>, tensor<3xf32>, index, index
  func.return
}

// -----

// nn.dynamic_update_slice needs one start index per dimension.
func.func @dynamic_update_slice_index_count(%a: tensor<4x3xf32>, %u: tensor<1x3xf32>, %i: i32) {
  // expected-error @+1 {{'nn.dynamic_update_slice' op needs 2 start indices (one per operand dimension), got 3}}
  %0 = nn.dynamic_update_slice %a, %u[%i, %i, %i] : tensor<4x3xf32>, tensor<1x3xf32>, i32, i32, i32
  func.return
}

// -----

// nn.concatenate needs at least one input.
func.func @concatenate_empty() {
  // expected-error @+1 {{'nn.concatenate' op needs at least one input}}
  %0 = "nn.concatenate"() <{dimension = 0 : i64}> : () -> tensor<0xf32>
  func.return
}

// -----

// nn.concatenate's dimension is a dimension of the inputs.
func.func @concatenate_dim_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.concatenate' op dimension 2 out of range for inputs of rank 2}}
  %0 = nn.concatenate %a, %a dim = 2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// nn.concatenate's inputs share one element type.
func.func @concatenate_dtype(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{'nn.concatenate' op input #1 element type differs: tensor<2x3xf32> vs tensor<2x3xf16>}}
  %0 = nn.concatenate %a, %b dim = 0 : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<4x3xf32>
  func.return
}

// -----

// nn.concatenate's inputs agree outside the joined dimension.
func.func @concatenate_shape(%a: tensor<2x3xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'nn.concatenate' op input #2 shape 1x4 differs from input #0 2x3 outside dimension 0}}
  %0 = nn.concatenate %a, %a, %b dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x4xf32>) -> tensor<5x3xf32>
  func.return
}

// -----

// nn.concatenate's inputs have one rank.
func.func @concatenate_rank(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'nn.concatenate' op input #1 shape 2 differs from input #0 2x3 outside dimension 0}}
  %0 = nn.concatenate %a, %b dim = 0 : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// nn.pad's padding value is a rank-0 tensor.
func.func @pad_value_rank(%a: tensor<2x3xf32>, %v: tensor<1xf32>) {
  // expected-error @+1 {{'nn.pad' op padding value must be a rank-0 tensor of f32, got tensor<1xf32>}}
  %0 = nn.pad %a, %v low = [0, 0] high = [0, 0] : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// nn.pad's padding value has the operand's element type.
func.func @pad_value_dtype(%a: tensor<2x3xf32>, %v: tensor<i32>) {
  // expected-error @+1 {{'nn.pad' op padding value must be a rank-0 tensor of f32, got tensor<i32>}}
  %0 = nn.pad %a, %v low = [0, 0] high = [0, 0] : (tensor<2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
  func.return
}

// -----

// nn.pad needs low and high for every dimension.
func.func @pad_entries(%a: tensor<2x3xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'nn.pad' op low and high need 2 entries (operand 2x3), got 2 and 1}}
  %0 = nn.pad %a, %v low = [0, 0] high = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  func.return
}

// -----

// nn.pad's padding is not negative (use nn.slice to crop).
func.func @pad_negative(%a: tensor<2x3xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'nn.pad' op padding must be non-negative, got low [0, -1], high [1, 0]}}
  %0 = nn.pad %a, %v low = [0, -1] high = [1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x2xf32>
  func.return
}

// -----

// ===============================================================================================
// Linear algebra and NN
// ===============================================================================================

// nn.matmul's operands share one element type.
func.func @matmul_dtype(%a: tensor<4x3xf32>, %b: tensor<3x5xf16>) {
  // expected-error @+1 {{'nn.matmul' op element types differ: lhs tensor<4x3xf32>, rhs tensor<3x5xf16>}}
  %0 = nn.matmul %a, %b : (tensor<4x3xf32>, tensor<3x5xf16>) -> tensor<4x5xf32>
  func.return
}

// -----

// nn.matmul rejects i1.
func.func @matmul_i1(%a: tensor<4x3xi1>, %b: tensor<3x5xi1>) {
  // expected-error @+1 {{'nn.matmul' op lhs must be numeric (not i1), got tensor<4x3xi1>}}
  %0 = nn.matmul %a, %b : (tensor<4x3xi1>, tensor<3x5xi1>) -> tensor<4x5xi1>
  func.return
}

// -----

// nn.matmul takes matrices, not vectors.
func.func @matmul_vector(%a: tensor<3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'nn.matmul' op operands must both be 2-D or batched with equal rank, got lhs 3, rhs 3x5}}
  %0 = "nn.matmul"(%a, %b) : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<5xf32>
  func.return
}

// -----

// nn.matmul's operands have one rank (batch dimensions are not broadcast).
func.func @matmul_rank(%a: tensor<2x4x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'nn.matmul' op operands must both be 2-D or batched with equal rank, got lhs 2x4x3, rhs 3x5}}
  %0 = nn.matmul %a, %b : (tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
  func.return
}

// -----

// Batched nn.matmul needs equal batch dimensions.
func.func @matmul_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x3x5xf32>) {
  // expected-error @+1 {{'nn.matmul' op batch dimensions differ: lhs 2x4x3, rhs 3x3x5}}
  %0 = nn.matmul %a, %b : (tensor<2x4x3xf32>, tensor<3x3x5xf32>) -> tensor<2x4x5xf32>
  func.return
}

// -----

// nn.matmul's contracting dimensions agree (reported at the op's line:col).
func.func @matmul_contracting(%a: tensor<4x3xf32>, %b: tensor<5x2xf32>) {
  // expected-error @+1 {{'nn.matmul' op contracting dimensions differ: lhs 4x3, rhs 5x2}}
  %0 = nn.matmul %a, %b : (tensor<4x3xf32>, tensor<5x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

// nn.matmul's result is MxN.
func.func @matmul_result(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'nn.matmul' op result type tensor<4x3xf32> does not match the inferred type tensor<4x5xf32>}}
  %0 = nn.matmul %a, %b : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// nn.conv2d's input and weight share one element type.
func.func @conv2d_dtype(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+1 {{'nn.conv2d' op element types differ: input tensor<1x3x8x8xf32>, weight tensor<4x3x3x3xf16>}}
  %0 = nn.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// nn.conv2d takes floats only.
func.func @conv2d_int(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xi32>) {
  // expected-error @+1 {{'nn.conv2d' op input must have a floating-point element type, got tensor<1x3x8x8xi32>}}
  %0 = nn.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xi32>) -> tensor<1x4x6x6xi32>
  func.return
}

// -----

// nn.conv2d's input is NCHW and its weight OIHW.
func.func @conv2d_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op input (NCHW) and weight (OIHW) must be 4-D, got input 3x8x8, weight 4x3x3x3}}
  %0 = "nn.conv2d"(%x, %w) <{stride = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>}> : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x6x6xf32>
  func.return
}

// -----

// nn.conv2d's input channels match the weight's (no groups).
func.func @conv2d_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op input channels differ: input 1x3x8x8 has 3, weight 4x2x3x3 has 2}}
  %0 = nn.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// nn.conv2d's stride is two positive integers.
func.func @conv2d_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op stride must be 2 positive integers, got [0, 1]}}
  %0 = "nn.conv2d"(%x, %w) <{stride = array<i64: 0, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// nn.conv2d's dilation is two positive integers.
func.func @conv2d_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op dilation must be 2 positive integers, got [1]}}
  %0 = "nn.conv2d"(%x, %w) <{stride = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1>}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// nn.conv2d's padding is four non-negative integers.
func.func @conv2d_padding_negative(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op padding must be 4 non-negative integers [top, bottom, left, right], got [1, 1, -1, 1]}}
  %0 = "nn.conv2d"(%x, %w) <{stride = array<i64: 1, 1>, padding = array<i64: 1, 1, -1, 1>, dilation = array<i64: 1, 1>}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x6xf32>
  func.return
}

// -----

// nn.conv2d's padding has one entry per side, not per dimension.
func.func @conv2d_padding_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op padding must be 4 non-negative integers [top, bottom, left, right], got [1, 1]}}
  %0 = "nn.conv2d"(%x, %w) <{stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

// nn.conv2d's dilated kernel fits in the padded input.
func.func @conv2d_kernel_large(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op kernel 3x3 (dilation [3, 1]) is larger than the padded input 1x3x6x6}}
  %0 = "nn.conv2d"(%x, %w) <{stride = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 3, 1>}> : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x0x4xf32>
  func.return
}

// -----

// nn.conv2d's result shape follows from stride, padding and dilation.
func.func @conv2d_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op result type tensor<1x4x8x8xf32> does not match the inferred type tensor<1x4x6x6xf32>}}
  %0 = nn.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

// nn.im2col's result is the window matrix of its input.
func.func @im2col_shape(%x: tensor<2x3x8x8xf32>) {
  // expected-error @+1 {{'nn.im2col' op result type tensor<27x100xf32> does not match the inferred type tensor<27x128xf32>}}
  %0 = nn.im2col %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<2x3x8x8xf32> -> tensor<27x100xf32>
  func.return
}

// -----

// nn.im2col's kernel must fit the padded input.
func.func @im2col_kernel(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'nn.im2col' op kernel [5, 5] (dilation [2, 2]) is larger than the padded input 1x1x4x4}}
  %0 = "nn.im2col"(%x) <{kernel = array<i64: 5, 5>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 2, 2>}> : (tensor<1x1x4x4xf32>) -> tensor<25x1xf32>
  func.return
}

// -----

// nn.col2im's input must be the window matrix of its result.
func.func @col2im_shape(%c: tensor<27x100xf32>) {
  // expected-error @+1 {{'nn.col2im' op input 27x100 is not the columns of a 2x3x8x8 image: expected 27x128}}
  %0 = nn.col2im %c kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<27x100xf32> -> tensor<2x3x8x8xf32>
  func.return
}

// -----

// nn.col2im's geometry: strides are positive.
func.func @col2im_stride(%c: tensor<27x128xf32>) {
  // expected-error @+1 {{'nn.col2im' op stride must be 2 positive integers, got [1, 0]}}
  %0 = nn.col2im %c kernel = [3, 3] stride = [1, 0] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<27x128xf32> -> tensor<2x3x8x8xf32>
  func.return
}

// -----

// nn.max_pool2d's input is NCHW.
func.func @max_pool2d_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op input must be 4-D (NCHW), got 3x8x8}}
  %0 = nn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  func.return
}

// -----

// nn.max_pool2d takes floats only.
func.func @max_pool2d_int(%x: tensor<1x3x8x8xi32>) {
  // expected-error @+1 {{'nn.max_pool2d' op input must have a floating-point element type, got tensor<1x3x8x8xi32>}}
  %0 = nn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xi32> -> tensor<1x3x4x4xi32>
  func.return
}

// -----

// nn.max_pool2d's kernel is two positive integers.
func.func @max_pool2d_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op kernel must be 2 positive integers, got [0, 2]}}
  %0 = nn.max_pool2d %x kernel = [0, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

// nn.max_pool2d's stride is two positive integers.
func.func @max_pool2d_stride(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op stride must be 2 positive integers, got [2, -2]}}
  %0 = nn.max_pool2d %x kernel = [2, 2] stride = [2, -2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

// nn.max_pool2d's padding is four non-negative integers.
func.func @max_pool2d_padding(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op padding must be 4 non-negative integers [top, bottom, left, right], got [0, 0]}}
  %0 = nn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

// nn.max_pool2d's padding is smaller than the kernel, so no window is all padding.
func.func @max_pool2d_padding_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op padding [0, 2, 0, 0] must be smaller than the kernel [2, 2] (a window of padding only has no maximum)}}
  %0 = nn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 2, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x5x4xf32>
  func.return
}

// -----

// nn.max_pool2d's kernel fits in the padded input.
func.func @max_pool2d_kernel_large(%x: tensor<1x3x2x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op kernel [3, 3] is larger than the padded input 1x3x2x8}}
  %0 = nn.max_pool2d %x kernel = [3, 3] stride = [1, 1] padding = [0, 0, 0, 0] : tensor<1x3x2x8xf32> -> tensor<1x3x0x6xf32>
  func.return
}

// -----

// nn.max_pool2d's result shape follows from kernel, stride and padding.
func.func @max_pool2d_result(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op result type tensor<1x3x8x8xf32> does not match the inferred type tensor<1x3x4x4xf32>}}
  %0 = nn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  func.return
}

// -----

// nn.gather's indices are i32 or i64, not floats.
func.func @gather_float_indices(%x: tensor<5x3xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{'nn.gather' op indices must have element type i32 or i64, got tensor<4xf32>}}
  %0 = nn.gather %x[%i] axis = 0 : (tensor<5x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// nn.gather's indices are i32 or i64, not i1.
func.func @gather_bool_indices(%x: tensor<5x3xf32>, %i: tensor<4xi1>) {
  // expected-error @+1 {{'nn.gather' op indices must have element type i32 or i64, got tensor<4xi1>}}
  %0 = nn.gather %x[%i] axis = 0 : (tensor<5x3xf32>, tensor<4xi1>) -> tensor<4x3xf32>
  func.return
}

// -----

// nn.gather's axis is a dimension of the operand.
func.func @gather_axis(%x: tensor<5x3xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'nn.gather' op axis 2 out of range for operand 5x3}}
  %0 = "nn.gather"(%x, %i) <{axis = 2 : i64}> : (tensor<5x3xf32>, tensor<4xi32>) -> tensor<5x3x4xf32>
  func.return
}

// -----

// nn.gather's axis is not negative in the IR.
func.func @gather_axis_negative(%x: tensor<5x3xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'nn.gather' op axis -1 out of range for operand 5x3}}
  %0 = nn.gather %x[%i] axis = -1 : (tensor<5x3xf32>, tensor<4xi32>) -> tensor<5x4xf32>
  func.return
}

// -----

// nn.gather has nothing to take from an empty axis.
func.func @gather_empty_axis(%x: tensor<0x3xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'nn.gather' op cannot gather from empty axis 0 of operand 0x3}}
  %0 = nn.gather %x[%i] axis = 0 : (tensor<0x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
  func.return
}

// -----

// nn.gather's result is operand.shape[:axis] + indices.shape + operand.shape[axis+1:].
func.func @gather_result(%x: tensor<5x3xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'nn.gather' op result type tensor<4x3xf32> does not match the inferred type tensor<5x4xf32>}}
  %0 = nn.gather %x[%i] axis = 1 : (tensor<5x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
  func.return
}

// -----

// nn.scatter_add's indices are i32 or i64.
func.func @scatter_add_indices(%x: tensor<5x3xf32>, %i: tensor<4xf32>, %u: tensor<4x3xf32>) {
  // expected-error @+1 {{'nn.scatter_add' op indices must have element type i32 or i64, got tensor<4xf32>}}
  %0 = nn.scatter_add %x[%i], %u axis = 0 : (tensor<5x3xf32>, tensor<4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  func.return
}

// -----

// nn.scatter_add adds, so it rejects i1.
func.func @scatter_add_i1(%x: tensor<5x3xi1>, %i: tensor<4xi32>, %u: tensor<4x3xi1>) {
  // expected-error @+1 {{'nn.scatter_add' op operand must be numeric (not i1), got tensor<5x3xi1>}}
  %0 = nn.scatter_add %x[%i], %u axis = 0 : (tensor<5x3xi1>, tensor<4xi32>, tensor<4x3xi1>) -> tensor<5x3xi1>
  func.return
}

// -----

// nn.scatter_add's axis is a dimension of the operand.
func.func @scatter_add_axis(%x: tensor<5x3xf32>, %i: tensor<4xi32>, %u: tensor<4x3xf32>) {
  // expected-error @+1 {{'nn.scatter_add' op axis 2 out of range for operand 5x3}}
  %0 = nn.scatter_add %x[%i], %u axis = 2 : (tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  func.return
}

// -----

// nn.scatter_add has nowhere to add into an empty axis.
func.func @scatter_add_empty_axis(%x: tensor<0x3xf32>, %i: tensor<4xi32>, %u: tensor<4x3xf32>) {
  // expected-error @+1 {{'nn.scatter_add' op cannot scatter into empty axis 0 of operand 0x3}}
  %0 = nn.scatter_add %x[%i], %u axis = 0 : (tensor<0x3xf32>, tensor<4xi32>, tensor<4x3xf32>) -> tensor<0x3xf32>
  func.return
}

// -----

// nn.scatter_add's updates have the shape nn.gather would give for these indices.
func.func @scatter_add_updates_shape(%x: tensor<5x3xf32>, %i: tensor<4xi32>, %u: tensor<3x4xf32>) {
  // expected-error @+1 {{'nn.scatter_add' op updates tensor<3x4xf32> must be tensor<4x3xf32> for operand 5x3, indices 4 and axis 0}}
  %0 = nn.scatter_add %x[%i], %u axis = 0 : (tensor<5x3xf32>, tensor<4xi32>, tensor<3x4xf32>) -> tensor<5x3xf32>
  func.return
}

// -----

// nn.scatter_add's updates have the operand's element type.
func.func @scatter_add_updates_dtype(%x: tensor<5x3xf32>, %i: tensor<4xi32>, %u: tensor<4x3xf16>) {
  // expected-error @+1 {{'nn.scatter_add' op updates tensor<4x3xf16> must be tensor<4x3xf32> for operand 5x3, indices 4 and axis 0}}
  %0 = nn.scatter_add %x[%i], %u axis = 0 : (tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf16>) -> tensor<5x3xf32>
  func.return
}

// -----

// nn.scatter_add's result has the operand's type.
func.func @scatter_add_result(%x: tensor<5x3xf32>, %i: tensor<4xi32>, %u: tensor<4x3xf32>) {
  // expected-error @+1 {{'nn.scatter_add' op result 'result' at position 0 does not verify: attribute tensor<5x3xf32> expected from variable 'T', but got tensor<4x3xf32>}}
  %0 = "nn.scatter_add"(%x, %i, %u) <{axis = 0 : i64}> : (tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// The factorizations take f32/f64 square matrices (LAPACK's real types).
func.func @cholesky_half(%a: tensor<4x4xf16>) {
  // expected-error @+1 {{'nn.cholesky' op operand must be f32 or f64 (LAPACK's real types), got tensor<4x4xf16>}}
  %0 = nn.cholesky %a : (tensor<4x4xf16>) -> tensor<4x4xf16>
  func.return
}

// -----

func.func @cholesky_not_square(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'nn.cholesky' op operand must be a square matrix or a batch of them (..., n, n), got 4x3}}
  %0 = nn.cholesky %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @triangular_solve_batch(%a: tensor<2x4x4xf64>, %b: tensor<3x4x2xf64>) {
  // expected-error @+1 {{'nn.triangular_solve' op b must be (..., 4, k) with a's batch dimensions, got a 2x4x4, b 3x4x2}}
  %0 = nn.triangular_solve %a, %b lower : (tensor<2x4x4xf64>, tensor<3x4x2xf64>) -> tensor<3x4x2xf64>
  func.return
}

// -----

func.func @triangular_solve_types(%a: tensor<4x4xf64>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{'nn.triangular_solve' op element types differ: a tensor<4x4xf64>, b tensor<4x2xf32>}}
  %0 = nn.triangular_solve %a, %b : (tensor<4x4xf64>, tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @lu_pivots(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'nn.lu' op result types (tensor<4x4xf32>, tensor<4xi64>, tensor<4xi32>) do not match the inferred types (tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>)}}
  %0, %1, %2 = nn.lu %a : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xi64>, tensor<4xi32>)
  func.return
}

// -----

func.func @eigh_not_square(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'nn.eigh' op operand must be a square matrix or a batch of them (..., n, n), got 4x3}}
  %0, %1 = nn.eigh %a : (tensor<4x3xf32>) -> (tensor<4xf32>, tensor<4x3xf32>)
  func.return
}

// -----

func.func @svd_full_matrices(%a: tensor<5x3xf64>) {
  // expected-error @+1 {{'nn.svd' op result types (tensor<5x5xf64>, tensor<3xf64>, tensor<3x3xf64>) do not match the inferred types (tensor<5x3xf64>, tensor<3xf64>, tensor<3x3xf64>)}}
  %0, %1, %2 = nn.svd %a : (tensor<5x3xf64>) -> (tensor<5x5xf64>, tensor<3xf64>, tensor<3x3xf64>)
  func.return
}

// -----

func.func @qr_wide(%a: tensor<3x5xf64>) {
  // expected-error @+1 {{'nn.qr' op operand must be a tall or square matrix or a batch of them (..., m, n) with m >= n, got 3x5}}
  %0, %1 = nn.qr %a : (tensor<3x5xf64>) -> (tensor<3x5xf64>, tensor<5x5xf64>)
  func.return
}

// -----

func.func @complex_not_taken(%z: tensor<3xcomplex<f32>>) {
  // expected-error @+1 {{'nn.sigmoid' op operand #0 has element type complex<f32>; nn.sigmoid takes no complex values}}
  %0 = nn.sigmoid %z : tensor<3xcomplex<f32>>
  func.return
}

// -----

func.func @real_of_real(%x: tensor<3xf32>) {
  // expected-error @+1 {{'nn.real' op operand must have a complex element type, got tensor<3xf32>}}
  %0 = nn.real %x : tensor<3xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @complex_of_f16(%x: tensor<3xf16>) {
  // expected-error @+1 {{'nn.complex' op result #0 has element type complex<f16>; nn tensors hold f16, bf16, f32, f64, i1, i32, i64, complex<f32> or complex<f64>}}
  %0 = nn.complex %x, %x : tensor<3xf16> -> tensor<3xcomplex<f16>>
  func.return
}

// -----

func.func @conj_of_real(%x: tensor<3xf32>) {
  // expected-error @+1 {{'nn.conj' op operand must have a complex element type, got tensor<3xf32>}}
  %0 = nn.conj %x : tensor<3xf32>
  func.return
}

// ===============================================================================================
// nn.fft
// ===============================================================================================

// -----

func.func @fft_unknown_type(%x: tensor<8xcomplex<f32>>) {
  // expected-error @+1 {{'nn.fft' op type must be one of FFT, IFFT, RFFT, IRFFT, got "DCT"}}
  %0 = nn.fft %x type = "DCT" length = [8] : tensor<8xcomplex<f32>> -> tensor<8xcomplex<f32>>
  func.return
}

// -----

func.func @fft_of_real(%x: tensor<8xf32>) {
  // expected-error @+1 {{'nn.fft' op FFT takes a complex operand, got tensor<8xf32>}}
  %0 = nn.fft %x type = "FFT" length = [8] : tensor<8xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @rfft_of_complex(%x: tensor<8xcomplex<f32>>) {
  // expected-error @+1 {{'nn.fft' op RFFT takes an f32 or f64 operand, got tensor<8xcomplex<f32>>}}
  %0 = nn.fft %x type = "RFFT" length = [8] : tensor<8xcomplex<f32>> -> tensor<5xcomplex<f32>>
  func.return
}

// -----

func.func @fft_length_mismatch(%x: tensor<4x8xcomplex<f64>>) {
  // expected-error @+1 {{'nn.fft' op FFT of length [4, 6] needs trailing dimensions [4, 6], got operand 4x8}}
  %0 = nn.fft %x type = "FFT" length = [4, 6] : tensor<4x8xcomplex<f64>> -> tensor<4x8xcomplex<f64>>
  func.return
}

// -----

func.func @irfft_half_spectrum(%x: tensor<8xcomplex<f32>>) {
  // expected-error @+1 {{'nn.fft' op IRFFT of length [8] needs trailing dimensions [5], got operand 8}}
  %0 = nn.fft %x type = "IRFFT" length = [8] : tensor<8xcomplex<f32>> -> tensor<8xf32>
  func.return
}

// -----

func.func @fft_too_many_dimensions(%x: tensor<8xcomplex<f32>>) {
  // expected-error @+1 {{'nn.fft' op length [2, 8] names 2 dimensions of a 8 operand}}
  %0 = nn.fft %x type = "FFT" length = [2, 8] : tensor<8xcomplex<f32>> -> tensor<8xcomplex<f32>>
  func.return
}

// -----

func.func @fft_no_length(%x: tensor<8xcomplex<f32>>) {
  // expected-error @+1 {{'nn.fft' op length must name at least one dimension}}
  %0 = nn.fft %x type = "FFT" length = [] : tensor<8xcomplex<f32>> -> tensor<8xcomplex<f32>>
  func.return
}

// -----

func.func @rfft_result_type(%x: tensor<8xf32>) {
  // expected-error @+1 {{'nn.fft' op result type tensor<8xcomplex<f32>> does not match the inferred type tensor<5xcomplex<f32>>}}
  %0 = nn.fft %x type = "RFFT" length = [8] : tensor<8xf32> -> tensor<8xcomplex<f32>>
  func.return
}
