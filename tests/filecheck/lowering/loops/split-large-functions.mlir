// split-large-functions: a function with more than max-ops ops has its top-level ops moved, in
// chunks of about chunk-ops, into private no_inline functions called where each chunk ended.
// Buffers are allocated above the call and freed below it; constants and views are cloned into
// the chunk, whose arguments are whole buffers, `llvm.noalias` where no other argument may
// overlap them. Checked numerically against the original (--verify-each=numeric).
// RUN: irgrad-opt %s --split-input-file -p 'split-large-functions{max-ops=10 chunk-ops=8}' --verify-each=numeric | filecheck %s
// RUN: irgrad-opt %s --split-input-file -p 'split-large-functions{max-ops=10 chunk-ops=40}' --verify-each=numeric | filecheck %s --check-prefix=ONE
// RUN: irgrad-opt %s --split-input-file -p 'split-large-functions' | filecheck %s --check-prefix=SMALL
// RUN: not irgrad-opt %s -p 'split-large-functions{chunk-ops=0}' 2>&1 | filecheck %s --check-prefix=BAD

// The first chunk (two loops and a load) takes %x, %y and the two fresh buffers; %x and %y may
// be one array, but both are only read, so every argument is noalias. The second chunk's
// scalar argument is the first one's result.
// CHECK-LABEL: func.func private @step_part0(
// CHECK-SAME:    %0: memref<4xf32> {llvm.noalias}, %1: memref<4xf32> {llvm.noalias}, %2: memref<4xf32> {llvm.noalias}, %3: memref<4xf32> {llvm.noalias}) -> f32 attributes {no_inline} {
// CHECK:         %two = arith.constant 2.000000e+00 : f32
// CHECK:         scf.for
// CHECK:           memref.store %w, %1[%i] : memref<4xf32>
// CHECK:         %s = memref.load %1[%c1] : memref<4xf32>
// CHECK:         scf.for
// CHECK:           memref.store %w_1, %3[%i_1] : memref<4xf32>
// CHECK:         func.return %s : f32
// CHECK-LABEL: func.func private @step_part1(
// CHECK-SAME:    %0: memref<4xf32> {llvm.noalias}, %1: memref<2x2xf32> {llvm.noalias}, %2: f32) -> f32 attributes {no_inline} {
// CHECK-NEXT:    %b2 = memref.expand_shape %0
// CHECK:         memref.copy %b2, %1
// CHECK:         %r = arith.addf %2, %t : f32
// CHECK-NEXT:    func.return %r : f32
// CHECK-LABEL: func.func @step(
// CHECK:         %a = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    %b = memref.alloc() : memref<4xf32>
// CHECK:         %[[S:.*]] = func.call @step_part0(%x, %a, %y, %b)
// CHECK-NEXT:    memref.dealloc %a : memref<4xf32>
// CHECK:         %[[R:.*]] = func.call @step_part1(%b, %out, %[[S]])
// CHECK-NEXT:    memref.dealloc %b : memref<4xf32>
// CHECK-NEXT:    func.return %[[R]] : f32
// In one chunk, %out is written and may be %x or %y: only the fresh buffers are noalias; the
// dealloc of %a, inside the chunk's span, goes below the call.
// ONE-LABEL: func.func private @step_part0(
// ONE-SAME:    %0: memref<4xf32>, %1: memref<4xf32> {llvm.noalias}, %2: memref<4xf32>, %3: memref<4xf32> {llvm.noalias}, %4: memref<2x2xf32>) -> f32
// ONE-LABEL: func.func @step(
// ONE:         %[[R:.*]] = func.call @step_part0(%x, %a, %y, %b, %out)
// ONE-NEXT:    memref.dealloc %a : memref<4xf32>
// ONE-NEXT:    memref.dealloc %b : memref<4xf32>
// ONE-NEXT:    func.return %[[R]] : f32
// SMALL-LABEL: func.func @step(
// SMALL-NOT:   func.call
// SMALL:       func.return
// BAD: error: split-large-functions: chunk-ops must be positive, got 0
// BAD-NOT: Traceback
func.func @step(%x: memref<4xf32>, %y: memref<4xf32>, %out: memref<2x2xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  %a = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %a[%i] : memref<4xf32>
  }
  %s = memref.load %a[%c1] : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %u = memref.load %y[%i] : memref<4xf32>
    %w = arith.addf %v, %u : f32
    memref.store %w, %b[%i] : memref<4xf32>
  }
  memref.dealloc %a : memref<4xf32>
  %b2 = memref.expand_shape %b [[0 : i64, 1 : i64]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  "memref.copy"(%b2, %out) : (memref<2x2xf32>, memref<2x2xf32>) -> ()
  %t = memref.load %b[%c0] : memref<4xf32>
  %r = arith.addf %s, %t : f32
  memref.dealloc %b : memref<4xf32>
  func.return %r : f32
}

// -----

// A view whose offset the chunk computes cannot go above the call: it ends the chunk, and the
// next chunk clones the view from the buffer and the returned offset. %buf and %idx may be one
// array and %buf is written: neither is noalias in the first chunk.
// CHECK-LABEL: func.func private @views_part0(
// CHECK-SAME:    %0: memref<8xf32>, %1: memref<8xindex>) -> index attributes {no_inline} {
// CHECK:         %k = memref.load %1[%c0] : memref<8xindex>
// CHECK-NEXT:    func.return %k : index
// CHECK-LABEL: func.func private @views_part1(
// CHECK-SAME:    %0: memref<8xf32> {llvm.noalias}, %1: index) attributes {no_inline} {
// CHECK:         %window = memref.subview %0[%1] [4] [1]
// CHECK-LABEL: func.func @views(
// CHECK:         %[[K:.*]] = func.call @views_part0(%buf, %idx)
// CHECK-NEXT:    %window = memref.subview %buf[%[[K]]] [4] [1]
// CHECK-NEXT:    func.call @views_part1(%buf, %[[K]])
func.func @views(%buf: memref<8xf32>, %idx: memref<8xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %buf[%i] : memref<8xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %buf[%i] : memref<8xf32>
  }
  %k = memref.load %idx[%c0] : memref<8xindex>
  %window = memref.subview %buf[%k] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %window[%i] : memref<4xf32, strided<[1], offset: ?>>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %window[%i] : memref<4xf32, strided<[1], offset: ?>>
  }
  func.return
}

// -----

// A function of several blocks is left as it is.
// CHECK-LABEL: func.func @branches(
// CHECK-NOT:   func.call
func.func @branches(%p: i1, %x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  cf.cond_br %p, ^a, ^b
^a:
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %x[%i] : memref<4xf32>
  }
  cf.br ^b
^b:
  func.return
}
