// RUN: irgrad-opt %s --split-input-file --verify-diagnostics

// One case per verifier rule irgrad adds to the shard collectives (irgrad/dialects/shard.py):
// the grid exists, the grid axes are in range and distinct, the tensor axes are in range, and
// the result type follows from the input's. Each expected-error annotation is
// the diagnostic its line must produce (MLIR's --verify-diagnostics).

// ===============================================================================================
// The grid
// ===============================================================================================

// A collective names a grid that does not exist (reported at the op's line:col).
func.func @missing_grid(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'shard.all_gather' op refers to grid @nope, which is not a shard.grid in scope}}
  %0 = shard.all_gather %x on @nope grid_axes = [0] gather_axis = 0 : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

// A symbol that is not a grid: a function.
func.func @not_a_grid(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'shard.all_reduce' op refers to grid @not_a_grid, which is not a shard.grid in scope}}
  %0 = shard.all_reduce %x on @not_a_grid grid_axes = [0] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// process_linear_index checks its grid too.
func.func @index_missing_grid() {
  // expected-error @+1 {{'shard.process_linear_index' op refers to grid @nope, which is not a shard.grid in scope}}
  %0 = shard.process_linear_index on @nope : index
  func.return
}

// -----

// xDSL's own rule: a grid has rank one or more.
// expected-error @+1 {{'shard.grid' op rank of grid is expected to be a positive integer}}
"shard.grid"() <{sym_name = "g", shape = array<i64>}> : () -> ()

// -----

// ===============================================================================================
// Grid axes
// ===============================================================================================

// An axis past the grid's rank.
shard.grid @g(shape = 2x3)
func.func @axis_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'shard.all_reduce' op grid_axes [0, 2] names axis 2, but the grid has rank 2}}
  %0 = shard.all_reduce %x on @g grid_axes = [0, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// A negative axis.
shard.grid @g(shape = 2x3)
func.func @negative_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'shard.all_to_all' op grid_axes [-1] names axis -1, but the grid has rank 2}}
  %0 = shard.all_to_all %x on @g grid_axes = [-1] split_axis = 0 concat_axis = 1 : tensor<2x3xf32> -> tensor<1x6xf32>
  func.return
}

// -----

// An axis listed twice.
shard.grid @g(shape = 2x3)
func.func @repeated_axis(%x: tensor<18xf32>) {
  // expected-error @+1 {{'shard.reduce_scatter' op grid_axes [1, 1] repeats an axis}}
  %0 = shard.reduce_scatter %x on @g grid_axes = [1, 1] scatter_axis = 0 : tensor<18xf32> -> tensor<2xf32>
  func.return
}

// -----

// ===============================================================================================
// Tensor axes
// ===============================================================================================

shard.grid @g(shape = 2x3)
func.func @gather_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'shard.all_gather' op gather_axis 2 is out of range for a rank-2 tensor}}
  %0 = shard.all_gather %x on @g grid_axes = [0] gather_axis = 2 : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

shard.grid @g(shape = 2x3)
func.func @slice_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'shard.all_slice' op slice_axis 1 is out of range for a rank-1 tensor}}
  %0 = shard.all_slice %x on @g grid_axes = [0] slice_axis = 1 : tensor<4xf32> -> tensor<2xf32>
  func.return
}

// -----

shard.grid @g(shape = 2x3)
func.func @scatter_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'shard.reduce_scatter' op scatter_axis 1 is out of range for a rank-1 tensor}}
  %0 = shard.reduce_scatter %x on @g grid_axes = [0] scatter_axis = 1 : tensor<4xf32> -> tensor<2xf32>
  func.return
}

// -----

shard.grid @g(shape = 2x3)
func.func @split_axis(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'shard.all_to_all' op split_axis 3 is out of range for a rank-2 tensor}}
  %0 = shard.all_to_all %x on @g grid_axes = [0] split_axis = 3 concat_axis = 0 : tensor<2x4xf32> -> tensor<4x2xf32>
  func.return
}

// -----

