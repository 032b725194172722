// RUN: irgrad-opt %s -p shard-partition --split-input-file --verify-diagnostics
// Each error names the op and its location; the pass stops at the first.

// A dimension must split into equal chunks (no uneven shards).
shard.grid @mesh(shape = 4)
func.func @f(%x: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{'shard.shard' op cannot split dimension 0 of tensor<6x4xf32> (size 6) into 4 equal chunks over axes [0] of grid @mesh (4)}}
  %a = shard.shard %x to %s annotate_for_users : tensor<6x4xf32>
  func.return %a : tensor<6x4xf32>
}

// -----

// A sharding names an axis the grid does not have.
shard.grid @mesh(shape = 4)
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  // expected-error @+1 {{'shard.shard' op split_axes [1] names axis 1, but the grid has rank 1}}
  %a = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
  func.return %a : tensor<8x4xf32>
}

// -----

// A sharding names a grid the module does not define.
shard.grid @mesh(shape = 4)
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'shard.sharding' op refers to grid @nomesh, which is not a shard.grid of the module}}
  %s = shard.sharding @nomesh split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
  func.return %a : tensor<8x4xf32>
}

// -----

// One function runs on one grid.
shard.grid @mesh(shape = 4)
shard.grid @other(shape = 2)
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'shard.sharding' op uses several grids (@mesh, @other); one function runs on one grid}}
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %t = shard.sharding @other split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
  %b = shard.shard %a to %t : tensor<8x4xf32>
  func.return %b : tensor<8x4xf32>
}

// -----

// Halos (MLIR's halo_sizes) are not supported yet.
shard.grid @mesh(shape = 4)
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'shard.sharding' op halo sizes and uneven shard offsets are not supported}}
  %s = shard.sharding @mesh split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
  func.return %a : tensor<8x4xf32>
}

// -----

// The input is a global program: collectives are what the pass produces, not what it reads.
shard.grid @mesh(shape = 4)
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
  // expected-error @+1 {{'shard.all_reduce' op is already a per-device op; shard-partition expects a global program}}
  %b = shard.all_reduce %a on @mesh grid_axes = [0] : tensor<8x4xf32> -> tensor<8x4xf32>
  func.return %b : tensor<8x4xf32>
}

// -----

// Autodiff requests are expanded first, so the backward program is partitioned by the same rules.
shard.grid @mesh(shape = 4)
func.func private @g(%x: tensor<8x4xf32>) -> tensor<f32> {
  %s = nn.reduce_sum %x axes = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
  // expected-error @+1 {{'autodiff.value_and_grad' op is an autodiff request; run the autodiff pass before shard-partition}}
  %v, %g = autodiff.value_and_grad @g(%a) wrt [0] : (tensor<8x4xf32>) -> (tensor<f32>, tensor<8x4xf32>)
  func.return %g : tensor<8x4xf32>
}

// -----

// Loop bodies are partitioned by the same rules, and their errors point into the body.
shard.grid @mesh(shape = 4)
func.func @f(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %cols = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding
  %lo = arith.constant 0 : index
  %hi = arith.constant 3 : index
  %one = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %one iter_args(%a = %x) -> (tensor<8x6xf32>) {
    %e = nn.exp %a : tensor<8x6xf32>
    // expected-error @+1 {{'shard.shard' op cannot split dimension 1 of tensor<8x6xf32> (size 6) into 4 equal chunks over axes [0] of grid @mesh (4)}}
    %b = shard.shard %e to %cols : tensor<8x6xf32>
    scf.yield %b : tensor<8x6xf32>
  }
  func.return %r : tensor<8x6xf32>
}
