// RUN: irgrad-opt %s | irgrad-opt | filecheck %s
// RUN: irgrad-opt %s --print-op-generic | irgrad-opt | filecheck %s

// Round trip of every nn op, in custom and in generic syntax: the second irgrad-opt reads the first
// one's output, so both printers must produce what the parser accepts and the two forms must agree.

// -----------------------------------------------------------------------------------------------
// Creation
// -----------------------------------------------------------------------------------------------

// Dense constants of every element type, rank 0, zero-size, and a discardable attribute.
// CHECK-LABEL: func.func @constant()
// CHECK-NEXT:    %{{.*}} = nn.constant dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<1.500000e+00> : tensor<f64>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf16>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<3.000000e+00> : tensor<1x1xbf16>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<[[1, -2]]> : tensor<1x2xi32>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<9223372036854775807> : tensor<i64>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<> : tensor<0x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<0.000000e+00> : tensor<2xf32> {note = "kept"}
func.func @constant() {
  %0 = nn.constant dense<[1.0, 2.5]> : tensor<2xf32>
  %1 = nn.constant dense<1.5> : tensor<f64>
  %2 = nn.constant dense<[1.0, -2.0]> : tensor<2xf16>
  %3 = nn.constant dense<3.0> : tensor<1x1xbf16>
  %4 = nn.constant dense<[true, false]> : tensor<2xi1>
  %5 = nn.constant dense<[[1, -2]]> : tensor<1x2xi32>
  %6 = nn.constant dense<9223372036854775807> : tensor<i64>
  %7 = nn.constant dense<> : tensor<0x3xf32>
  %8 = nn.constant dense<0.0> : tensor<2xf32> {note = "kept"}
  func.return
}

// nn.full prints its value bare: special floats, booleans, negative integers, exponents, and values
// that the narrow float types round.
// CHECK-LABEL: func.func @full()
// CHECK-NEXT:    %{{.*}} = nn.full 0.5 : tensor<2x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.full inf : tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = nn.full -inf : tensor<4xf64>
// CHECK-NEXT:    %{{.*}} = nn.full nan : tensor<4xf16>
// CHECK-NEXT:    %{{.*}} = nn.full -0.0 : tensor<bf16>
// CHECK-NEXT:    %{{.*}} = nn.full 0.0999755859375 : tensor<2xf16>
// CHECK-NEXT:    %{{.*}} = nn.full 0.10009765625 : tensor<2xbf16>
// CHECK-NEXT:    %{{.*}} = nn.full 1.0e+16 : tensor<f64>
// CHECK-NEXT:    %{{.*}} = nn.full 1.5e-05 : tensor<f64>
// CHECK-NEXT:    %{{.*}} = nn.full true : tensor<3xi1>
// CHECK-NEXT:    %{{.*}} = nn.full false : tensor<i1>
// CHECK-NEXT:    %{{.*}} = nn.full -7 : tensor<2xi32>
// CHECK-NEXT:    %{{.*}} = nn.full -9223372036854775808 : tensor<2xi64>
// CHECK-NEXT:    %{{.*}} = nn.full 3 : tensor<0xi64>
func.func @full() {
  %0 = nn.full 0.5 : tensor<2x3xf32>
  %1 = nn.full inf : tensor<4xf32>
  %2 = nn.full -inf : tensor<4xf64>
  %3 = nn.full nan : tensor<4xf16>
  %4 = nn.full -0.0 : tensor<bf16>
  %5 = nn.full 0.1 : tensor<2xf16>
  %6 = nn.full 0.1 : tensor<2xbf16>
  %7 = nn.full 1.0e16 : tensor<f64>
  %8 = nn.full 1.5e-5 : tensor<f64>
  %9 = nn.full true : tensor<3xi1>
  %10 = nn.full false : tensor<i1>
  %11 = nn.full -7 : tensor<2xi32>
  %12 = nn.full -9223372036854775808 : tensor<2xi64>
  %13 = nn.full 3 : tensor<0xi64>
  func.return
}

// CHECK-LABEL: func.func @iota()
// CHECK-NEXT:    %{{.*}} = nn.iota dim = 1 : tensor<2x3xi32>
// CHECK-NEXT:    %{{.*}} = nn.iota dim = 0 : tensor<5xf32>
// CHECK-NEXT:    %{{.*}} = nn.iota dim = 2 : tensor<2x0x4xi64>
func.func @iota() {
  %0 = nn.iota dim = 1 : tensor<2x3xi32>
  %1 = nn.iota dim = 0 : tensor<5xf32>
  %2 = nn.iota dim = 2 : tensor<2x0x4xi64>
  func.return
}

// -----------------------------------------------------------------------------------------------
// Elementwise
// -----------------------------------------------------------------------------------------------

