// convert-shard-to-mpi: what it refuses, located at the op.
// RUN: irgrad-opt %s -p convert-shard-to-mpi --split-input-file --verify-diagnostics
// RUN: sed -e 's/{{.*integer average.*}}/{{a float average has no MPI lowering}}/' %s | not irgrad-opt - -p convert-shard-to-mpi --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=MISSING

// The second RUN line expects another message in the second case: that case now fails.
// MISSING: <stdin>:[[# @LINE + 17]]:3: error: unexpected error: 'shard.all_reduce' op an integer average has no MPI lowering
// MISSING: <stdin>:[[# @LINE + 15]]:6: error: expected error "a float average has no MPI lowering" was not produced

// A collective outside a per-device function (no shard.grid attribute) has no processes to run on.
shard.grid @mesh(shape = 2)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'shard.all_reduce' op is a collective in a function without a shard.grid attribute: only the per-device functions shard-partition makes run on processes (in @f)}}
  %a = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// An integer average's rounding is not defined the same way everywhere.
shard.grid @mesh(shape = 2)
func.func @g(%x: tensor<4xi32>) -> tensor<4xi32> attributes {shard.grid = @mesh} {
  // expected-error @+1 {{'shard.all_reduce' op an integer average has no MPI lowering (its rounding is unspecified)}}
  %a = shard.all_reduce %x on @mesh grid_axes = [0] reduction = average : tensor<4xi32> -> tensor<4xi32>
  func.return %a : tensor<4xi32>
}
