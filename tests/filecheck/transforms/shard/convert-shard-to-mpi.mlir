// convert-shard-to-mpi: collectives as mpi.alltoall / mpi.allgather, reductions as IR in group order.
// RUN: irgrad-opt %s -p convert-shard-to-mpi --split-input-file | filecheck %s

// A small all_reduce: every member's array allgathered, then summed left to right in group order.
// CHECK-LABEL: func.func @small_sum
// CHECK:         %[[C:.*]] = mpi.grid_comm grid_shape = [2, 2] grid_axes = [0] : !mpi.comm
// CHECK-NEXT:    %[[G:.*]] = mpi.allgather(%x, %[[C]]) : tensor<4x6xf32> -> tensor<2x4x6xf32>
// CHECK-NEXT:    %[[S0:.*]] = nn.slice %[[G]] start = [0, 0, 0] limit = [1, 4, 6]
// CHECK-NEXT:    %[[B0:.*]] = nn.reshape %[[S0]] : tensor<1x4x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %[[S1:.*]] = nn.slice %[[G]] start = [1, 0, 0] limit = [2, 4, 6]
// CHECK-NEXT:    %[[B1:.*]] = nn.reshape %[[S1]] : tensor<1x4x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %a = nn.add %[[B0]], %[[B1]] : tensor<4x6xf32>
// CHECK-NEXT:    func.return %a
// CHECK-NOT:     shard.all_reduce
shard.grid @mesh(shape = 2x2)
func.func @small_sum(%x: tensor<4x6xf32>) -> tensor<4x6xf32> attributes {shard.grid = @mesh} {
  %a = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4x6xf32> -> tensor<4x6xf32>
  func.return %a : tensor<4x6xf32>
}

// -----

// A large all_reduce moves a ring's bytes: blocks exchanged (alltoall), this member's block
// reduced in group order, the reduced blocks allgathered. 2001 elements pad to 4 x 501.
// CHECK-LABEL: func.func @large_max
// CHECK:         %[[C:.*]] = mpi.grid_comm grid_shape = [4] grid_axes = [0] : !mpi.comm
// CHECK:         %[[Z:.*]] = nn.full 0.0 : tensor<f32>
// CHECK-NEXT:    %[[P:.*]] = nn.pad %big, %[[Z]] low = [0] high = [3]
// CHECK-NEXT:    %[[R:.*]] = nn.reshape %[[P]] : tensor<2004xf32> -> tensor<4x501xf32>
// CHECK-NEXT:    %[[A:.*]] = mpi.alltoall(%[[R]], %[[C]]) : tensor<4x501xf32> -> tensor<4x501xf32>
// CHECK-COUNT-3: nn.maximum
// CHECK:         %[[G:.*]] = mpi.allgather(%{{.*}}, %[[C]]) : tensor<501xf32> -> tensor<4x501xf32>
// CHECK-NEXT:    %[[F:.*]] = nn.reshape %[[G]] : tensor<4x501xf32> -> tensor<2004xf32>
// CHECK-NEXT:    %m = nn.slice %[[F]] start = [0] limit = [2001] stride = [1]
// CHECK-NEXT:    func.return %m
shard.grid @line(shape = 4)
func.func @large_max(%big: tensor<2001xf32>) -> tensor<2001xf32> attributes {shard.grid = @line} {
  %m = shard.all_reduce %big on @line grid_axes = [0] reduction = max : tensor<2001xf32> -> tensor<2001xf32>
  func.return %m : tensor<2001xf32>
}

// -----

