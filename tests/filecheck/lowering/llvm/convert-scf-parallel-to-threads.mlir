// RUN: not irgrad-opt -p convert-scf-parallel-to-threads --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-to-llvm --split-input-file %s -t llvm 2>/dev/null | filecheck %s --check-prefix=LLVM
// RUN: not irgrad-opt -p convert-scf-parallel-to-threads --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt -p convert-scf-parallel-to-threads --split-input-file %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// RUN: not irgrad-opt -p 'convert-scf-parallel-to-threads{min_work=-1}' %s 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: not irgrad-opt -p 'convert-scf-parallel-to-threads{workers=4}' %s 2>&1 | filecheck %s --check-prefix=UNKNOWN
// ERR-NOT: Traceback

// A large parallel loop becomes a function over a range [begin, end) of its first dimension
// (the other dimensions whole), called through the thread pool. Captured values travel in
// 8-byte slots of a context: memrefs as pointers, scalars as themselves; constants are cloned.

// CHECK-LABEL: func.func private @scale_parallel0(%ctx: !llvm.ptr, %begin: i64, %end: i64) {
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C512:.*]] = arith.constant 512 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[XS:.*]] = llvm.getelementptr %ctx[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[XP:.*]] = llvm.load %[[XS]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[X:.*]] = builtin.unrealized_conversion_cast %[[XP]] : !llvm.ptr to memref<512x512xf32>
// CHECK-NEXT:    %[[SS:.*]] = llvm.getelementptr %ctx[2] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[S:.*]] = llvm.load %[[SS]] : !llvm.ptr -> f32
// CHECK:         %[[B:.*]] = builtin.unrealized_conversion_cast %begin : i64 to index
// CHECK-NEXT:    %[[E:.*]] = builtin.unrealized_conversion_cast %end : i64 to index
// CHECK:         %[[LO:.*]] = arith.addi %[[C0]], %{{.*}} : index
// CHECK:         %[[HI:.*]] = arith.minui %{{.*}}, %[[C512]] : index
// CHECK-NEXT:    scf.parallel (%i, %j) = (%[[LO]], %[[C0]]) to (%[[HI]], %[[C512]]) step (%[[C1]], %[[C1]])
// CHECK:           memref.load %[[X]][%i, %j]
// CHECK-NEXT:      arith.mulf %{{.*}}, %[[S]] : f32
// CHECK-LABEL: func.func @scale(
// CHECK:         %[[CTX:.*]] = llvm.alloca %{{.*}} x i64 {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK:         llvm.store %s, %{{.*}} : f32, !llvm.ptr
// CHECK:         %[[N:.*]] = llvm.mlir.constant(512) : i64
// CHECK-NEXT:    %[[FN:.*]] = llvm.mlir.addressof @scale_parallel0 : !llvm.ptr
// CHECK-NEXT:    llvm.call @irgrad_parallel_for(%[[FN]], %{{.*}}, %[[N]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NOT:     scf.parallel
func.func @scale(%x: memref<512x512xf32>, %s: f32, %out: memref<512x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  "scf.parallel"(%c0, %c0, %c512, %c512, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<512x512xf32>
    %w = arith.mulf %v, %s : f32
    memref.store %w, %out[%i, %j] : memref<512x512xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// Negative cases: each loop stays an scf.parallel (serialized later by convert-to-llvm).

// Too little work to pay for waking the pool (4 x 8 iterations).
// CHECK-LABEL: func.func @small(
// CHECK-NOT:     irgrad_parallel_for
// CHECK:         scf.parallel (
func.func @small(%m: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  "scf.parallel"(%c0, %c0, %c4, %c8, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %m[%i, %j] : memref<4x8xf32>
    memref.store %v, %m[%i, %j] : memref<4x8xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// A reduction: combining partial results across threads is not done yet.
// CHECK-LABEL: func.func @total(
// CHECK-NOT:     irgrad_parallel_for
// CHECK:         scf.parallel (
func.func @total(%m: memref<1048576xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1048576 : index
  %zero = arith.constant 0.0 : f32
  %t = "scf.parallel"(%c0, %n, %c1, %zero) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %v = memref.load %m[%i] : memref<1048576xf32>
    scf.reduce(%v : f32) {
    ^bb1(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }) : (index, index, index, f32) -> f32
  memref.store %t, %out[] : memref<f32>
  func.return
}

// Bounds that are not constants: the work cannot be estimated.
// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT:     irgrad_parallel_for
// CHECK:         scf.parallel (
func.func @dynamic(%m: memref<1048576xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %m[%i] : memref<1048576xf32>
    memref.store %v, %m[%i] : memref<1048576xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// A body that allocates on the heap: only the calling thread turns a failed allocation into
// a MemoryError, so the loop stays on it.
// CHECK-LABEL: func.func @allocates(
// CHECK-NOT:     irgrad_parallel_for
// CHECK:         scf.parallel (
func.func @allocates(%m: memref<1048576xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1048576 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %tmp = memref.alloc() : memref<4xf32>
    %v = memref.load %m[%i] : memref<1048576xf32>
    memref.store %v, %tmp[%c0] : memref<4xf32>
    memref.dealloc %tmp : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// The first dimension has a single iteration: nothing to split across threads.
// CHECK-LABEL: func.func @single_row(
// CHECK-NOT:     irgrad_parallel_for
// CHECK:         scf.parallel (
func.func @single_row(%m: memref<1x1048576xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1048576 : index
  "scf.parallel"(%c0, %c0, %c1, %n, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %m[%i, %j] : memref<1x1048576xf32>
    memref.store %v, %m[%i, %j] : memref<1x1048576xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// One declaration of the entry point, after the functions.
// CHECK:       llvm.func @irgrad_parallel_for(!llvm.ptr, !llvm.ptr, i64)

// Through convert-to-llvm: the outlined body is a function whose address the caller passes
// to the runtime entry point.
// LLVM: define {{.*}}void @"scale_parallel0"(ptr %".1", i64 %".2", i64 %".3")
// LLVM: call ccc void @"irgrad_parallel_for"({{.*}}@"scale_parallel0", ptr %{{.*}}, i64 512)
// LLVM: declare void @"irgrad_parallel_for"(ptr %".1", ptr %".2", i64 %".3")

// -----

// An scf.parallel without loop dimensions (xDSL's verifier accepts it, MLIR's does not):
// a located error, not a crash (it used to be an IndexError).
// ERR: convert-scf-parallel-to-threads.mlir:[[# @LINE + 4]]:3: error: 'scf.parallel' op has no loop dimensions; an scf.parallel needs at least one (lower bound, upper bound, step) triple
// EXIT: exit=1
func.func @no_dimensions(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  "scf.parallel"() <{operandSegmentSizes = array<i32: 0, 0, 0, 0>}> ({
  ^bb0:
    %v = memref.load %m[%c0] : memref<4xf32>
    memref.store %v, %m[%c0] : memref<4xf32>
    scf.reduce
  }) : () -> ()
  func.return
}

// Bad options: a negative min_work, an option the pass does not have.
// NEGATIVE-NOT: Traceback
// NEGATIVE: irgrad-opt: error: invalid options for pass 'convert-scf-parallel-to-threads': min_work must be at least 0, got -1
// UNKNOWN-NOT: Traceback
// UNKNOWN: irgrad-opt: error: invalid options for pass 'convert-scf-parallel-to-threads': no such option 'workers' (it takes min-work)