// The float-only unary ops, on each float type, rank 0 and a zero-size tensor.
// CHECK-LABEL: func.func @unary_float(
// CHECK-SAME:      %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<2x3xf16>, %[[C:.*]]: tensor<bf16>, %[[D:.*]]: tensor<0x2xf64>
// CHECK-NEXT:    %{{.*}} = nn.exp %[[A]] : tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = nn.log %[[B]] : tensor<2x3xf16>
// CHECK-NEXT:    %{{.*}} = nn.tanh %[[C]] : tensor<bf16>
// CHECK-NEXT:    %{{.*}} = nn.sigmoid %[[D]] : tensor<0x2xf64>
// CHECK-NEXT:    %{{.*}} = nn.sqrt %[[A]] : tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = nn.rsqrt %[[B]] : tensor<2x3xf16>
// CHECK-NEXT:    %{{.*}} = nn.sin %[[C]] : tensor<bf16>
// CHECK-NEXT:    %{{.*}} = nn.cos %[[D]] : tensor<0x2xf64>
// CHECK-NEXT:    %[[ERF:.*]] = nn.erf %[[D]] : tensor<0x2xf64>
// CHECK-NEXT:    func.return %[[ERF]] : tensor<0x2xf64>
func.func @unary_float(%a: tensor<4xf32>, %b: tensor<2x3xf16>, %c: tensor<bf16>, %d: tensor<0x2xf64>) -> tensor<0x2xf64> {
  %0 = nn.exp %a : tensor<4xf32>
  %1 = nn.log %b : tensor<2x3xf16>
  %2 = nn.tanh %c : tensor<bf16>
  %3 = nn.sigmoid %d : tensor<0x2xf64>
  %4 = nn.sqrt %a : tensor<4xf32>
  %5 = nn.rsqrt %b : tensor<2x3xf16>
  %6 = nn.sin %c : tensor<bf16>
  %7 = nn.cos %d : tensor<0x2xf64>
  %8 = nn.erf %d : tensor<0x2xf64>
  func.return %8 : tensor<0x2xf64>
}

// The numeric unary ops accept integers too; ops chain through their results.
// CHECK-LABEL: func.func @unary_numeric(
// CHECK-SAME:      %[[I:.*]]: tensor<4xi32>, %[[J:.*]]: tensor<i64>, %[[F:.*]]: tensor<4xf32>
// CHECK-NEXT:    %[[NEG:.*]] = nn.neg %[[I]] : tensor<4xi32>
// CHECK-NEXT:    %[[ABS:.*]] = nn.abs %[[NEG]] : tensor<4xi32>
// CHECK-NEXT:    %{{.*}} = nn.sign %[[J]] : tensor<i64>
// CHECK-NEXT:    %{{.*}} = nn.relu %[[ABS]] : tensor<4xi32>
// CHECK-NEXT:    %{{.*}} = nn.relu %[[F]] : tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = nn.sign %[[F]] {tag} : tensor<4xf32>
func.func @unary_numeric(%i: tensor<4xi32>, %j: tensor<i64>, %f: tensor<4xf32>) {
  %0 = nn.neg %i : tensor<4xi32>
  %1 = nn.abs %0 : tensor<4xi32>
  %2 = nn.sign %j : tensor<i64>
  %3 = nn.relu %1 : tensor<4xi32>
  %4 = nn.relu %f : tensor<4xf32>
  %5 = nn.sign %f {tag} : tensor<4xf32>
  func.return
}

// CHECK-LABEL: func.func @binary(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<4xi64>, %[[P:.*]]: tensor<4xi1>, %[[D:.*]]: tensor<f64>
// CHECK-NEXT:    %[[ADD:.*]] = nn.add %[[X]], %[[Y]] : tensor<2x3xf32>
// CHECK-NEXT:    %[[SUB:.*]] = nn.sub %[[ADD]], %[[Y]] : tensor<2x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.mul %[[SUB]], %[[X]] : tensor<2x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.div %[[X]], %[[Y]] : tensor<2x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.div %[[I]], %[[I]] : tensor<4xi64>
// CHECK-NEXT:    %{{.*}} = nn.pow %[[D]], %[[D]] : tensor<f64>
// CHECK-NEXT:    %{{.*}} = nn.maximum %[[X]], %[[Y]] : tensor<2x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.minimum %[[I]], %[[I]] : tensor<4xi64>
// CHECK-NEXT:    %{{.*}} = nn.maximum %[[P]], %[[P]] : tensor<4xi1>
// CHECK-NEXT:    %{{.*}} = nn.minimum %[[P]], %[[P]] : tensor<4xi1>
func.func @binary(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %i: tensor<4xi64>, %p: tensor<4xi1>, %d: tensor<f64>) {
  %0 = nn.add %x, %y : tensor<2x3xf32>
  %1 = nn.sub %0, %y : tensor<2x3xf32>
  %2 = nn.mul %1, %x : tensor<2x3xf32>
  %3 = nn.div %x, %y : tensor<2x3xf32>
  %4 = nn.div %i, %i : tensor<4xi64>
  %5 = nn.pow %d, %d : tensor<f64>
  %6 = nn.maximum %x, %y : tensor<2x3xf32>
  %7 = nn.minimum %i, %i : tensor<4xi64>
  %8 = nn.maximum %p, %p : tensor<4xi1>
  %9 = nn.minimum %p, %p : tensor<4xi1>
  func.return
}

