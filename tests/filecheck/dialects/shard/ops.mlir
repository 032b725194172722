// RUN: irgrad-opt %s | irgrad-opt | filecheck %s
// RUN: irgrad-opt %s --print-op-generic | irgrad-opt | filecheck %s

// Round trip of every shard op, in custom and in generic syntax: MLIR's spelling of the grid,
// the sharding annotations and the collectives (irgrad's verified all_reduce, all_gather,
// all_slice, reduce_scatter, all_to_all and process_linear_index, and xDSL's others).

// CHECK:      shard.grid @g(shape = 2x3)
// CHECK-NEXT: shard.grid @line(shape = 4)
shard.grid @g(shape = 2x3)
shard.grid @line(shape = 4)

// Shardings (split axes, halo sizes, shard offsets) and the annotation, with and without
// annotate_for_users.
// CHECK-LABEL: func.func @annotations(
// CHECK-NEXT:    %s = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
// CHECK-NEXT:    %r = shard.sharding @g split_axes = [[], [1, 0]] : !shard.sharding
// CHECK-NEXT:    %h = shard.sharding @g split_axes = [[0]] halo_sizes = [1, 2] : !shard.sharding
// CHECK-NEXT:    %o = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 1, 4] : !shard.sharding
// CHECK-NEXT:    %y = shard.shard %x to %s : tensor<4x6xf32>
// CHECK-NEXT:    %z = shard.shard %y to %r annotate_for_users : tensor<4x6xf32>
// CHECK-NEXT:    func.return %z : tensor<4x6xf32>
// CHECK-NEXT:  }
func.func @annotations(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %s = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %r = shard.sharding @g split_axes = [[], [1, 0]] : !shard.sharding
  %h = shard.sharding @g split_axes = [[0]] halo_sizes = [1, 2] : !shard.sharding
  %o = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 1, 4] : !shard.sharding
  %y = shard.shard %x to %s : tensor<4x6xf32>
  %z = shard.shard %y to %r annotate_for_users : tensor<4x6xf32>
  func.return %z : tensor<4x6xf32>
}

// Every collective; the default reduction (sum) and empty grid_axes are not printed.
// CHECK-LABEL: func.func @collectives(
// CHECK-NEXT:    %a = shard.all_reduce %x on @g grid_axes = [0] : tensor<2x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT:    %b = shard.all_reduce %x on @g grid_axes = [1, 0] reduction = max : tensor<2x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT:    %c = shard.all_reduce %i on @g reduction = bitwise_or : tensor<4xi32> -> tensor<4xi32>
// CHECK-NEXT:    %d = shard.all_gather %x on @g grid_axes = [1] gather_axis = 0 : tensor<2x6xf32> -> tensor<6x6xf32>
// CHECK-NEXT:    %e = shard.all_slice %x on @g grid_axes = [0, 1] slice_axis = 1 : tensor<2x6xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %f = shard.reduce_scatter %x on @g grid_axes = [1] scatter_axis = 1 : tensor<2x6xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %g = shard.reduce_scatter %x on @g grid_axes = [0] reduction = average scatter_axis = 0 : tensor<2x6xf32> -> tensor<1x6xf32>
// CHECK-NEXT:    %h = shard.all_to_all %x on @g grid_axes = [1] split_axis = 1 concat_axis = 0 : tensor<2x6xf32> -> tensor<6x2xf32>
// CHECK-NEXT:    %k = shard.process_linear_index on @line : index
// CHECK-NEXT:    %l = shard.broadcast %x on @g grid_axes = [0] root = [1] : (tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:    %m = shard.gather %x on @g grid_axes = [0] gather_axis = 0 root = [0] : (tensor<2x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    %n = shard.scatter %x on @g grid_axes = [0] scatter_axis = 0 root = [0] : (tensor<2x6xf32>) -> tensor<1x6xf32>
// CHECK-NEXT:    %o = shard.reduce %x on @g grid_axes = [0] reduction = min root = [0] : (tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:    %p = shard.send %x on @g grid_axes = [0] destination = [1] : (tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:    %q = shard.recv %x on @g grid_axes = [0] source = [0] : (tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:    %r = shard.shift %x on @g grid_axes = [0] shift_axis = 0 offset = 1 rotate : tensor<2x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @collectives(%x: tensor<2x6xf32>, %i: tensor<4xi32>) {
  %a = shard.all_reduce %x on @g grid_axes = [0] : tensor<2x6xf32> -> tensor<2x6xf32>
  %b = shard.all_reduce %x on @g grid_axes = [1, 0] reduction = max : tensor<2x6xf32> -> tensor<2x6xf32>
  %c = shard.all_reduce %i on @g reduction = bitwise_or : tensor<4xi32> -> tensor<4xi32>
  %d = shard.all_gather %x on @g grid_axes = [1] gather_axis = 0 : tensor<2x6xf32> -> tensor<6x6xf32>
  %e = shard.all_slice %x on @g grid_axes = [0, 1] slice_axis = 1 : tensor<2x6xf32> -> tensor<2x1xf32>
  %f = shard.reduce_scatter %x on @g grid_axes = [1] scatter_axis = 1 : tensor<2x6xf32> -> tensor<2x2xf32>
  %g = shard.reduce_scatter %x on @g grid_axes = [0] reduction = average scatter_axis = 0 : tensor<2x6xf32> -> tensor<1x6xf32>
  %h = shard.all_to_all %x on @g grid_axes = [1] split_axis = 1 concat_axis = 0 : tensor<2x6xf32> -> tensor<6x2xf32>
  %k = shard.process_linear_index on @line : index
  %l = shard.broadcast %x on @g grid_axes = [0] root = [1] : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %m = shard.gather %x on @g grid_axes = [0] gather_axis = 0 root = [0] : (tensor<2x6xf32>) -> tensor<4x6xf32>
  %n = shard.scatter %x on @g grid_axes = [0] scatter_axis = 0 root = [0] : (tensor<2x6xf32>) -> tensor<1x6xf32>
  %o = shard.reduce %x on @g grid_axes = [0] reduction = min root = [0] : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %p = shard.send %x on @g grid_axes = [0] destination = [1] : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %q = shard.recv %x on @g grid_axes = [0] source = [0] : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %r = shard.shift %x on @g grid_axes = [0] shift_axis = 0 offset = 1 rotate : tensor<2x6xf32> -> tensor<2x6xf32>
  func.return
}