shard.grid @g(shape = 2x3)
func.func @concat_axis(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'shard.all_to_all' op concat_axis 2 is out of range for a rank-2 tensor}}
  %0 = shard.all_to_all %x on @g grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<2x4xf32> -> tensor<4x2xf32>
  func.return
}

// -----

// ===============================================================================================
// Divisibility: a chunked axis must split into group-size equal chunks
// ===============================================================================================

shard.grid @g(shape = 2x3)
func.func @slice_not_divisible(%x: tensor<4xf32>) {
  // expected-error @+1 {{'shard.all_slice' op slice_axis 0 has size 4, not divisible by the group size 3}}
  %0 = shard.all_slice %x on @g grid_axes = [1] slice_axis = 0 : tensor<4xf32> -> tensor<1xf32>
  func.return
}

// -----

// The group size is the product over all listed axes: 2 * 3.
shard.grid @g(shape = 2x3)
func.func @scatter_not_divisible(%x: tensor<9xf32>) {
  // expected-error @+1 {{'shard.reduce_scatter' op scatter_axis 0 has size 9, not divisible by the group size 6}}
  %0 = shard.reduce_scatter %x on @g grid_axes = [0, 1] scatter_axis = 0 : tensor<9xf32> -> tensor<1xf32>
  func.return
}

// -----

shard.grid @g(shape = 2x3)
func.func @split_not_divisible(%x: tensor<2x5xf32>) {
  // expected-error @+1 {{'shard.all_to_all' op split_axis 1 has size 5, not divisible by the group size 2}}
  %0 = shard.all_to_all %x on @g grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<2x5xf32> -> tensor<4x2xf32>
  func.return
}

// -----

// ===============================================================================================
// Result types
// ===============================================================================================

shard.grid @g(shape = 2x3)
func.func @all_reduce_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'shard.all_reduce' op result tensor<3x2xf32> should have shape 2x3 for input tensor<2x3xf32>}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

// The result is the input's element type.
shard.grid @g(shape = 2x3)
func.func @all_reduce_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'shard.all_reduce' op element types differ: input tensor<2x3xf32>, result tensor<2x3xf64>}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] : tensor<2x3xf32> -> tensor<2x3xf64>
  func.return
}

// -----

// all_gather multiplies the gather axis by the group size (3 over axis 1).
shard.grid @g(shape = 2x3)
func.func @all_gather_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'shard.all_gather' op result tensor<4x3xf32> should have shape 6x3 for input tensor<2x3xf32>}}
  %0 = shard.all_gather %x on @g grid_axes = [1] gather_axis = 0 : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

// Empty grid_axes: groups of one device, the shape does not change.
shard.grid @g(shape = 2x3)
func.func @all_gather_no_axes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'shard.all_gather' op result tensor<4x3xf32> should have shape 2x3 for input tensor<2x3xf32>}}
  %0 = shard.all_gather %x on @g gather_axis = 0 : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

shard.grid @g(shape = 2x3)
func.func @all_slice_shape(%x: tensor<6x6xf32>) {
  // expected-error @+1 {{'shard.all_slice' op result tensor<6x1xf32> should have shape 6x2 for input tensor<6x6xf32>}}
  %0 = shard.all_slice %x on @g grid_axes = [1] slice_axis = 1 : tensor<6x6xf32> -> tensor<6x1xf32>
  func.return
}

// -----

shard.grid @g(shape = 2x3)
func.func @reduce_scatter_shape(%x: tensor<6xf32>) {
  // expected-error @+1 {{'shard.reduce_scatter' op result tensor<6xf32> should have shape 1 for input tensor<6xf32>}}
  %0 = shard.reduce_scatter %x on @g grid_axes = [1, 0] scatter_axis = 0 : tensor<6xf32> -> tensor<6xf32>
  func.return
}

// -----

// all_to_all divides the split axis and multiplies the concat axis by the group size.
shard.grid @g(shape = 2x3)
func.func @all_to_all_shape(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'shard.all_to_all' op result tensor<2x6xf32> should have shape 6x2 for input tensor<2x6xf32>}}
  %0 = shard.all_to_all %x on @g grid_axes = [1] split_axis = 1 concat_axis = 0 : tensor<2x6xf32> -> tensor<2x6xf32>
  func.return
}
