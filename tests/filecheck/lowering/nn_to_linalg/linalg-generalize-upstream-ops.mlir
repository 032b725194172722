// RUN: not irgrad-opt %s -p linalg-generalize-upstream-ops --split-input-file 2>/dev/null | filecheck %s
// RUN: not irgrad-opt %s -p linalg-generalize-upstream-ops --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// ERR-NOT: Traceback

// linalg-generalize-upstream-ops: upstream MLIR's named ops that irgrad reads but does not lower
// itself become linalg.generic (irgrad/lowering/nn_to_linalg/linalg_generalize_upstream_ops.py).
// Numbers against numpy: tests/unit/dialects/test_upstream_dialect_ops.py.

// CHECK-LABEL: func.func @contractions
func.func @contractions(%a: tensor<2x4x8xf32>, %b: tensor<2x8x3xf32>, %c: tensor<2x4x3xf32>, %m: tensor<4x8xi32>, %x: tensor<8xi32>, %y: tensor<4xi32>, %s: tensor<i32>) -> (tensor<2x4x3xf32>, tensor<4xi32>, tensor<i32>) {
  // CHECK-NEXT: %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%c : tensor<2x4x3xf32>) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
  // CHECK-NEXT:   %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
  // CHECK-NEXT:   %[[S:.*]] = arith.addf %[[C]], %[[P]] : f32
  // CHECK-NEXT:   linalg.yield %[[S]] : f32
  // CHECK-NEXT: } -> tensor<2x4x3xf32>
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%c : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  // CHECK-NEXT: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%m, %x : tensor<4x8xi32>, tensor<8xi32>) outs(%y : tensor<4xi32>) {
  // CHECK:        arith.muli
  // CHECK-NEXT:   arith.addi
  %1 = linalg.matvec ins(%m, %x : tensor<4x8xi32>, tensor<8xi32>) outs(%y : tensor<4xi32>) -> tensor<4xi32>
  // CHECK:      linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x, %x : tensor<8xi32>, tensor<8xi32>) outs(%s : tensor<i32>) {
  %2 = linalg.dot ins(%x, %x : tensor<8xi32>, tensor<8xi32>) outs(%s : tensor<i32>) -> tensor<i32>
  // CHECK-NOT: linalg.batch_matmul
  // CHECK-NOT: linalg.matvec
  // CHECK-NOT: linalg.dot
  func.return %0, %1, %2 : tensor<2x4x3xf32>, tensor<4xi32>, tensor<i32>
}

// -----

// linalg.map: the body gains the output's element as an unread last argument; linalg.matmul stays named (BLAS).
// CHECK-LABEL: func.func @map_and_matmul
func.func @map_and_matmul(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %o: tensor<4x2xf32>) -> (tensor<4x8xf32>, tensor<4x2xf32>) {
  // CHECK-NEXT: %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%x : tensor<4x8xf32>) {
  // CHECK-NEXT: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT:   %[[V:.*]] = arith.subf %[[L]], %[[R]] : f32
  // CHECK-NEXT:   linalg.yield %[[V]] : f32
  // CHECK-NEXT: } -> tensor<4x8xf32>
  %0 = linalg.map { arith.subf } ins(%x, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%x : tensor<4x8xf32>)
  // CHECK-NEXT: linalg.matmul
  %1 = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%o : tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %0, %1 : tensor<4x8xf32>, tensor<4x2xf32>
}

// -----

// tensor.generate: a generic writing a tensor.empty, each index read with linalg.index.
// CHECK-LABEL: func.func @generate
func.func @generate(%m: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<4x8xf32>) {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32):
  // CHECK-NEXT:   %[[I:.*]] = linalg.index 0 : index
  // CHECK-NEXT:   %[[J:.*]] = linalg.index 1 : index
  // CHECK-NEXT:   %[[V:.*]] = tensor.extract %m[%[[J]], %[[I]]] : tensor<4x8xf32>
  // CHECK-NEXT:   linalg.yield %[[V]] : f32
  // CHECK-NEXT: } -> tensor<4x8xf32>
  %g = tensor.generate {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %m[%j, %i] : tensor<4x8xf32>
    tensor.yield %v : f32
  } : tensor<4x8xf32>
  func.return %g : tensor<4x8xf32>
}

// -----

// A dynamic shape is outside irgrad's stages: an error at the op.
func.func @dynamic(%n: index) -> tensor<?xf32> {
  // ERR: linalg-generalize-upstream-ops.mlir:[[# @LINE + 1]]:3: error: 'tensor.generate' op of the dynamic shape tensor<?xf32>: irgrad's stages have static shapes
  %g = tensor.generate %n {
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f32
    tensor.yield %z : f32
  } : tensor<?xf32>
  func.return %g : tensor<?xf32>
}