// Every comparison direction; the result is i1 of the operand shape and is not spelled.
// CHECK-LABEL: func.func @compare(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<i32>, %[[P:.*]]: tensor<0xi1>
// CHECK-NEXT:    %{{.*}} = nn.compare eq, %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = nn.compare ne, %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = nn.compare lt, %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = nn.compare le, %[[I]], %[[I]] : tensor<i32>
// CHECK-NEXT:    %{{.*}} = nn.compare gt, %[[I]], %[[I]] : tensor<i32>
// CHECK-NEXT:    %[[GE:.*]] = nn.compare ge, %[[P]], %[[P]] : tensor<0xi1>
// CHECK-NEXT:    func.return %[[GE]] : tensor<0xi1>
func.func @compare(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<i32>, %p: tensor<0xi1>) -> tensor<0xi1> {
  %0 = nn.compare eq, %x, %y : tensor<4xf32>
  %1 = nn.compare ne, %x, %y : tensor<4xf32>
  %2 = nn.compare lt, %x, %y : tensor<4xf32>
  %3 = nn.compare le, %i, %i : tensor<i32>
  %4 = nn.compare gt, %i, %i : tensor<i32>
  %5 = nn.compare ge, %p, %p : tensor<0xi1>
  func.return %5 : tensor<0xi1>
}

// CHECK-LABEL: func.func @select(
// CHECK-SAME:      %[[P:.*]]: tensor<2x2xi1>, %[[A:.*]]: tensor<2x2xf32>, %[[B:.*]]: tensor<2x2xf32>, %[[Q:.*]]: tensor<i1>, %[[I:.*]]: tensor<i32>
// CHECK-NEXT:    %{{.*}} = nn.select %[[P]], %[[A]], %[[B]] : tensor<2x2xi1>, tensor<2x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.select %[[Q]], %[[I]], %[[I]] : tensor<i1>, tensor<i32>
func.func @select(%p: tensor<2x2xi1>, %a: tensor<2x2xf32>, %b: tensor<2x2xf32>, %q: tensor<i1>, %i: tensor<i32>) {
  %0 = nn.select %p, %a, %b : tensor<2x2xi1>, tensor<2x2xf32>
  %1 = nn.select %q, %i, %i : tensor<i1>, tensor<i32>
  func.return
}

