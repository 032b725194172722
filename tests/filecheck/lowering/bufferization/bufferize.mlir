// RUN: not irgrad-opt -p bufferize --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p bufferize --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt -p bufferize --split-input-file %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// ERR-NOT: Traceback

// The lowering of every stage-"linalg" construct; numerical checks are in
// tests/unit/lowering/bufferization/test_lowering_bufferize.py.

// An elementwise chain: the first op writes the caller's out-parameter, the next ones
// overwrite it in place (each input dies at its op); nothing is allocated.
// CHECK-LABEL: func.func @chain(%a: memref<4xf32>, %b: memref<4xf32>, %out: memref<4xf32>) {
// CHECK-NOT:   memref.alloc
// CHECK:         linalg.generic {{.*}} ins(%a, %b : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%out : memref<4xf32>) outs(%out : memref<4xf32>)
// CHECK-NOT:   memref.alloc
// CHECK:         func.return{{$}}
#id = affine_map<(d0) -> (d0)>
func.func @chain(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.exp %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// In place, and the value-semantics trap: %x dies at %y, so %y overwrites it; %y is read
// again by %w after %z, so %z needs a buffer of its own. Each buffer is freed after its
// last use.
// CHECK-LABEL: func.func @in_place(%a: memref<4xf32>, %out: memref<4xf32>) -> f32 {
// CHECK-NEXT:    %[[X:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%a : memref<4xf32>) outs(%[[X]] : memref<4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<4xf32>) outs(%[[X]] : memref<4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<4xf32>) outs(%out : memref<4xf32>)
// CHECK:         %w = memref.load %[[X]][%c0] : memref<4xf32>
// CHECK-NEXT:    memref.dealloc %[[X]] : memref<4xf32>
// CHECK-NEXT:    func.return %w : f32
#id = affine_map<(d0) -> (d0)>
func.func @in_place(%a: tensor<4xf32>) -> (tensor<4xf32>, f32) {
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.exp %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.sin %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.cos %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %c0 = arith.constant 0 : index
  %w = tensor.extract %y[%c0] : tensor<4xf32>
  func.return %z, %w : tensor<4xf32>, f32
}

// -----

// A reduction's filled accumulator: alloc + fill, the matmul accumulates in place.
// CHECK-LABEL: func.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>) -> f32 {
// CHECK:         %[[C:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK-NEXT:    linalg.fill ins(%zero : f32) outs(%[[C]] : memref<2x4xf32>)
// CHECK-NEXT:    linalg.matmul ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%[[C]] : memref<2x4xf32>)
// CHECK:         %r = memref.load %[[C]][%c0, %c0] : memref<2x4xf32>
// CHECK-NEXT:    memref.dealloc %[[C]] : memref<2x4xf32>
// CHECK-NEXT:    func.return %r : f32
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  %c0 = arith.constant 0 : index
  %r = tensor.extract %mm[%c0, %c0] : tensor<2x4xf32>
  func.return %r : f32
}

// -----

