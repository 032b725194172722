// RUN: not irgrad-opt -p convert-mpi-to-llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-mpi-to-llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// ERR-NOT: Traceback

// Buffer ops become calls of the MPI runtime: (send, recv, bytes per block or per member,
// group = the bit mask of the grid axes, site = the op's index in irgrad.mpi.sites). No MPI
// constant appears; the sites name each collective and its line for the runtime's errors.
// CHECK:       builtin.module attributes {irgrad.mpi.sites = ["mpi.alltoall over grid axes [1] of float32[2, 3] at {{.*}}convert-mpi-to-llvm.mlir:{{[0-9]+}}:3", "mpi.allgather over grid axes [0, 1] of float64[5] at {{.*}}", "mpi.allgather over every process of int32[] at {{.*}}"], irgrad.mpi.grid = array<i64: 2, 2>}
// CHECK-LABEL: func.func @exchange
// CHECK-DAG:     %[[BLOCK:.*]] = llvm.mlir.constant(12) : i64
// CHECK-DAG:     %[[AXIS1:.*]] = llvm.mlir.constant(2) : i64
// CHECK-DAG:     %[[SITE0:.*]] = llvm.mlir.constant(0) : i64
// CHECK-DAG:     %[[BYTES:.*]] = llvm.mlir.constant(40) : i64
// CHECK-DAG:     %[[BOTH:.*]] = llvm.mlir.constant(3) : i64
// CHECK-DAG:     %[[SITE1:.*]] = llvm.mlir.constant(1) : i64
// CHECK-DAG:     %[[WORLD:.*]] = llvm.mlir.constant(-1) : i64
// CHECK:         llvm.call @irgrad_mpi_alltoall(%{{.*}}, %{{.*}}, %[[BLOCK]], %[[AXIS1]], %[[SITE0]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
// CHECK-NEXT:    llvm.call @irgrad_mpi_allgather(%{{.*}}, %{{.*}}, %[[BYTES]], %[[BOTH]], %[[SITE1]])
// CHECK-NEXT:    %[[RANK:.*]] = llvm.call @irgrad_mpi_comm_rank(%[[AXIS1]]) : (i64) -> i32
// CHECK-NEXT:    llvm.call @irgrad_mpi_allgather(%{{.*}}, %{{.*}}, %{{.*}}, %[[WORLD]], %[[AXIS1]])
// CHECK-NEXT:    func.return %[[RANK]]
// CHECK-NOT:     mpi.
// CHECK:         llvm.func @irgrad_mpi_alltoall(!llvm.ptr, !llvm.ptr, i64, i64, i64)
// CHECK:         llvm.func @irgrad_mpi_allgather(!llvm.ptr, !llvm.ptr, i64, i64, i64)
// CHECK:         llvm.func @irgrad_mpi_comm_rank(i64) -> i32
func.func @exchange(%s: memref<2x3xf32>, %r: memref<2x3xf32>, %v: memref<5xf64>, %g: memref<4x5xf64>, %i: memref<i32>, %j: memref<4xi32>) -> i32 {
  %c1 = mpi.grid_comm grid_shape = [2, 2] grid_axes = [1] : !mpi.comm
  %all = mpi.grid_comm grid_shape = [2, 2] grid_axes = [0, 1] : !mpi.comm
  %w = mpi.comm_world : !mpi.comm
  mpi.alltoall_buffers(%s, %r, %c1) : memref<2x3xf32>, memref<2x3xf32>
  mpi.allgather_buffers(%v, %g, %all) : memref<5xf64>, memref<4x5xf64>
  %rank = mpi.comm_rank(%c1) : i32
  mpi.allgather_buffers(%i, %j, %w) : memref<i32>, memref<4xi32>
  func.return %rank : i32
}

// -----

// The tensor forms are bufferize's to convert first.
// ERR: convert-mpi-to-llvm.mlir:[[# @LINE + 3]]:3: error: 'mpi.alltoall' op works on tensors: run bufferize first
func.func @tensors(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = mpi.grid_comm grid_shape = [2] grid_axes = [0] : !mpi.comm
  %y = mpi.alltoall(%x, %c) : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// A program runs on one grid.
// ERR: convert-mpi-to-llvm.mlir:[[# @LINE + 5]]:3: error: 'mpi.allgather_buffers' op uses a communicator of grid [4], another op one of grid [2, 2]: a program runs on one grid
func.func @two_grids(%v: memref<5xf64>, %g: memref<4x5xf64>) {
  %a = mpi.grid_comm grid_shape = [2, 2] grid_axes = [0, 1] : !mpi.comm
  %b = mpi.grid_comm grid_shape = [4] grid_axes = [0] : !mpi.comm
  mpi.allgather_buffers(%v, %g, %a) : memref<5xf64>, memref<4x5xf64>
  mpi.allgather_buffers(%v, %g, %b) : memref<5xf64>, memref<4x5xf64>
  func.return
}

// -----

// A communicator passed in as an argument is not one the pass can name.
// ERR: convert-mpi-to-llvm.mlir:[[# @LINE + 2]]:3: error: 'mpi.comm_rank' op uses a communicator that no mpi.grid_comm or mpi.comm_world makes
func.func @argument(%c: !mpi.comm) -> i32 {
  %r = mpi.comm_rank(%c) : i32
  func.return %r : i32
}
