// shard-partition of loops and branches: their bodies are partitioned by the same rules as
// straight-line code, the collectives they need run inside them, and carried values keep a
// sharding (found by a fixed point) from one iteration to the next.
// RUN: irgrad-opt %s -p shard-partition --split-input-file | filecheck %s

// Data-parallel gradient descent: the batch stays split (4 of 16 rows per device), the weights
// stay replicated, the loop bounds are the same scalars; the gradient is a partial sum over
// the batch, all-reduced inside the loop, once per iteration.
// CHECK-LABEL: func.func @sgd(%x: tensor<4x3xf64>, %y: tensor<4x1xf64>, %w0: tensor<3x1xf64>) -> tensor<3x1xf64>
// CHECK-SAME:    shard.arg_split_axes = [#shard<axisarray[[0], []]>, #shard<axisarray[[0], []]>, #shard<axisarray[[], []]>]
// CHECK-SAME:    shard.result_split_axes = [#shard<axisarray[[], []]>]
// CHECK-NOT:     shard.all_gather
// CHECK:         %w = scf.for %i = %lo to %hi step %one iter_args(%wi = %w0) -> (tensor<3x1xf64>) {
// CHECK-NEXT:      %p = nn.matmul %x, %wi : (tensor<4x3xf64>, tensor<3x1xf64>) -> tensor<4x1xf64>
// CHECK-NEXT:      %r = nn.sub %p, %y : tensor<4x1xf64>
// CHECK-NEXT:      %xt = nn.transpose %x perm = [1, 0] : tensor<4x3xf64> -> tensor<3x4xf64>
// CHECK-NEXT:      %g = nn.matmul %xt, %r : (tensor<3x4xf64>, tensor<4x1xf64>) -> tensor<3x1xf64>
// CHECK-NEXT:      %lr = nn.full 0.01 : tensor<3x1xf64>
// CHECK-NEXT:      %step = nn.mul %lr, %g : tensor<3x1xf64>
// CHECK-NEXT:      %step_1 = shard.all_reduce %step on @mesh grid_axes = [0] : tensor<3x1xf64> -> tensor<3x1xf64>
// CHECK-NEXT:      %wn = nn.sub %wi, %step_1 : tensor<3x1xf64>
// CHECK-NEXT:      scf.yield %wn : tensor<3x1xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %w : tensor<3x1xf64>
shard.grid @mesh(shape = 4)
func.func @sgd(%x: tensor<16x3xf64>, %y: tensor<16x1xf64>, %w0: tensor<3x1xf64>) -> tensor<3x1xf64> {
  %rows = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<16x3xf64>
  %ys = shard.shard %y to %rows annotate_for_users : tensor<16x1xf64>
  %lo = arith.constant 0 : index
  %hi = arith.constant 10 : index
  %one = arith.constant 1 : index
  %w = scf.for %i = %lo to %hi step %one iter_args(%wi = %w0) -> (tensor<3x1xf64>) {
    %p = nn.matmul %xs, %wi : (tensor<16x3xf64>, tensor<3x1xf64>) -> tensor<16x1xf64>
    %r = nn.sub %p, %ys : tensor<16x1xf64>
    %xt = nn.transpose %xs perm = [1, 0] : tensor<16x3xf64> -> tensor<3x16xf64>
    %g = nn.matmul %xt, %r : (tensor<3x16xf64>, tensor<16x1xf64>) -> tensor<3x1xf64>
    %lr = nn.full 0.01 : tensor<3x1xf64>
    %step = nn.mul %lr, %g : tensor<3x1xf64>
    %wn = nn.sub %wi, %step : tensor<3x1xf64>
    scf.yield %wn : tensor<3x1xf64>
  }
  func.return %w : tensor<3x1xf64>
}

// -----