// reduce_scatter: the scatter axis's chunks in front, exchanged, summed in order.
// all_gather: stacked, the group axis merged into the gather axis (transposed there first).
// all_to_all: chunks of the split axis in front, exchanged, merged into the concat axis.
// CHECK-LABEL: func.func @movement
// CHECK:         %[[C1:.*]] = mpi.grid_comm grid_shape = [2, 2] grid_axes = [1] : !mpi.comm
// CHECK-NEXT:    %[[C0:.*]] = mpi.grid_comm grid_shape = [2, 2] grid_axes = [0] : !mpi.comm
// CHECK-NEXT:    %[[R:.*]] = nn.reshape %x : tensor<4x6xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %[[R]] perm = [1, 0, 2] : tensor<4x2x3xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT:    %[[A:.*]] = mpi.alltoall(%[[T]], %[[C1]]) : tensor<2x4x3xf32> -> tensor<2x4x3xf32>
// CHECK:         %b = nn.add
// CHECK-NEXT:    %[[G:.*]] = mpi.allgather(%x, %[[C0]]) : tensor<4x6xf32> -> tensor<2x4x6xf32>
// CHECK-NEXT:    %[[GT:.*]] = nn.transpose %[[G]] perm = [1, 0, 2] : tensor<2x4x6xf32> -> tensor<4x2x6xf32>
// CHECK-NEXT:    %c = nn.reshape %[[GT]] : tensor<4x2x6xf32> -> tensor<4x12xf32>
// CHECK-NEXT:    %[[R2:.*]] = nn.reshape %x : tensor<4x6xf32> -> tensor<2x2x6xf32>
// CHECK-NEXT:    %[[A2:.*]] = mpi.alltoall(%[[R2]], %[[C1]]) : tensor<2x2x6xf32> -> tensor<2x2x6xf32>
// CHECK-NEXT:    %[[T2:.*]] = nn.transpose %[[A2]] perm = [1, 0, 2] : tensor<2x2x6xf32> -> tensor<2x2x6xf32>
// CHECK-NEXT:    %d = nn.reshape %[[T2]] : tensor<2x2x6xf32> -> tensor<2x12xf32>
shard.grid @mesh(shape = 2x2)
func.func @movement(%x: tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x12xf32>, tensor<2x12xf32>) attributes {shard.grid = @mesh} {
  %b = shard.reduce_scatter %x on @mesh grid_axes = [1] scatter_axis = 1 : tensor<4x6xf32> -> tensor<4x3xf32>
  %c = shard.all_gather %x on @mesh grid_axes = [0] gather_axis = 1 : tensor<4x6xf32> -> tensor<4x12xf32>
  %d = shard.all_to_all %x on @mesh grid_axes = [1] split_axis = 0 concat_axis = 1 : tensor<4x6xf32> -> tensor<2x12xf32>
  func.return %b, %c, %d : tensor<4x3xf32>, tensor<4x12xf32>, tensor<2x12xf32>
}

// -----

// all_slice keeps this process's chunk: a dynamic slice at rank x chunk; process_linear_index is
// the rank in the group of every grid axis. A group of one moves nothing.
// CHECK-LABEL: func.func @local
// CHECK:         %[[C0:.*]] = mpi.grid_comm grid_shape = [2, 1] grid_axes = [0] : !mpi.comm
// CHECK-NEXT:    %[[ALL:.*]] = mpi.grid_comm grid_shape = [2, 1] grid_axes = [0, 1] : !mpi.comm
// CHECK-NEXT:    %[[R:.*]] = mpi.comm_rank(%[[C0]]) : i32
// CHECK-NEXT:    %[[RI:.*]] = arith.index_cast %[[R]] : i32 to index
// CHECK-NEXT:    %[[K:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[O:.*]] = arith.muli %[[RI]], %[[K]] : index
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %e = nn.dynamic_slice %x[%[[Z]], %[[O]]] sizes = [4, 3]
// CHECK-NEXT:    %[[W:.*]] = mpi.comm_rank(%[[ALL]]) : i32
// CHECK-NEXT:    %i = arith.index_cast %[[W]] : i32 to index
// CHECK-NEXT:    func.return %e, %i, %x
shard.grid @mesh(shape = 2x1)
func.func @local(%x: tensor<4x6xf32>) -> (tensor<4x3xf32>, index, tensor<4x6xf32>) attributes {shard.grid = @mesh} {
  %e = shard.all_slice %x on @mesh grid_axes = [0] slice_axis = 1 : tensor<4x6xf32> -> tensor<4x3xf32>
  %i = shard.process_linear_index on @mesh : index
  %n = shard.all_reduce %x on @mesh grid_axes = [1] : tensor<4x6xf32> -> tensor<4x6xf32>
  func.return %e, %i, %n : tensor<4x3xf32>, index, tensor<4x6xf32>
}
