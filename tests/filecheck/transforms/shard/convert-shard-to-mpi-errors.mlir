// convert-shard-to-mpi: what it refuses, located at the op.
// RUN: irgrad-opt %s -p convert-shard-to-mpi --split-input-file --verify-diagnostics | filecheck %s

// A collective outside a per-device function (no shard.grid attribute) has no processes to run on.
// CHECK-NOT: Traceback
// CHECK: convert-shard-to-mpi-errors.mlir:[[# @LINE + 3]]:3: error: 'shard.all_reduce' op is a collective in a function without a shard.grid attribute: only the per-device functions shard-partition makes run on processes (in @f)
shard.grid @mesh(shape = 2)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// An integer average's rounding is not defined the same way everywhere.
// CHECK: convert-shard-to-mpi-errors.mlir:[[# @LINE + 3]]:3: error: 'shard.all_reduce' op an integer average has no MPI lowering (its rounding is unspecified)
shard.grid @mesh(shape = 2)
func.func @g(%x: tensor<4xi32>) -> tensor<4xi32> attributes {shard.grid = @mesh} {
  %a = shard.all_reduce %x on @mesh grid_axes = [0] reduction = average : tensor<4xi32> -> tensor<4xi32>
  func.return %a : tensor<4xi32>
}