// The fixed point: %h starts replicated, but the body yields it split by rows (it adds the
// split %x). Rows are only sliced off a replicated value, so the loop carries it split: the
// initial value is sliced before the loop (no communication) and the body needs none.
// CHECK-LABEL: func.func @carried_split_grows
// CHECK-SAME:    shard.result_split_axes = [#shard<axisarray[[0], []]>]
// CHECK:         %h0_1 = shard.all_slice %h0 on @mesh grid_axes = [0] slice_axis = 0 : tensor<8x4xf64> -> tensor<2x4xf64>
// CHECK-NEXT:    %h = scf.for %i = %lo to %hi step %one iter_args(%c = %h0_1) -> (tensor<2x4xf64>) {
// CHECK-NEXT:      %a = nn.add %c, %x : tensor<2x4xf64>
// CHECK-NEXT:      %t = nn.tanh %a : tensor<2x4xf64>
// CHECK-NEXT:      scf.yield %t : tensor<2x4xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %h : tensor<2x4xf64>
shard.grid @mesh(shape = 4)
func.func @carried_split_grows(%x: tensor<8x4xf64>, %h0: tensor<8x4xf64>) -> tensor<8x4xf64> {
  %rows = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8x4xf64>
  %lo = arith.constant 0 : index
  %hi = arith.constant 3 : index
  %one = arith.constant 1 : index
  %h = scf.for %i = %lo to %hi step %one iter_args(%c = %h0) -> (tensor<8x4xf64>) {
    %a = nn.add %c, %xs : tensor<8x4xf64>
    %t = nn.tanh %a : tensor<8x4xf64>
    scf.yield %t : tensor<8x4xf64>
  }
  func.return %h : tensor<8x4xf64>
}

// -----

// A carried value the body yields in another layout (split by columns after the transpose,
// carried split by rows) is resharded back inside the body: an all_to_all per iteration.
// CHECK-LABEL: func.func @carried_split_moves(%x: tensor<2x8xf64>) -> tensor<2x8xf64>
// CHECK:         %h = scf.for %i = %lo to %hi step %one iter_args(%c = %x) -> (tensor<2x8xf64>) {
// CHECK-NEXT:      %t = nn.transpose %c perm = [1, 0] : tensor<2x8xf64> -> tensor<8x2xf64>
// CHECK-NEXT:      %e = nn.exp %t : tensor<8x2xf64>
// CHECK-NEXT:      %e_1 = shard.all_to_all %e on @mesh grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<8x2xf64> -> tensor<2x8xf64>
// CHECK-NEXT:      scf.yield %e_1 : tensor<2x8xf64>
// CHECK-NEXT:    }
shard.grid @mesh(shape = 4)
func.func @carried_split_moves(%x: tensor<8x8xf64>) -> tensor<8x8xf64> {
  %rows = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8x8xf64>
  %lo = arith.constant 0 : index
  %hi = arith.constant 3 : index
  %one = arith.constant 1 : index
  %h = scf.for %i = %lo to %hi step %one iter_args(%c = %xs) -> (tensor<8x8xf64>) {
    %t = nn.transpose %c perm = [1, 0] : tensor<8x8xf64> -> tensor<8x8xf64>
    %e = nn.exp %t : tensor<8x8xf64>
    scf.yield %e : tensor<8x8xf64>
  }
  func.return %h : tensor<8x8xf64>
}

// -----

// A value from outside a loop that the body needs in another layout is resharded once,
// before the loop (here: gathered), not once per iteration.
// CHECK-LABEL: func.func @hoisted
// CHECK:         %x_1 = shard.all_gather %x on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x4xf64> -> tensor<8x4xf64>
// CHECK-NEXT:    %w = scf.for
// CHECK-NOT:       shard.
// CHECK:           scf.yield
shard.grid @mesh(shape = 2x2)
func.func @hoisted(%x: tensor<8x4xf64>, %w0: tensor<4x4xf64>) -> tensor<4x4xf64> {
  %rows = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %none = shard.sharding @mesh split_axes = [[], []] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8x4xf64>
  %lo = arith.constant 0 : index
  %hi = arith.constant 3 : index
  %one = arith.constant 1 : index
  %w = scf.for %i = %lo to %hi step %one iter_args(%wi = %w0) -> (tensor<4x4xf64>) {
    %xr = shard.shard %xs to %none : tensor<8x4xf64>
    %xt = nn.transpose %xr perm = [1, 0] : tensor<8x4xf64> -> tensor<4x8xf64>
    %g = nn.matmul %xt, %xr : (tensor<4x8xf64>, tensor<8x4xf64>) -> tensor<4x4xf64>
    %wn = nn.add %wi, %g : tensor<4x4xf64>
    scf.yield %wn : tensor<4x4xf64>
  }
  func.return %w : tensor<4x4xf64>
}

