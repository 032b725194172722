// RUN: not irgrad-opt %s -p convert-nn-to-linalg --split-input-file 2>/dev/null | filecheck %s
// RUN: not irgrad-opt %s -p convert-nn-to-linalg --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt %s -p convert-nn-to-linalg --split-input-file >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// convert-nn-to-linalg: one case per nn op family, showing the generic's maps, iterator types
// and body. Every op is also checked numerically against the reference interpreter in
// tests/unit/lowering/nn_to_linalg/test_lowering_nn_to_linalg.py; this file shows the IR. The last cases are errors
// (exit code 1, a located diagnostic, no traceback).

// CHECK-NOT:  Traceback
// ERR-NOT:    Traceback
// EXIT:       exit=1

// relu is maximumf(x, 0): NaN propagates. Elementwise ops are all-parallel generics with
// identity maps writing into a tensor.empty.
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.relu %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @relu(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[X]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[A]], %[[ZERO]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK-NEXT:    } -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<4xf32>
// CHECK-NOT:   nn.

// -----

// Integer division by zero gives 0, INT_MIN / -1 wraps: the divisor becomes 1 for both before
// arith.divsi sees it, and a select gives 0 where it was 0.
func.func @div_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %z = nn.div %x, %y : tensor<4xi32>
  func.return %z : tensor<4xi32>
}
// CHECK-LABEL: func.func @div_i32(
// CHECK:         ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i32):
// CHECK-DAG:       %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:       %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG:       %[[BY_ZERO:.*]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i32
// CHECK-DAG:       %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK-DAG:       %[[IS_MIN:.*]] = arith.cmpi eq, %[[A]], %[[MIN]] : i32
// CHECK-DAG:       %[[MINUS_ONE:.*]] = arith.constant -1 : i32
// CHECK-DAG:       %[[IS_MINUS_ONE:.*]] = arith.cmpi eq, %[[B]], %[[MINUS_ONE]] : i32
// CHECK:           %[[OVERFLOW:.*]] = arith.andi %[[IS_MIN]], %[[IS_MINUS_ONE]] : i1
// CHECK-NEXT:      %[[UNSAFE:.*]] = arith.ori %[[BY_ZERO]], %[[OVERFLOW]] : i1
// CHECK-NEXT:      %[[SAFE:.*]] = arith.select %[[UNSAFE]], %[[ONE]], %[[B]] : i32
// CHECK-NEXT:      %[[Q:.*]] = arith.divsi %[[A]], %[[SAFE]] : i32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[BY_ZERO]], %[[ZERO]], %[[Q]] : i32
// CHECK-NEXT:      linalg.yield %[[R]] : i32

// -----

// f16 and bf16 transcendental functions compute in f32 and round once.
func.func @tanh_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %y = nn.tanh %x : tensor<4xf16>
  func.return %y : tensor<4xf16>
}
// CHECK-LABEL: func.func @tanh_f16(
// CHECK:         ^bb0(%[[A:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[W]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[T]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[R]] : f16

// -----

