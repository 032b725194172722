// shard-erase-annotations: on one device a sharding constraint is the identity.
// RUN: irgrad-opt %s -p shard-erase-annotations --split-input-file --verify-diagnostics | filecheck %s

// Every shard.shard is replaced by its source; shardings and grids nothing uses go.
// CHECK-NOT:   shard.
// CHECK-LABEL: func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
// CHECK-NEXT:    %y = nn.exp %x : tensor<8x4xf32>
// CHECK-NEXT:    func.return %y : tensor<8x4xf32>
shard.grid @mesh(shape = 4)
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
  %y = nn.exp %a : tensor<8x4xf32>
  %b = shard.shard %y to %s : tensor<8x4xf32>
  func.return %b : tensor<8x4xf32>
}

// -----

// A per-device program is not a one-device program.
shard.grid @mesh(shape = 4)
func.func @g(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = nn.exp %x : tensor<2x4xf32>
  // expected-error @+1 {{'shard.all_reduce' op makes this a per-device program, which runs on the simulated grid (irgrad-run, irgrad.backends.spmd.run_partitioned), not on one device}}
  %z = shard.all_reduce %y on @mesh grid_axes = [0] : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %z : tensor<2x4xf32>
}
