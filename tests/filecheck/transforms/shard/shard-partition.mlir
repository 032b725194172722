// shard-partition: a global program with sharding annotations becomes the per-device program,
// with a collective wherever a value changes placement.
// RUN: irgrad-opt %s -p shard-partition --split-input-file | filecheck %s

// Data parallel: x split by rows, w and b replicated. The matmul, bias and relu are local; the
// bias is broadcast straight to the local shape (no all_slice); the sum over the split rows is
// a partial sum, all-reduced when it is returned.
// CHECK-LABEL: func.func @data_parallel(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<f32>
// CHECK-SAME:    shard.grid = @mesh
// CHECK-SAME:    shard.arg_split_axes = [#shard<axisarray[[0], []]>, #shard<axisarray[[], []]>, #shard<axisarray[[]]>]
// CHECK-SAME:    shard.result_split_axes = [#shard<axisarray[]>]
// CHECK-NEXT:    %h = nn.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %bb = nn.broadcast_in_dim %b dims = [1] : tensor<4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %z = nn.add %h, %bb : tensor<2x4xf32>
// CHECK-NEXT:    %r = nn.relu %z : tensor<2x4xf32>
// CHECK-NEXT:    %l = nn.reduce_sum %r axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
// CHECK-NEXT:    %l_1 = shard.all_reduce %l on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return %l_1 : tensor<f32>
shard.grid @mesh(shape = 4)
func.func @data_parallel(%x: tensor<8x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  %sx = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %sx annotate_for_users : tensor<8x3xf32>
  %h = nn.matmul %x0, %w : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %bb = nn.broadcast_in_dim %b dims = [1] : tensor<4xf32> -> tensor<8x4xf32>
  %z = nn.add %h, %bb : tensor<8x4xf32>
  %r = nn.relu %z : tensor<8x4xf32>
  %l = nn.reduce_sum %r axes = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// Tensor parallel (Megatron): w1 split by columns, w2 by rows. The hidden layer stays split;
// the second matmul contracts over the split dimension, so its result is a partial sum and
// the whole block costs one all_reduce.
// CHECK-LABEL: func.func @tensor_parallel(%x: tensor<8x4xf32>, %w1: tensor<4x3xf32>, %w2: tensor<3x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    %h = nn.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %r = nn.tanh %h : tensor<8x3xf32>
// CHECK-NEXT:    %y = nn.matmul %r, %w2 : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    %y_1 = shard.all_reduce %y on @mesh grid_axes = [0] : tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    func.return %y_1
shard.grid @mesh(shape = 2)
func.func @tensor_parallel(%x: tensor<8x4xf32>, %w1: tensor<4x6xf32>, %w2: tensor<6x4xf32>) -> tensor<8x4xf32> {
  %s1 = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding
  %s2 = shard.sharding @mesh split_axes = [[0], []] : !shard.sharding
  %a = shard.shard %w1 to %s1 annotate_for_users : tensor<4x6xf32>
  %b = shard.shard %w2 to %s2 annotate_for_users : tensor<6x4xf32>
  %h = nn.matmul %x, %a : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %r = nn.tanh %h : tensor<8x6xf32>
  %y = nn.matmul %r, %b : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}

// -----

// Each change of placement is its collective: Shard(0) -> Shard(1) is an all_to_all,
// Shard -> Replicate an all_gather, Replicate -> Shard an all_slice, and a partial sum that is
// wanted split is reduce-scattered. An elementwise op of a value that is wanted split further
// is computed on the chunk the device already has (%n_1 from %e, not a slice of %n).
// CHECK-LABEL: func.func @placements(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x4xf32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>)
// CHECK-SAME:    shard.result_split_axes = [#shard<axisarray[[], [0]]>, #shard<axisarray[[], []]>, #shard<axisarray[[0], []]>, #shard<axisarray[[0]]>, #shard<axisarray[[0], []]>]
// CHECK-NEXT:    %e = nn.exp %x : tensor<4x8xf32>
// CHECK-NEXT:    %e_1 = shard.all_to_all %e on @mesh grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    %e_2 = shard.all_gather %e on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:    %n = nn.neg %e_2 : tensor<8x8xf32>
// CHECK-NEXT:    %n_1 = nn.neg %e : tensor<4x8xf32>
// CHECK-NEXT:    %col = nn.reduce_sum %x axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
// CHECK-NEXT:    %col_1 = shard.reduce_scatter %col on @mesh grid_axes = [0] scatter_axis = 0 : tensor<8xf32> -> tensor<4xf32>
// CHECK-NEXT:    %ww = nn.matmul %w, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %ww_1 = shard.all_slice %ww on @mesh grid_axes = [0] slice_axis = 0 : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %e_1, %n, %n_1, %col_1, %ww_1
shard.grid @mesh(shape = 2)
func.func @placements(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>) {
  %rows = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %cols = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding
  %none = shard.sharding @mesh split_axes = [] : !shard.sharding
  %a = shard.shard %x to %rows annotate_for_users : tensor<8x8xf32>
  %e = nn.exp %a : tensor<8x8xf32>
  %t = shard.shard %e to %cols : tensor<8x8xf32>
  %g = shard.shard %e to %none : tensor<8x8xf32>
  %n = nn.neg %g : tensor<8x8xf32>
  %s = shard.shard %n to %rows : tensor<8x8xf32>
  %col = nn.reduce_sum %a axes = [0] : tensor<8x8xf32> -> tensor<8xf32>
  %c = shard.shard %col to %rows : tensor<8xf32>
  %ww = nn.matmul %w, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = shard.shard %ww to %rows : tensor<8x8xf32>
  func.return %t, %n, %s, %c, %r : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>
}

// -----

// A 2-D grid: rows over axis 0, columns over axis 1. Gathering only the columns runs within
// each row of devices (grid_axes = [1]); a max over a split dimension is a pending max.
// CHECK-LABEL: func.func @grid_2d(%x: tensor<4x2xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
// CHECK-NEXT:    %x_1 = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 1 : tensor<4x2xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %m = nn.reduce_max %x axes = [1] : tensor<4x2xf32> -> tensor<4xf32>
// CHECK-NEXT:    %m_1 = shard.all_reduce %m on @mesh grid_axes = [1] reduction = max : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %x_1, %m_1
shard.grid @mesh(shape = 2x4)
func.func @grid_2d(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>) {
  %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %r = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<8x8xf32>
  %b = shard.shard %a to %r : tensor<8x8xf32>
  %m = nn.reduce_max %a axes = [1] : tensor<8x8xf32> -> tensor<8xf32>
  func.return %b, %m : tensor<8x8xf32>, tensor<8xf32>
}

// -----

// A slice of a split dimension needs the whole dimension: it is gathered first (a dimension taken
// whole would keep its split). Functions without shard ops are left alone.
// CHECK-LABEL: func.func @no_rule(%x: tensor<2x8xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:    %x_1 = shard.all_gather %x on @mesh grid_axes = [0] gather_axis = 0 : tensor<2x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:    %y = nn.slice %x_1
// CHECK-NEXT:    func.return %y
// CHECK-LABEL: func.func @untouched(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
// CHECK-NEXT:    func.return %x
shard.grid @mesh(shape = 4)
func.func @no_rule(%x: tensor<8x8xf32>) -> tensor<4x4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<8x8xf32>
  %y = nn.slice %a start = [0, 0] limit = [4, 4] stride = [1, 1] : tensor<8x8xf32> -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}