// -----

// scf.if: each result takes one sharding for both branches. One branch yields rows split, the
// other a replicated value: the result is split and the other branch makes only its chunk.
// A pending sum yielded by a branch is all-reduced in that branch, where it is taken.
// CHECK-LABEL: func.func @branches(%x: tensor<2x4xf64>, %p: i1) -> tensor<f64>
// CHECK-NEXT:    %r = scf.if %p -> (tensor<2x4xf64>) {
// CHECK-NEXT:      %e = nn.exp %x : tensor<2x4xf64>
// CHECK-NEXT:      scf.yield %e : tensor<2x4xf64>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %w = nn.full 1.0 : tensor<2x4xf64>
// CHECK-NEXT:      %n = nn.neg %w : tensor<2x4xf64>
// CHECK-NEXT:      scf.yield %n : tensor<2x4xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s = nn.reduce_sum %r axes = [0, 1] : tensor<2x4xf64> -> tensor<f64>
// CHECK-NEXT:    %b = scf.if %p -> (tensor<f64>) {
// CHECK-NEXT:      %s_1 = shard.all_reduce %s on @mesh grid_axes = [0] : tensor<f64> -> tensor<f64>
// CHECK-NEXT:      scf.yield %s_1 : tensor<f64>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %z = nn.full 0.0 : tensor<f64>
// CHECK-NEXT:      scf.yield %z : tensor<f64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %b : tensor<f64>
shard.grid @mesh(shape = 4)
func.func @branches(%x: tensor<8x4xf64>, %p: i1) -> tensor<f64> {
  %rows = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8x4xf64>
  %w = nn.full 1.0 : tensor<8x4xf64>
  %r = scf.if %p -> (tensor<8x4xf64>) {
    %e = nn.exp %xs : tensor<8x4xf64>
    scf.yield %e : tensor<8x4xf64>
  } else {
    %n = nn.neg %w : tensor<8x4xf64>
    scf.yield %n : tensor<8x4xf64>
  }
  %s = nn.reduce_sum %r axes = [0, 1] : tensor<8x4xf64> -> tensor<f64>
  %b = scf.if %p -> (tensor<f64>) {
    scf.yield %s : tensor<f64>
  } else {
    %z = nn.full 0.0 : tensor<f64>
    scf.yield %z : tensor<f64>
  }
  func.return %b : tensor<f64>
}

// -----

// Branches that split a result differently meet at the splits they share: here none, so
// each branch gathers its own.
// CHECK-LABEL: func.func @branches_disagree(%x: tensor<2x8xf64>, %p: i1) -> tensor<8x8xf64>
// CHECK-NEXT:    %r = scf.if %p -> (tensor<8x8xf64>) {
// CHECK-NEXT:      %e = nn.exp %x : tensor<2x8xf64>
// CHECK-NEXT:      %e_1 = shard.all_gather %e on @mesh grid_axes = [0] gather_axis = 0 : tensor<2x8xf64> -> tensor<8x8xf64>
// CHECK-NEXT:      scf.yield %e_1 : tensor<8x8xf64>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %t = nn.transpose %x perm = [1, 0] : tensor<2x8xf64> -> tensor<8x2xf64>
// CHECK-NEXT:      %t_1 = shard.all_gather %t on @mesh grid_axes = [0] gather_axis = 1 : tensor<8x2xf64> -> tensor<8x8xf64>
// CHECK-NEXT:      scf.yield %t_1 : tensor<8x8xf64>
// CHECK-NEXT:    }
shard.grid @mesh(shape = 4)
func.func @branches_disagree(%x: tensor<8x8xf64>, %p: i1) -> tensor<8x8xf64> {
  %rows = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8x8xf64>
  %r = scf.if %p -> (tensor<8x8xf64>) {
    %e = nn.exp %xs : tensor<8x8xf64>
    scf.yield %e : tensor<8x8xf64>
  } else {
    %t = nn.transpose %xs perm = [1, 0] : tensor<8x8xf64> -> tensor<8x8xf64>
    scf.yield %t : tensor<8x8xf64>
  }
  func.return %r : tensor<8x8xf64>
}