// Conversions between every pair of element-type families.
// CHECK-LABEL: func.func @convert(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[P:.*]]: tensor<4xi1>, %[[B:.*]]: tensor<bf16>
// CHECK-NEXT:    %{{.*}} = nn.convert %[[X]] : tensor<2x3xf32> -> tensor<2x3xf16>
// CHECK-NEXT:    %[[I:.*]] = nn.convert %[[X]] : tensor<2x3xf32> -> tensor<2x3xi32>
// CHECK-NEXT:    %{{.*}} = nn.convert %[[I]] : tensor<2x3xi32> -> tensor<2x3xi64>
// CHECK-NEXT:    %{{.*}} = nn.convert %[[I]] : tensor<2x3xi32> -> tensor<2x3xi1>
// CHECK-NEXT:    %{{.*}} = nn.convert %[[P]] : tensor<4xi1> -> tensor<4xf64>
// CHECK-NEXT:    %{{.*}} = nn.convert %[[B]] : tensor<bf16> -> tensor<f32>
// CHECK-NEXT:    %{{.*}} = nn.convert %[[X]] : tensor<2x3xf32> -> tensor<2x3xf32>
func.func @convert(%x: tensor<2x3xf32>, %p: tensor<4xi1>, %b: tensor<bf16>) {
  %0 = nn.convert %x : tensor<2x3xf32> -> tensor<2x3xf16>
  %1 = nn.convert %x : tensor<2x3xf32> -> tensor<2x3xi32>
  %2 = nn.convert %1 : tensor<2x3xi32> -> tensor<2x3xi64>
  %3 = nn.convert %1 : tensor<2x3xi32> -> tensor<2x3xi1>
  %4 = nn.convert %p : tensor<4xi1> -> tensor<4xf64>
  %5 = nn.convert %b : tensor<bf16> -> tensor<f32>
  %6 = nn.convert %x : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// Bitwise ops: and/or/xor on i1, i32 and i64, shifts on i32 and i64 (rank 0 and zero-size too).
// CHECK-LABEL: func.func @bitwise(
// CHECK-SAME:      %[[I:.*]]: tensor<4xi32>, %[[J:.*]]: tensor<2x3xi64>, %[[P:.*]]: tensor<4xi1>, %[[S:.*]]: tensor<i32>, %[[Z:.*]]: tensor<0xi64>
// CHECK-NEXT:    %[[AND:.*]] = nn.and %[[I]], %[[I]] : tensor<4xi32>
// CHECK-NEXT:    %{{.*}} = nn.or %[[J]], %[[J]] : tensor<2x3xi64>
// CHECK-NEXT:    %{{.*}} = nn.xor %[[P]], %[[P]] : tensor<4xi1>
// CHECK-NEXT:    %{{.*}} = nn.and %[[P]], %[[P]] : tensor<4xi1>
// CHECK-NEXT:    %{{.*}} = nn.or %[[P]], %[[P]] : tensor<4xi1>
// CHECK-NEXT:    %{{.*}} = nn.shift_left %[[AND]], %[[I]] : tensor<4xi32>
// CHECK-NEXT:    %{{.*}} = nn.shift_right_logical %[[J]], %[[J]] : tensor<2x3xi64>
// CHECK-NEXT:    %{{.*}} = nn.shift_left %[[S]], %[[S]] : tensor<i32>
// CHECK-NEXT:    %{{.*}} = nn.shift_right_logical %[[Z]], %[[Z]] {tag} : tensor<0xi64>
func.func @bitwise(%i: tensor<4xi32>, %j: tensor<2x3xi64>, %p: tensor<4xi1>, %s: tensor<i32>, %z: tensor<0xi64>) {
  %0 = nn.and %i, %i : tensor<4xi32>
  %1 = nn.or %j, %j : tensor<2x3xi64>
  %2 = nn.xor %p, %p : tensor<4xi1>
  %3 = nn.and %p, %p : tensor<4xi1>
  %4 = nn.or %p, %p : tensor<4xi1>
  %5 = nn.shift_left %0, %i : tensor<4xi32>
  %6 = nn.shift_right_logical %j, %j : tensor<2x3xi64>
  %7 = nn.shift_left %s, %s : tensor<i32>
  %8 = nn.shift_right_logical %z, %z {tag} : tensor<0xi64>
  func.return
}

// -----------------------------------------------------------------------------------------------
// Reductions
// -----------------------------------------------------------------------------------------------

// keepdims on and off, several axes, all axes (rank-0 result), no axes, and zero-size dimensions.
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>, %[[I:.*]]: tensor<5xi32>, %[[Z:.*]]: tensor<0x3xf64>, %[[P:.*]]: tensor<2xi1>
// CHECK-NEXT:    %{{.*}} = nn.reduce_sum %[[X]] axes = [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_sum %[[X]] axes = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_sum %[[X]] axes = [2, 0] : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_sum %[[X]] axes = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_sum %[[X]] axes = [0, 1, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_sum %[[X]] axes = [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_max %[[I]] axes = [0] : tensor<5xi32> -> tensor<i32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_max %[[Z]] axes = [0] keepdims : tensor<0x3xf64> -> tensor<1x3xf64>
// CHECK-NEXT:    %{{.*}} = nn.reduce_min %[[Z]] axes = [1] : tensor<0x3xf64> -> tensor<0xf64>
// CHECK-NEXT:    %{{.*}} = nn.reduce_min %[[P]] axes = [0] keepdims : tensor<2xi1> -> tensor<1xi1>
func.func @reduce(%x: tensor<2x3x4xf32>, %i: tensor<5xi32>, %z: tensor<0x3xf64>, %p: tensor<2xi1>) {
  %0 = nn.reduce_sum %x axes = [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %1 = nn.reduce_sum %x axes = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %2 = nn.reduce_sum %x axes = [2, 0] : tensor<2x3x4xf32> -> tensor<3xf32>
  %3 = nn.reduce_sum %x axes = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %4 = nn.reduce_sum %x axes = [0, 1, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
  %5 = nn.reduce_sum %x axes = [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %6 = nn.reduce_max %i axes = [0] : tensor<5xi32> -> tensor<i32>
  %7 = nn.reduce_max %z axes = [0] keepdims : tensor<0x3xf64> -> tensor<1x3xf64>
  %8 = nn.reduce_min %z axes = [1] : tensor<0x3xf64> -> tensor<0xf64>
  %9 = nn.reduce_min %p axes = [0] keepdims : tensor<2xi1> -> tensor<1xi1>
  func.return
}

// -----------------------------------------------------------------------------------------------
// Shape manipulation
// -----------------------------------------------------------------------------------------------

// From rank 0, size-1 dimensions broadcast, a dimension mapped to itself, reordered dims.
// CHECK-LABEL: func.func @broadcast_in_dim(
// CHECK-SAME:      %[[S:.*]]: tensor<f32>, %[[V:.*]]: tensor<3xi64>, %[[M:.*]]: tensor<1x3xf16>
// CHECK-NEXT:    %{{.*}} = nn.broadcast_in_dim %[[S]] dims = [] : tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.broadcast_in_dim %[[V]] dims = [1] : tensor<3xi64> -> tensor<2x3xi64>
// CHECK-NEXT:    %{{.*}} = nn.broadcast_in_dim %[[M]] dims = [0, 1] : tensor<1x3xf16> -> tensor<4x3xf16>
// CHECK-NEXT:    %{{.*}} = nn.broadcast_in_dim %[[M]] dims = [2, 0] : tensor<1x3xf16> -> tensor<3x5x7xf16>
// CHECK-NEXT:    %{{.*}} = nn.broadcast_in_dim %[[V]] dims = [1] : tensor<3xi64> -> tensor<0x3xi64>
func.func @broadcast_in_dim(%s: tensor<f32>, %v: tensor<3xi64>, %m: tensor<1x3xf16>) {
  %0 = nn.broadcast_in_dim %s dims = [] : tensor<f32> -> tensor<2x3xf32>
  %1 = nn.broadcast_in_dim %v dims = [1] : tensor<3xi64> -> tensor<2x3xi64>
  %2 = nn.broadcast_in_dim %m dims = [0, 1] : tensor<1x3xf16> -> tensor<4x3xf16>
  %3 = nn.broadcast_in_dim %m dims = [2, 0] : tensor<1x3xf16> -> tensor<3x5x7xf16>
  %4 = nn.broadcast_in_dim %v dims = [1] : tensor<3xi64> -> tensor<0x3xi64>
  func.return
}

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<1x1xi1>, %[[Z:.*]]: tensor<0x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.reshape %[[X]] : tensor<2x3xf32> -> tensor<6xf32>
// CHECK-NEXT:    %{{.*}} = nn.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x1x2xf32>
// CHECK-NEXT:    %[[R0:.*]] = nn.reshape %[[S]] : tensor<1x1xi1> -> tensor<i1>
// CHECK-NEXT:    %{{.*}} = nn.reshape %[[R0]] : tensor<i1> -> tensor<1xi1>
// CHECK-NEXT:    %{{.*}} = nn.reshape %[[Z]] : tensor<0x4xf32> -> tensor<2x0xf32>
func.func @reshape(%x: tensor<2x3xf32>, %s: tensor<1x1xi1>, %z: tensor<0x4xf32>) {
  %0 = nn.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = nn.reshape %x : tensor<2x3xf32> -> tensor<3x1x2xf32>
  %2 = nn.reshape %s : tensor<1x1xi1> -> tensor<i1>
  %3 = nn.reshape %2 : tensor<i1> -> tensor<1xi1>
  %4 = nn.reshape %z : tensor<0x4xf32> -> tensor<2x0xf32>
  func.return
}

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>, %[[S:.*]]: tensor<i32>
// CHECK-NEXT:    %{{.*}} = nn.transpose %[[X]] perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.transpose %[[X]] perm = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.transpose %[[S]] perm = [] : tensor<i32> -> tensor<i32>
func.func @transpose(%x: tensor<2x3x4xf32>, %s: tensor<i32>) {
  %0 = nn.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = nn.transpose %x perm = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %2 = nn.transpose %s perm = [] : tensor<i32> -> tensor<i32>
  func.return
}

// Unit and larger strides, a reversal (negative stride, limit -1 means "through index 0"), a
// negative stride that stops early, and an empty slice.
// CHECK-LABEL: func.func @slice(
// CHECK-SAME:      %[[X:.*]]: tensor<4x6xf32>
// CHECK-NEXT:    %{{.*}} = nn.slice %[[X]] start = [1, 0] limit = [3, 6] stride = [1, 1] : tensor<4x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT:    %{{.*}} = nn.slice %[[X]] start = [0, 1] limit = [4, 6] stride = [2, 3] : tensor<4x6xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.slice %[[X]] start = [3, 5] limit = [-1, -1] stride = [-1, -2] : tensor<4x6xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.slice %[[X]] start = [2, 0] limit = [0, 6] stride = [-1, 1] : tensor<4x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT:    %{{.*}} = nn.slice %[[X]] start = [2, 0] limit = [2, 6] stride = [1, 1] : tensor<4x6xf32> -> tensor<0x6xf32>
func.func @slice(%x: tensor<4x6xf32>) {
  %0 = nn.slice %x start = [1, 0] limit = [3, 6] stride = [1, 1] : tensor<4x6xf32> -> tensor<2x6xf32>
  %1 = nn.slice %x start = [0, 1] limit = [4, 6] stride = [2, 3] : tensor<4x6xf32> -> tensor<2x2xf32>
  %2 = nn.slice %x start = [3, 5] limit = [-1, -1] stride = [-1, -2] : tensor<4x6xf32> -> tensor<4x3xf32>
  %3 = nn.slice %x start = [2, 0] limit = [0, 6] stride = [-1, 1] : tensor<4x6xf32> -> tensor<2x6xf32>
  %4 = nn.slice %x start = [2, 0] limit = [2, 6] stride = [1, 1] : tensor<4x6xf32> -> tensor<0x6xf32>
  func.return
}

// Start indices may be index, i32 or i64, mixed.
// CHECK-LABEL: func.func @dynamic_slice(
// CHECK-SAME:      %[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: index, %[[J:.*]]: i32, %[[K:.*]]: i64
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %{{.*}} = nn.dynamic_slice %[[X]][%[[I]], %[[C0]]] sizes = [1, 3] : tensor<4x3xf32>, index, index -> tensor<1x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.dynamic_slice %[[X]][%[[J]], %[[K]]] sizes = [4, 0] : tensor<4x3xf32>, i32, i64 -> tensor<4x0xf32>
func.func @dynamic_slice(%x: tensor<4x3xf32>, %i: index, %j: i32, %k: i64) {
  %c0 = arith.constant 0 : index
  %0 = nn.dynamic_slice %x[%i, %c0] sizes = [1, 3] : tensor<4x3xf32>, index, index -> tensor<1x3xf32>
  %1 = nn.dynamic_slice %x[%j, %k] sizes = [4, 0] : tensor<4x3xf32>, i32, i64 -> tensor<4x0xf32>
  func.return
}

// CHECK-LABEL: func.func @dynamic_update_slice(
// CHECK-SAME:      %[[X:.*]]: tensor<4x3xi64>, %[[U:.*]]: tensor<1x3xi64>, %[[I:.*]]: index, %[[J:.*]]: i64
// CHECK-NEXT:    %{{.*}} = nn.dynamic_update_slice %[[X]], %[[U]][%[[I]], %[[J]]] : tensor<4x3xi64>, tensor<1x3xi64>, index, i64
// CHECK-NEXT:    %{{.*}} = nn.dynamic_update_slice %[[X]], %[[X]][%[[J]], %[[J]]] : tensor<4x3xi64>, tensor<4x3xi64>, i64, i64
func.func @dynamic_update_slice(%x: tensor<4x3xi64>, %u: tensor<1x3xi64>, %i: index, %j: i64) {
  %0 = nn.dynamic_update_slice %x, %u[%i, %j] : tensor<4x3xi64>, tensor<1x3xi64>, index, i64
  %1 = nn.dynamic_update_slice %x, %x[%j, %j] : tensor<4x3xi64>, tensor<4x3xi64>, i64, i64
  func.return
}

// CHECK-LABEL: func.func @concatenate(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<1x3xf32>, %[[Z:.*]]: tensor<0x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.concatenate %[[A]], %[[B]] dim = 0 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.concatenate %[[A]], %[[Z]], %[[B]] dim = 0 : (tensor<2x3xf32>, tensor<0x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.concatenate %[[A]], %[[A]] dim = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:    %{{.*}} = nn.concatenate %[[A]] dim = 1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @concatenate(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>, %z: tensor<0x3xf32>) {
  %0 = nn.concatenate %a, %b dim = 0 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  %1 = nn.concatenate %a, %z, %b dim = 0 : (tensor<2x3xf32>, tensor<0x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  %2 = nn.concatenate %a, %a dim = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %3 = nn.concatenate %a dim = 1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// CHECK-LABEL: func.func @pad(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<f32>, %[[I:.*]]: tensor<0xi32>, %[[W:.*]]: tensor<i32>
// CHECK-NEXT:    %{{.*}} = nn.pad %[[X]], %[[V]] low = [0, 1] high = [1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.pad %[[X]], %[[V]] low = [0, 0] high = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.pad %[[I]], %[[W]] low = [2] high = [3] : (tensor<0xi32>, tensor<i32>) -> tensor<5xi32>
func.func @pad(%x: tensor<2x3xf32>, %v: tensor<f32>, %i: tensor<0xi32>, %w: tensor<i32>) {
  %0 = nn.pad %x, %v low = [0, 1] high = [1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>
  %1 = nn.pad %x, %v low = [0, 0] high = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %2 = nn.pad %i, %w low = [2] high = [3] : (tensor<0xi32>, tensor<i32>) -> tensor<5xi32>
  func.return
}

// -----------------------------------------------------------------------------------------------
// Linear algebra and NN
// -----------------------------------------------------------------------------------------------

// 2-D, batched with one and two batch dimensions, integers, and a zero-size contraction.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3x5xf32>, %[[BA:.*]]: tensor<2x4x3xbf16>, %[[BB:.*]]: tensor<2x3x5xbf16>, %[[CA:.*]]: tensor<2x6x4x3xi32>, %[[CB:.*]]: tensor<2x6x3x1xi32>, %[[ZA:.*]]: tensor<4x0xf64>, %[[ZB:.*]]: tensor<0x5xf64>
// CHECK-NEXT:    %{{.*}} = nn.matmul %[[A]], %[[B]] : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %{{.*}} = nn.matmul %[[BA]], %[[BB]] : (tensor<2x4x3xbf16>, tensor<2x3x5xbf16>) -> tensor<2x4x5xbf16>
// CHECK-NEXT:    %{{.*}} = nn.matmul %[[CA]], %[[CB]] : (tensor<2x6x4x3xi32>, tensor<2x6x3x1xi32>) -> tensor<2x6x4x1xi32>
// CHECK-NEXT:    %{{.*}} = nn.matmul %[[ZA]], %[[ZB]] : (tensor<4x0xf64>, tensor<0x5xf64>) -> tensor<4x5xf64>
func.func @matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %ba: tensor<2x4x3xbf16>, %bb: tensor<2x3x5xbf16>,
                  %ca: tensor<2x6x4x3xi32>, %cb: tensor<2x6x3x1xi32>, %za: tensor<4x0xf64>, %zb: tensor<0x5xf64>) {
  %0 = nn.matmul %a, %b : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = nn.matmul %ba, %bb : (tensor<2x4x3xbf16>, tensor<2x3x5xbf16>) -> tensor<2x4x5xbf16>
  %2 = nn.matmul %ca, %cb : (tensor<2x6x4x3xi32>, tensor<2x6x3x1xi32>) -> tensor<2x6x4x1xi32>
  %3 = nn.matmul %za, %zb : (tensor<4x0xf64>, tensor<0x5xf64>) -> tensor<4x5xf64>
  func.return
}

// Same padding, strided, dilated, asymmetric padding.
// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[H:.*]]: tensor<2x1x5x7xf16>, %[[K:.*]]: tensor<6x1x2x3xf16>
// CHECK-NEXT:    %{{.*}} = nn.conv2d %[[X]], %[[W]] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.conv2d %[[X]], %[[W]] stride = [2, 3] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.conv2d %[[X]], %[[W]] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [2, 3] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.conv2d %[[H]], %[[K]] stride = [1, 2] padding = [0, 1, 2, 0] dilation = [1, 1] : (tensor<2x1x5x7xf16>, tensor<6x1x2x3xf16>) -> tensor<2x6x5x4xf16>
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %h: tensor<2x1x5x7xf16>, %k: tensor<6x1x2x3xf16>) {
  %0 = nn.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %1 = nn.conv2d %x, %w stride = [2, 3] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x2xf32>
  %2 = nn.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [2, 3] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x2xf32>
  %3 = nn.conv2d %h, %k stride = [1, 2] padding = [0, 1, 2, 0] dilation = [1, 1] : (tensor<2x1x5x7xf16>, tensor<6x1x2x3xf16>) -> tensor<2x6x5x4xf16>
  func.return
}

// CHECK-LABEL: func.func @max_pool2d(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>, %[[Y:.*]]: tensor<2x1x5x5xf64>
// CHECK-NEXT:    %{{.*}} = nn.max_pool2d %[[X]] kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.max_pool2d %[[X]] kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.max_pool2d %[[Y]] kernel = [2, 3] stride = [2, 1] padding = [1, 0, 0, 2] : tensor<2x1x5x5xf64> -> tensor<2x1x3x5xf64>
func.func @max_pool2d(%x: tensor<1x3x8x8xf32>, %y: tensor<2x1x5x5xf64>) {
  %0 = nn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  %1 = nn.max_pool2d %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  %2 = nn.max_pool2d %y kernel = [2, 3] stride = [2, 1] padding = [1, 0, 0, 2] : tensor<2x1x5x5xf64> -> tensor<2x1x3x5xf64>
  func.return
}

// im2col: rows (c, kh, kw), columns (n, oh, ow); col2im, its transpose, names the image in
// its result type.
// CHECK-LABEL: func.func @windows(
// CHECK-NEXT:    %{{.*}} = nn.im2col %{{.*}} kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<2x3x8x8xf32> -> tensor<27x128xf32>
// CHECK-NEXT:    %{{.*}} = nn.col2im %{{.*}} kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<27x128xf32> -> tensor<2x3x8x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.im2col %{{.*}} kernel = [2, 3] stride = [2, 1] padding = [1, 0, 2, 1] dilation = [2, 2] : tensor<1x2x8x7xf64> -> tensor<12x24xf64>
func.func @windows(%x: tensor<2x3x8x8xf32>, %y: tensor<1x2x8x7xf64>) {
  %c = nn.im2col %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<2x3x8x8xf32> -> tensor<27x128xf32>
  %i = nn.col2im %c kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<27x128xf32> -> tensor<2x3x8x8xf32>
  %d = nn.im2col %y kernel = [2, 3] stride = [2, 1] padding = [1, 0, 2, 1] dilation = [2, 2] : tensor<1x2x8x7xf64> -> tensor<12x24xf64>
  func.return
}

// Index tensors of rank 0, 1 and 2, i32 and i64, on the first and on an inner axis.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<4xi32>, %[[J:.*]]: tensor<2x2xi64>, %[[S:.*]]: tensor<i32>
// CHECK-NEXT:    %{{.*}} = nn.gather %[[X]][%[[I]]] axis = 0 : (tensor<5x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.gather %[[X]][%[[J]]] axis = 1 : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.gather %[[X]][%[[S]]] axis = 0 : (tensor<5x3xf32>, tensor<i32>) -> tensor<3xf32>
func.func @gather(%x: tensor<5x3xf32>, %i: tensor<4xi32>, %j: tensor<2x2xi64>, %s: tensor<i32>) {
  %0 = nn.gather %x[%i] axis = 0 : (tensor<5x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
  %1 = nn.gather %x[%j] axis = 1 : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2xf32>
  %2 = nn.gather %x[%s] axis = 0 : (tensor<5x3xf32>, tensor<i32>) -> tensor<3xf32>
  func.return
}

// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME:      %[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<4xi32>, %[[U:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<5x3xi64>, %[[J:.*]]: tensor<2x2xi64>, %[[V:.*]]: tensor<5x2x2xi64>
// CHECK-NEXT:    %{{.*}} = nn.scatter_add %[[X]][%[[I]]], %[[U]] axis = 0 : (tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.scatter_add %[[Y]][%[[J]]], %[[V]] axis = 1 : (tensor<5x3xi64>, tensor<2x2xi64>, tensor<5x2x2xi64>) -> tensor<5x3xi64>
func.func @scatter_add(%x: tensor<5x3xf32>, %i: tensor<4xi32>, %u: tensor<4x3xf32>, %y: tensor<5x3xi64>, %j: tensor<2x2xi64>, %v: tensor<5x2x2xi64>) {
  %0 = nn.scatter_add %x[%i], %u axis = 0 : (tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  %1 = nn.scatter_add %y[%j], %v axis = 1 : (tensor<5x3xi64>, tensor<2x2xi64>, tensor<5x2x2xi64>) -> tensor<5x3xi64>
  func.return
}


// Dense constants with inf and nan print their bit patterns in hex (MLIR's rule), which parse
// back as the same floats (xDSL 0.75 read them as integers; irgrad/xdsl_patches/dense_hex_floats.py mends it).
// CHECK-LABEL: func.func @constant_non_finite
func.func @constant_non_finite() -> tensor<4xf32> {
  // CHECK: dense<[1.000000e+00, 0x7f800000, 0x7fc00000, 0xff800000]> : tensor<4xf32>
  %c = nn.constant dense<"0x0000803F0000807F0000C07F000080FF"> : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// -----------------------------------------------------------------------------------------------
// Linear algebra
// -----------------------------------------------------------------------------------------------

// The factorizations, batched, with and without the triangular solve's flags.
// CHECK-LABEL: func.func @factorizations
// CHECK-NEXT:    %l = nn.cholesky %a : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
// CHECK-NEXT:    %x = nn.triangular_solve %l, %b lower : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
// CHECK-NEXT:    %y = nn.triangular_solve %l, %x unit_diagonal : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
// CHECK-NEXT:    %z = nn.triangular_solve %l, %y lower unit_diagonal : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
// CHECK-NEXT:    %lu, %piv, %perm = nn.lu %c : (tensor<5x5xf32>) -> (tensor<5x5xf32>, tensor<5xi32>, tensor<5xi32>)
func.func @factorizations(%a: tensor<2x4x4xf64>, %b: tensor<2x4x3xf64>, %c: tensor<5x5xf32>) -> (tensor<2x4x3xf64>, tensor<5x5xf32>, tensor<5xi32>) {
  %l = nn.cholesky %a : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
  %x = nn.triangular_solve %l, %b lower : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
  %y = nn.triangular_solve %l, %x unit_diagonal : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
  %z = nn.triangular_solve %l, %y lower unit_diagonal : (tensor<2x4x4xf64>, tensor<2x4x3xf64>) -> tensor<2x4x3xf64>
  %lu, %piv, %perm = nn.lu %c : (tensor<5x5xf32>) -> (tensor<5x5xf32>, tensor<5xi32>, tensor<5xi32>)
  func.return %z, %lu, %perm : tensor<2x4x3xf64>, tensor<5x5xf32>, tensor<5xi32>
}

// CHECK-LABEL: func.func @decompositions(
// CHECK-NEXT:    %w, %v = nn.eigh %a : (tensor<2x4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4x4xf64>)
// CHECK-NEXT:    %u, %s, %vt = nn.svd %b : (tensor<3x5xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3x5xf32>)
// CHECK-NEXT:    %q, %r = nn.qr %c : (tensor<6x4xf64>) -> (tensor<6x4xf64>, tensor<4x4xf64>)
func.func @decompositions(%a: tensor<2x4x4xf64>, %b: tensor<3x5xf32>, %c: tensor<6x4xf64>) -> (tensor<2x4xf64>, tensor<3xf32>, tensor<4x4xf64>) {
  %w, %v = nn.eigh %a : (tensor<2x4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4x4xf64>)
  %u, %s, %vt = nn.svd %b : (tensor<3x5xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3x5xf32>)
  %q, %r = nn.qr %c : (tensor<6x4xf64>) -> (tensor<6x4xf64>, tensor<4x4xf64>)
  func.return %w, %s, %r : tensor<2x4xf64>, tensor<3xf32>, tensor<4x4xf64>
}

// Complex numbers: the parts' ops and complex arithmetic.
// CHECK-LABEL: func.func @complex_numbers(
// CHECK-NEXT:    %c = nn.constant dense<[(1.000000e+00,2.000000e+00), (3.000000e+00,-4.000000e+00)]> : tensor<2xcomplex<f32>>
// CHECK-NEXT:    %z = nn.complex %a, %b : tensor<2xf32> -> tensor<2xcomplex<f32>>
// CHECK-NEXT:    %m = nn.mul %z, %c : tensor<2xcomplex<f32>>
// CHECK-NEXT:    %w = nn.conj %m : tensor<2xcomplex<f32>>
// CHECK-NEXT:    %re = nn.real %w : tensor<2xcomplex<f32>> -> tensor<2xf32>
// CHECK-NEXT:    %im = nn.imag %w : tensor<2xcomplex<f32>> -> tensor<2xf32>
func.func @complex_numbers(%a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c = nn.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>
  %z = nn.complex %a, %b : tensor<2xf32> -> tensor<2xcomplex<f32>>
  %m = nn.mul %z, %c : tensor<2xcomplex<f32>>
  %w = nn.conj %m : tensor<2xcomplex<f32>>
  %re = nn.real %w : tensor<2xcomplex<f32>> -> tensor<2xf32>
  %im = nn.imag %w : tensor<2xcomplex<f32>> -> tensor<2xf32>
  func.return %re, %im : tensor<2xf32>, tensor<2xf32>
}

// The Fourier transform, its four types over one or more trailing dimensions.
// CHECK-LABEL: func.func @fft(
// CHECK-NEXT:    %f = nn.fft %z type = "FFT" length = [4, 8] : tensor<3x4x8xcomplex<f32>> -> tensor<3x4x8xcomplex<f32>>
// CHECK-NEXT:    %i = nn.fft %f type = "IFFT" length = [8] : tensor<3x4x8xcomplex<f32>> -> tensor<3x4x8xcomplex<f32>>
// CHECK-NEXT:    %r = nn.fft %x type = "RFFT" length = [6] : tensor<2x6xf64> -> tensor<2x4xcomplex<f64>>
// CHECK-NEXT:    %b = nn.fft %r type = "IRFFT" length = [7] : tensor<2x4xcomplex<f64>> -> tensor<2x7xf64>
func.func @fft(%z: tensor<3x4x8xcomplex<f32>>, %x: tensor<2x6xf64>) -> (tensor<3x4x8xcomplex<f32>>, tensor<2x7xf64>) {
  %f = nn.fft %z type = "FFT" length = [4, 8] : tensor<3x4x8xcomplex<f32>> -> tensor<3x4x8xcomplex<f32>>
  %i = nn.fft %f type = "IFFT" length = [8] : tensor<3x4x8xcomplex<f32>> -> tensor<3x4x8xcomplex<f32>>
  %r = nn.fft %x type = "RFFT" length = [6] : tensor<2x6xf64> -> tensor<2x4xcomplex<f64>>
  %b = nn.fft %r type = "IRFFT" length = [7] : tensor<2x4xcomplex<f64>> -> tensor<2x7xf64>
  func.return %i, %b : tensor<3x4x8xcomplex<f32>>, tensor<2x7xf64>
}
