// RUN: irgrad-opt %s -p autodiff --split-input-file | filecheck %s

// Batching (vmap) of loops whose trip count differs per example, and of tensor.extract at a per-example
// position (rules/scf.py, rules/tensor.py). tests/unit/autodiff/test_vmap_loops.py checks them numerically against a
// loop over the examples, with gradients.

// A while loop whose condition depends on the mapped argument, as JAX batches it: every carried value is
// batched and the loop also carries `running`, the examples whose condition still holds (computed once before
// the loop). It runs while any example runs (the maximum of the mask, as i32, > 0); the body computes every
// example and keeps the new value only where the example runs (a select), so a finished example is frozen;
// then the condition at the new values, and-ed with the mask, is the next mask. The condition region forwards
// its own arguments, as ig.while_loop's does, so the batched loop can be differentiated like any other.
func.func @grow(%x: tensor<2xf64>) -> tensor<2xf64> {
  %r = scf.while (%c = %x) : (tensor<2xf64>) -> tensor<2xf64> {
    %s = nn.reduce_sum %c axes = [0] : tensor<2xf64> -> tensor<f64>
    %lim = nn.full 100.0 : tensor<f64>
    %lt = nn.compare lt, %s, %lim : tensor<f64>
    %p = tensor.extract %lt[] : tensor<i1>
    scf.condition(%p) %c : tensor<2xf64>
  } do {
  ^bb0(%c: tensor<2xf64>):
    %two = nn.full 2.0 : tensor<2xf64>
    %n = nn.mul %c, %two : tensor<2xf64>
    scf.yield %n : tensor<2xf64>
  }
  func.return %r : tensor<2xf64>
}
func.func @grow_all(%xs: tensor<4x2xf64>) -> tensor<4x2xf64> {
  %y = autodiff.batch @grow(%xs) in_axes = [0] out_axes = [0] : (tensor<4x2xf64>) -> tensor<4x2xf64>
  func.return %y : tensor<4x2xf64>
}

// CHECK-LABEL: func.func private @grow_batch(%x: tensor<4x2xf64>) -> tensor<4x2xf64> {
// CHECK:         %s = nn.reduce_sum %x axes = [1] : tensor<4x2xf64> -> tensor<4xf64>
// CHECK:         %running = nn.compare lt, %s, %{{.*}} : tensor<4xf64>
// CHECK-NEXT:    %r, %{{.*}} = scf.while (%c = %x, %[[ACTIVE:.*]] = %running) : (tensor<4x2xf64>, tensor<4xi1>) -> (tensor<4x2xf64>, tensor<4xi1>) {
// CHECK-NEXT:      %[[I32:.*]] = nn.convert %[[ACTIVE]] : tensor<4xi1> -> tensor<4xi32>
// CHECK-NEXT:      %[[MAX:.*]] = nn.reduce_max %[[I32]] axes = [0] : tensor<4xi32> -> tensor<i32>
// CHECK-NEXT:      %[[ZERO:.*]] = nn.full 0 : tensor<i32>
// CHECK-NEXT:      %[[GT:.*]] = nn.compare gt, %[[MAX]], %[[ZERO]] : tensor<i32>
// CHECK-NEXT:      %any = tensor.extract %[[GT]][] : tensor<i1>
// CHECK-NEXT:      scf.condition(%any) %c, %[[ACTIVE]] : tensor<4x2xf64>, tensor<4xi1>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[C:.*]]: tensor<4x2xf64>, %[[MASK:.*]]: tensor<4xi1>):
// CHECK:           %n = nn.mul %[[C]], %{{.*}} : tensor<4x2xf64>
// CHECK-NEXT:      %[[PRED:.*]] = nn.broadcast_in_dim %[[MASK]] dims = [0] : tensor<4xi1> -> tensor<4x2xi1>
// CHECK-NEXT:      %[[NEW:.*]] = nn.select %[[PRED]], %n, %[[C]] : tensor<4x2xi1>, tensor<4x2xf64>
// CHECK-NEXT:      %{{.*}} = nn.reduce_sum %[[NEW]] axes = [1] : tensor<4x2xf64> -> tensor<4xf64>
// CHECK:           %lt = nn.compare lt, %{{.*}}, %{{.*}} : tensor<4xf64>
// CHECK-NEXT:      %[[NEXT:.*]] = nn.and %[[MASK]], %lt : tensor<4xi1>
// CHECK-NEXT:      scf.yield %[[NEW]], %[[NEXT]] : tensor<4x2xf64>, tensor<4xi1>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<4x2xf64>

// -----

// A fori_loop to a per-example bound, as JAX batches it: the equivalent while loop (iv < ub, iv += step),
// batched. The induction variable is a batched index (tensor<4xi64>, an i64 per example; the shared lower
// bound is splat to it), carried and frozen like the other values; arith ops on it become nn ops.
func.func @repeat(%n: tensor<i32>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.extract %n[] : tensor<i32>
  %ub = arith.index_cast %e : i32 to index
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%c = %x) -> (tensor<3xf64>) {
    %two = nn.full 2.0 : tensor<3xf64>
    %d = nn.mul %c, %two : tensor<3xf64>
    scf.yield %d : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}
func.func @repeat_all(%ns: tensor<4xi32>, %x: tensor<3xf64>) -> tensor<4x3xf64> {
  %y = autodiff.batch @repeat(%ns, %x) in_axes = [0, -1] out_axes = [0] : (tensor<4xi32>, tensor<3xf64>) -> tensor<4x3xf64>
  func.return %y : tensor<4x3xf64>
}

