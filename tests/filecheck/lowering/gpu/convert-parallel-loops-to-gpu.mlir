// RUN: irgrad-opt -p convert-parallel-loops-to-gpu %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: irgrad-opt -p 'convert-parallel-loops-to-gpu{block-size=64}' %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=B64
// RUN: not irgrad-opt -p 'convert-parallel-loops-to-gpu{block-size=0}' %s --split-input-file 2>&1 | filecheck %s --check-prefix=BAD
// RUN: irgrad-opt -p 'convert-parallel-loops-to-gpu{points-per-thread=4}' %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=PPT
// RUN: irgrad-opt -p 'convert-parallel-loops-to-gpu{points-per-thread=1}' %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=SINGLE
// RUN: not irgrad-opt -p 'convert-parallel-loops-to-gpu{points-per-thread=17}' %s --split-input-file 2>&1 | filecheck %s --check-prefix=BADPPT
// RUN: irgrad-opt -p 'convert-parallel-loops-to-gpu{split-reductions=false}' %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOSPLIT

// A 2-D parallel loop of 4x8 points is one launch of 32 threads (fewer points than the
// block size: one block of exactly that many threads, no bounds guard). The dimensions are
// linearized, the innermost fastest; the index arithmetic is i32.

// CHECK-LABEL: func.func @copy_2d
// CHECK:       %c8 = arith.constant 8 : index
// CHECK-NEXT:  %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:  %[[THREADS:.*]] = arith.constant 32 : index
// CHECK-NEXT:  gpu.launch blocks(%[[BX:\w+]], %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]]) threads(%[[TX:\w+]], %{{\w+}}, %{{\w+}}) in (%[[BDX:\w+]] = %[[THREADS]], %{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]]) {
// CHECK-NEXT:    %[[B:.*]] = arith.index_cast %[[BX]] : index to i32
// CHECK-NEXT:    %[[D:.*]] = arith.index_cast %[[BDX]] : index to i32
// CHECK-NEXT:    %[[T:.*]] = arith.index_cast %[[TX]] : index to i32
// CHECK-NEXT:    %[[BD:.*]] = arith.muli %[[B]], %[[D]] : i32
// CHECK-NEXT:    %[[GID:.*]] = arith.addi %[[BD]], %[[T]] : i32
// CHECK-NEXT:    %[[EIGHT:.*]] = arith.constant 8 : i32
// CHECK-NEXT:    %[[JI:.*]] = arith.remui %[[GID]], %[[EIGHT]] : i32
// CHECK-NEXT:    %[[J:.*]] = arith.index_cast %[[JI]] : i32 to index
// CHECK-NEXT:    %[[II:.*]] = arith.divui %[[GID]], %[[EIGHT]] : i32
// CHECK-NEXT:    %[[I:.*]] = arith.index_cast %[[II]] : i32 to index
// CHECK-NEXT:    %[[V:.*]] = memref.load %a[%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:    memref.store %[[V]], %b[%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:    gpu.terminator
// CHECK-NOT:   scf.parallel
// B64-LABEL:   func.func @copy_2d
// B64:         arith.constant 32 : index
func.func @copy_2d(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  "scf.parallel"(%c0, %c0, %c4, %c8, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %a[%i, %j] : memref<4x8xf32>
    memref.store %v, %b[%i, %j] : memref<4x8xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// -----

// 1000 points: ceil(1000 / 256) = 4 blocks of 256 threads (16 of 64 with block-size=64),
// and a guard, since the last block has threads past the end. The per-thread reduction loop
// of the body (a row sum) stays sequential inside the thread.

// CHECK-LABEL: func.func @row_sums
// CHECK:       %[[GRID:.*]] = arith.constant 4 : index
// CHECK-NEXT:  %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK-NEXT:  gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[GRID]], %{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}) threads(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[BLOCK]], %{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}) {
// CHECK:         %[[LIMIT:.*]] = arith.constant 1000 : i32
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[LIMIT]] : i32
// CHECK-NEXT:    scf.if %[[IN]] {
// CHECK:           %{{.*}} = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK:         gpu.terminator
// B64-LABEL:   func.func @row_sums
// B64:         %[[GRID:.*]] = arith.constant 16 : index
// B64-NEXT:    %[[BLOCK:.*]] = arith.constant 64 : index
func.func @row_sums(%a: memref<1000x3xf32>, %out: memref<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c1000 = arith.constant 1000 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c1000, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %a[%i, %k] : memref<1000x3xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %out[%i] : memref<1000xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Few outputs, long reductions (a bias gradient: 2048 column sums over 8192 rows): 2048 threads
// would leave most of the device idle, so each column's loop is split into 32 chunks of 256
// rows (32 x 2048 = 65536 threads, the chunk index outermost so that loads stay coalesced),
// each from the identity -0.0 into a 32 x 2048 buffer; then the original loop adds the 32
// partial sums, in chunk order, to the loaded initial value. With split-reductions=false one
// thread runs each column's 8192 rows.

// CHECK-LABEL: func.func @column_sums
// CHECK:       %[[PARTIAL:.*]] = memref.alloc() : memref<32x2048xf32>
// CHECK:       %[[GRID1:.*]] = arith.constant 256 : index
// CHECK:       gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[GRID1]],
// CHECK:         %[[ID:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[ID]]) -> (f32) {
// CHECK:           memref.load %a[
// CHECK:         memref.store %{{.*}}, %[[PARTIAL]][
// CHECK:       %[[GRID2:.*]] = arith.constant 8 : index
// CHECK:       gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[GRID2]],
// CHECK:         %[[INIT:.*]] = memref.load %out[
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (f32) {
// CHECK:           memref.load %[[PARTIAL]][
// CHECK:       memref.dealloc %[[PARTIAL]] : memref<32x2048xf32>
// NOSPLIT-LABEL: func.func @column_sums
// NOSPLIT-NOT:   memref.alloc
// NOSPLIT:       %[[GRID:.*]] = arith.constant 8 : index
// NOSPLIT:       gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[GRID]],
// NOSPLIT:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// NOSPLIT-NOT:   gpu.launch
// NOSPLIT-NOT:   memref.dealloc
// NOSPLIT:       func.func @short_column_sums
func.func @column_sums(%a: memref<8192x2048xf32>, %out: memref<2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8192 = arith.constant 8192 : index
  %c2048 = arith.constant 2048 : index
  "scf.parallel"(%c0, %c2048, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %init = memref.load %out[%i] : memref<2048xf32>
    %s = scf.for %k = %c0 to %c8192 step %c1 iter_args(%acc = %init) -> (f32) {
      %v = memref.load %a[%k, %i] : memref<8192x2048xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %out[%i] : memref<2048xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// The same over 512 rows (W2's bias gradient) is not split: below MIN_SPLIT_TRIPS (2048
// iterations) the serial loop costs less than the kernel launch a split adds.

// CHECK-LABEL: func.func @short_column_sums
// CHECK-NOT:   memref.alloc
// CHECK:       %[[GRID:.*]] = arith.constant 8 : index
// CHECK:       gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[GRID]],
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK-NOT:   gpu.launch
func.func @short_column_sums(%a: memref<512x2048xf32>, %out: memref<2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c2048 = arith.constant 2048 : index
  "scf.parallel"(%c0, %c2048, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %init = memref.load %out[%i] : memref<2048xf32>
    %s = scf.for %k = %c0 to %c512 step %c1 iter_args(%acc = %init) -> (f32) {
      %v = memref.load %a[%k, %i] : memref<512x2048xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %out[%i] : memref<2048xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A sum to a scalar (a reduction nest on the host side: load the output, scf.for, store)
// is a tree reduction over two kernels: 1000 points, 4 blocks of 256 threads each folding
// their points and halving through shared memory (memory space 3) between barriers, then
// one block combining the 4 partials with the initial value. The result comes back through a
// one-element buffer, stored to the output by a one-thread kernel; the initial value's load
// moves into the second kernel. No serial loop over the points is left in host code.

// CHECK-LABEL: func.func @total
// CHECK:       %[[RESULT:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT:  %[[PARTIALS:.*]] = memref.alloc() : memref<4xf32>
// CHECK:       gpu.launch blocks(
// CHECK:         %[[SHARED:.*]] = memref.alloca() : memref<256xf32, 3 : i64>
// CHECK:         scf.if
// CHECK:           scf.for
// CHECK:           memref.store %{{.*}}, %[[SHARED]][%{{.*}}] : memref<256xf32, 3 : i64>
// CHECK:         gpu.barrier
// CHECK:         %[[HALF:.*]] = arith.constant 128 : i32
// CHECK:         scf.if
// CHECK:           arith.addf
// CHECK:         gpu.barrier
// CHECK:         memref.store %{{.*}}, %[[PARTIALS]][%{{.*}}] : memref<4xf32>
// CHECK:       gpu.launch blocks(
// CHECK:         %[[INIT:.*]] = memref.load %out[] : memref<f32>
// CHECK:         memref.alloca() : memref<4xf32, 3 : i64>
// CHECK:         memref.load %[[PARTIALS]]
// CHECK:         gpu.barrier
// CHECK:         arith.cmpi eq
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[TOTAL:.*]] = memref.load %{{.*}}[%[[ZERO]]] : memref<4xf32, 3 : i64>
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[INIT]], %[[TOTAL]] : f32
// CHECK-NEXT:      memref.store %[[SUM]], %[[RESULT]][] : memref<f32>
// CHECK:       memref.dealloc %[[PARTIALS]] : memref<4xf32>
// CHECK:       gpu.launch blocks(
// CHECK:         %[[R:.*]] = memref.load %[[RESULT]][] : memref<f32>
// CHECK-NEXT:    memref.store %[[R]], %out[] : memref<f32>
// CHECK:       memref.dealloc %[[RESULT]] : memref<f32>
// CHECK-NEXT:  func.return
func.func @total(%a: memref<1000xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %init = memref.load %out[] : memref<f32>
  %s = scf.for %i = %c0 to %c1000 step %c1 iter_args(%acc = %init) -> (f32) {
    %v = memref.load %a[%i] : memref<1000xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  memref.store %s, %out[] : memref<f32>
  func.return
}

// -----

// A maximum over a 2-D nest raises the same way (the combining op is the nest's maximumf),
// here to one reduction kernel (12 points fit one block of 16 threads), then a one-thread
// launch that stores the result, and no other.

// CHECK-LABEL: func.func @max_2d
// CHECK:       gpu.launch blocks(
// CHECK:         memref.alloca() : memref<16xf32, 3 : i64>
// CHECK:         arith.maximumf
// CHECK:         gpu.barrier
// CHECK:         gpu.terminator
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[ONE:\w+]] = arith.constant 1 : index
// CHECK-NEXT:  gpu.launch blocks({{.*}}) in (%{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]]) threads({{.*}}) in (%{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]]) {
// CHECK-NEXT:    %[[R:\w+]] = memref.load %{{\w+}}[] : memref<f32>
// CHECK-NEXT:    memref.store %[[R]], %out[] : memref<f32>
// CHECK-NEXT:    gpu.terminator
// CHECK-NEXT:  }
// CHECK-NOT:   gpu.launch
// CHECK:       func.return
func.func @max_2d(%a: memref<3x4xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %init = memref.load %out[] : memref<f32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %init) -> (f32) {
    %q = scf.for %j = %c0 to %c4 step %c1 iter_args(%y = %x) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<3x4xf32>
      %m = arith.maximumf %y, %v : f32
      scf.yield %m : f32
    }
    scf.yield %q : f32
  }
  memref.store %r, %out[] : memref<f32>
  func.return
}

// -----

// An scf.parallel with scf.reduce is a tree reduction too; its combining region is applied
// as it is (here an integer product).

// CHECK-LABEL: func.func @product
// CHECK:       gpu.launch blocks(
// CHECK:         gpu.barrier
// CHECK:         arith.muli %{{.*}}, %{{.*}} : i32
// CHECK-NOT:   scf.parallel
func.func @product(%a: memref<64xi32>, %out: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1 : i32
  %p = "scf.parallel"(%c0, %c64, %c1, %one) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %v = memref.load %a[%i] : memref<64xi32>
    scf.reduce(%v : i32) {
    ^bb1(%x: i32, %y: i32):
      %m = arith.muli %x, %y : i32
      scf.reduce.return %m : i32
    }
  }) : (index, index, index, i32) -> i32
  memref.store %p, %out[] : memref<i32>
  func.return
}

// -----

// A reduction whose accumulator is used otherwise (here also stored each step) is not raised:
// it runs as it is, serially, in a one-thread kernel.

// CHECK-LABEL: func.func @running_sum
// CHECK:       %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:  gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]]) threads(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]], %{{\w+}} = %[[ONE]]) {
// CHECK:         scf.for
// CHECK:           memref.store
// CHECK-NOT:     gpu.barrier
func.func @running_sum(%a: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %a[%i] : memref<8xf32>
    %n = arith.addf %acc, %v : f32
    memref.store %n, %out[%i] : memref<8xf32>
    scf.yield %n : f32
  }
  func.return
}

// -----

// A small buffer that host code alone reads and writes (a loop counter kept in memory to
// compute a slice offset) becomes host memory, memref.alloca: no kernel, no transfer.

// CHECK-LABEL: func.func @counter
// CHECK:       %[[C:.*]] = memref.alloca() : memref<i32>
// CHECK-NEXT:  memref.store %{{.*}}, %[[C]][] : memref<i32>
// CHECK-NEXT:  %[[K:.*]] = memref.load %[[C]][] : memref<i32>
// CHECK-NOT:   memref.dealloc %[[C]]
// CHECK:       memref.subview %a[%{{.*}}]
// CHECK:       gpu.launch blocks(
func.func @counter(%a: memref<5x4xf32>, %b: memref<4xf32>, %n: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %slot = memref.alloc() : memref<i32>
  memref.store %n, %slot[] : memref<i32>
  %k = memref.load %slot[] : memref<i32>
  memref.dealloc %slot : memref<i32>
  %i = arith.index_cast %k : i32 to index
  %row = memref.subview %a[%i, 0] [1, 4] [1, 1] : memref<5x4xf32> to memref<4xf32, strided<[1], offset: ?>>
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    %v = memref.load %row[%j] : memref<4xf32, strided<[1], offset: ?>>
    memref.store %v, %b[%j] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Host code that reads device memory to decide a loop bound: the load stays in host code (a
// device-to-host read, of a rank-0 buffer); the loop launches a kernel per iteration.

// CHECK-LABEL: func.func @device_bound
// CHECK:       %[[N:.*]] = memref.load %n[] : memref<index>
// CHECK-NEXT:  scf.for %{{.*}} = %{{.*}} to %[[N]] step
// CHECK:         gpu.launch blocks(
func.func @device_bound(%n: memref<index>, %a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %bound = memref.load %n[] : memref<index>
  scf.for %t = %c0 to %bound step %c1 {
    "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%j: index):
      %v = memref.load %a[%j] : memref<4xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %a[%j] : memref<4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}

// -----

// Copies: between buffers of one contiguous type the copy stays (gpu-kernel-outlining makes
// it a device-to-device memcpy); from a strided view it becomes a copy kernel.

// CHECK-LABEL: func.func @copies
// CHECK:       memref.copy %a, %b : memref<2x3xf32> to memref<2x3xf32>
// CHECK:       gpu.launch blocks(
// CHECK:         %[[V:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<2x3xf32, strided<[6, 1], offset: ?>>
// CHECK-NEXT:    memref.store %[[V]], %b[%{{.*}}, %{{.*}}] : memref<2x3xf32>
func.func @copies(%a: memref<2x3xf32>, %b: memref<2x3xf32>, %big: memref<4x6xf32>, %i: index) {
  "memref.copy"(%a, %b) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  %view = memref.subview %big[%i, 1] [2, 3] [1, 1] : memref<4x6xf32> to memref<2x3xf32, strided<[6, 1], offset: ?>>
  "memref.copy"(%view, %b) : (memref<2x3xf32, strided<[6, 1], offset: ?>>, memref<2x3xf32>) -> ()
  func.return
}

// -----

// A loop with no points disappears; dynamic bounds are counted on the host: the grid is
// max(1, ceil(points / 256)) and every thread checks its index.

// CHECK-LABEL: func.func @empty_and_dynamic
// CHECK-NOT:   memref.store %{{.*}}, %e
// CHECK:       %[[SPAN:.*]] = arith.subi %n, %{{.*}} : index
// CHECK-NEXT:  %[[COUNT:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : index
// CHECK:       %[[BLOCKS:.*]] = arith.ceildivsi
// CHECK:       %[[GRID:.*]] = arith.maxsi %[[BLOCKS]], %{{.*}} : index
// CHECK:       gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[GRID]],
// CHECK:         arith.cmpi ult
func.func @empty_and_dynamic(%e: memref<0xf32>, %a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c0, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    memref.store %zero, %e[%i] : memref<0xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    memref.store %zero, %a[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A call inside a parallel loop cannot run in a kernel: a located error.

// BAD: error: convert-parallel-loops-to-gpu: block-size must be between 1 and 1024, got 0

func.func private @helper(f32) -> f32

func.func @call_in_loop(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %a[%i] : memref<4xf32>
    // expected-error @+1 {{'func.call' op cannot run inside a GPU kernel (convert-parallel-loops-to-gpu maps this parallel loop to one)}}
    %w = func.call @helper(%v) : (f32) -> f32
    memref.store %w, %a[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A scatter-add (stage "loops" of nn.scatter_add: an scf.for over the index positions
// carrying the result in place, one row added per position through a temporary) is one
// kernel: a thread per row element (rows of 64: at least a warp), each running the positions
// serially in their order (gpu_scatter_loops.py), so repeated indices add in the serial
// order, with no atomics.
// No launch, allocation or copy is left inside a host loop.

// CHECK-LABEL: func.func @scatter_rows
// CHECK-NOT:   scf.for
// CHECK:       memref.copy %x, %acc0
// CHECK:       %[[ROW:.*]] = arith.constant 64 : index
// CHECK-NEXT:  gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}) threads(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[ROW]], %{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}) {
// CHECK:         scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[RAW:.*]] = memref.load %i[%[[P]]] : memref<6xi32>
// CHECK:           %[[ROW:.*]] = memref.subview %[[ACC:.*]][%{{.*}}, 0] [1, 64] [1, 1]
// CHECK:           %[[UPD:.*]] = memref.subview %u[%[[P]], 0] [1, 64] [1, 1]
// CHECK:           %[[DST:.*]] = memref.subview %[[ACC]][%{{.*}}, 0] [1, 64] [1, 1]
// CHECK-NEXT:      %[[A:.*]] = memref.load %[[ROW]][%[[Z:.*]], %[[C:.*]]]
// CHECK-NEXT:      %[[B:.*]] = memref.load %[[UPD]][%[[Z]], %[[C]]]
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      memref.store %[[SUM]], %[[DST]][%[[Z]], %[[C]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.terminator
// CHECK-NOT:   gpu.launch
// CHECK-NOT:   memref.alloc() : memref<1x64xf32>
// CHECK:       memref.copy %[[ACC]], %out

func.func @scatter_rows(%x: memref<8x64xf32>, %i: memref<6xi32>, %u: memref<6x64xf32>, %out: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %acc0 = memref.alloc() : memref<8x64xf32>
  "memref.copy"(%x, %acc0) : (memref<8x64xf32>, memref<8x64xf32>) -> ()
  %r = scf.for %p = %c0 to %c6 step %c1 iter_args(%acc = %acc0) -> (memref<8x64xf32>) {
    %raw = memref.load %i[%p] : memref<6xi32>
    %index = arith.index_cast %raw : i32 to index
    %lo = arith.maxsi %index, %c0 : index
    %at = arith.minsi %lo, %c7 : index
    %row = memref.subview %acc[%at, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %upd = memref.subview %u[%p, 0] [1, 64] [1, 1] : memref<6x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %tmp = memref.alloc() : memref<1x64xf32>
    "scf.parallel"(%c0, %c0, %c1, %c64, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
    ^bb0(%a: index, %b: index):
      %v = memref.load %row[%a, %b] : memref<1x64xf32, strided<[64, 1], offset: ?>>
      %w = memref.load %upd[%a, %b] : memref<1x64xf32, strided<[64, 1], offset: ?>>
      %s = arith.addf %v, %w : f32
      memref.store %s, %tmp[%a, %b] : memref<1x64xf32>
      scf.reduce
    }) : (index, index, index, index, index, index) -> ()
    %dst = memref.subview %acc[%at, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    "memref.copy"(%tmp, %dst) : (memref<1x64xf32>, memref<1x64xf32, strided<[64, 1], offset: ?>>) -> ()
    memref.dealloc %tmp : memref<1x64xf32>
    scf.yield %acc : memref<8x64xf32>
  }
  "memref.copy"(%r, %out) : (memref<8x64xf32>, memref<8x64xf32>) -> ()
  memref.dealloc %acc0 : memref<8x64xf32>
  func.return
}

// -----

// Rows shorter than a warp (here one element: take_along_axis's gradient) get a thread per
// element of the whole destination (40 threads), each scanning every position and adding
// those whose index is its own row: again the serial order for each element, no atomics.

// CHECK-LABEL: func.func @scatter_elements
// CHECK-NOT:   scf.for
// CHECK:       arith.constant 40 : index
// CHECK:       %[[N:.*]] = arith.constant 40 : index
// CHECK-NEXT:  gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}) threads(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[N]], %{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}) {
// CHECK:         %[[MINE:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK:         scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[RAW:.*]] = memref.load %i[%[[P]]] : memref<9xi32>
// CHECK:           %[[AT:.*]] = arith.minsi
// CHECK:           %[[HIT:.*]] = arith.cmpi eq, %[[AT]], %[[MINE]] : index
// CHECK-NEXT:      scf.if %[[HIT]] {
// CHECK:             arith.addf
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.terminator
// CHECK-NOT:   gpu.launch

func.func @scatter_elements(%x: memref<40xf32>, %i: memref<9xi32>, %u: memref<9xf32>, %out: memref<40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %c39 = arith.constant 39 : index
  %acc0 = memref.alloc() : memref<40xf32>
  "memref.copy"(%x, %acc0) : (memref<40xf32>, memref<40xf32>) -> ()
  %r = scf.for %p = %c0 to %c9 step %c1 iter_args(%acc = %acc0) -> (memref<40xf32>) {
    %raw = memref.load %i[%p] : memref<9xi32>
    %index = arith.index_cast %raw : i32 to index
    %lo = arith.maxsi %index, %c0 : index
    %at = arith.minsi %lo, %c39 : index
    %row = memref.subview %acc[%at] [1] [1] : memref<40xf32> to memref<1xf32, strided<[1], offset: ?>>
    %upd = memref.subview %u[%p] [1] [1] : memref<9xf32> to memref<1xf32, strided<[1], offset: ?>>
    %tmp = memref.alloc() : memref<1xf32>
    "scf.parallel"(%c0, %c1, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%a: index):
      %v = memref.load %row[%a] : memref<1xf32, strided<[1], offset: ?>>
      %w = memref.load %upd[%a] : memref<1xf32, strided<[1], offset: ?>>
      %s = arith.addf %v, %w : f32
      memref.store %s, %tmp[%a] : memref<1xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    %dst = memref.subview %acc[%at] [1] [1] : memref<40xf32> to memref<1xf32, strided<[1], offset: ?>>
    "memref.copy"(%tmp, %dst) : (memref<1xf32>, memref<1xf32, strided<[1], offset: ?>>) -> ()
    memref.dealloc %tmp : memref<1xf32>
    scf.yield %acc : memref<40xf32>
  }
  "memref.copy"(%r, %out) : (memref<40xf32>, memref<40xf32>) -> ()
  memref.dealloc %acc0 : memref<40xf32>
  func.return
}

// Not a scatter: each position's index is read from the carried buffer itself, so a later
// position depends on what an earlier one wrote to another row element. The loop stays
// serial on the host, a launch per position.

// CHECK-LABEL: func.func @reads_what_it_writes
// CHECK:       scf.for
// CHECK:         gpu.launch blocks(

func.func @reads_what_it_writes(%x: memref<8x4xf32>, %u: memref<6x4xf32>, %out: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %acc0 = memref.alloc() : memref<8x4xf32>
  "memref.copy"(%x, %acc0) : (memref<8x4xf32>, memref<8x4xf32>) -> ()
  %r = scf.for %p = %c0 to %c6 step %c1 iter_args(%acc = %acc0) -> (memref<8x4xf32>) {
    %raw = memref.load %acc[%p, %c0] : memref<8x4xf32>
    %cast = arith.fptosi %raw : f32 to i32
    %index = arith.index_cast %cast : i32 to index
    %lo = arith.maxsi %index, %c0 : index
    %at = arith.minsi %lo, %c7 : index
    %row = memref.subview %acc[%at, 0] [1, 4] [1, 1] : memref<8x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
    %upd = memref.subview %u[%p, 0] [1, 4] [1, 1] : memref<6x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
    %tmp = memref.alloc() : memref<1x4xf32>
    "scf.parallel"(%c0, %c0, %c1, %c4, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
    ^bb0(%a: index, %b: index):
      %v = memref.load %row[%a, %b] : memref<1x4xf32, strided<[4, 1], offset: ?>>
      %w = memref.load %upd[%a, %b] : memref<1x4xf32, strided<[4, 1], offset: ?>>
      %s = arith.addf %v, %w : f32
      memref.store %s, %tmp[%a, %b] : memref<1x4xf32>
      scf.reduce
    }) : (index, index, index, index, index, index) -> ()
    %dst = memref.subview %acc[%at, 0] [1, 4] [1, 1] : memref<8x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
    "memref.copy"(%tmp, %dst) : (memref<1x4xf32>, memref<1x4xf32, strided<[4, 1], offset: ?>>) -> ()
    memref.dealloc %tmp : memref<1x4xf32>
    scf.yield %acc : memref<8x4xf32>
  }
  "memref.copy"(%r, %out) : (memref<8x4xf32>, memref<8x4xf32>) -> ()
  memref.dealloc %acc0 : memref<8x4xf32>
  func.return
}

// -----

// points-per-thread=4: a straight-line loop of 4096 points is 4 blocks of 256 threads, each
// running points g, g + 1024, g + 2048, g + 3072 (coalesced), the body emitted op by op for
// the four: four loads issued back to back. Without the option: one point per thread.

// CHECK-LABEL: func.func @four_per_thread
// CHECK:       %[[G:.*]] = arith.constant 16 : index
// CHECK:       gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[G]],

// PPT-LABEL: func.func @four_per_thread
// PPT:       %[[G:.*]] = arith.constant 4 : index
// PPT-NEXT:  %[[B:.*]] = arith.constant 256 : index
// PPT-NEXT:  gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[G]], %{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}) threads(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[B]],
// PPT:         %[[S1:.*]] = arith.constant 1024 : i32
// PPT:         %[[S2:.*]] = arith.constant 2048 : i32
// PPT:         %[[S3:.*]] = arith.constant 3072 : i32
// PPT:         %[[V0:.*]] = memref.load %x[%{{.*}}] : memref<4096xf32>
// PPT-NEXT:    %[[V1:.*]] = memref.load %x[%{{.*}}] : memref<4096xf32>
// PPT-NEXT:    %[[V2:.*]] = memref.load %x[%{{.*}}] : memref<4096xf32>
// PPT-NEXT:    %[[V3:.*]] = memref.load %x[%{{.*}}] : memref<4096xf32>
// PPT-NEXT:    %{{.*}} = arith.mulf %[[V0]], %[[V0]] : f32
// PPT-COUNT-3: arith.mulf
// PPT-COUNT-4: memref.store
// PPT-NEXT:    gpu.terminator

// BADPPT: points-per-thread must be between 0 (automatic) and 16, got 17

func.func @four_per_thread(%x: memref<4096xf32>, %out: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4096 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<4096xf32>
    %s = arith.mulf %v, %v : f32
    memref.store %s, %out[%i] : memref<4096xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// The default (points-per-thread=0) runs 4 points per thread from 2^20 points on: this loop
// of 2^20 is 1024 blocks of 256 threads, each with four loads in flight. With
// points-per-thread=1: 4096 blocks, one point each.

// CHECK-LABEL: func.func @auto_large
// CHECK:       %[[G:.*]] = arith.constant 1024 : index
// CHECK-NEXT:  %[[B:.*]] = arith.constant 256 : index
// CHECK-NEXT:  gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[G]], %{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}) threads(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[B]],
// CHECK:         arith.constant 262144 : i32
// CHECK:         arith.constant 524288 : i32
// CHECK:         arith.constant 786432 : i32
// CHECK-COUNT-4: memref.load %x
// CHECK-COUNT-4: arith.addf
// CHECK-COUNT-4: memref.store

// SINGLE-LABEL: func.func @auto_large
// SINGLE:       %[[G:.*]] = arith.constant 4096 : index
// SINGLE-NEXT:  %[[B:.*]] = arith.constant 256 : index
// SINGLE-NEXT:  gpu.launch blocks(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[G]], %{{\w+}} = %{{\w+}}, %{{\w+}} = %{{\w+}}) threads(%{{\w+}}, %{{\w+}}, %{{\w+}}) in (%{{\w+}} = %[[B]],
// SINGLE-COUNT-1: memref.load %x
// SINGLE-NEXT:    arith.addf
// SINGLE-NEXT:    memref.store
// SINGLE-NEXT:    gpu.terminator

func.func @auto_large(%x: memref<1048576xf32>, %out: memref<1048576xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1048576 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<1048576xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %out[%i] : memref<1048576xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