// Slices are strided views (offset ?); inserting into a destination that is still read
// later copies the destination first. Constants are read-only globals.
// CHECK:       memref.global "private" constant @[[G:__constant_4x6_0]] : memref<4x6xf32> = dense<1.000000e+00>
// CHECK-LABEL: func.func @slices(%a: memref<4x6xf32>, %i: index, %out0: memref<2x3xf32>, %out1: memref<4x6xf32>, %out2: memref<4x6xf32>) {
// CHECK-NEXT:    %[[S:.*]] = memref.subview %a[%i, 1] [2, 3] [1, 2] : memref<4x6xf32> to memref<2x3xf32, strided<[6, 2], offset: ?>>
// CHECK-NEXT:    %[[C:.*]] = memref.get_global @[[G]] : memref<4x6xf32>
// CHECK-NEXT:    memref.copy %[[C]], %out1
// CHECK-NEXT:    %[[V:.*]] = memref.subview %out1[0, 0] [2, 3] [1, 1] : memref<4x6xf32> to memref<2x3xf32, strided<[6, 1]>>
// CHECK-NEXT:    memref.copy %[[S]], %[[V]]
// CHECK-NEXT:    memref.copy %[[S]], %out0
// CHECK-NEXT:    memref.copy %[[C]], %out2
// CHECK-NEXT:    func.return
func.func @slices(%a: tensor<4x6xf32>, %i: index) -> (tensor<2x3xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %s = tensor.extract_slice %a[%i, 1] [2, 3] [1, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  %c = arith.constant dense<1.0> : tensor<4x6xf32>
  %r = tensor.insert_slice %s into %c[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x6xf32>
  func.return %s, %r, %c : tensor<2x3xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// A window update (col2im's step: the strided window of D plus a block, inserted right back
// where it was read): the generic writes into the window's subview of D's buffer, and the
// insert copies nothing. D is the function's result, so the update lands in the out-param.
// CHECK-LABEL: func.func @window_update(%b: memref<2x3xf32>, %out: memref<4x6xf32>) {
// CHECK-NEXT:    %{{.*}} = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%out : memref<4x6xf32>)
// CHECK-NEXT:    %[[W:.*]] = memref.subview %out[1, 0] [2, 3] [2, 2] : memref<4x6xf32> to memref<2x3xf32, strided<[12, 2], offset: 6>>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[W]], %b : memref<2x3xf32, strided<[12, 2], offset: 6>>, memref<2x3xf32>) outs(%[[W]] : memref<2x3xf32, strided<[12, 2], offset: 6>>)
// CHECK-NOT:     memref.copy
// CHECK:         func.return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @window_update(%b: tensor<2x3xf32>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x6xf32>
  %d = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %w = tensor.extract_slice %d[1, 0] [2, 3] [2, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %z = arith.addf %x, %y : f32
    linalg.yield %z : f32
  } -> tensor<2x3xf32>
  %r = tensor.insert_slice %s into %d[1, 0] [2, 3] [2, 2] : tensor<2x3xf32> into tensor<4x6xf32>
  func.return %r : tensor<4x6xf32>
}

// -----

// The same update while D is still read afterwards: D's old value must survive, so the
// result goes to a fresh buffer and the insert copies (into a copy of D).
// CHECK-LABEL: func.func @window_update_d_live(%b: memref<2x3xf32>, %out0: memref<4x6xf32>, %out1: memref<4x6xf32>) {
// CHECK:         %[[T:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[T]] : memref<2x3xf32>)
// CHECK:         memref.copy %[[T]],
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @window_update_d_live(%b: tensor<2x3xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x6xf32>
  %d = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %w = tensor.extract_slice %d[1, 0] [2, 3] [2, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %z = arith.addf %x, %y : f32
    linalg.yield %z : f32
  } -> tensor<2x3xf32>
  %r = tensor.insert_slice %s into %d[1, 0] [2, 3] [2, 2] : tensor<2x3xf32> into tensor<4x6xf32>
  func.return %r, %d : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// A loop carrying a tensor: the argument %a is copied into a buffer the loop owns; each
// iteration updates it in place and yields it; the result is copied out and freed.
// CHECK-LABEL: func.func @loop(%a: memref<4xf32>, %n: index, %out: memref<4xf32>) {
// CHECK:         %[[INIT:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    memref.copy %a, %[[INIT]]
// CHECK-NEXT:    %[[R:.*]] = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %[[INIT]]) -> (memref<4xf32>) {
// CHECK-NEXT:      linalg.generic {{.*}} ins(%acc : memref<4xf32>) outs(%acc : memref<4xf32>)
// CHECK:           scf.yield %acc : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.copy %[[R]], %out
// CHECK-NEXT:    memref.dealloc %[[R]] : memref<4xf32>
// CHECK-NEXT:    func.return
#id = affine_map<(d0) -> (d0)>
func.func @loop(%a: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%acc : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.cos %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Branches yield buffers they own: a computed one moves out, an argument is copied.
// CHECK-LABEL: func.func @branch(%a: memref<4xf32>, %p: i1, %out: memref<4xf32>) {
// CHECK-NEXT:    %[[R:.*]] = scf.if %p -> (memref<4xf32>) {
// CHECK-NEXT:      %[[Y:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:      linalg.generic {{.*}} ins(%a : memref<4xf32>) outs(%[[Y]] : memref<4xf32>)
// CHECK:           scf.yield %[[Y]] : memref<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:      memref.copy %a, %[[A]]
// CHECK-NEXT:      scf.yield %[[A]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.copy %[[R]], %out
// CHECK-NEXT:    memref.dealloc %[[R]] : memref<4xf32>
#id = affine_map<(d0) -> (d0)>
func.func @branch(%a: tensor<4xf32>, %p: i1) -> tensor<4xf32> {
  %r = scf.if %p -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = math.sin %v : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Tensor results become trailing out-parameters the caller allocates; a call result the
// caller returns is computed in the caller's own out-parameter.
// CHECK-LABEL: func.func private @callee(%x: memref<4xf32>, %out: memref<4xf32>) -> f32 {
// CHECK:         memref.copy %x, %out
// CHECK-NEXT:    func.return %s : f32
// CHECK-LABEL: func.func @caller(%a: memref<4xf32>, %out: memref<4xf32>) -> f32 {
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    %s = func.call @callee(%a, %[[Y]]) : (memref<4xf32>, memref<4xf32>) -> f32
// CHECK-NEXT:    %t = func.call @callee(%[[Y]], %out) : (memref<4xf32>, memref<4xf32>) -> f32
// CHECK-NEXT:    memref.dealloc %[[Y]] : memref<4xf32>
// CHECK-NEXT:    func.return %s : f32
func.func private @callee(%x: tensor<4xf32>) -> (tensor<4xf32>, f32) {
  %c0 = arith.constant 0 : index
  %s = tensor.extract %x[%c0] : tensor<4xf32>
  func.return %x, %s : tensor<4xf32>, f32
}
func.func @caller(%a: tensor<4xf32>) -> (tensor<4xf32>, f32) {
  %y, %s = func.call @callee(%a) : (tensor<4xf32>) -> (tensor<4xf32>, f32)
  %z, %t = func.call @callee(%y) : (tensor<4xf32>) -> (tensor<4xf32>, f32)
  func.return %z, %s : tensor<4xf32>, f32
}

// -----

// mpi.alltoall / allgather read their input where it lies (a strided view is copied first)
// and write a fresh buffer: their buffer forms, as the MPI calls take them.
// CHECK-LABEL: func.func @exchange(%x: memref<2x3xf32>, %out: memref<2x2xf32>)
// CHECK-NEXT:    %c = mpi.grid_comm grid_shape = [2] grid_axes = [0] : !mpi.comm
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT:    mpi.alltoall_buffers(%x, %[[Y]], %c) : memref<2x3xf32>, memref<2x3xf32>
// CHECK-NEXT:    %[[V:.*]] = memref.subview %[[Y]][0, 1] [2, 1] [1, 1]
// CHECK-NEXT:    %[[CV:.*]] = memref.alloc() : memref<2xf32>
// CHECK-NEXT:    memref.copy %{{.*}}, %[[CV]]
// CHECK-NEXT:    memref.dealloc %[[Y]]
// CHECK-NEXT:    mpi.allgather_buffers(%[[CV]], %out, %c) : memref<2xf32>, memref<2x2xf32>
// CHECK-NEXT:    memref.dealloc %[[CV]]
func.func @exchange(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %c = mpi.grid_comm grid_shape = [2] grid_axes = [0] : !mpi.comm
  %y = mpi.alltoall(%x, %c) : tensor<2x3xf32> -> tensor<2x3xf32>
  %col = tensor.extract_slice %y[0, 1] [2, 1] [1, 1] : tensor<2x3xf32> to tensor<2xf32>
  %g = mpi.allgather(%col, %c) : tensor<2xf32> -> tensor<2x2xf32>
  func.return %g : tensor<2x2xf32>
}

// -----

// An op outside the stage contract: a located error, exit code 1.
// ERR: bufferize.mlir:[[# @LINE + 3]]:3: error: 'tensor.concat' op is outside the "linalg" stage contract (docs/design/cpu-pipeline.md); bufferize cannot convert it
// EXIT: exit=1
func.func @outside_the_contract(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<4xf32> {
  %c = tensor.concat dim(0) %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}