// CHECK-LABEL: func.func private @repeat_batch(%n: tensor<4xi32>, %x: tensor<3xf64>) -> tensor<4x3xf64> {
// CHECK:         %ub = nn.convert %n : tensor<4xi32> -> tensor<4xi64>
// CHECK:         %[[LB:.*]] = tensor.splat %{{.*}} : tensor<4xi64>
// CHECK-NEXT:    %[[X:.*]] = nn.broadcast_in_dim %x dims = [1] : tensor<3xf64> -> tensor<4x3xf64>
// CHECK-NEXT:    %running = nn.compare lt, %[[LB]], %ub : tensor<4xi64>
// CHECK-NEXT:    %{{.*}}, %r, %{{.*}} = scf.while (%i = %[[LB]], %c = %[[X]], %{{.*}} = %running) : (tensor<4xi64>, tensor<4x3xf64>, tensor<4xi1>) -> (tensor<4xi64>, tensor<4x3xf64>, tensor<4xi1>) {
// CHECK:           nn.reduce_max
// CHECK:           scf.condition(%any)
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: tensor<4xi64>, %[[C:.*]]: tensor<4x3xf64>, %[[MASK:.*]]: tensor<4xi1>):
// CHECK:           %d = nn.mul %[[C]], %{{.*}} : tensor<4x3xf64>
// CHECK:           %[[STEP:.*]] = nn.add %[[I]], %{{.*}} : tensor<4xi64>
// CHECK-NEXT:      %[[NEXT_I:.*]] = nn.select %[[MASK]], %[[STEP]], %[[I]] : tensor<4xi1>, tensor<4xi64>
// CHECK-NEXT:      %[[PRED:.*]] = nn.broadcast_in_dim %[[MASK]] dims = [0] : tensor<4xi1> -> tensor<4x3xi1>
// CHECK-NEXT:      %[[NEXT_C:.*]] = nn.select %[[PRED]], %d, %[[C]] : tensor<4x3xi1>, tensor<4x3xf64>
// CHECK-NEXT:      %[[LT:.*]] = nn.compare lt, %[[NEXT_I]], %ub : tensor<4xi64>
// CHECK-NEXT:      %[[ACTIVE:.*]] = nn.and %[[MASK]], %[[LT]] : tensor<4xi1>
// CHECK-NEXT:      scf.yield %[[NEXT_I]], %[[NEXT_C]], %[[ACTIVE]] : tensor<4xi64>, tensor<4x3xf64>, tensor<4xi1>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<4x3xf64>

// -----

// tensor.extract at a per-example position i_b: the one-element dynamic slice at it, batched. With the tensor
// mapped too, result[b] = x[b, i_b]: a gather from x flattened to [4 * 5], at b * 5 + i_b, with i_b clamped to
// [0, 4] first (as the dynamic slices clamp their starts) so it cannot reach into another example's row.
func.func @pick(%x: tensor<5xf64>, %i: tensor<i32>) -> tensor<f64> {
  %j = tensor.extract %i[] : tensor<i32>
  %k = arith.index_cast %j : i32 to index
  %e = tensor.extract %x[%k] : tensor<5xf64>
  %t = tensor.from_elements %e : tensor<f64>
  func.return %t : tensor<f64>
}
func.func @pick_each(%xs: tensor<4x5xf64>, %i: tensor<4xi32>) -> tensor<4xf64> {
  %e = autodiff.batch @pick(%xs, %i) in_axes = [0, 0] out_axes = [0] : (tensor<4x5xf64>, tensor<4xi32>) -> tensor<4xf64>
  func.return %e : tensor<4xf64>
}

// CHECK-LABEL: func.func private @pick_batch(%x: tensor<4x5xf64>, %i: tensor<4xi32>) -> tensor<4xf64> {
// CHECK-NEXT:    %k = nn.convert %i : tensor<4xi32> -> tensor<4xi64>
// CHECK-NEXT:    %[[ZERO:.*]] = nn.full 0 : tensor<4xi64>
// CHECK-NEXT:    %[[LOW:.*]] = nn.maximum %k, %[[ZERO]] : tensor<4xi64>
// CHECK-NEXT:    %[[LAST:.*]] = nn.full 4 : tensor<4xi64>
// CHECK-NEXT:    %[[CLAMPED:.*]] = nn.minimum %[[LOW]], %[[LAST]] : tensor<4xi64>
// CHECK-NEXT:    %[[COLUMN:.*]] = nn.broadcast_in_dim %[[CLAMPED]] dims = [0] : tensor<4xi64> -> tensor<4x1xi64>
// CHECK-NEXT:    %[[ROWS:.*]] = nn.iota dim = 0 : tensor<4xi64>
// CHECK-NEXT:    %[[N:.*]] = nn.full 5 : tensor<4xi64>
// CHECK-NEXT:    %[[STARTS:.*]] = nn.mul %[[ROWS]], %[[N]] : tensor<4xi64>
// CHECK-NEXT:    %[[OFFSETS:.*]] = nn.broadcast_in_dim %[[STARTS]] dims = [0] : tensor<4xi64> -> tensor<4x1xi64>
// CHECK-NEXT:    %[[FLAT:.*]] = nn.add %[[COLUMN]], %[[OFFSETS]] : tensor<4x1xi64>
// CHECK-NEXT:    %[[ALL:.*]] = nn.reshape %x : tensor<4x5xf64> -> tensor<20xf64>
// CHECK-NEXT:    %[[PICKED:.*]] = nn.gather %[[ALL]][%[[FLAT]]] axis = 0 : (tensor<20xf64>, tensor<4x1xi64>) -> tensor<4x1xf64>
// CHECK-NEXT:    %e = nn.reshape %[[PICKED]] : tensor<4x1xf64> -> tensor<4xf64>
