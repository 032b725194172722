// RUN: not irgrad-opt %s -p linalg-fuse-elementwise --split-input-file 2>/dev/null | filecheck %s
// RUN: not irgrad-opt %s -p linalg-fuse-elementwise --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt %s -p linalg-fuse-elementwise --split-input-file >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// RUN: not irgrad-opt %s -p 'linalg-fuse-elementwise{recompute_limit=-1}' 2>&1 | filecheck %s --check-prefix=OPTION
// ERR-NOT: Traceback

// linalg-fuse-elementwise: producers fused into consumers (rules in the pass's module docstring,
// irgrad/lowering/nn_to_linalg/linalg_fuse_elementwise.py). Each case shows what fuses and what must not.
// Traced programs (W4, W7, softmax, an MLP gradient, random DAGs) are checked numerically,
// bit for bit, in tests/unit/lowering/nn_to_linalg/test_lowering_fusion.py.

// A chain of two: tanh then a multiply by a constant fill.
func.func @chain2(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e0 = tensor.empty() : tensor<16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %half = arith.constant 5.000000e-01 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %h = linalg.fill ins(%half : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t, %h : tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  func.return %y : tensor<16xf32>
}
// CHECK-LABEL: func.func @chain2(
// CHECK-SAME:      %[[X:.*]]: tensor<16xf32>) -> tensor<16xf32> {
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<16xf32>
// CHECK-NEXT:    %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[X]] : tensor<16xf32>) outs(%[[E]] : tensor<16xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[A]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.mulf %[[T]], %[[HALF]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK-NEXT:    } -> tensor<16xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<16xf32>
// CHECK-NOT:     linalg.fill

// -----

// A chain of five, two of them reading a second argument, one squaring (x * x reads %v twice
// through one map: one operand after fusion).
func.func @chain5(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %v1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %v2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v1, %z : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %v3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v2, %v2 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e3 = tensor.empty() : tensor<4x8xf32>
  %v4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%z, %v3 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e3 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e4 = tensor.empty() : tensor<4x8xf32>
  %v5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v4 : tensor<4x8xf32>) outs(%e4 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  func.return %v5 : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @chain5(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x8xf32>, %[[Z:.*]]: tensor<4x8xf32>)
// CHECK-COUNT-1: linalg.generic
// CHECK-SAME:      ins(%[[Z]], %[[X]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[ZA:.*]]: f32, %[[XA:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[V1:.*]] = math.exp %[[XA]] : f32
// CHECK-NEXT:      %[[V2:.*]] = arith.addf %[[V1]], %[[ZA]] : f32
// CHECK-NEXT:      %[[V3:.*]] = arith.mulf %[[V2]], %[[V2]] : f32
// CHECK-NEXT:      %[[V4:.*]] = arith.subf %[[ZA]], %[[V3]] : f32
// CHECK-NEXT:      %[[V5:.*]] = arith.negf %[[V4]] : f32
// CHECK-NEXT:      linalg.yield %[[V5]] : f32
// CHECK-NOT:     linalg.generic

// -----

// A broadcast (projected input map, identity output map) fused into its elementwise consumer:
// the consumer reads the bias through the broadcast's map.
func.func @broadcast(%x: tensor<4x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x8xf32>, %[[BIAS:.*]]: tensor<8xf32>)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[BIAS]] : tensor<4x8xf32>, tensor<8xf32>) outs(%[[E]] : tensor<4x8xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK-NOT:     linalg.generic

// -----

// A chain ending in a reduction: exp and the multiply are recomputed at each reduction point;
// the accumulator's fill is an outs operand and stays.
func.func @into_reduction(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%q : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
// CHECK-LABEL: func.func @into_reduction(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<4x8xf32>)
// CHECK:         %[[ACC:.*]] = linalg.fill
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[ACC]] : tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[E]], %[[B]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[O]], %[[M]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NOT:     linalg.generic

// -----

// A producer that computes and has two users is computed once and stored (not duplicated);
// a broadcast with two users is fused into both (it computes nothing) and disappears.
func.func @multi_use(%x: tensor<4x8xf32>, %bias: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %y1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e3 = tensor.empty() : tensor<4x8xf32>
  %y2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e3 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.mulf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  func.return %y1, %y2 : tensor<4x8xf32>, tensor<4x8xf32>
}
// CHECK-LABEL: func.func @multi_use(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x8xf32>, %[[BIAS:.*]]: tensor<8xf32>)
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>)
// CHECK:           math.tanh
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%[[T]], %[[BIAS]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK-NOT:       math.tanh
// CHECK:           arith.addf
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%[[T]], %[[BIAS]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK-NOT:       math.tanh
// CHECK:           arith.mulf
// CHECK-NOT:     linalg.generic

// -----

// A consumer reading its producer through a transpose: the producer's input map composes with
// it, so the fused op reads %x transposed.
func.func @transposed_read(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<4x8xf32>) outs(%e1 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  func.return %n : tensor<8x4xf32>
}
// CHECK-LABEL: func.func @transposed_read(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>) -> tensor<8x4xf32> {
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<4x8xf32>) outs(%[[E]] : tensor<8x4xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[R]] : f32
// CHECK-NEXT:      linalg.yield %[[N]] : f32
// CHECK-NOT:     linalg.generic

// -----

// A producer writing through a permutation (its output map is a transpose): the inverse of that
// map takes the consumer's indices to the producer's.
func.func @permuted_write(%x: tensor<4x8xf32>, %z: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e0 = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t, %z : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e1 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  func.return %n : tensor<8x4xf32>
}
// CHECK-LABEL: func.func @permuted_write(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x8xf32>, %[[Z:.*]]: tensor<8x4xf32>)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[Z]] : tensor<4x8xf32>, tensor<8x4xf32>) outs(%[[E]] : tensor<8x4xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.subf %[[R]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NOT:     linalg.generic

// -----

// Not fused: a producer with a reduction iterator (a row sum) feeding an elementwise consumer.
func.func @reduction_producer(%x: tensor<4x8xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s, %z : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @reduction_producer(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x8xf32>, %[[Z:.*]]: tensor<4xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x8xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[S]], %[[Z]] : tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT:       arith.addf
// CHECK:           arith.divf

// -----

// Not fused: summing a broadcast over the broadcast dimension. Fused, the reduction loop would be
// indexed by no operand dimension alone, so nothing would bound it.
func.func @unbounded_loop(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%b : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
// CHECK-LABEL: func.func @unbounded_loop(
// CHECK:         %[[B:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[B]] : tensor<4x8xf32>)

// -----

// Read through a broadcast, a cheap producer (one multiply) is recomputed at each of the 8
// points that read it; an expensive one (exp) is computed once and stored.
func.func @recompute(%x: tensor<4xf32>, %z: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e0 = tensor.empty() : tensor<4xf32>
  %cheap = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %y1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cheap, %z : tensor<4xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %costly = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e3 = tensor.empty() : tensor<4x8xf32>
  %y2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%costly, %z : tensor<4xf32>, tensor<4x8xf32>) outs(%e3 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  func.return %y1, %y2 : tensor<4x8xf32>, tensor<4x8xf32>
}
// CHECK-LABEL: func.func @recompute(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4x8xf32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%[[X]], %[[Z]] : tensor<4xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT:      arith.addf %[[SQ]], %[[B]] : f32
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.exp
// CHECK:         linalg.generic {{.*}} ins(%[[EXP]], %[[Z]] : tensor<4xf32>, tensor<4x8xf32>)
// CHECK-NOT:       math.exp

// -----

// A producer using linalg.index: its indices become expressions of the consumer's, here a
// constant 0 for the size-1 dimension read through (d0, 0) and the consumer's d0.
func.func @index_producer(%z: tensor<4x8xi64>) -> tensor<4x8xi64> {
  %e0 = tensor.empty() : tensor<4x1xi64>
  %i = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e0 : tensor<4x1xi64>) {
  ^bb0(%o: i64):
    %k = linalg.index 0 : index
    %l = linalg.index 1 : index
    %s = arith.addi %k, %l : index
    %c = arith.index_cast %s : index to i64
    linalg.yield %c : i64
  } -> tensor<4x1xi64>
  %e1 = tensor.empty() : tensor<4x8xi64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%i, %z : tensor<4x1xi64>, tensor<4x8xi64>) outs(%e1 : tensor<4x8xi64>) {
  ^bb0(%a: i64, %b: i64, %o: i64):
    %r = arith.muli %a, %b : i64
    linalg.yield %r : i64
  } -> tensor<4x8xi64>
  func.return %y : tensor<4x8xi64>
}
// CHECK-LABEL: func.func @index_producer(
// CHECK-SAME:      %[[Z:.*]]: tensor<4x8xi64>) -> tensor<4x8xi64> {
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x8xi64>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[Z]] : tensor<4x8xi64>) outs(%[[E]] : tensor<4x8xi64>) {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: i64, %{{.*}}: i64):
// CHECK-NEXT:      %[[I0:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[I1:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[I0]], %[[I1]] : index
// CHECK-NEXT:      %[[C:.*]] = arith.index_cast %[[S]] : index to i64
// CHECK-NEXT:      %[[R:.*]] = arith.muli %[[C]], %[[B]] : i64
// CHECK-NEXT:      linalg.yield %[[R]] : i64
// CHECK-NOT:     linalg.generic