// Comparisons: ordered predicates, except ne, which is unordered (NaN != NaN is true).
func.func @compare(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %a = nn.compare lt, %x, %y : tensor<4xf32>
  %b = nn.compare ne, %x, %y : tensor<4xf32>
  func.return %a, %b : tensor<4xi1>, tensor<4xi1>
}
// CHECK-LABEL: func.func @compare(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4xi1>
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[E]] : tensor<4xi1>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT:      %[[R:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : i1
// CHECK:           arith.cmpf une, %{{.*}}, %{{.*}} : f32

// -----

// Float to integer saturates and maps NaN to 0: the operand becomes 0.0 before fptosi sees an
// out-of-range value, then selects put in the bounds.
func.func @convert(%x: tensor<4xf32>) -> tensor<4xi32> {
  %y = nn.convert %x : tensor<4xf32> -> tensor<4xi32>
  func.return %y : tensor<4xi32>
}
// CHECK-LABEL: func.func @convert(
// CHECK:         ^bb0(%[[A:.*]]: f32, %{{.*}}: i32):
// CHECK:           %[[LOW:.*]] = arith.cmpf olt, %[[A]], %{{.*}} : f32
// CHECK:           %[[HIGH:.*]] = arith.cmpf oge, %[[A]], %{{.*}} : f32
// CHECK-NEXT:      %[[NAN:.*]] = arith.cmpf uno, %[[A]], %[[A]] : f32
// CHECK:           %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[A]] : f32
// CHECK-NEXT:      %[[I:.*]] = arith.fptosi %[[SAFE]] : f32 to i32
// CHECK-NEXT:      %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK-NEXT:      %[[R1:.*]] = arith.select %[[LOW]], %[[MIN]], %[[I]] : i32
// CHECK-NEXT:      %[[MAX:.*]] = arith.constant 2147483647 : i32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[HIGH]], %[[MAX]], %[[R1]] : i32
// CHECK-NEXT:      linalg.yield %[[R]] : i32

// -----

// A shift amount outside 0..31 (negative included, by the unsigned compare) gives 0.
func.func @shift(%x: tensor<4xi32>, %n: tensor<4xi32>) -> tensor<4xi32> {
  %y = nn.shift_left %x, %n : tensor<4xi32>
  func.return %y : tensor<4xi32>
}
// CHECK-LABEL: func.func @shift(
// CHECK:         ^bb0(%[[A:.*]]: i32, %[[N:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[WIDTH:.*]] = arith.constant 32 : i32
// CHECK-NEXT:      %[[OK:.*]] = arith.cmpi ult, %[[N]], %[[WIDTH]] : i32
// CHECK-NEXT:      %[[SAFE:.*]] = arith.select %[[OK]], %[[N]], %[[ZERO]] : i32
// CHECK-NEXT:      %[[S:.*]] = arith.shli %[[A]], %[[SAFE]] : i32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[OK]], %[[S]], %[[ZERO]] : i32
// CHECK-NEXT:      linalg.yield %[[R]] : i32

// -----

// A splat constant (stored once, or every element the same bits) becomes what nn.full
// becomes: a scalar and a fill, not an array in memory. One element, or unequal elements,
// stay dense constants.
func.func @splat_constants() -> (tensor<4x4xf32>, tensor<3xi1>, tensor<2xf64>, tensor<1xf32>, tensor<2xi32>) {
  %a = nn.constant dense<0.5> : tensor<4x4xf32>
  %b = nn.constant dense<true> : tensor<3xi1>
  %c = nn.constant dense<[-1.5, -1.5]> : tensor<2xf64>
  %d = nn.constant dense<2.0> : tensor<1xf32>
  %e = nn.constant dense<[7, 8]> : tensor<2xi32>
  func.return %a, %b, %c, %d, %e : tensor<4x4xf32>, tensor<3xi1>, tensor<2xf64>, tensor<1xf32>, tensor<2xi32>
}
// CHECK-LABEL: func.func @splat_constants(
// CHECK-NEXT:    %[[H:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT:    %[[A:.*]] = linalg.fill ins(%[[H]] : f32) outs(%[[E]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:    %[[T:.*]] = arith.constant true
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<3xi1>
// CHECK-NEXT:    %[[B:.*]] = linalg.fill ins(%[[T]] : i1) outs(%[[E2]] : tensor<3xi1>) -> tensor<3xi1>
// CHECK-NEXT:    %[[M:.*]] = arith.constant -1.500000e+00 : f64
// CHECK-NEXT:    %[[E3:.*]] = tensor.empty() : tensor<2xf64>
// CHECK-NEXT:    %[[C:.*]] = linalg.fill ins(%[[M]] : f64) outs(%[[E3]] : tensor<2xf64>) -> tensor<2xf64>
// CHECK-NEXT:    %[[D:.*]] = arith.constant dense<2.000000e+00> : tensor<1xf32>
// CHECK-NEXT:    %[[I:.*]] = arith.constant dense<[7, 8]> : tensor<2xi32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]], %[[D]], %[[I]]

// -----

// constant -> arith.constant dense, full -> linalg.fill, iota -> linalg.index in a generic.
func.func @creation() -> (tensor<2xf32>, tensor<2x3xf32>, tensor<2x3xi32>) {
  %c = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %f = nn.full 0.5 : tensor<2x3xf32>
  %i = nn.iota dim = 1 : tensor<2x3xi32>
  func.return %c, %f, %i : tensor<2xf32>, tensor<2x3xf32>, tensor<2x3xi32>
}
// CHECK-LABEL: func.func @creation(
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[V:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT:    %[[F:.*]] = linalg.fill ins(%[[V]] : f32) outs(%[[E]] : tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<2x3xi32>
// CHECK-NEXT:    %[[I:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[E2]] : tensor<2x3xi32>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: i32):
// CHECK-NEXT:      %[[D:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[R:.*]] = arith.index_cast %[[D]] : index to i32
// CHECK-NEXT:      linalg.yield %[[R]] : i32
// CHECK-NEXT:    } -> tensor<2x3xi32>
// CHECK-NEXT:    func.return %[[C]], %[[F]], %[[I]]

// -----

// Reductions: a reduction iterator, an output map without the reduced dimension, a filled
// identity (0 for sums, -inf for max); keepdims is an expand_shape of the result.
func.func @reduce(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x1xf32>) {
  %s = nn.reduce_sum %x axes = [1] : tensor<2x3xf32> -> tensor<2xf32>
  %m = nn.reduce_max %x axes = [1] keepdims : tensor<2x3xf32> -> tensor<2x1xf32>
  func.return %s, %m : tensor<2xf32>, tensor<2x1xf32>
}
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2xf32>
// CHECK-NEXT:    %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[S:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x3xf32>) outs(%[[INIT]] : tensor<2xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ACC]], %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[SUM]] : f32
// CHECK-NEXT:    } -> tensor<2xf32>
// CHECK-NEXT:    %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           arith.maximumf
// CHECK:         %[[M:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0 : i64, 1 : i64]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
// CHECK-NEXT:    func.return %[[S]], %[[M]]

// -----

// broadcast_in_dim: a size-1 operand dimension that grows reads index 0.
func.func @broadcast(%x: tensor<1x3xf32>) -> tensor<2x4x3xf32> {
  %y = nn.broadcast_in_dim %x dims = [0, 2] : tensor<1x3xf32> -> tensor<2x4x3xf32>
  func.return %y : tensor<2x4x3xf32>
}
// CHECK-LABEL: func.func @broadcast(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}

// -----

// reshape: collapse_shape when the new shape groups the old one, else collapse then expand;
// transpose: a permuted input map.
func.func @shapes(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<4x6xf32>, tensor<4x2x3xf32>) {
  %a = nn.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %b = nn.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %t = nn.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  func.return %a, %b, %t : tensor<6x4xf32>, tensor<4x6xf32>, tensor<4x2x3xf32>
}
// CHECK-LABEL: func.func @shapes(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[A:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0 : i64, 1 : i64], [2 : i64]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK-NEXT:    %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0 : i64, 1 : i64, 2 : i64]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK-NEXT:    %[[B:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0 : i64, 1 : i64]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK-NEXT:    %[[T:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[E]] : tensor<4x2x3xf32>)

// -----

// slice: a strided extract_slice of the elements read; a negative stride then reads its
// dimension backwards through a negative coefficient.
func.func @slice(%x: tensor<4x6xf32>) -> tensor<4x3xf32> {
  %y = nn.slice %x start = [3, 0] limit = [-1, 6] stride = [-1, 2] : tensor<4x6xf32> -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}
// CHECK-LABEL: func.func @slice(
// CHECK-SAME:      %[[X:.*]]: tensor<4x6xf32>)
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 3] [1, 2] : tensor<4x6xf32> to tensor<4x3xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (((d0 * -1) + 3), d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[S]] : tensor<4x3xf32>) outs(%[[E]] : tensor<4x3xf32>)

// -----

// dynamic_slice / dynamic_update_slice: start indices cast to index and clamped into range.
func.func @dynamic(%x: tensor<4x3xf32>, %u: tensor<1x3xf32>, %i: i32, %j: index) -> (tensor<1x3xf32>, tensor<4x3xf32>) {
  %s = nn.dynamic_slice %x[%i, %j] sizes = [1, 3] : tensor<4x3xf32>, i32, index -> tensor<1x3xf32>
  %d = nn.dynamic_update_slice %x, %u[%i, %j] : tensor<4x3xf32>, tensor<1x3xf32>, i32, index
  func.return %s, %d : tensor<1x3xf32>, tensor<4x3xf32>
}
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME:      %[[X:.*]]: tensor<4x3xf32>, %[[U:.*]]: tensor<1x3xf32>, %[[I:.*]]: i32, %{{.*}}: index)
// CHECK-NEXT:    %[[I0:.*]] = arith.index_cast %[[I]] : i32 to index
// CHECK-NEXT:    %[[LO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[I1:.*]] = arith.maxsi %[[I0]], %[[LO]] : index
// CHECK-NEXT:    %[[HI:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[START:.*]] = arith.minsi %[[I1]], %[[HI]] : index
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %[[X]][%[[START]], 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
// CHECK:         %[[START2:.*]] = arith.minsi
// CHECK-NEXT:    %[[D:.*]] = tensor.insert_slice %[[U]] into %[[X]][%[[START2]], 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
// CHECK-NEXT:    func.return %[[S]], %[[D]]

// -----

// concatenate: inserts into a tensor.empty; pad: inserts into a fill of the padding value.
func.func @concat_pad(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>, %p: tensor<f32>) -> (tensor<3x3xf32>, tensor<3x4xf32>) {
  %c = nn.concatenate %a, %b dim = 0 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  %d = nn.pad %a, %p low = [0, 1] high = [1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>
  func.return %c, %d : tensor<3x3xf32>, tensor<3x4xf32>
}
// CHECK-LABEL: func.func @concat_pad(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<1x3xf32>, %[[P:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK-NEXT:    %[[C0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<3x3xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.insert_slice %[[B]] into %[[C0]][2, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<3x3xf32>
// CHECK-NEXT:    %[[V:.*]] = tensor.extract %[[P]][] : tensor<f32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<3x4xf32>
// CHECK-NEXT:    %[[F:.*]] = linalg.fill ins(%[[V]] : f32) outs(%[[E2]] : tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %[[D:.*]] = tensor.insert_slice %[[A]] into %[[F]][0, 1] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<3x4xf32>
// CHECK-NEXT:    func.return %[[C]], %[[D]]

// -----

// gather: a generic over the result; the body wraps a negative index once, clamps it, and
// reads the operand with tensor.extract.
func.func @gather(%x: tensor<5x3xf32>, %i: tensor<4xi32>) -> tensor<4x3xf32> {
  %y = nn.gather %x[%i] axis = 0 : (tensor<5x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[I]] : tensor<4xi32>)
// CHECK-NEXT:    ^bb0(%[[RAW:.*]]: i32, %{{.*}}: f32):
// CHECK-NEXT:      %[[IX:.*]] = arith.index_cast %[[RAW]] : i32 to index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[IX]], %{{.*}} : index
// CHECK:           %[[WRAPPED:.*]] = arith.select %[[NEG]], %{{.*}}, %[[IX]] : index
// CHECK:           arith.maxsi %[[WRAPPED]]
// CHECK:           %[[ROW:.*]] = arith.minsi
// CHECK-NEXT:      %[[COL:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[COL]]] : tensor<5x3xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// -----

// scatter_add: an scf.for over the index positions carrying the result; each iteration adds
// one row of updates into the row the index names.
func.func @scatter(%x: tensor<5x3xf32>, %i: tensor<4xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %y = nn.scatter_add %x[%i], %u axis = 0 : (tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  func.return %y : tensor<5x3xf32>
}
// CHECK-LABEL: func.func @scatter(
// CHECK-SAME:      %[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<4xi32>, %[[U:.*]]: tensor<4x3xf32>)
// CHECK:         %[[Y:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[X]]) -> (tensor<5x3xf32>) {
// CHECK-NEXT:      %[[RAW:.*]] = tensor.extract %[[I]][%[[K]]] : tensor<4xi32>
// CHECK:           %[[ROW:.*]] = arith.minsi
// CHECK-NEXT:      %[[OLD:.*]] = tensor.extract_slice %[[ACC]][%[[ROW]], 0] [1, 3] [1, 1] : tensor<5x3xf32> to tensor<1x3xf32>
// CHECK-NEXT:      %[[NEW:.*]] = tensor.extract_slice %[[U]][%[[K]], 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
// CHECK-NEXT:      %[[E:.*]] = tensor.empty() : tensor<1x3xf32>
// CHECK-NEXT:      %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[OLD]], %[[NEW]] : tensor<1x3xf32>, tensor<1x3xf32>) outs(%[[E]] : tensor<1x3xf32>)
// CHECK:             arith.addf
// CHECK:           %[[NEXT:.*]] = tensor.insert_slice %[[SUM]] into %[[ACC]][%[[ROW]], 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<5x3xf32>
// CHECK-NEXT:      scf.yield %[[NEXT]] : tensor<5x3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]

// -----

// matmul: linalg.matmul into a zero fill in 2-D; batched is a generic (b, m, n, k).
func.func @matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %p: tensor<2x4x3xf32>, %q: tensor<2x3x5xf32>) -> (tensor<4x5xf32>, tensor<2x4x5xf32>) {
  %c = nn.matmul %a, %b : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %d = nn.matmul %p, %q : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  func.return %c, %d : tensor<4x5xf32>, tensor<2x4x5xf32>
}
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3x5xf32>, %[[P:.*]]: tensor<2x4x3xf32>, %[[Q:.*]]: tensor<2x3x5xf32>)
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK-NEXT:    %[[C:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x3xf32>, tensor<3x5xf32>) outs(%[[INIT]] : tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK:         %[[INIT2:.*]] = linalg.fill
// CHECK-NEXT:    %[[D:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %[[Q]] : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%[[INIT2]] : tensor<2x4x5xf32>) {
// CHECK-NEXT:    ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[L]], %[[R]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[M]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32

// -----

// conv2d: the input zero-padded ([top, bottom, left, right] = 1), then seven loops
// (n, o, oh, ow, c, kh, kw) reading the input at (n, c, oh * 2 + kh, ow + kw).
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x8xf32> {
  %y = nn.conv2d %x, %w stride = [2, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}
// CHECK-LABEL: func.func @conv(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x3x10x10xf32>
// CHECK-NEXT:    %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
// CHECK-NEXT:    %[[PADDED:.*]] = tensor.insert_slice %[[X]] into %[[F]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : tensor<1x3x8x8xf32> into tensor<1x3x10x10xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, ((d2 * 2) + d5), (d3 + d6))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[PADDED]], %[[W]] : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%[[INIT]] : tensor<1x4x4x8xf32>)

// -----

// max_pool2d: six loops (n, c, oh, ow, kh, kw); a tensor.empty of the kernel's shape bounds
// the window loops; maximumf into a fill of -inf.
func.func @pool(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK-LABEL: func.func @pool(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>)
// CHECK-NEXT:    %[[WINDOW:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT:    %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x3x4x4xf32>
// CHECK-NEXT:    %[[INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%[[E]] : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d4), ((d3 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[X]], %[[WINDOW]] : tensor<1x3x8x8xf32>, tensor<2x2xf32>) outs(%[[INIT]] : tensor<1x3x4x4xf32>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

// tensor.splat (the autodiff pass emits one of index counters for a loop's tape) is a fill;
// xDSL's linalg.fill takes no index element, so an index splat is a generic yielding it.
func.func @splat(%s: f32, %i: index) -> (tensor<2x3xf32>, tensor<4xindex>) {
  %t = tensor.splat %s : tensor<2x3xf32>
  %u = tensor.splat %i : tensor<4xindex>
  func.return %t, %u : tensor<2x3xf32>, tensor<4xindex>
}
// CHECK-LABEL: func.func @splat(
// CHECK-SAME:      %[[S:.*]]: f32, %[[I:.*]]: index)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT:    %[[T:.*]] = linalg.fill ins(%[[S]] : f32) outs(%[[E]] : tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[F:.*]] = tensor.empty() : tensor<4xindex>
// CHECK-NEXT:    %[[U:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%[[F]] : tensor<4xindex>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: index):
// CHECK-NEXT:      linalg.yield %[[I]] : index
// CHECK-NEXT:    } -> tensor<4xindex>
// CHECK-NEXT:    func.return %[[T]], %[[U]]
// CHECK-NOT:   tensor.splat

// -----

// arith and math ops on tensors (valid input the autodiff pass differentiates) become
// generics whose body is the same op on scalars; a scalar operand is used as it is.
func.func @arith_on_tensors(%x: tensor<3xf64>, %y: tensor<3xf64>, %p: i1) -> tensor<3xf64> {
  %s = arith.addf %x, %y : tensor<3xf64>
  %n = arith.select %p, %s, %x : tensor<3xf64>
  %e = math.exp %n : tensor<3xf64>
  func.return %e : tensor<3xf64>
}
// CHECK-LABEL: func.func @arith_on_tensors(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf64>, %[[Y:.*]]: tensor<3xf64>, %[[P:.*]]: i1)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[Y]] : tensor<3xf64>, tensor<3xf64>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f64, %[[B:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[A]], %[[B]] : f64
// CHECK-NEXT:      linalg.yield %[[R]] : f64
// CHECK:         %[[N:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[X]] : tensor<3xf64>, tensor<3xf64>)
// CHECK-NEXT:    ^bb0(%[[C:.*]]: f64, %[[D:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT:      %{{.*}} = arith.select %[[P]], %[[C]], %[[D]] : f64
// CHECK:         linalg.generic {{.*}} ins(%[[N]] : tensor<3xf64>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT:      %{{.*}} = math.exp %[[V]] : f64
// CHECK-NOT:   arith.addf %{{.*}} : tensor

// -----

// The remaining elementwise ops, one case each: the generic's body is the scalar op.
// neg is arith.negf (a sign flip, -0.0 for 0.0).
func.func @neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.neg %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @neg(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[X]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.negf %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

// abs: math.absf on floats; on integers, a select of 0 - x where x < 0 (wrapping at INT_MIN).
func.func @abs(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %y = nn.abs %x : tensor<4xf32>
  %j = nn.abs %i : tensor<4xi32>
  func.return %y, %j : tensor<4xf32>, tensor<4xi32>
}
// CHECK-LABEL: func.func @abs(
// CHECK:         ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = math.absf %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         ^bb0(%[[I:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[NEG:.*]] = arith.cmpi slt, %[[I]], %[[ZERO]] : i32
// CHECK-NEXT:      %[[ZERO2:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[MINUS:.*]] = arith.subi %[[ZERO2]], %[[I]] : i32
// CHECK-NEXT:      %[[RI:.*]] = arith.select %[[NEG]], %[[MINUS]], %[[I]] : i32
// CHECK-NEXT:      linalg.yield %[[RI]] : i32

// -----

// sign: -1, 0 or 1 by selects; a zero keeps its sign and NaN stays NaN (every compare is
// false, so the operand itself is yielded).
func.func @sign(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.sign %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @sign(
// CHECK:         ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[IS_ZERO:.*]] = arith.cmpf oeq, %[[A]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[R0:.*]] = arith.select %[[IS_ZERO]], %[[ZERO]], %[[A]] : f32
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpf olt, %[[A]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[MINUS_ONE:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:      %[[R1:.*]] = arith.select %[[LT]], %[[MINUS_ONE]], %[[R0]] : f32
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[GT]], %[[ONE]], %[[R1]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

func.func @log(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.log %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @log(
// CHECK:         ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = math.log %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

// sigmoid without overflow: e = exp(-|x|) (through a select), then 1 / (1 + e) for x >= 0 and
// e / (1 + e) below.
func.func @sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.sigmoid %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @sigmoid(
// CHECK:         ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[POS:.*]] = arith.cmpf oge, %[[A]], %{{.*}} : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[A]] : f32
// CHECK-NEXT:      %[[ARG:.*]] = arith.select %[[POS]], %[[NEG]], %[[A]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[ARG]] : f32
// CHECK-NEXT:      %[[DEN:.*]] = arith.addf %[[ONE:.*]], %[[EXP]] : f32
// CHECK-NEXT:      %[[HI:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT:      %[[LO:.*]] = arith.divf %[[EXP]], %[[DEN]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[POS]], %[[HI]], %[[LO]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

func.func @sqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.sqrt %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @sqrt(
// CHECK:         ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = math.sqrt %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

// rsqrt is 1 / sqrt(x), correctly rounded (no approximate math.rsqrt).
func.func @rsqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.rsqrt %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @rsqrt(
// CHECK:         ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[S:.*]] = math.sqrt %[[A]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.divf %[[ONE]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK-NOT:       math.rsqrt

// -----

func.func @sin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.sin %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @sin(
// CHECK:         ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = math.sin %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

func.func @cos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.cos %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @cos(
// CHECK:         ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = math.cos %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

// Binary elementwise ops: two identity-mapped inputs.
func.func @add(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %z = nn.add %x, %y : tensor<4xf32>
  func.return %z : tensor<4xf32>
}
// CHECK-LABEL: func.func @add(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[X]], %[[Y]] : tensor<4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

func.func @sub(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %z = nn.sub %x, %y : tensor<4xf32>
  func.return %z : tensor<4xf32>
}
// CHECK-LABEL: func.func @sub(
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

// mul on integers is arith.muli (wrapping).
func.func @mul(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %z = nn.mul %x, %y : tensor<4xf32>
  %j = nn.mul %i, %i : tensor<4xi32>
  func.return %z, %j : tensor<4xf32>, tensor<4xi32>
}
// CHECK-LABEL: func.func @mul(
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         ^bb0(%[[I:.*]]: i32, %[[J:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      %[[RI:.*]] = arith.muli %[[I]], %[[J]] : i32
// CHECK-NEXT:      linalg.yield %[[RI]] : i32

// -----

func.func @pow(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %z = nn.pow %x, %y : tensor<4xf32>
  func.return %z : tensor<4xf32>
}
// CHECK-LABEL: func.func @pow(
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = math.powf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

// maximum propagates NaN (arith.maximumf, not maxnumf); on integers it is arith.maxsi.
func.func @maximum(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %z = nn.maximum %x, %y : tensor<4xf32>
  %j = nn.maximum %i, %i : tensor<4xi32>
  func.return %z, %j : tensor<4xf32>, tensor<4xi32>
}
// CHECK-LABEL: func.func @maximum(
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         ^bb0(%[[I:.*]]: i32, %[[J:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      %[[RI:.*]] = arith.maxsi %[[I]], %[[J]] : i32
// CHECK-NEXT:      linalg.yield %[[RI]] : i32

// -----

func.func @minimum(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %z = nn.minimum %x, %y : tensor<4xf32>
  func.return %z : tensor<4xf32>
}
// CHECK-LABEL: func.func @minimum(
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.minimumf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

// select: the predicate tensor is a third input; the body is arith.select on scalars.
func.func @select(%p: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %z = nn.select %p, %x, %y : tensor<4xi1>, tensor<4xf32>
  func.return %z : tensor<4xf32>
}
// CHECK-LABEL: func.func @select(
// CHECK-SAME:      %[[P:.*]]: tensor<4xi1>, %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[P]], %[[X]], %[[Y]] : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[C:.*]]: i1, %[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[C]], %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

// Bitwise ops, on i1 (logical) as on wider integers.
func.func @and(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %z = nn.and %x, %y : tensor<4xi1>
  func.return %z : tensor<4xi1>
}
// CHECK-LABEL: func.func @and(
// CHECK:         ^bb0(%[[A:.*]]: i1, %[[B:.*]]: i1, %{{.*}}: i1):
// CHECK-NEXT:      %[[R:.*]] = arith.andi %[[A]], %[[B]] : i1
// CHECK-NEXT:      linalg.yield %[[R]] : i1

// -----

func.func @or(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %z = nn.or %x, %y : tensor<4xi32>
  func.return %z : tensor<4xi32>
}
// CHECK-LABEL: func.func @or(
// CHECK:         ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      %[[R:.*]] = arith.ori %[[A]], %[[B]] : i32
// CHECK-NEXT:      linalg.yield %[[R]] : i32

// -----

func.func @xor(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %z = nn.xor %x, %y : tensor<4xi1>
  func.return %z : tensor<4xi1>
}
// CHECK-LABEL: func.func @xor(
// CHECK:         ^bb0(%[[A:.*]]: i1, %[[B:.*]]: i1, %{{.*}}: i1):
// CHECK-NEXT:      %[[R:.*]] = arith.xori %[[A]], %[[B]] : i1
// CHECK-NEXT:      linalg.yield %[[R]] : i1

// -----

// shift_right_logical: arith.shrui, guarded like shift_left (an amount outside 0..31 gives 0).
func.func @shift_right_logical(%x: tensor<4xi32>, %n: tensor<4xi32>) -> tensor<4xi32> {
  %y = nn.shift_right_logical %x, %n : tensor<4xi32>
  func.return %y : tensor<4xi32>
}
// CHECK-LABEL: func.func @shift_right_logical(
// CHECK:         ^bb0(%[[A:.*]]: i32, %[[N:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[WIDTH:.*]] = arith.constant 32 : i32
// CHECK-NEXT:      %[[OK:.*]] = arith.cmpi ult, %[[N]], %[[WIDTH]] : i32
// CHECK-NEXT:      %[[SAFE:.*]] = arith.select %[[OK]], %[[N]], %[[ZERO]] : i32
// CHECK-NEXT:      %[[S:.*]] = arith.shrui %[[A]], %[[SAFE]] : i32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[OK]], %[[S]], %[[ZERO]] : i32
// CHECK-NEXT:      linalg.yield %[[R]] : i32

// -----

// reduce_min over the first axis: a fill of +inf, a ["reduction", "parallel"] generic whose
// output map drops d0, arith.minimumf (NaN propagates).
func.func @reduce_min(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %m = nn.reduce_min %x axes = [0] : tensor<2x3xf32> -> tensor<3xf32>
  func.return %m : tensor<3xf32>
}
// CHECK-LABEL: func.func @reduce_min(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[INF:.*]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT:    %[[INIT:.*]] = linalg.fill ins(%[[INF]] : f32) outs(%[[E]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[X]] : tensor<2x3xf32>) outs(%[[INIT]] : tensor<3xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.minimumf %[[ACC]], %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

// An autodiff request left in the input: the pass lowers differentiated IR only.
func.func @f(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  func.return %y : f32
}
func.func @main(%x: f32) -> f32 {
  // ERR: convert-nn-to-linalg.mlir:[[# @LINE + 1]]:3: error: 'autodiff.grad' op is an unexpanded autodiff op; convert-nn-to-linalg lowers differentiated IR only: run the autodiff pass first (-p autodiff,convert-nn-to-linalg)
  %g = autodiff.grad @f(%x) : (f32) -> f32
  func.return %g : f32
}

// -----

// The same inside a loop body: found wherever it is, before anything is rewritten.
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.exp %x : tensor<2xf32>
  func.return %y : tensor<2xf32>
}
func.func @loop(%x: tensor<2xf32>, %n: index) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<2xf32>) {
    %e = nn.exp %acc : tensor<2xf32>
    // ERR: convert-nn-to-linalg.mlir:[[# @LINE + 1]]:5: error: 'autodiff.stop_gradient' op is an unexpanded autodiff op
    %s = autodiff.stop_gradient %e : tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

// A large conv2d (2 * 16 * 2048 * 72 flops >= 2^20) is an im2col: the windows copied into
// cols[c, kh, kw, n, oh, ow], collapsed to (C*KH*KW, N*OH*OW); the weight collapsed to
// (O, C*KH*KW) times it is one linalg.matmul (one GEMM after convert-linalg-to-blas),
// expanded to (O, N, OH, OW) and transposed to NCHW.
func.func @conv_im2col(%x: tensor<8x8x16x16xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<8x16x16x16xf32> {
  %y = nn.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<8x8x16x16xf32>, tensor<16x8x3x3xf32>) -> tensor<8x16x16x16xf32>
  func.return %y : tensor<8x16x16x16xf32>
}
// CHECK-LABEL: func.func @conv_im2col(
// CHECK:         %[[PADDED:.*]] = tensor.insert_slice %{{.*}} : tensor<8x8x16x16xf32> into tensor<8x8x18x18xf32>
// CHECK:         %[[COLS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, (d4 + d1), (d5 + d2))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[PADDED]] : tensor<8x8x18x18xf32>) outs(%{{.*}} : tensor<8x3x3x8x16x16xf32>)
// CHECK:         %[[COLUMNS:.*]] = tensor.collapse_shape %[[COLS]] {{\[}}[0 : i64, 1 : i64, 2 : i64], [3 : i64, 4 : i64, 5 : i64]] : tensor<8x3x3x8x16x16xf32> into tensor<72x2048xf32>
// CHECK-NEXT:    %[[MATRIX:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0 : i64], [1 : i64, 2 : i64, 3 : i64]] : tensor<16x8x3x3xf32> into tensor<16x72xf32>
// CHECK:         %[[PRODUCT:.*]] = linalg.matmul ins(%[[MATRIX]], %[[COLUMNS]] : tensor<16x72xf32>, tensor<72x2048xf32>)
// CHECK-NEXT:    %[[BY_IMAGE:.*]] = tensor.expand_shape %[[PRODUCT]] {{\[}}[0 : i64], [1 : i64, 2 : i64, 3 : i64]] output_shape [16, 8, 16, 16] : tensor<16x2048xf32> into tensor<16x8x16x16xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]{{.*}} ins(%[[BY_IMAGE]] : tensor<16x8x16x16xf32>) outs(%{{.*}} : tensor<8x16x16x16xf32>)

// -----

// A kernel wider than the output (12 > 5, a weight gradient's shape) takes the windows as
// rows: rows[n, oh, ow, c, kh, kw] (loops in that order, the copy runs along a kernel row),
// collapsed to (N*OH*OW, C*KH*KW), times the transposed weight matrix, then to NCHW.
func.func @conv_window_rows(%x: tensor<8x8x16x16xf32>, %w: tensor<16x8x12x12xf32>) -> tensor<8x16x5x5xf32> {
  %y = nn.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : (tensor<8x8x16x16xf32>, tensor<16x8x12x12xf32>) -> tensor<8x16x5x5xf32>
  func.return %y : tensor<8x16x5x5xf32>
}
// CHECK-LABEL: func.func @conv_window_rows(
// CHECK:         %[[WINDOWS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, (d1 + d4), (d2 + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>]{{.*}} ins(%x : tensor<8x8x16x16xf32>) outs(%{{.*}} : tensor<8x5x5x8x12x12xf32>)
// CHECK:         %[[ROWS:.*]] = tensor.collapse_shape %[[WINDOWS]] {{.*}} : tensor<8x5x5x8x12x12xf32> into tensor<200x1152xf32>
// CHECK:         %[[MATRIX:.*]] = tensor.collapse_shape %w {{.*}} : tensor<16x8x12x12xf32> into tensor<16x1152xf32>
// CHECK:         %[[MATRIX_T:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>]{{.*}} ins(%[[MATRIX]] : tensor<16x1152xf32>) outs(%{{.*}} : tensor<1152x16xf32>)
// CHECK:         %[[PRODUCT:.*]] = linalg.matmul ins(%[[ROWS]], %[[MATRIX_T]] : tensor<200x1152xf32>, tensor<1152x16xf32>)
// CHECK-NEXT:    %[[BY_PIXEL:.*]] = tensor.expand_shape %[[PRODUCT]] {{.*}} : tensor<200x16xf32> into tensor<8x5x5x16xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]{{.*}} ins(%[[BY_PIXEL]] : tensor<8x5x5x16xf32>) outs(%{{.*}} : tensor<8x16x5x5xf32>)