// -----

// scf.while: the condition reads a sum over the split vector, all-reduced in the condition
// region every time it is evaluated; the body is local.
// CHECK-LABEL: func.func @until(%x: tensor<2xf64>) -> tensor<2xf64>
// CHECK-NEXT:    %r = scf.while (%c = %x) : (tensor<2xf64>) -> tensor<2xf64> {
// CHECK-NEXT:      %s = nn.reduce_sum %c axes = [0] : tensor<2xf64> -> tensor<f64>
// CHECK-NEXT:      %lim = nn.full 100.0 : tensor<f64>
// CHECK-NEXT:      %s_1 = shard.all_reduce %s on @mesh grid_axes = [0] : tensor<f64> -> tensor<f64>
// CHECK-NEXT:      %lt = nn.compare lt, %s_1, %lim : tensor<f64>
// CHECK-NEXT:      %b = tensor.extract %lt[] : tensor<i1>
// CHECK-NEXT:      scf.condition(%b) %c : tensor<2xf64>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%d: tensor<2xf64>):
// CHECK-NEXT:      %two = nn.full 2.0 : tensor<2xf64>
// CHECK-NEXT:      %m = nn.mul %d, %two : tensor<2xf64>
// CHECK-NEXT:      scf.yield %m : tensor<2xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<2xf64>
shard.grid @mesh(shape = 4)
func.func @until(%x: tensor<8xf64>) -> tensor<8xf64> {
  %rows = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8xf64>
  %r = scf.while (%c = %xs) : (tensor<8xf64>) -> tensor<8xf64> {
    %s = nn.reduce_sum %c axes = [0] : tensor<8xf64> -> tensor<f64>
    %lim = nn.full 100.0 : tensor<f64>
    %lt = nn.compare lt, %s, %lim : tensor<f64>
    %b = tensor.extract %lt[] : tensor<i1>
    scf.condition(%b) %c : tensor<8xf64>
  } do {
  ^bb0(%d: tensor<8xf64>):
    %two = nn.full 2.0 : tensor<8xf64>
    %m = nn.mul %d, %two : tensor<8xf64>
    scf.yield %m : tensor<8xf64>
  }
  func.return %r : tensor<8xf64>
}

// -----

// Nested loops: the inner body's partial sum is all-reduced in the inner body; the outer
// loop's carried value stays split by rows, so the outer body adds nothing.
// CHECK-LABEL: func.func @nested
// CHECK:         scf.for
// CHECK-NOT:       shard.
// CHECK:           scf.for
// CHECK:             nn.reduce_sum
// CHECK-NEXT:        shard.all_reduce
// CHECK:             scf.yield
// CHECK-NOT:       shard.
// CHECK:           scf.yield
shard.grid @mesh(shape = 4)
func.func @nested(%x: tensor<8x4xf64>) -> tensor<8x4xf64> {
  %rows = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8x4xf64>
  %lo = arith.constant 0 : index
  %hi = arith.constant 2 : index
  %one = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %one iter_args(%a = %xs) -> (tensor<8x4xf64>) {
    %s0 = nn.full 0.0 : tensor<f64>
    %t = scf.for %j = %lo to %hi step %one iter_args(%s = %s0) -> (tensor<f64>) {
      %q = nn.reduce_sum %a axes = [0, 1] : tensor<8x4xf64> -> tensor<f64>
      %s1 = nn.add %s, %q : tensor<f64>
      scf.yield %s1 : tensor<f64>
    }
    %tb = nn.broadcast_in_dim %t dims = [] : tensor<f64> -> tensor<8x4xf64>
    %a1 = nn.sub %a, %tb : tensor<8x4xf64>
    scf.yield %a1 : tensor<8x4xf64>
  }
  func.return %r : tensor<8x4xf64>
}