func.func @untouched(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  func.return %x : tensor<8x8xf32>
}

// -----

// Data-parallel convolution: images split, kernel replicated. The convolution, the pooling and the
// kernel's gradient-style convolution (contracting over the split images: a partial sum) run on
// each device's images; only the returned sum is all-reduced.
// CHECK-LABEL: func.func @conv(%x: tensor<2x2x8x8xf32>, %k: tensor<4x2x3x3xf32>) -> (tensor<f32>, tensor<2x4x3x3xf32>)
// CHECK-NEXT:    %y = nn.conv2d %x, %k stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<2x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x8x8xf32>
// CHECK-NEXT:    %p = nn.max_pool2d %y kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:    %s = nn.reduce_sum %p axes = [0, 1, 2, 3] : tensor<2x4x4x4xf32> -> tensor<f32>
// CHECK-NEXT:    %xt = nn.transpose %x perm = [1, 0, 2, 3] : tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
// CHECK-NEXT:    %yt = nn.transpose %y perm = [1, 0, 2, 3] : tensor<2x4x8x8xf32> -> tensor<4x2x8x8xf32>
// CHECK-NEXT:    %w = nn.conv2d %xt, %yt stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<2x2x8x8xf32>, tensor<4x2x8x8xf32>) -> tensor<2x4x3x3xf32>
// CHECK-NEXT:    %s_1 = shard.all_reduce %s on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %w_1 = shard.all_reduce %w on @mesh grid_axes = [0] : tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
// CHECK-NEXT:    func.return %s_1, %w_1
shard.grid @mesh(shape = 4)
func.func @conv(%x: tensor<8x2x8x8xf32>, %k: tensor<4x2x3x3xf32>) -> (tensor<f32>, tensor<2x4x3x3xf32>) {
  %s0 = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s0 annotate_for_users : tensor<8x2x8x8xf32>
  %y = nn.conv2d %a, %k stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<8x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<8x4x8x8xf32>
  %p = nn.max_pool2d %y kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<8x4x8x8xf32> -> tensor<8x4x4x4xf32>
  %s = nn.reduce_sum %p axes = [0, 1, 2, 3] : tensor<8x4x4x4xf32> -> tensor<f32>
  %xt = nn.transpose %a perm = [1, 0, 2, 3] : tensor<8x2x8x8xf32> -> tensor<2x8x8x8xf32>
  %yt = nn.transpose %y perm = [1, 0, 2, 3] : tensor<8x4x8x8xf32> -> tensor<4x8x8x8xf32>
  %w = nn.conv2d %xt, %yt stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : (tensor<2x8x8x8xf32>, tensor<4x8x8x8xf32>) -> tensor<2x4x3x3xf32>
  func.return %s, %w : tensor<f32>, tensor<2x4x3x3xf32>
}