// -----

// Not fused into a loop: a producer outside an scf.for whose consumer is inside would be
// recomputed at every iteration.
func.func @across_loop(%x: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %e0 = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<8xf32>) {
    %e1 = tensor.empty() : tensor<8xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%acc, %t : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    scf.yield %next : tensor<8xf32>
  }
  func.return %r : tensor<8xf32>
}
// CHECK-LABEL: func.func @across_loop(
// CHECK:         %[[T:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         scf.for
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[T]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT:         math.exp
// CHECK:             arith.addf

// -----

// A parallel producer that reads its own init (a fill): the init becomes an input of the fused
// op, and its constant fill is folded in turn.
func.func @reads_init(%x: tensor<8xf32>) -> tensor<8xf32> {
  %one = arith.constant 1.000000e+00 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%one : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}
// CHECK-LABEL: func.func @reads_init(
// CHECK-SAME:      %[[X:.*]]: tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>) outs(%[[E]] : tensor<8xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[A]], %[[ONE]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[R]] : f32
// CHECK-NEXT:      linalg.yield %[[N]] : f32
// CHECK-NOT:     linalg.fill

// -----

// Not folded: a fill of a value that is not a constant (the body would have to capture it).
func.func @fill_of_argument(%x: tensor<8xf32>, %s: f32) -> tensor<8xf32> {
  %e0 = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%s : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %f : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}
