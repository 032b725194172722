// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.arange(24, dtype=np.float32).reshape(8, 3)); np.save('%t.odd.npy', np.zeros((6, 3), np.float32))"
// RUN: irgrad-run %s --input %t.x.npy | filecheck %s
// RUN: not irgrad-run %s --input %t.odd.npy 2>&1 | filecheck %s --check-prefix=SPLIT
// RUN: irgrad-run %s --input %t.x.npy --backend cpu | filecheck %s
// RUN: irgrad-opt %s -p convert-shard-to-mpi | irgrad-run - --input %t.x.npy | filecheck %s
// RUN: irgrad-opt %s -p convert-shard-to-mpi | irgrad-run - --input %t.x.npy --backend cpu | filecheck %s
// RUN: not irgrad-run %s --input %t.x.npy --backend gpu 2>&1 | filecheck %s --check-prefix=BACKEND
// RUN: not irgrad-run %s --entry bad --input %t.x.npy --backend cpu 2>&1 | filecheck %s --check-prefix=COMPILED
// RUN: not irgrad-run %s --entry bad --input %t.x.npy 2>&1 | filecheck %s --check-prefix=DEVICE

// A per-device (SPMD) function, as shard-partition makes it, runs on the simulated grid its
// shard.grid attribute names: the input is the global array, split over the 4 devices by
// shard.arg_split_axes; the results are assembled by shard.result_split_axes (the total is
// replicated, the scaled rows are split like the input). With --backend cpu the code between
// the collectives is compiled; the results are the same, and so they are after
// convert-shard-to-mpi (the grid runs mpi.alltoall / mpi.allgather as collectives too).

shard.grid @g(shape = 4)

func.func @main(%x: tensor<2x3xf32>) -> (tensor<f32>, tensor<2x3xf32>) attributes {
    shard.grid = @g,
    shard.arg_split_axes = [#shard<axisarray[[0]]>],
    shard.result_split_axes = [#shard<axisarray[]>, #shard<axisarray[[0]]>]} {
  %s = nn.reduce_sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %total = shard.all_reduce %s on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  %b = nn.broadcast_in_dim %total dims = [] : tensor<f32> -> tensor<2x3xf32>
  %y = nn.div %x, %b : tensor<2x3xf32>
  func.return %total, %y : tensor<f32>, tensor<2x3xf32>
}

// Device 2 fails a check; the others, waiting at the all_reduce, stop instead of hanging.
func.func @bad(%x: tensor<2x3xf32>) -> tensor<f32> attributes {
    shard.grid = @g,
    shard.arg_split_axes = [#shard<axisarray[[0]]>],
    shard.result_split_axes = [#shard<axisarray[]>]} {
  %i = shard.process_linear_index on @g : index
  %c2 = arith.constant 2 : index
  %ok = arith.cmpi ne, %i, %c2 : index
  cf.assert %ok, "device 2 is unhappy"
  %s = nn.reduce_sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %total = shard.all_reduce %s on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  func.return %total : tensor<f32>
}

// CHECK:      {{^}}276.0{{$}}
// CHECK-NEXT: {{^\[\[}}0.         0.00362319 0.00724638]
// CHECK:      {{^}} [0.07608695 0.07971015 0.08333334]]

// SPLIT-NOT:  Traceback
// SPLIT:      irgrad-run: error: argument #0 of @main: dimension 0 of shape (6, 3) (size 6) does not split into 4 equal chunks over axes [0] of grid @g (4)
// BACKEND:    irgrad-run: error: @main is a per-device (SPMD) program (it has a shard.grid attribute); it runs on a simulated grid (--backend interp or cpu), not --backend gpu
// COMPILED-NOT: Traceback
// COMPILED:   irgrad-run: error: device 2 is unhappy (on device (2,) of grid 4)
// DEVICE-NOT: Traceback
// DEVICE:     spmd.mlir:{{[0-9]+}}:3: error: 'cf.assert' op assertion failed: device 2 is unhappy (on device (2,) of grid 4)
