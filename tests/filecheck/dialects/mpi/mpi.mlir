// The mpi dialect: communicators, ranks and the two data-movement ops round-trip; the verifier
// checks group sizes against the communicator.
// RUN: irgrad-opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK-LABEL: func.func @round_trip
// CHECK-NEXT:    %w = mpi.comm_world : !mpi.comm
// CHECK-NEXT:    %c = mpi.grid_comm grid_shape = [2, 2] grid_axes = [1, 0] : !mpi.comm
// CHECK-NEXT:    %r = mpi.comm_rank(%c) : i32
// CHECK-NEXT:    %y = mpi.alltoall(%x, %c) : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %z = mpi.allgather(%x, %c) : tensor<4x3xf32> -> tensor<4x4x3xf32>
func.func @round_trip(%x: tensor<4x3xf32>) -> (i32, tensor<4x3xf32>, tensor<4x4x3xf32>) {
  %w = mpi.comm_world : !mpi.comm
  %c = mpi.grid_comm grid_shape = [2, 2] grid_axes = [1, 0] : !mpi.comm
  %r = mpi.comm_rank(%c) : i32
  %y = mpi.alltoall(%x, %c) : tensor<4x3xf32> -> tensor<4x3xf32>
  %z = mpi.allgather(%x, %c) : tensor<4x3xf32> -> tensor<4x4x3xf32>
  func.return %r, %y, %z : i32, tensor<4x3xf32>, tensor<4x4x3xf32>
}

// -----

func.func @blocks(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %c = mpi.grid_comm grid_shape = [2] grid_axes = [0] : !mpi.comm
  // expected-error @+1 {{'mpi.alltoall' op needs a leading dimension of one block per member (2), got tensor<3x3xf32>}}
  %y = mpi.alltoall(%x, %c) : tensor<3x3xf32> -> tensor<3x3xf32>
  func.return %y : tensor<3x3xf32>
}

// -----

func.func @gather(%x: tensor<3xf32>) -> tensor<3x3xf32> {
  %c = mpi.grid_comm grid_shape = [2] grid_axes = [0] : !mpi.comm
  // expected-error @+1 {{'mpi.allgather' op result tensor<3x3xf32> should have shape 2x3 for input tensor<3xf32>}}
  %y = mpi.allgather(%x, %c) : tensor<3xf32> -> tensor<3x3xf32>
  func.return %y : tensor<3x3xf32>
}

// -----

func.func @axes() {
  // expected-error @+1 {{'mpi.grid_comm' op grid_axes [0, 0] must be distinct axes of a rank-2 grid}}
  %c = mpi.grid_comm grid_shape = [2, 2] grid_axes = [0, 0] : !mpi.comm
  func.return
}

// -----

// The buffer forms (what bufferize makes of the data-movement ops) round-trip.
// CHECK-LABEL: func.func @buffers
// CHECK-NEXT:    %c = mpi.grid_comm grid_shape = [2] grid_axes = [0] : !mpi.comm
// CHECK-NEXT:    mpi.alltoall_buffers(%s, %r, %c) : memref<2x3xf32>, memref<2x3xf32>
// CHECK-NEXT:    mpi.allgather_buffers(%v, %s, %c) : memref<3xf32>, memref<2x3xf32>
func.func @buffers(%s: memref<2x3xf32>, %r: memref<2x3xf32>, %v: memref<3xf32>) {
  %c = mpi.grid_comm grid_shape = [2] grid_axes = [0] : !mpi.comm
  mpi.alltoall_buffers(%s, %r, %c) : memref<2x3xf32>, memref<2x3xf32>
  mpi.allgather_buffers(%v, %s, %c) : memref<3xf32>, memref<2x3xf32>
  func.return
}

// -----

func.func @gather_buffers(%v: memref<3xf32>, %r: memref<3x3xf32>) {
  %c = mpi.grid_comm grid_shape = [2] grid_axes = [0] : !mpi.comm
  // expected-error @+1 {{'mpi.allgather_buffers' op recv buffer memref<3x3xf32> should have shape 2x3 for send buffer memref<3xf32>}}
  mpi.allgather_buffers(%v, %r, %c) : memref<3xf32>, memref<3x3xf32>
  func.return
}

// -----

func.func @strided(%s: memref<2x3xf32, strided<[6, 1]>>, %r: memref<2x3xf32>) {
  %c = mpi.grid_comm grid_shape = [2] grid_axes = [0] : !mpi.comm
  // expected-error @+1 {{'mpi.alltoall_buffers' op send buffer memref<2x3xf32, strided<[6, 1]>> must have the identity layout}}
  mpi.alltoall_buffers(%s, %r, %c) : memref<2x3xf32, strided<[6, 1]>>, memref<2x3xf32>
  func.return
}