// CHECK-LABEL: func.func @fill_of_argument(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<8xf32>, %[[S:.*]]: f32)
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[S]] : f32)
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[F]] : tensor<8xf32>, tensor<8xf32>)

// -----

// Not fused: generics on buffers (rule 1; the pass runs at stage "linalg", before bufferize).
// CHECK-LABEL: func.func @on_buffers(
// CHECK:         linalg.generic {{.*}} ins(%x : memref<8xf32>) outs(%t : memref<8xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.exp
// CHECK:         linalg.generic {{.*}} ins(%t : memref<8xf32>) outs(%y : memref<8xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.negf
func.func @on_buffers(%x: memref<8xf32>, %t: memref<8xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  func.return
}

// -----

// A producer yielding a value of another type than its output's elements (MLIR's verifier
// rejects it, xDSL's does not): a located error at the yield, not a type error in the
// consumer's body after fusion.
// ERR: linalg-fuse-elementwise.mlir:[[# @LINE + 7]]:5: error: 'linalg.yield' op type of yield operand 1 ('i32') doesn't match the element type of the enclosing linalg.generic op ('f32')
// EXIT: exit=1
func.func @yield_type(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.fptosi %a : f32 to i32
    linalg.yield %r : i32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%y : tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  func.return %z : tensor<8xf32>
}

// -----

// A malformed generic (one indexing map for two operands): the verifier's located error.
// ERR: linalg-fuse-elementwise.mlir:[[# @LINE + 3]]:3: error: 'linalg.generic' op expected the number of indexing_map (1) to be equal to the number of input/output operands (2)
func.func @bad_maps(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// A negative recompute_limit is a bad pass option.
// OPTION-NOT: Traceback
// OPTION: irgrad-opt: error: invalid options for pass 'linalg-fuse-elementwise': recompute_limit must be at least 0, got -1
